// Package testsigner is the one fake signer of the tests: an ES256 key that
// signs compact JWS as core/provkeys' Ring does (header
// {"alg":"ES256","kid":…,"typ":…}, low-S signature) and answers PublicKey
// for its own kid, so it stands in for the Ring on both sides of
// token/delegtoken (SigningKeys and VerificationKeys); and, as a PA, the
// one fake personal agent: the same key published as a JWKS on loopback,
// signing PA JWTs under any header (JWT).
package testsigner

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"testing"
)

// Signer is one ES256 signing key and its kid.
type Signer struct {
	// KID is the key id written into every header and answered by PublicKey.
	KID string
	// Key is the private key.
	Key *ecdsa.PrivateKey
}

// New returns a Signer with a fresh P-256 key named kid.
func New(t testing.TB, kid string) *Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &Signer{KID: kid, Key: k}
}

// Sign returns the compact JWS of payload with the header
// {"alg":"ES256","kid":KID,"typ":typ}.
func (s *Signer) Sign(_ context.Context, typ string, payload []byte) (string, error) {
	hdr, err := json.Marshal(map[string]string{"alg": "ES256", "kid": s.KID, "typ": typ})
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(hdr) + "." + base64.RawURLEncoding.EncodeToString(payload)
	sig, err := s.sign(input)
	if err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// sign returns the raw ES256 signature (R || S, low S) of a signing input.
func (s *Signer) sign(input string) ([]byte, error) {
	sum := sha256.Sum256([]byte(input))
	r, sv, err := ecdsa.Sign(rand.Reader, s.Key, sum[:])
	if err != nil {
		return nil, err
	}
	// Low-S form: the verifiers refuse malleable high-S signatures.
	if n := elliptic.P256().Params().N; sv.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
		sv.Sub(n, sv)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	sv.FillBytes(sig[32:])
	return sig, nil
}

// PublicKey returns the public key when kid is KID, and found false for
// any other kid.
func (s *Signer) PublicKey(_ context.Context, kid string) (*ecdsa.PublicKey, bool, error) {
	if kid != s.KID {
		return nil, false, nil
	}
	return &s.Key.PublicKey, true, nil
}
