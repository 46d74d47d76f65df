package jose

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"pactd.dev/pactd/internal/es256"
	"pactd.dev/pactd/internal/jws"
)

// Signature algorithms a [Key] can be used with.
const (
	// AlgES256 is ECDSA on P-256 with SHA-256 (RFC 7518 §3.4).
	AlgES256 = "ES256"
	// AlgRS256 is RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
	AlgRS256 = "RS256"
)

// Bounds applied to key sets.
const (
	// DefaultMaxKeys is the default bound on the number of keys in a set.
	DefaultMaxKeys = 100
	// MinRSABits is the shortest RSA modulus accepted.
	MinRSABits = 2048
	// MaxRSABits is the longest RSA modulus accepted (bounds verify cost).
	MaxRSABits = 8192
	// MaxKIDBytes bounds the length of a "kid".
	MaxKIDBytes = 256
)

// Key is one public verification key of a [KeySet]. Its zero value is not a
// usable key; build keys with [ParseJWKS], [NewECKey] or [NewRSAKey]. A Key is
// immutable.
type Key struct {
	kid   string
	alg   string
	ec    *ecdsa.PublicKey
	rsa   *rsa.PublicKey
	thumb [32]byte
	// es verifies ES256 through a precomputed table once the key has
	// earned one; nil (keys outside a JWKSClient with Tables) is stock.
	es *es256.Key
}

// KID returns the key id ("" when the JWK had none).
func (k *Key) KID() string { return k.kid }

// Algorithm returns the only algorithm this key verifies: [AlgES256] for EC
// P-256 keys and [AlgRS256] for RSA keys.
func (k *Key) Algorithm() string { return k.alg }

// ECDSA returns the EC P-256 public key, or nil for an RSA key.
func (k *Key) ECDSA() *ecdsa.PublicKey { return k.ec }

// VerifyES256 checks a raw R||S ES256 signature over digest under o's
// low-S rule (package jws): through the key's precomputed table when its
// key set's table cache has built one (package es256), else through
// crypto/ecdsa; both decide alike. False for an RSA key.
func (k *Key) VerifyES256(digest *[32]byte, sig []byte, o jws.Origin) bool {
	switch {
	case k.ec == nil:
		return false
	case k.es != nil:
		return jws.VerifyES256Key(k.es, digest, sig, o)
	}
	return jws.VerifyES256(k.ec, digest, sig, o)
}

// RSA returns the RSA public key, or nil for an EC key.
func (k *Key) RSA() *rsa.PublicKey { return k.rsa }

// Public returns the public key as a crypto.PublicKey.
func (k *Key) Public() crypto.PublicKey {
	if k.ec != nil {
		return k.ec
	}
	return k.rsa
}

// Thumbprint returns the RFC 7638 SHA-256 JWK thumbprint of the key.
func (k *Key) Thumbprint() [32]byte { return k.thumb }

// ThumbprintString returns the RFC 7638 thumbprint, base64url-encoded.
func (k *Key) ThumbprintString() string {
	return base64.RawURLEncoding.EncodeToString(k.thumb[:])
}

// KeySet is an immutable set of public verification keys, indexed by kid and
// by thumbprint. It is safe for concurrent use.
type KeySet struct {
	keys    []Key
	byKID   map[string]int
	byThumb map[[32]byte]int
}

// Len returns the number of keys.
func (s *KeySet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.keys)
}

// At returns the i-th key in document order. It panics if i is out of range,
// like a slice index.
func (s *KeySet) At(i int) *Key { return &s.keys[i] }

// Lookup returns the key whose kid equals kid exactly. Keys without a kid are
// never returned by Lookup, and Lookup("") reports false.
func (s *KeySet) Lookup(kid string) (*Key, bool) {
	if s == nil || kid == "" {
		return nil, false
	}
	i, ok := s.byKID[kid]
	if !ok {
		return nil, false
	}
	return &s.keys[i], true
}

// LookupThumbprint returns the first key whose RFC 7638 thumbprint equals t.
func (s *KeySet) LookupThumbprint(t [32]byte) (*Key, bool) {
	if s == nil {
		return nil, false
	}
	i, ok := s.byThumb[t]
	if !ok {
		return nil, false
	}
	return &s.keys[i], true
}

// NewKeySet builds a key set from keys built by [NewECKey] or [NewRSAKey]. It
// refuses zero keys and duplicate kids.
func NewKeySet(keys ...Key) (*KeySet, error) {
	s := &KeySet{
		keys:    make([]Key, 0, len(keys)),
		byKID:   make(map[string]int, len(keys)),
		byThumb: make(map[[32]byte]int, len(keys)),
	}
	for i, k := range keys {
		if k.ec == nil && k.rsa == nil {
			return nil, fmt.Errorf("key %d: zero Key: %w", i, ErrInvalidKey)
		}
		if err := s.add(k); err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
	}
	return s, nil
}

