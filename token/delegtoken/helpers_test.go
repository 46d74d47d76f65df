package delegtoken_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"testing"
	"time"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/internal/testkit/testsigner"
	"pactd.dev/pactd/token/delegtoken"
)

// now is the fixed instant of the tests.
var now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

const (
	brandA  = "https://provider.example/a2a/acme"
	brandB  = "https://provider.example/a2a/globex"
	paIss   = "https://pa.example"
	otherPA = "https://evil-pa.example"
)

// keySet is an in-memory Provider key set: one published signing key (the
// testsigner.Signer, named by its thumbprint), and optionally more
// published keys. It implements both key interfaces.
type keySet struct {
	*testsigner.Signer
	published map[string]*ecdsa.PublicKey
	err       error // returned by PublicKey when set (store down)
}

func newKeySet(t testing.TB) *keySet {
	t.Helper()
	priv := newECKey(t)
	kid, err := provkeys.Thumbprint(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return &keySet{Signer: &testsigner.Signer{KID: kid, Key: priv}, published: map[string]*ecdsa.PublicKey{kid: &priv.PublicKey}}
}

func newECKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *keySet) PublicKey(_ context.Context, kid string) (*ecdsa.PublicKey, bool, error) {
	if k.err != nil {
		return nil, false, k.err
	}
	pub, ok := k.published[kid]
	return pub, ok, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// forgeES256 signs any header and payload with an EC key, the way an
// attacker holding that key (or a buggy signer) would. highS makes the
// malleated twin of the signature (same r, n−s).
func forgeES256(priv *ecdsa.PrivateKey, header map[string]any, payload []byte, highS bool) string {
	input := b64(mustJSON(header)) + "." + b64(payload)
	d := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, priv, d[:])
	if err != nil {
		panic(err)
	}
	n := elliptic.P256().Params().N
	half := new(big.Int).Rsh(n, 1)
	if (s.Cmp(half) > 0) != highS {
		s.Sub(n, s)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64(sig)
}

// forgeDER signs with an ASN.1 DER signature instead of raw R||S.
func forgeDER(priv *ecdsa.PrivateKey, header map[string]any, payload []byte) string {
	input := b64(mustJSON(header)) + "." + b64(payload)
	d := sha256.Sum256([]byte(input))
	sig, err := ecdsa.SignASN1(rand.Reader, priv, d[:])
	if err != nil {
		panic(err)
	}
	return input + "." + b64(sig)
}

// forgeRS256 signs with an RSA key.
func forgeRS256(priv *rsa.PrivateKey, header map[string]any, payload []byte) string {
	input := b64(mustJSON(header)) + "." + b64(payload)
	d := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, d[:])
	if err != nil {
		panic(err)
	}
	return input + "." + b64(sig)
}

// forgeHS256 MACs with a secret (alg confusion: the public key's bytes).
func forgeHS256(secret []byte, header map[string]any, payload []byte) string {
	input := b64(mustJSON(header)) + "." + b64(payload)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(input))
	return input + "." + b64(m.Sum(nil))
}

// claimsFor returns valid wire claims of a token for brand, as a map the
// tests can break.
func claimsFor(brand string) map[string]any {
	return map[string]any{
		"iss": brand + "/oauth", "sub": "user-42", "aud": brand, "client_id": paIss,
		"scope": "orders:read orders:write", "grant_id": "a2agrant_01ABC",
		"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(59 * time.Minute).Unix(),
	}
}

func header(kid, typ string) map[string]any {
	return map[string]any{"alg": "ES256", "kid": kid, "typ": typ}
}

// wantReason asserts a refusal with exactly this reason.
func wantReason(t *testing.T, err error, want delegtoken.Reason) {
	t.Helper()
	var re *delegtoken.Error
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want refusal %q", err, want)
	}
	if re.Reason != want {
		t.Fatalf("reason = %q, want %q", re.Reason, want)
	}
}

func mustDecode(s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
