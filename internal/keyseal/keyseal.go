// Package keyseal is how pactd keeps a private key at rest: sealed with
// AES-256-GCM (a random 96-bit nonce per seal) under the 32-byte
// key-encryption key (KEK) from configuration, which is never stored in the
// database. Every sealed key names what it is in its additional data (its
// purpose and key id, say), so a sealed key moved to another row, or to
// another kind of key, does not open. The Provider's signing keys
// (core/provkeys) and the HDTP hosts' leaf keys are sealed this way.
//
// A sealed value is a format version byte (1), the nonce, the ciphertext
// and the tag.
package keyseal

import (
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
)

// KEKSize is the size of the key-encryption key: AES-256.
const KEKSize = 32

// version prefixes every sealed value, so the format can change later.
const version = 1

// ErrOpen means a sealed value does not open: another KEK, other
// additional data, an unknown format or a changed byte.
var ErrOpen = errors.New("keyseal: the sealed key does not open with this key-encryption key and binding")

// Sealer seals and opens secrets under one KEK.
type Sealer struct{ aead cipher.AEAD }

// New returns a Sealer for the KEK.
func New(kek []byte) (*Sealer, error) {
	if len(kek) != KEKSize {
		return nil, fmt.Errorf("keyseal: key-encryption key must be %d bytes, got %d", KEKSize, len(kek))
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("keyseal: %w", err)
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("keyseal: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal returns the sealed form of secret, bound to ad.
func (s *Sealer) Seal(ad, secret []byte) []byte {
	return s.aead.Seal([]byte{version}, nil, secret, ad)
}

// Open returns the secret of a sealed value bound to ad, or ErrOpen. The
// caller clears the secret when done with it.
func (s *Sealer) Open(ad, sealed []byte) ([]byte, error) {
	if len(sealed) < 1 || sealed[0] != version {
		return nil, ErrOpen
	}
	b, err := s.aead.Open(nil, nil, sealed[1:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return b, nil
}
