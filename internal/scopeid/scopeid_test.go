package scopeid

import (
	"regexp"
	"strings"
	"testing"
)

// specPattern is PACT §5.1's scope id syntax, verbatim.
var specPattern = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`)

func TestValid(t *testing.T) {
	for _, ok := range []string{"a", "orders:read", "profile:read", "!#$%&'()*+,-./[]^_`{|}~", strings.Repeat("x", MaxLen)} {
		if !Valid(ok) {
			t.Errorf("Valid(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", " ", "a b", `a"b`, `a\b`, "a\tb", "a\nb", "a\x7fb", "é", "a\xffb",
		strings.Repeat("x", MaxLen+1), strings.Repeat("x", 256)} {
		if Valid(bad) {
			t.Errorf("Valid(%q) = true", bad)
		}
	}
}

// TestValidIsTheSpecSyntaxWithinMaxLen checks every single byte and the
// length bound against the spec's expression.
func TestValidIsTheSpecSyntaxWithinMaxLen(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := "a" + string([]byte{byte(c)}) + "z"
		if got, want := Valid(s), specPattern.MatchString(s); got != want {
			t.Errorf("Valid(%q) = %v, the spec says %v", s, got, want)
		}
	}
	for n := 1; n <= 300; n++ {
		s := strings.Repeat("s", n)
		if got, want := Valid(s), n <= MaxLen; got != want {
			t.Errorf("Valid(%d bytes) = %v, want %v", n, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"orders:read", "", "a b", `a"`, strings.Repeat("x", 129), "\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s), len(s) <= MaxLen && specPattern.MatchString(s); got != want {
			t.Fatalf("Valid(%q) = %v, want %v", s, got, want)
		}
	})
}