func (s *KeySet) add(k Key) error {
	if k.kid != "" {
		if _, dup := s.byKID[k.kid]; dup {
			return ErrDuplicateKID
		}
		s.byKID[k.kid] = len(s.keys)
	}
	if _, seen := s.byThumb[k.thumb]; !seen {
		s.byThumb[k.thumb] = len(s.keys)
	}
	s.keys = append(s.keys, k)
	return nil
}

// bindTables gives each EC key of s a verifier in c (package es256): the
// verifier, and so the table, of the key with the same RFC 7638 thumbprint
// in prev when there is one (a refetch keeps the tables of the keys it
// still publishes), else a new one. The verifiers of prev that s does not
// carry over are released: their keys left the set, and their tables with
// them. s must not be shared yet.
func (s *KeySet) bindTables(c *es256.Cache, prev *KeySet) {
	kept := make(map[*es256.Key]bool, len(s.keys))
	for i := range s.keys {
		k := &s.keys[i]
		if k.ec == nil {
			continue
		}
		if j := s.byThumb[k.thumb]; j < i {
			k.es = s.keys[j].es // one point under two kids: one table
			continue
		}
		if prev != nil {
			if pk, ok := prev.LookupThumbprint(k.thumb); ok && pk.es != nil {
				k.es = pk.es
				kept[pk.es] = true
				continue
			}
		}
		k.es = c.NewKey(k.ec)
	}
	prev.releaseTables(kept)
}

// releaseTables releases the table verifiers of s's keys not in keep.
func (s *KeySet) releaseTables(keep map[*es256.Key]bool) {
	if s == nil {
		return
	}
	for i := range s.keys {
		if es := s.keys[i].es; es != nil && !keep[es] {
			es.Release()
		}
	}
}

// NewECKey wraps an EC P-256 public key as a [Key] with the given kid ("" for
// none).
func NewECKey(kid string, pub *ecdsa.PublicKey) (Key, error) {
	if err := checkKID(kid); err != nil {
		return Key{}, err
	}
	if pub == nil || pub.Curve != elliptic.P256() {
		return Key{}, ErrUnsupportedCurve
	}
	raw, err := pub.Bytes()
	if err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	// Re-parse so the key is validated and owned by us.
	parsed, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	return Key{kid: kid, alg: AlgES256, ec: parsed, thumb: ecThumbprint(raw[1:33], raw[33:])}, nil
}

// NewRSAKey wraps an RSA public key (2048 to 8192 bits) as a [Key] with the
// given kid ("" for none).
func NewRSAKey(kid string, pub *rsa.PublicKey) (Key, error) {
	if err := checkKID(kid); err != nil {
		return Key{}, err
	}
	if pub == nil || pub.N == nil {
		return Key{}, ErrInvalidKey
	}
	cp := &rsa.PublicKey{N: new(big.Int).Set(pub.N), E: pub.E}
	if err := checkRSA(cp); err != nil {
		return Key{}, err
	}
	return Key{kid: kid, alg: AlgRS256, rsa: cp, thumb: rsaThumbprint(cp)}, nil
}

func checkKID(kid string) error {
	if len(kid) > MaxKIDBytes {
		return fmt.Errorf("kid longer than %d bytes: %w", MaxKIDBytes, ErrInvalidKey)
	}
	return nil
}

func checkRSA(pub *rsa.PublicKey) error {
	bits := pub.N.BitLen()
	if bits < MinRSABits {
		return fmt.Errorf("%d-bit modulus: %w", bits, ErrWeakRSAKey)
	}
	if bits > MaxRSABits {
		return fmt.Errorf("%d-bit modulus exceeds %d: %w", bits, MaxRSABits, ErrInvalidKey)
	}
	if pub.N.Bit(0) == 0 {
		return fmt.Errorf("even modulus: %w", ErrInvalidKey)
	}
	if pub.E < 3 || pub.E > 1<<31-1 || pub.E%2 == 0 {
		return fmt.Errorf("bad public exponent: %w", ErrInvalidKey)
	}
	return nil
}

// ecThumbprint computes the RFC 7638 thumbprint of a P-256 key from its
// 32-byte big-endian coordinates.
func ecThumbprint(x, y []byte) [32]byte {
	var b strings.Builder
	b.WriteString(`{"crv":"P-256","kty":"EC","x":"`)
	b.WriteString(base64.RawURLEncoding.EncodeToString(x))
	b.WriteString(`","y":"`)
	b.WriteString(base64.RawURLEncoding.EncodeToString(y))
	b.WriteString(`"}`)
	return sha256.Sum256([]byte(b.String()))
}

