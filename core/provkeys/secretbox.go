package provkeys

import (
	"errors"

	"pactd.dev/pactd/internal/keyseal"
)

// SecretBox seals other secrets pactd must read back (webhook signing
// secrets) under the same key-encryption key as the signing keys, with
// pactd's one sealing (internal/keyseal), each bound to its purpose and
// owner's id so a sealed value cannot be moved to another row or used for
// another purpose.
type SecretBox struct{ s *keyseal.Sealer }

// NewSecretBox returns a box under the 32-byte key-encryption key.
func NewSecretBox(kek []byte) (*SecretBox, error) {
	s, err := keyseal.New(kek)
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

// Seal returns the sealed form of plaintext for (purpose, id).
func (b *SecretBox) Seal(purpose, id string, plaintext []byte) []byte {
	return b.s.Seal(secretData(purpose, id), plaintext)
}

// Open reverses Seal for the same purpose and id.
func (b *SecretBox) Open(purpose, id string, sealed []byte) ([]byte, error) {
	p, err := b.s.Open(secretData(purpose, id), sealed)
	if err != nil {
		return nil, ErrSecretOpen
	}
	return p, nil
}
