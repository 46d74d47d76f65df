package cert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// p256Order and p256HalfOrder bound ECDSA signature values.
var (
	p256Order     = elliptic.P256().Params().N
	p256HalfOrder = new(big.Int).Rsh(p256Order, 1)
)

// parseECDSASignature reads a DER ECDSA-Sig-Value strictly: one SEQUENCE
// of two minimally encoded INTEGERs with 0 < r, s < n and nothing after.
func parseECDSASignature(sig []byte) (r, s *big.Int, ok bool) {
	in := cryptobyte.String(sig)
	var seq cryptobyte.String
	r, s = new(big.Int), new(big.Int)
	if !in.ReadASN1(&seq, cbasn1.SEQUENCE) || !in.Empty() ||
		!seq.ReadASN1Integer(r) || !seq.ReadASN1Integer(s) || !seq.Empty() {
		return nil, nil, false
	}
	if r.Sign() <= 0 || s.Sign() <= 0 || r.Cmp(p256Order) >= 0 || s.Cmp(p256Order) >= 0 {
		return nil, nil, false
	}
	return r, s, true
}

// checkSignatureEncoding returns the reason a signature's bytes are not of
// the profile, or "". lowS requires s <= n/2, which §14.1 asks of
// certificates only: envelope, card and CSR signatures may be either twin.
func checkSignatureEncoding(alg KeyAlg, sig []byte, lowS bool) Reason {
	if alg == Ed25519 {
		if len(sig) != ed25519.SignatureSize {
			return ReasonSignatureEncoding
		}
		return ""
	}
	_, s, ok := parseECDSASignature(sig)
	if !ok {
		return ReasonSignatureEncoding
	}
	if lowS && s.Cmp(p256HalfOrder) > 0 {
		return ReasonHighS
	}
	return ""
}

// VerifySignature verifies sig over msg under pub with the key's own
// algorithm: pure Ed25519, or ECDSA over P-256 with SHA-256 and a DER
// signature (either twin: the low-S rule is the certificate profile's, not
// this function's). It is the one verifier of every signature the protocol
// makes: certificates, signing requests, card_sig and envelope sig.
func VerifySignature(pub crypto.PublicKey, msg, sig []byte) bool {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		return len(k) == ed25519.PublicKeySize && len(sig) == ed25519.SignatureSize && ed25519.Verify(k, msg, sig)
	case *ecdsa.PublicKey:
		r, s, ok := parseECDSASignature(sig)
		if !ok || k.Curve != elliptic.P256() {
			return false
		}
		h := sha256.Sum256(msg)
		return ecdsa.Verify(k, h[:], r, s)
	}
	return false
}

// AlgOf returns the algorithm of a public key of the profile, or 0.
func AlgOf(pub crypto.PublicKey) KeyAlg {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		return Ed25519
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			return P256
		}
	}
	return 0
}

// Sign signs msg with an Ed25519 or P-256 key the way the protocol does:
// pure Ed25519 (64 bytes), or ECDSA/SHA-256 in DER. lowS makes an ECDSA
// signature the low-S twin, which certificates require.
func Sign(signer crypto.Signer, msg []byte, lowS bool) ([]byte, error) {
	switch AlgOf(signer.Public()) {
	case Ed25519:
		return signer.Sign(rand.Reader, msg, crypto.Hash(0))
	case P256:
		h := sha256.Sum256(msg)
		der, err := signer.Sign(rand.Reader, h[:], crypto.SHA256)
		if err != nil {
			return nil, err
		}
		if !lowS {
			return der, nil
		}
		r, s, ok := parseECDSASignature(der)
		if !ok {
			return nil, errors.New("cert: the signer made a signature that is not DER")
		}
		if s.Cmp(p256HalfOrder) > 0 {
			s.Sub(p256Order, s)
		}
		return encodeECDSASignature(r, s)
	}
	return nil, fmt.Errorf("cert: a %T key is neither Ed25519 nor P-256", signer.Public())
}

func encodeECDSASignature(r, s *big.Int) ([]byte, error) {
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1BigInt(r)
		b.AddASN1BigInt(s)
	})
	return b.Bytes()
}

// HighSTwin returns the other twin of a low-S ECDSA signature, (r, n − s):
// the one §14.1 refuses on a certificate. It is here for the tests that
// show the refusal.
func HighSTwin(sig []byte) ([]byte, error) {
	r, s, ok := parseECDSASignature(sig)
	if !ok {
		return nil, errors.New("cert: not a DER ECDSA signature")
	}
	return encodeECDSASignature(r, new(big.Int).Sub(p256Order, s))
}
