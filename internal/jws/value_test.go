package jws

import (
	"errors"
	"testing"
)

// TestDecodeValue: duplicates are refused at any depth with their name,
// and so are invalid UTF-8, nesting past the bound and trailing data;
// Canonical sorts members and keeps numbers as written.
func TestDecodeValue(t *testing.T) {
	var dup *DuplicateError
	if _, err := DecodeValue([]byte(`[{"a":{"b":1,"b":2}}]`), 8); !errors.As(err, &dup) || dup.Name != "b" {
		t.Fatalf("nested duplicate: %v", err)
	}
	for in, want := range map[string]error{"\"\xff\"": ErrInvalidUTF8, `[[[1]]]`: ErrTooDeep, `{} ]`: ErrTrailingData, `1 2`: ErrTrailingData} {
		if _, err := DecodeValue([]byte(in), 2); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", in, err, want)
		}
	}
	c, err := Canonical([]byte(` {"b": [1.50, "x"], "a": {"d": 1e3, "c": null}} `), 8)
	if err != nil || string(c) != `{"a":{"c":null,"d":1e3},"b":[1.50,"x"]}` {
		t.Fatalf("Canonical = %s, %v", c, err)
	}
}
