package provkeys

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Alg is the only signing algorithm of the Provider's keys.
const Alg = "ES256"

// JWK is a public P-256 key as published in the JWKS, members in the order
// pactd emits them.
type JWK struct {
	// Kty is "EC".
	Kty string `json:"kty"`
	// Crv is "P-256".
	Crv string `json:"crv"`
	// X is the base64url x coordinate (32 bytes).
	X string `json:"x"`
	// Y is the base64url y coordinate (32 bytes).
	Y string `json:"y"`
	// Kid is the RFC 7638 thumbprint.
	Kid string `json:"kid"`
	// Alg is "ES256".
	Alg string `json:"alg"`
	// Use is "sig".
	Use string `json:"use"`
}

// JWKS is a JWK Set document.
type JWKS struct {
	// Keys are the published keys; never null.
	Keys []JWK `json:"keys"`
}

var b64 = base64.RawURLEncoding

// coordinates returns the fixed-length x and y of a P-256 public key.
func coordinates(pub *ecdsa.PublicKey) (x, y []byte, err error) {
	if pub == nil || pub.Curve != elliptic.P256() {
		return nil, nil, errors.New("provkeys: not a P-256 public key")
	}
	raw, err := pub.Bytes() // 0x04 || X || Y
	if err != nil || len(raw) != 65 {
		return nil, nil, fmt.Errorf("provkeys: encode public key: %w", err)
	}
	return raw[1:33], raw[33:], nil
}

// Thumbprint returns the RFC 7638 thumbprint of a P-256 public key: the
// base64url SHA-256 of {"crv":"P-256","kty":"EC","x":…,"y":…} (required
// members only, lexicographic order, no whitespace).
func Thumbprint(pub *ecdsa.PublicKey) (string, error) {
	x, y, err := coordinates(pub)
	if err != nil {
		return "", err
	}
	canon := `{"crv":"P-256","kty":"EC","x":"` + b64.EncodeToString(x) + `","y":"` + b64.EncodeToString(y) + `"}`
	sum := sha256.Sum256([]byte(canon))
	return b64.EncodeToString(sum[:]), nil
}

// PublicJWK returns the JWK of a P-256 public key with its thumbprint kid.
func PublicJWK(pub *ecdsa.PublicKey) (JWK, error) {
	x, y, err := coordinates(pub)
	if err != nil {
		return JWK{}, err
	}
	kid, err := Thumbprint(pub)
	if err != nil {
		return JWK{}, err
	}
	return JWK{Kty: "EC", Crv: "P-256", X: b64.EncodeToString(x), Y: b64.EncodeToString(y), Kid: kid, Alg: Alg, Use: "sig"}, nil
}

// ParseJWKS parses a JWKS document of P-256 ES256 signing keys, as this
// package publishes it, into public keys by kid. It refuses anything else
// (other key types or curves, private members, a kid that is not the key's
// thumbprint, duplicates): it exists so tests and tools can check the
// published document the way a PA or a Brand would.
func ParseJWKS(doc []byte) (map[string]*ecdsa.PublicKey, error) {
	var set struct {
		Keys []map[string]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("provkeys: parse JWKS: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New("provkeys: JWKS has no keys array")
	}
	out := make(map[string]*ecdsa.PublicKey, len(set.Keys))
	for i, m := range set.Keys {
		if _, ok := m["d"]; ok {
			return nil, fmt.Errorf("provkeys: JWKS key %d has a private member", i)
		}
		var k JWK
		raw, _ := json.Marshal(m)
		if err := json.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("provkeys: JWKS key %d: %w", i, err)
		}
		if k.Kty != "EC" || k.Crv != "P-256" || k.Alg != Alg || k.Use != "sig" {
			return nil, fmt.Errorf("provkeys: JWKS key %d is not an ES256 P-256 signing key", i)
		}
		x, errX := b64.Strict().DecodeString(k.X)
		y, errY := b64.Strict().DecodeString(k.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return nil, fmt.Errorf("provkeys: JWKS key %d has bad coordinates", i)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, fmt.Errorf("provkeys: JWKS key %d: %w", i, err)
		}
		tp, err := Thumbprint(pub)
		if err != nil || tp != k.Kid {
			return nil, fmt.Errorf("provkeys: JWKS key %d: kid is not the key's thumbprint", i)
		}
		if _, dup := out[k.Kid]; dup {
			return nil, fmt.Errorf("provkeys: JWKS key %d: duplicate kid", i)
		}
		out[k.Kid] = pub
	}
	return out, nil
}
