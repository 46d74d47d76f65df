package jws

import (
	"errors"
	"fmt"
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
	for in, want := range map[string]error{
		"\"\xff\"": ErrInvalidUTF8, `["\ud800"]`: ErrInvalidUTF8, `{"\udc00":1}`: ErrInvalidUTF8, `"\ud83d\u0041"`: ErrInvalidUTF8,
		`[[[1]]]`: ErrTooDeep, `{} ]`: ErrTrailingData, `1 2`: ErrTrailingData, `01`: ErrTrailingData,
		``: ErrSyntax, `[1,]`: ErrSyntax, `{"a" 1}`: ErrSyntax, `{"a":1,}`: ErrSyntax, `[tru]`: ErrSyntax, `{'a':1}`: ErrSyntax, `[1 2]`: ErrSyntax, `"\x"`: ErrSyntax,
	} {
		if _, err := DecodeValue([]byte(in), 2); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", in, err, want)
		}
	}
	if _, err := DecodeValue([]byte(`[{"\u0062":1,"b":2}]`), 8); !errors.As(err, &dup) || dup.Name != "b" {
		t.Fatalf("escaped duplicate: %v", err)
	}
	v, err := DecodeValue([]byte(` ["\ud83d\ude00\n", -0.5e+3, true, false, null, {}, []] `), 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%#v", v); got != `[]interface {}{"😀\n", "-0.5e+3", true, false, interface {}(nil), map[string]interface {}{}, []interface {}{}}` {
		t.Fatalf("DecodeValue = %s", got)
	}
	c, err := Canonical([]byte(` {"b": [1.50, "x"], "a": {"d": 1e3, "c": null}} `), 8)
	if err != nil || string(c) != `{"a":{"c":null,"d":1e3},"b":[1.50,"x"]}` {
		t.Fatalf("Canonical = %s, %v", c, err)
	}
}
