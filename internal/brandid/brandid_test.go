package brandid

import (
	"regexp"
	"strings"
	"testing"
)

// rule is the Brand id syntax as BrandService documents it.
var rule = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestValid(t *testing.T) {
	for _, ok := range []string{"a", "acme", "Acme_shop-2", strings.Repeat("x", MaxLen)} {
		if !Valid(ok) {
			t.Errorf("Valid(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", MaxLen+1), "a b", "a.b", "a/b", "é", "a\x00", "a:b"} {
		if Valid(bad) {
			t.Errorf("Valid(%q) = true", bad)
		}
	}
}

// Every byte in every position, and every length, against the expression.
func TestValidIsTheRule(t *testing.T) {
	for c := 0; c < 256; c++ {
		for _, s := range []string{string([]byte{byte(c)}), "a" + string([]byte{byte(c)}) + "z"} {
			if got, want := Valid(s), rule.MatchString(s); got != want {
				t.Errorf("Valid(%q) = %v, the rule says %v", s, got, want)
			}
		}
	}
	for n := 0; n <= 80; n++ {
		s := strings.Repeat("b", n)
		if got, want := Valid(s), rule.MatchString(s); got != want {
			t.Errorf("length %d: Valid = %v, the rule says %v", n, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"acme", "", "a b", strings.Repeat("x", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s), rule.MatchString(s); got != want {
			t.Fatalf("Valid(%q) = %v, the rule says %v", s, got, want)
		}
	})
}
