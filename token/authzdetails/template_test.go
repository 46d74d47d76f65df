package authzdetails

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// templated is a type with both kinds of member a template can name: a
// required string, an array of two actions, and an optional string.
func templated(tmpl string) Type {
	return Type{
		Type: "https://air.example/authorization/rebook/v1", Description: "Rebook a reservation", Scope: "trips:rebook",
		ConsentTemplate: tmpl,
		Fields: []Field{
			{Name: "reservation", Kind: KindString, Required: true, Label: "reservation", Pattern: `^[A-Z0-9]{6}$`},
			{Name: "actions", Kind: KindEnumArray, Required: true, Label: "allowed", Values: []string{"rebook", "cancel"}},
			{Name: "flight", Kind: KindString, Label: "flight", Pattern: `^[A-Z]{2} [0-9]{1,4}$`},
		},
	}
}

func parseOne(t *testing.T, ty Type, raw string) Entry {
	t.Helper()
	entries, _, err := Parse("["+raw+"]", []Type{ty}, []string{ty.Scope})
	if err != nil {
		t.Fatal(err)
	}
	return entries[0]
}

// Words with a template: the entry's validated values in the
// placeholders, arrays joined by ", " as the default words join them,
// doubled braces literal, and a field the entry lacks rendered as nothing
// (the default words leave it out too).
func TestWordsTemplate(t *testing.T) {
	const full = `{"type":"https://air.example/authorization/rebook/v1","reservation":"K7PQ2M","actions":["rebook","cancel"],"flight":"SK 318"}`
	const noFlight = `{"type":"https://air.example/authorization/rebook/v1","reservation":"K7PQ2M","actions":["rebook"]}`
	for _, tc := range []struct{ name, tmpl, entry, want string }{
		{"issue-example", "Only reservation {reservation}, to flight {flight}", full, "Only reservation K7PQ2M, to flight SK 318"},
		{"array-joined", "{actions} reservation {reservation}", full, "rebook, cancel reservation K7PQ2M"},
		{"placeholder-twice", "{reservation} ({reservation})", full, "K7PQ2M (K7PQ2M)"},
		{"literal-braces", "{{{reservation}}} {{flight}} }}", full, "{K7PQ2M} {flight} }"},
		{"absent-optional-field", "Only reservation {reservation}, to flight {flight}", noFlight, "Only reservation K7PQ2M, to flight "},
		{"absent-optional-field-alone", "{flight}{reservation}", noFlight, "K7PQ2M"},
	} {
		ty := templated(tc.tmpl)
		if p := CheckTypes([]Type{ty}, map[string]bool{ty.Scope: true}); len(p) != 0 {
			t.Fatalf("%s: template refused: %v", tc.name, p)
		}
		if got := Words(&ty, parseOne(t, ty, tc.entry)); got != tc.want {
			t.Errorf("%s: Words = %q, want %q", tc.name, got, tc.want)
		}
	}
	// The default words of the same entries, for comparison: the absent
	// flight is left out there as well.
	def := templated("")
	if got, want := Words(&def, parseOne(t, def, noFlight)), "Rebook a reservation: reservation K7PQ2M; allowed rebook"; got != want {
		t.Errorf("default Words = %q, want %q", got, want)
	}
	if got, want := Words(&def, parseOne(t, def, full)), "Rebook a reservation: reservation K7PQ2M; allowed rebook, cancel; flight SK 318"; got != want {
		t.Errorf("default Words = %q, want %q", got, want)
	}
}

// Rendering never exceeds MaxTemplateWords and never fails: a stored
// template that no longer parses (declared before a rule existed) or an
// entry whose values outgrow the checked bound (accepted under earlier
// declarations) gets the default words instead.
func TestWordsTemplateFallsBack(t *testing.T) {
	ty := templated(strings.Repeat("{reservation}", 8)) // 8 × 256 = 2048: accepted
	if p := checkTemplate(ty.ConsentTemplate, ty.Fields); p != "" {
		t.Fatalf("template refused: %s", p)
	}
	long := strings.Repeat("A", 300) // longer than a value may be today
	e := Entry{Type: ty.Type, Members: map[string]Value{"reservation": {Values: []string{long}}}}
	if got, want := Words(&ty, e), "Rebook a reservation: reservation "+long; got != want {
		t.Errorf("Words(oversized) = %q, want the default words", got)
	}
	broken := templated("Only {reservation")
	e = Entry{Type: ty.Type, Members: map[string]Value{"reservation": {Values: []string{"K7PQ2M"}}}}
	if got, want := Words(&broken, e), "Rebook a reservation: reservation K7PQ2M"; got != want {
		t.Errorf("Words(unparsable template) = %q, want %q", got, want)
	}
}

// FuzzConsentTemplate: checking a template never panics; an accepted one
// renders, for the longest values its fields allow and for an entry with
// no members, within MaxTemplateWords, as UTF-8 without the characters a
// template may not hold (the values here are clean, as validated values
// are).
func FuzzConsentTemplate(f *testing.F) {
	for _, s := range []string{
		"Only reservation {reservation}, to flight {flight}", "{{{reservation}}}", "{", "}", "{}", "{{", "}}{actions}",
		"{reservation", "{ reservation }", "\u202e{reservation}", strings.Repeat("{reservation}", 9), "é{actions}",
	} {
		f.Add(s)
	}
	ty := templated("")
	longest := Entry{Type: ty.Type, Members: map[string]Value{
		"reservation": {Values: []string{strings.Repeat("R", MaxValueBytes)}},
		"actions":     {Array: true, Values: ty.Fields[1].Values},
		"flight":      {Values: []string{strings.Repeat("F", MaxValueBytes)}},
	}}
	f.Fuzz(func(t *testing.T, tmpl string) {
		if checkTemplate(tmpl, ty.Fields) != "" || tmpl == "" {
			return
		}
		for _, e := range []Entry{longest, {Type: ty.Type}} {
			w, ok := renderTemplate(tmpl, e)
			if !ok || len(w) > MaxTemplateWords {
				t.Fatalf("accepted template %q renders ok=%v, %d bytes", tmpl, ok, len(w))
			}
			if !utf8.ValidString(w) || strings.ContainsFunc(w, unsafeWordsRune) {
				t.Fatalf("accepted template %q renders unsafe words %q", tmpl, w)
			}
		}
	})
}