// rsaThumbprint computes the RFC 7638 thumbprint of an RSA key (minimal
// big-endian encodings of e and n).
func rsaThumbprint(pub *rsa.PublicKey) [32]byte {
	var b strings.Builder
	b.WriteString(`{"e":"`)
	b.WriteString(base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()))
	b.WriteString(`","kty":"RSA","n":"`)
	b.WriteString(base64.RawURLEncoding.EncodeToString(pub.N.Bytes()))
	b.WriteString(`"}`)
	return sha256.Sum256([]byte(b.String()))
}

// ParseJWKS parses and validates a JWKS document. maxKeys bounds the number of
// keys (<= 0 means [DefaultMaxKeys]). Any refused key refuses the whole
// document; the error wraps [ErrBadDocument] and one specific sentinel.
func ParseJWKS(data []byte, maxKeys int) (*KeySet, error) {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	top, err := decodeObject(data)
	if err != nil {
		return nil, err
	}
	rawKeys, ok := top["keys"]
	if !ok || len(rawKeys) == 0 || rawKeys[0] != '[' {
		return nil, fmt.Errorf(`"keys" missing or not an array: %w`, ErrMalformedDocument)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(rawKeys, &items); err != nil {
		return nil, fmt.Errorf(`"keys": %w`, ErrMalformedDocument)
	}
	if len(items) > maxKeys {
		return nil, fmt.Errorf("%d keys, at most %d: %w", len(items), maxKeys, ErrTooManyKeys)
	}
	s := &KeySet{
		keys:    make([]Key, 0, len(items)),
		byKID:   make(map[string]int, len(items)),
		byThumb: make(map[[32]byte]int, len(items)),
	}
	for i, item := range items {
		k, err := parseJWK(item)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		if err := s.add(k); err != nil {
			return nil, fmt.Errorf("key %d: kid %q: %w", i, k.kid, err)
		}
	}
	return s, nil
}

func parseJWK(raw []byte) (Key, error) {
	m, err := decodeObject(raw)
	if err != nil {
		return Key{}, err
	}
	kty, err := stringMember(m, "kty", true)
	if err != nil {
		return Key{}, err
	}
	// Members only private keys carry (RFC 7518 §6.2.2, §6.3.2); "k" is
	// handled below, after symmetric keys.
	for _, name := range [...]string{"d", "p", "q", "dp", "dq", "qi", "oth"} {
		if _, ok := m[name]; ok {
			return Key{}, fmt.Errorf("member %q: %w", name, ErrPrivateKeyMaterial)
		}
	}
	if kty == "oct" {
		return Key{}, ErrSymmetricKey
	}
	if _, ok := m["k"]; ok {
		return Key{}, fmt.Errorf(`member "k": %w`, ErrPrivateKeyMaterial)
	}
	kid, err := stringMember(m, "kid", false)
	if err != nil {
		return Key{}, err
	}
	if _, present := m["kid"]; present && kid == "" {
		return Key{}, fmt.Errorf("empty kid: %w", ErrInvalidKey)
	}
	if err := checkKID(kid); err != nil {
		return Key{}, err
	}
	if err := checkUse(m); err != nil {
		return Key{}, err
	}
	alg, err := stringMember(m, "alg", false)
	if err != nil {
		return Key{}, err
	}
	var k Key
	switch kty {
	case "EC":
		k, err = parseECJWK(m)
	case "RSA":
		k, err = parseRSAJWK(m)
	default:
		return Key{}, fmt.Errorf("kty %q: %w", kty, ErrUnsupportedKeyType)
	}
	if err != nil {
		return Key{}, err
	}
	if alg != "" && alg != k.alg {
		return Key{}, fmt.Errorf("alg %q on a %s key: %w", alg, kty, ErrKeyAlgorithm)
	}
	k.kid = kid
	return k, nil
}

func checkUse(m map[string]json.RawMessage) error {
	use, err := stringMember(m, "use", false)
	if err != nil {
		return err
	}
	if _, present := m["use"]; present && use != "sig" {
		return fmt.Errorf("use %q: %w", use, ErrKeyUse)
	}
	rawOps, ok := m["key_ops"]
	if !ok {
		return nil
	}
	var ops []string
	if len(rawOps) == 0 || rawOps[0] != '[' || json.Unmarshal(rawOps, &ops) != nil {
		return fmt.Errorf("key_ops not an array of strings: %w", ErrInvalidKey)
	}
	for _, op := range ops {
		if op == "verify" {
			return nil
		}
	}
	return fmt.Errorf("key_ops without verify: %w", ErrKeyUse)
}

func parseECJWK(m map[string]json.RawMessage) (Key, error) {
	crv, err := stringMember(m, "crv", true)
	if err != nil {
		return Key{}, err
	}
	if crv != "P-256" {
		return Key{}, fmt.Errorf("crv %q: %w", crv, ErrUnsupportedCurve)
	}
	x, err := b64Member(m, "x")
	if err != nil {
		return Key{}, err
	}
	y, err := b64Member(m, "y")
	if err != nil {
		return Key{}, err
	}
	if len(x) != 32 || len(y) != 32 {
		return Key{}, fmt.Errorf("P-256 coordinates must be 32 bytes: %w", ErrInvalidKey)
	}
	point := make([]byte, 0, 65)
	point = append(point, 4)
	point = append(point, x...)
	point = append(point, y...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
	if err != nil {
		return Key{}, fmt.Errorf("point not on P-256: %w", ErrInvalidKey)
	}
	return Key{alg: AlgES256, ec: pub, thumb: ecThumbprint(x, y)}, nil
}

func parseRSAJWK(m map[string]json.RawMessage) (Key, error) {
	n, err := b64Member(m, "n")
	if err != nil {
		return Key{}, err
	}
	e, err := b64Member(m, "e")
	if err != nil {
		return Key{}, err
	}
	e = bytes.TrimLeft(e, "\x00")
	if len(e) == 0 || len(e) > 4 {
		return Key{}, fmt.Errorf("bad public exponent: %w", ErrInvalidKey)
	}
	var ev int64
	for _, b := range e {
		ev = ev<<8 | int64(b)
	}
	if len(n) > MaxRSABits/8+1 {
		return Key{}, fmt.Errorf("modulus exceeds %d bits: %w", MaxRSABits, ErrInvalidKey)
	}
	if ev > 1<<31-1 {
		return Key{}, fmt.Errorf("bad public exponent: %w", ErrInvalidKey)
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(ev)}
	if err := checkRSA(pub); err != nil {
		return Key{}, err
	}
	return Key{alg: AlgRS256, rsa: pub, thumb: rsaThumbprint(pub)}, nil
}

// stringMember returns member name as a string. A present member that is not
// a JSON string, or a missing required member, is ErrInvalidKey.
func stringMember(m map[string]json.RawMessage, name string, required bool) (string, error) {
	raw, ok := m[name]
	if !ok {
		if required {
			return "", fmt.Errorf("member %q missing: %w", name, ErrInvalidKey)
		}
		return "", nil
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("member %q not a string: %w", name, ErrInvalidKey)
	}
	return s, nil
}

// b64Member decodes a required base64url member (padding tolerated).
func b64Member(m map[string]json.RawMessage, name string) ([]byte, error) {
	s, err := stringMember(m, name, true)
	if err != nil {
		return nil, err
	}
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "\r\n") {
		return nil, fmt.Errorf("member %q not base64url: %w", name, ErrInvalidKey)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("member %q not base64url: %w", name, ErrInvalidKey)
	}
	return b, nil
}

// decodeObject decodes one JSON object into its members with the strict
// unique-member reader of package jws: duplicate member names (compared
// after unescaping), non-objects, invalid UTF-8, nesting deeper than
// jws.MaxDepth and trailing data are refused.
func decodeObject(raw []byte) (map[string]json.RawMessage, error) {
	m, ok := jws.Members(raw)
	if !ok {
		return nil, fmt.Errorf("not a JSON object of unique members: %w", ErrMalformedDocument)
	}
	return m, nil
}

// jwkJSON is the public JWK form written by MarshalJSON.
type jwkJSON struct {
	Kty string `json:"kty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	Kid string `json:"kid,omitempty"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// MarshalJSON writes the key as a public JWK with "alg" and "use":"sig".
func (k *Key) MarshalJSON() ([]byte, error) {
	j := jwkJSON{Kid: k.kid, Alg: k.alg, Use: "sig"}
	switch {
	case k.ec != nil:
		raw, err := k.ec.Bytes()
		if err != nil {
			return nil, err
		}
		j.Kty, j.Crv = "EC", "P-256"
		j.X = base64.RawURLEncoding.EncodeToString(raw[1:33])
		j.Y = base64.RawURLEncoding.EncodeToString(raw[33:])
	case k.rsa != nil:
		j.Kty = "RSA"
		j.N = base64.RawURLEncoding.EncodeToString(k.rsa.N.Bytes())
		j.E = base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.rsa.E)).Bytes())
	default:
		return nil, ErrInvalidKey
	}
	return json.Marshal(j)
}

// MarshalJSON writes the set as a public JWKS document {"keys":[...]}.
func (s *KeySet) MarshalJSON() ([]byte, error) {
	keys := make([]json.RawMessage, 0, s.Len())
	for i := range s.Len() {
		b, err := s.keys[i].MarshalJSON()
		if err != nil {
			return nil, err
		}
		keys = append(keys, b)
	}
	return json.Marshal(struct {
		Keys []json.RawMessage `json:"keys"`
	}{keys})
}
