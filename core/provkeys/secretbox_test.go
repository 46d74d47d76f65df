package provkeys_test

import (
	"bytes"
	"errors"
	"testing"

	"pactd.dev/pactd/core/provkeys"
)

// TestSecretBox: a sealed secret opens for its purpose and id under its
// key-encryption key, and for nothing else.
func TestSecretBox(t *testing.T) {
	box, err := provkeys.NewSecretBox(testKEK)
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.Seal("webhook", "wh_1", []byte("whsec_x"))
	if bytes.Contains(sealed, []byte("whsec_x")) {
		t.Fatal("sealed bytes hold the plaintext")
	}
	if p, err := box.Open("webhook", "wh_1", sealed); err != nil || string(p) != "whsec_x" {
		t.Fatalf("Open = %q, %v", p, err)
	}
	other, _ := provkeys.NewSecretBox(bytes.Repeat([]byte{9}, 32))
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"another id":      func() ([]byte, error) { return box.Open("webhook", "wh_2", sealed) },
		"another purpose": func() ([]byte, error) { return box.Open("other", "wh_1", sealed) },
		"another KEK":     func() ([]byte, error) { return other.Open("webhook", "wh_1", sealed) },
		"damaged":         func() ([]byte, error) { return box.Open("webhook", "wh_1", flipped) },
		"empty":           func() ([]byte, error) { return box.Open("webhook", "wh_1", nil) },
	} {
		if _, err := open(); !errors.Is(err, provkeys.ErrSecretOpen) {
			t.Errorf("%s: err = %v, want ErrSecretOpen", name, err)
		}
	}
	if _, err := provkeys.NewSecretBox([]byte("short")); err == nil {
		t.Fatal("a short KEK was accepted")
	}
}
