package jws

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"math/big"

	"pactd.dev/pactd/internal/es256"
)

// The algorithms pactd accepts (RFC 7518 §3.3, §3.4).
const (
	// ES256 is ECDSA P-256 with SHA-256, signature raw R||S.
	ES256 = "ES256"
	// RS256 is RSASSA-PKCS1-v1_5 with SHA-256.
	RS256 = "RS256"
)

// Origin is who holds the signing key; it selects the low-S rule (see the
// package doc).
type Origin uint8

const (
	// ThirdParty: a PA's or a Brand's key. Either S form is accepted.
	ThirdParty Origin = iota
	// Own: one of pactd's Provider keys. Only low S is accepted.
	Own
)

var (
	p256N = elliptic.P256().Params().N
	// p256HalfOrder is (n-1)/2 of P-256 as 32 big-endian bytes: an S above
	// it is "high".
	p256HalfOrder = new(big.Int).Rsh(p256N, 1).FillBytes(make([]byte, 32))
)

// HighS reports whether a 64-byte raw ES256 signature has S above n/2.
func HighS(sig []byte) bool {
	return len(sig) == 64 && bytes.Compare(sig[32:], p256HalfOrder) > 0
}

// VerifyES256 checks a raw 64-byte R||S signature over the SHA-256 digest
// of the signing input with pub, under o's low-S rule, through
// crypto/ecdsa. r and s must be in [1, n-1].
func VerifyES256(pub *ecdsa.PublicKey, digest *[32]byte, sig []byte, o Origin) bool {
	return pub != nil && ES256Form(sig, o) && es256.VerifyStock(pub, digest, sig)
}

// VerifyES256Key is VerifyES256 with a key of a key set, which verifies
// through its precomputed table once it has earned one (package es256) and
// decides exactly as crypto/ecdsa does either way.
func VerifyES256Key(k *es256.Key, digest *[32]byte, sig []byte, o Origin) bool {
	return k != nil && ES256Form(sig, o) && k.Verify(digest, sig)
}

// ES256Form reports whether sig has the form o's rule accepts: 64 bytes of
// raw R||S and, for Own, a low S. The range of r and s is the verifier's.
func ES256Form(sig []byte, o Origin) bool {
	return len(sig) == 64 && !(o == Own && HighS(sig))
}

// VerifyRS256 checks an RSASSA-PKCS1-v1_5 SHA-256 signature over the digest
// of the signing input with pub (the signature must be exactly the
// modulus length).
func VerifyRS256(pub *rsa.PublicKey, digest *[32]byte, sig []byte) bool {
	return pub != nil && rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) == nil
}

// SignES256 signs SHA-256(input) with priv and returns R||S, 32 bytes each,
// with S normalized to the low half, so the signature is the one encoding
// that VerifyES256 accepts under Own.
func SignES256(priv *ecdsa.PrivateKey, input []byte) ([]byte, error) {
	if priv == nil || priv.Curve != elliptic.P256() {
		return nil, errors.New("jws: not a P-256 private key")
	}
	digest := sha256.Sum256(input)
	r, s, err := ecdsa.Sign(rand.Reader, priv, digest[:])
	if err != nil {
		return nil, err
	}
	if s.Cmp(new(big.Int).SetBytes(p256HalfOrder)) > 0 {
		s.Sub(p256N, s)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return sig, nil
}
