package keyseal_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"pactd.dev/pactd/internal/keyseal"
)

func kek(t *testing.T) []byte {
	k := make([]byte, keyseal.KEKSize)
	_, _ = rand.Read(k)
	return k
}

// TestSealOpen: a sealed secret opens with its KEK and binding, and with
// nothing else: another KEK, another binding, a changed byte, a format
// version other than 1. The sealed form never holds the secret's bytes.
func TestSealOpen(t *testing.T) {
	k := kek(t)
	s, err := keyseal.New(k)
	if err != nil {
		t.Fatal(err)
	}
	secret := bytes.Repeat([]byte("secret key bytes"), 3)
	sealed := s.Seal([]byte("binding"), secret)
	if len(sealed) != 1+12+len(secret)+16 || sealed[0] != 1 || bytes.Contains(sealed, secret[:16]) {
		t.Fatalf("sealed form: %d bytes", len(sealed))
	}
	got, err := s.Open([]byte("binding"), sealed)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %v", err)
	}
	other, _ := keyseal.New(kek(t))
	changed := append([]byte(nil), sealed...)
	changed[len(changed)-1] ^= 1
	versioned := append([]byte{2}, sealed[1:]...)
	for name, open := range map[string]func() ([]byte, error){
		"another KEK":     func() ([]byte, error) { return other.Open([]byte("binding"), sealed) },
		"another binding": func() ([]byte, error) { return s.Open([]byte("bindinG"), sealed) },
		"a changed byte":  func() ([]byte, error) { return s.Open([]byte("binding"), changed) },
		"version 2":       func() ([]byte, error) { return s.Open([]byte("binding"), versioned) },
		"empty":           func() ([]byte, error) { return s.Open([]byte("binding"), nil) },
	} {
		if b, err := open(); !errors.Is(err, keyseal.ErrOpen) || b != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := keyseal.New(k[:31]); err == nil {
		t.Error("a 31-byte KEK was accepted")
	}
}
