package codes_test

import (
	"slices"
	"strings"
	"testing"

	"pactd.dev/pactd/internal/scopeid"
	"pactd.dev/pactd/services/delegation/codes"
)

// FuzzNormalizeUserCode: whatever a User types, normalization is bounded,
// deterministic, case- and dash-insensitive, and yields only canonical
// codes that round-trip through their display form.
func FuzzNormalizeUserCode(f *testing.F) {
	for _, s := range []string{"BCDF-GHJK", "bcdfghjk", "BCDF GHJK", "-B-C-D-F-G-H-J-K-", "BCDF-GHJ", "BCDF-GHJKL",
		"AEIO-UBCD", "0000-0000", "ＢＣＤＦ-ＧＨＪＫ", "bcdf\x00ghjk", strings.Repeat("B", 65), "", "----", "ßcdf-ghjk"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		code, ok := codes.NormalizeUserCode(in)
		again, ok2 := codes.NormalizeUserCode(in)
		if code != again || ok != ok2 {
			t.Fatalf("not deterministic for %q", in)
		}
		if !ok {
			if code != "" {
				t.Fatalf("refused %q but returned %q", in, code)
			}
			return
		}
		if len(code) != 8 || strings.Trim(code, codes.UserCodeAlphabet) != "" {
			t.Fatalf("%q normalized to %q: not 8 alphabet characters", in, code)
		}
		if len(in) > 64 {
			t.Fatalf("accepted %d bytes of input", len(in))
		}
		shown := codes.FormatUserCode(code)
		if c, ok := codes.NormalizeUserCode(shown); !ok || c != code {
			t.Fatalf("display form %q does not round-trip to %q", shown, code)
		}
		if c, ok := codes.NormalizeUserCode(strings.ToLower(in)); !ok || c != code {
			t.Fatalf("lower-case %q normalizes to %q, %v; want %q", in, c, ok, code)
		}
		if c, ok := codes.NormalizeUserCode(code); !ok || c != code {
			t.Fatalf("not idempotent on %q", code)
		}
	})
}

// FuzzParseScope: a scope parameter is either refused or split into 1 to
// 50 distinct, valid ids that re-parse to themselves and all occur in the
// input.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"orders:read", "orders:read orders:write", "  a  b  ", "a\tb", "a\nb", `a"b`, `a\b`, "",
		"a a a", "é", strings.Repeat("x ", 51), strings.Repeat("y", 129), "!#$%&'()*+,-./:;<=>?@[]^_`{|}~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ids, ok := codes.ParseScope(in)
		if !ok {
			if len(ids) > 0 && len(ids) <= codes.MaxScopes {
				// A refusal may carry a partial list only when it is too long.
				for _, id := range ids {
					if !scopeid.Valid(id) {
						t.Fatalf("refused %q with an invalid id %q", in, id)
					}
				}
			}
			return
		}
		if len(ids) == 0 || len(ids) > codes.MaxScopes {
			t.Fatalf("%q gave %d ids", in, len(ids))
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if !scopeid.Valid(id) || seen[id] || !strings.Contains(in, id) {
				t.Fatalf("%q gave a bad, repeated or invented id %q", in, id)
			}
			seen[id] = true
		}
		if strings.ContainsFunc(in, func(r rune) bool { return r != ' ' && (r < 0x21 || r > 0x7e || r == '"' || r == '\\') }) {
			t.Fatalf("accepted %q, which has a character outside the scope syntax", in)
		}
		back, ok := codes.ParseScope(strings.Join(ids, " "))
		if !ok || !slices.Equal(back, ids) {
			t.Fatalf("%v does not re-parse to itself: %v", ids, back)
		}
	})
}
