package provkeys

import (
	"errors"
	"fmt"
)

// SecretBox seals other secrets pactd must read back (webhook signing
// secrets) under the same key-encryption key as the signing keys, each
// bound to its purpose and owner's id so a sealed value cannot be moved to
// another row or used for another purpose.
type SecretBox struct{ s *sealer }

// NewSecretBox returns a box under the 32-byte key-encryption key.
func NewSecretBox(kek []byte) (*SecretBox, error) {
	s, err := newSealer(kek)
	if err != nil {
		return nil, err
	}
	return &SecretBox{s: s}, nil
}

// ErrSecretOpen means a sealed secret does not open: another
// key-encryption key, another owner or purpose, or damaged bytes.
var ErrSecretOpen = errors.New("provkeys: sealed secret does not open with this key-encryption key")

func secretData(purpose, id string) []byte {
	return []byte("pactd secret v1\x00" + purpose + "\x00" + id)
}

// Seal returns version || nonce || ciphertext || tag of plaintext for
// (purpose, id).
func (b *SecretBox) Seal(purpose, id string, plaintext []byte) []byte {
	return b.s.aead.Seal([]byte{sealVersion}, nil, plaintext, secretData(purpose, id))
}

// Open reverses Seal for the same purpose and id.
func (b *SecretBox) Open(purpose, id string, sealed []byte) ([]byte, error) {
	if len(sealed) < 1 || sealed[0] != sealVersion {
		return nil, fmt.Errorf("%w: unknown sealed format", ErrSecretOpen)
	}
	p, err := b.s.aead.Open(nil, nil, sealed[1:], secretData(purpose, id))
	if err != nil {
		return nil, ErrSecretOpen
	}
	return p, nil
}
