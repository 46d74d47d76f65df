package authzdetails

import (
	"testing"
)

var testTypes = []Type{{
	Type: "https://acme.example/authorization/order-cancel/v1", Description: "Cancel one order", Scope: "orders:cancel",
	Fields: []Field{
		{Name: "order_id", Kind: KindString, Required: true, Label: "order", Pattern: `^[0-9]{4}$`},
		{Name: "actions", Kind: KindEnumArray, Required: true, Label: "allowed", Values: []string{"cancel"}},
	},
}, {
	Type: "urn:example:profile", Description: "See your profile", Scope: "profile:read", Combination: CombineSingle,
	Fields: []Field{{Name: "section", Kind: KindEnum, Label: "section", Values: []string{"email", "address"}}},
}}

// Canonical JSON: members sorted, no whitespace, arrays and entries in the
// order sent, encoding/json escaping (so a token's claim compares equal).
func TestParseCanonical(t *testing.T) {
	raw := "[\n {\"type\": \"https://acme.example/authorization/order-cancel/v1\", \"order_id\": \"1002\", \"actions\": [\"cancel\"]},\n" +
		` {"section":"email","type":"urn:example:profile"}]`
	entries, canonical, err := Parse(raw, testTypes, []string{"orders:cancel", "profile:read"})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"actions":["cancel"],"order_id":"1002","type":"https://acme.example/authorization/order-cancel/v1"},` +
		`{"section":"email","type":"urn:example:profile"}]`
	if canonical != want {
		t.Fatalf("canonical = %s\nwant %s", canonical, want)
	}
	again, err2 := Canonicalize([]byte(canonical))
	if err2 != nil || again != canonical {
		t.Fatalf("Canonicalize(canonical) = %s, %v; want it unchanged", again, err2)
	}
	decoded, err3 := Decode(canonical)
	if err3 != nil || Encode(decoded) != canonical || len(entries) != 2 {
		t.Fatalf("Decode/Encode round trip = %v, %v", decoded, err3)
	}
	if w := Words(Find(testTypes, entries[0].Type), entries[0]); w != "Cancel one order: order 1002; allowed cancel" {
		t.Fatalf("words = %q", w)
	}
	if w := Words(nil, entries[1]); w != "urn:example:profile: section email" {
		t.Fatalf("words of an undeclared type = %q", w)
	}
}

// The strict reader's refusals reach the PA as the reason they are: each
// text below breaks one RFC 8259 or PACT strictness rule and nothing else,
// and the same entry written plainly parses (positive control).
func TestParseStrictJSON(t *testing.T) {
	const good = `[{"type":"urn:example:profile","section":"email"}]`
	if _, _, err := Parse(good, testTypes, []string{"profile:read"}); err != nil {
		t.Fatalf("positive control refused: %v", err)
	}
	for raw, want := range map[string]Reason{
		`[{"type":"urn:example:profile","section":"email"}] x`:                      ReasonMalformed, // trailing data
		`[{"type":"urn:example:profile","section":"email",}]`:                       ReasonMalformed, // syntax
		"[{\"type\":\"urn:example:profile\",\"section\":\"\xff\"}]":                 ReasonMalformed, // invalid UTF-8
		`[{"type":"urn:example:profile","section":"\ud800"}]`:                       ReasonMalformed, // lone surrogate
		`[{"type":"urn:example:profile","section":"email","section":"email"}]`:      ReasonDuplicate,
		`[{"type":"urn:example:profile","s\u0065ction":"email","section":"email"}]`: ReasonDuplicate, // same name after unescaping
		`[[[[[[[[[["deep"]]]]]]]]]]`:                                                ReasonMalformed, // nesting past the bound
	} {
		if _, _, err := Parse(raw, testTypes, []string{"profile:read"}); err == nil || err.Reason != want {
			t.Errorf("Parse(%q) = %v, want reason %s", raw, err, want)
		}
	}
}

// Match: both absent, or the same canonical value; anything else refuses.
func TestMatch(t *testing.T) {
	const g = `[{"section":"email","type":"urn:example:profile"}]`
	for _, tc := range []struct {
		name, grant string
		claim       []byte
		ok          bool
	}{
		{"ok/both-absent", "", nil, true},
		{"ok/same", g, []byte(g), true},
		{"ok/reordered", g, []byte(`[ {"type":"urn:example:profile","section":"email"} ]`), true},
		{"fail/claim-dropped", g, nil, false},
		{"fail/claim-added", "", []byte(g), false},
		{"fail/other-value", g, []byte(`[{"section":"address","type":"urn:example:profile"}]`), false},
		{"fail/duplicate-member", g, []byte(`[{"section":"email","section":"email","type":"urn:example:profile"}]`), false},
	} {
		if _, ok := Match(tc.grant, tc.claim); ok != tc.ok {
			t.Errorf("%s: Match = %v, want %v", tc.name, ok, tc.ok)
		}
	}
}

// CheckTypes refuses each broken rule by its field path; the good types
// pass (positive control).
func TestCheckTypes(t *testing.T) {
	scopes := map[string]bool{"orders:cancel": true, "profile:read": true}
	if p := CheckTypes(testTypes, scopes); len(p) != 0 {
		t.Fatalf("good types: %v", p)
	}
	for pattern, ok := range map[string]bool{
		`^[0-9]{4}$`: true, `^(?:a|b)$`: true, `^a$`: true,
		`[0-9]{4}`: false, `^[0-9]{4}`: false, `[0-9]{4}$`: false, `^a|b$`: false, `(?m)^a$`: false, `^a\$`: false, `^$`: false, `^(a$`: false,
	} {
		if got := checkPattern(pattern) == ""; got != ok {
			t.Errorf("checkPattern(%q) accepted = %v, want %v", pattern, got, ok)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts is canonical, decodes
// back to the same value, and is within the bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[{"type":"https://acme.example/authorization/order-cancel/v1","order_id":"1002","actions":["cancel"]}]`,
		`[{"type":"urn:example:profile","section":"email"}]`, `[]`, `null`, `[{`, `[{"type":"x","type":"y"}]`,
		`[{"type":"urn:example:profile","section":"e\u006dail"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		entries, canonical, err := Parse(raw, testTypes, []string{"orders:cancel", "profile:read"})
		if err != nil {
			if err.Description == "" || err.Reason == "" {
				t.Fatalf("refusal without reason or description: %+v", err)
			}
			return
		}
		if len(entries) == 0 || len(entries) > MaxEntries || len(canonical) > MaxCanonicalBytes {
			t.Fatalf("accepted out of bounds: %d entries, %d bytes", len(entries), len(canonical))
		}
		if c, cerr := Canonicalize([]byte(canonical)); cerr != nil || c != canonical {
			t.Fatalf("accepted value is not canonical: %s vs %s (%v)", canonical, c, cerr)
		}
		if _, again, perr := Parse(canonical, testTypes, []string{"orders:cancel", "profile:read"}); perr != nil || again != canonical {
			t.Fatalf("canonical value does not parse to itself: %v %s", perr, again)
		}
	})
}

// Text that reaches the consent words may not reorder how they display: a
// value a PA sends with a bidirectional override or a C1 control is
// refused (ReasonValue) even when the Brand's pattern would match it, and
// so is such a character in a declared enum value or description. Plain
// non-ASCII text passes (positive control).
func TestWordsTextRefusesDisplayControls(t *testing.T) {
	loose := []Type{{
		Type: "urn:example:note", Description: "Read one note", Scope: "notes:read",
		Fields: []Field{{Name: "note", Kind: KindString, Required: true, Label: "note", Pattern: `^.{1,64}$`}},
	}}
	parse := func(v string) *Error {
		_, _, err := Parse(`[{"type":"urn:example:note","note":"`+v+`"}]`, loose, []string{"notes:read"})
		return err
	}
	if err := parse(`Caf\u00e9 1002`); err != nil {
		t.Fatalf("plain non-ASCII value refused: %+v", err)
	}
	for _, v := range []string{`1002\u202e3001`, `a\u2066b\u2069`, `a\u0085b`, `a\u009bb`, `a\u202ab`} {
		if err := parse(v); err == nil || err.Reason != ReasonValue {
			t.Errorf("value %s: got %+v, want reason %q", v, err, ReasonValue)
		}
	}
	scopes := map[string]bool{"notes:read": true}
	bad := []Type{{
		Type: "urn:example:note", Description: "Read \u202eone note", Scope: "notes:read",
		Fields: []Field{{Name: "which", Kind: KindEnum, Label: "which", Values: []string{"first", "la\u2067st"}}},
	}}
	got := map[string]bool{}
	for _, p := range CheckTypes(bad, scopes) {
		got[p.Field] = true
	}
	if !got["[0].description"] || !got["[0].fields[0].values[1]"] || len(got) != 2 {
		t.Fatalf("CheckTypes problems = %v, want [0].description and [0].fields[0].values[1]", got)
	}
	if p := CheckTypes(loose, scopes); len(p) != 0 {
		t.Fatalf("good type refused: %v", p)
	}
}
