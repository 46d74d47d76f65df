package codes

import (
	"bytes"
	"crypto/rand"
	"maps"
	"slices"
	"testing"
)

// User codes use every alphabet letter and only those, in XXXX-XXXX form.
func TestNewUserCode(t *testing.T) {
	seen := map[byte]bool{}
	for range 200 {
		c, err := NewUserCode(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := NormalizeUserCode(c)
		if !ok || FormatUserCode(n) != c {
			t.Fatalf("drawn code %q is not canonical", c)
		}
		for i := range len(n) {
			seen[n[i]] = true
		}
	}
	// The alphabet docs/delegation.md documents: RFC 8628 §6.1's 20 consonants.
	const documented = "BCDFGHJKLMNPQRSTVWXZ"
	want := map[byte]bool{}
	for i := range len(documented) {
		want[documented[i]] = true
	}
	if !maps.Equal(seen, want) || len(seen) != 20 {
		t.Fatalf("200 codes used the letters %q; want exactly the 20 of %s", slices.Sorted(maps.Keys(seen)), documented)
	}
	// Bytes at or above 240 are rejected (no modulo bias); a source that
	// only yields them is an error, not an endless loop.
	if _, err := NewUserCode(bytes.NewReader(bytes.Repeat([]byte{250}, 1<<12))); err == nil {
		t.Fatal("a source of rejected bytes gave a code")
	}
	c, err := NewUserCode(bytes.NewReader(append(bytes.Repeat([]byte{245}, 16), bytes.Repeat([]byte{21}, 16)...)))
	if err != nil || c != "CCCC-CCCC" {
		t.Fatalf("code from byte 21 = %q, %v; want CCCC-CCCC", c, err)
	}
}
