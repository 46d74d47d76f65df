package envelope

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hpke"
	"crypto/sha512"
	"errors"
	"fmt"

	"filippo.io/edwards25519"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
)

// suite is one of the two HPKE suites (§13.1), by the recipient key's
// algorithm: DHKEM(P-256)/HKDF-SHA256/AES-128-GCM for a P-256 leaf,
// DHKEM(X25519)/HKDF-SHA256/ChaCha20-Poly1305 for an Ed25519 leaf (its
// key converted to X25519).
type suite struct {
	name   string
	kem    hpke.KEM
	kdf    hpke.KDF
	aead   hpke.AEAD
	encLen int
}

func suiteFor(alg cert.KeyAlg, s *wire.Strings) suite {
	if alg == cert.P256 {
		return suite{name: s.SuiteP256, kem: hpke.DHKEM(ecdh.P256()), kdf: hpke.HKDFSHA256(), aead: hpke.AES128GCM(), encLen: 65}
	}
	return suite{name: s.SuiteX25519, kem: hpke.DHKEM(ecdh.X25519()), kdf: hpke.HKDFSHA256(), aead: hpke.ChaCha20Poly1305(), encLen: 32}
}

// SuiteName is the suite a leaf key takes, in the generation's spelling.
func SuiteName(leaf *cert.Certificate, gen wire.Generation) string {
	return suiteFor(leaf.KeyAlg, gen.Strings()).name
}

// RecipientPublicKey is the HPKE public key of a leaf: its P-256 key as
// is, or its Ed25519 key mapped to X25519 (RFC 7748 §4.1's birational
// map).
func RecipientPublicKey(leaf *cert.Certificate) (hpke.PublicKey, error) {
	switch k := leaf.PublicKey.(type) {
	case *ecdsa.PublicKey:
		pub, err := k.ECDH()
		if err != nil {
			return nil, err
		}
		return hpke.NewDHKEMPublicKey(pub)
	case ed25519.PublicKey:
		p, err := new(edwards25519.Point).SetBytes(k)
		if err != nil {
			return nil, err
		}
		pub, err := ecdh.X25519().NewPublicKey(p.BytesMontgomery())
		if err != nil {
			return nil, err
		}
		return hpke.NewDHKEMPublicKey(pub)
	}
	return nil, fmt.Errorf("envelope: a %T key takes no suite", leaf.PublicKey)
}

// RecipientPrivateKey is the HPKE private key of a leaf's private key: the
// P-256 key as is, or the X25519 key of an Ed25519 seed (the first half
// of SHA-512 of the seed, RFC 8032 §5.1.5; X25519 clamps it).
func RecipientPrivateKey(key crypto.Signer) (hpke.PrivateKey, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		priv, err := k.ECDH()
		if err != nil {
			return nil, err
		}
		return hpke.NewDHKEMPrivateKey(priv)
	case ed25519.PrivateKey:
		h := sha512.Sum512(k.Seed())
		defer clear(h[:])
		priv, err := ecdh.X25519().NewPrivateKey(h[:32])
		if err != nil {
			return nil, err
		}
		return hpke.NewDHKEMPrivateKey(priv)
	}
	return nil, errors.New("envelope: a leaf key is Ed25519 or P-256")
}
