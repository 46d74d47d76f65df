package grants

import (
	"encoding/json"
	"strings"
	"testing"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/token/authzdetails"
)

// FuzzCheckEntry: CheckGrant's one authorization_details entry is
// untrusted input wrapped into an array for the parser. Whatever it is,
// the parse never panics, and an accepted value is exactly one JSON object
// (never two smuggled in through the wrapping) of a declared type, whose
// canonical form parses back to itself.
func FuzzCheckEntry(f *testing.F) {
	b := db.Brand{ID: "rar", Delegation: db.Delegation{Scopes: []db.Scope{{ID: "orders:cancel"}}, AuthorizationDetailsTypes: []authzdetails.Type{
		{Type: "https://acme.example/order", Scope: "orders:cancel", Combination: authzdetails.CombineUnion, Fields: []authzdetails.Field{
			{Name: "order_id", Kind: authzdetails.KindString, Required: true, Label: "order", Pattern: `^[0-9]{4}$`},
			{Name: "actions", Kind: authzdetails.KindEnumArray, Required: true, Label: "actions", Values: []string{"cancel"}},
		}},
	}}}
	ok := `{"type":"https://acme.example/order","order_id":"1002","actions":["cancel"]}`
	for _, s := range []string{ok, ok + "," + ok, ok + "]", "[" + ok + "]", "{", `{"type":1}`, ok + `,{"type":"x"}`, "{}]" + ",[{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return
		}
		e, err := parseCheckEntry(b, raw)
		if err != nil {
			return
		}
		var obj map[string]any
		if json.Unmarshal([]byte(raw), &obj) != nil {
			t.Fatalf("accepted %q, which is not one JSON object", raw)
		}
		if authzdetails.Find(b.Delegation.AuthorizationDetailsTypes, e.Type) == nil {
			t.Fatalf("accepted an entry of undeclared type %q", e.Type)
		}
		again, err := parseCheckEntry(b, e.Canonical())
		if err != nil || again.Canonical() != e.Canonical() {
			t.Fatalf("canonical %s does not parse back: %v", e.Canonical(), err)
		}
	})
}
