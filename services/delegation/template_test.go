package delegation_test

import (
	"fmt"
	"testing"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/token/authzdetails"
)

// useTemplates gives the Brand's types (by URI) these consent templates.
func useTemplates(t *testing.T, s db.Store, brandID string, templates map[string]string) {
	t.Helper()
	b, err := s.GetBrand(t.Context(), brandID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Delegation.AuthorizationDetailsTypes {
		ty := &b.Delegation.AuthorizationDetailsTypes[i]
		if tmpl, ok := templates[ty.Type]; ok {
			ty.ConsentTemplate = tmpl
		}
	}
	if _, err := s.UpdateBrand(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

// words are the "scope | words" of consent details.
func words(ds []*pactv1.ConsentAuthorizationDetail) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.GetScope()+" | "+d.GetWords())
	}
	return fmt.Sprintf("%q", out)
}

// A type's consent_template words its entries wherever pactd words them:
// DescribeConsent and ListGrants (trusted-frontend Brand) and
// BeginConsent's page content (signed-assertion Brand), with the entry's
// values, arrays joined by ", ", and an optional field the entry lacks
// rendered as nothing. A type without a template keeps the default words,
// and the words follow the Brand's current declaration.
func TestConsentTemplateWords(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e, login := signedEnv(t, s)
		seedRAR(t, s)
		ctx := t.Context()
		useTemplates(t, s, "rar", map[string]string{
			cancelType:  "Only order {order_id}: {actions} it",
			profileType: "Only your {section} (note: {note})",
		})
		const scope = "orders:read orders:cancel profile:read"
		details := `[` + cancelEntry("1002") + `,` + cancelEntry("1003") + `,{"type":"` + profileType + `","section":"address"}]`
		r := e.post("rar", "device_authorization", paAuth, rarForm(scope, details))
		if r.status != 200 {
			t.Fatalf("device authorization: %d %s", r.status, r.body)
		}
		uc := r.json(t)["user_code"].(string)
		dsc, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "rar", UserCode: uc})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%q", []string{
			"orders:cancel | Only order 1002: cancel it",
			"orders:cancel | Only order 1003: cancel it",
			"profile:read | Only your address (note: )",
		})
		if got := words(dsc.GetAuthorizationDetails()); got != want {
			t.Fatalf("DescribeConsent words = %s\nwant %s", got, want)
		}
		if _, err := e.approve("rar", uc, "alice", "orders:read", "orders:cancel", "profile:read"); err != nil {
			t.Fatal(err)
		}
		listed := func() string {
			t.Helper()
			list, err := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "rar", BrandUser: "alice"})
			if err != nil || len(list.GetGrants()) != 1 {
				t.Fatalf("ListGrants = %v, %v", list, err)
			}
			return words(list.GetGrants()[0].GetAuthorizationDetails())
		}
		if got := listed(); got != want {
			t.Fatalf("ListGrants words = %s\nwant %s", got, want)
		}

		// The optional note, when present, fills its placeholder.
		r = e.post("rar", "device_authorization", paAuth,
			rarForm("profile:read", `[{"type":"`+profileType+`","section":"email","note":"for the invoice"}]`))
		dsc, err = e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "rar", UserCode: r.json(t)["user_code"].(string)})
		if want := fmt.Sprintf("%q", []string{"profile:read | Only your email (note: for the invoice)"}); err != nil ||
			words(dsc.GetAuthorizationDetails()) != want {
			t.Fatalf("DescribeConsent (with note) = %v, %v; want %s", dsc, err, want)
		}

		// Words are built when read: the Brand's new template words the
		// existing grant, and without a template the default words return
		// byte for byte.
		useTemplates(t, s, "rar", map[string]string{cancelType: "Cancel #{order_id} and nothing else", profileType: ""})
		if got, want := listed(), fmt.Sprintf("%q", []string{
			"orders:cancel | Cancel #1002 and nothing else",
			"orders:cancel | Cancel #1003 and nothing else",
			"profile:read | See part of your profile: section address",
		}); got != want {
			t.Fatalf("ListGrants words after the update = %s\nwant %s", got, want)
		}

		// BeginConsent (signed-assertion Brand): the page content it returns
		// carries the template's words.
		b, err := s.GetBrand(ctx, "signed")
		if err != nil {
			t.Fatal(err)
		}
		b.Delegation.Scopes = append(b.Delegation.Scopes, db.Scope{ID: "orders:cancel", Description: "Cancel your orders"})
		b.Delegation.AuthorizationDetailsTypes = []authzdetails.Type{{
			Type: cancelType, Description: "Cancel an order", Scope: "orders:cancel", ConsentTemplate: "Only order {order_id}: {actions} it",
			Fields: []authzdetails.Field{
				{Name: "order_id", Kind: authzdetails.KindString, Required: true, Label: "order", Pattern: `^[0-9]{4}$`},
				{Name: "actions", Kind: authzdetails.KindEnumArray, Required: true, Label: "actions", Values: []string{"cancel"}},
			},
		}}
		if _, err := s.UpdateBrand(ctx, b); err != nil {
			t.Fatal(err)
		}
		r = e.post("signed", "device_authorization", paAuth, rarForm("orders:read orders:cancel", `[`+cancelEntry("1004")+`]`))
		if r.status != 200 {
			t.Fatalf("device authorization at signed: %d %s", r.status, r.body)
		}
		res := e.mustBegin(login, r.json(t)["user_code"].(string))
		if got, want := words(res.GetConsent().GetAuthorizationDetails()), fmt.Sprintf("%q", []string{"orders:cancel | Only order 1004: cancel it"}); got != want {
			t.Fatalf("BeginConsent words = %s\nwant %s", got, want)
		}
	})
}
