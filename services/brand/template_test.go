package brand_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/services/brand"
)

// storeEngines runs f with a Brand service on each store engine.
func storeEngines(t *testing.T, f func(t *testing.T, svc *brand.Service)) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		s := dbtest.Open(t, dbURL, t.TempDir())
		f(t, brand.New(brand.Deps{Store: s, PublicURL: "https://provider.example"}))
	})
}

// badRequest is the field violations of an InvalidArgument error, as
// "field: description".
func badRequest(t *testing.T, err error) []string {
	t.Helper()
	var ce *connect.Error
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !errors.As(err, &ce) {
		t.Fatalf("err = %v; want InvalidArgument", err)
	}
	var out []string
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if br, ok := v.(*errdetails.BadRequest); ok {
				for _, fv := range br.GetFieldViolations() {
					out = append(out, fv.GetField()+": "+fv.GetDescription())
				}
			}
		}
	}
	return out
}

func withTemplate(tmpl string) *pactv1.DelegationSettings {
	d := goodSettings()
	d.AuthorizationDetailsTypes[0].ConsentTemplate = tmpl
	return d
}

func updateDelegation(svc *brand.Service, t *testing.T, d *pactv1.DelegationSettings) (*pactv1.UpdateBrandResponse, error) {
	return svc.UpdateBrand(t.Context(), &pactv1.UpdateBrandRequest{Brand: &pactv1.Brand{BrandId: "acme", Delegation: d},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delegation"}}})
}

func storedTemplate(t *testing.T, svc *brand.Service, id string) string {
	t.Helper()
	got, err := svc.GetBrand(t.Context(), &pactv1.GetBrandRequest{BrandId: id})
	if err != nil {
		t.Fatal(err)
	}
	return got.GetBrand().GetDelegation().GetAuthorizationDetailsTypes()[0].GetConsentTemplate()
}

// A consent template (AuthorizationDetailsType.consent_template) breaking
// one of its rules is InvalidArgument with exactly one BadRequest
// violation naming the template's field path and the rule, on CreateBrand
// (nothing stored) and on UpdateBrand (the stored template unchanged). The
// positive controls sit on each bound.
func TestConsentTemplateValidation(t *testing.T) {
	storeEngines(t, func(t *testing.T, svc *brand.Service) {
		ctx := t.Context()
		const good = "Only order {order_id}: cancel it"
		if _, err := svc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Delegation: withTemplate(good)}); err != nil {
			t.Fatalf("CreateBrand(good template) = %v", err)
		}
		// The longest-value rule counts an array's allowed values joined by
		// ", ": 8 values of 256 bytes render 8*256 + 7*2 = 2062 bytes.
		longActions := func(n int) func(d *pactv1.DelegationSettings) {
			return func(d *pactv1.DelegationSettings) {
				f := d.AuthorizationDetailsTypes[0].Fields[1]
				f.Values = nil
				for i := range 8 {
					f.Values = append(f.Values, fmt.Sprintf("%c", 'a'+i)+strings.Repeat("x", n-1))
				}
			}
		}
		const noClose = `write a literal { as "{{"`
		const noField = "which is not a field of this type"
		const unsafe = "must not contain control characters or bidirectional formatting characters"
		const noPlaceholder = "must name at least one field in a placeholder such as {order_id}, so the words say which resource an entry is for"
		cases := []struct {
			name, tmpl, reason string
			edit               func(d *pactv1.DelegationSettings)
		}{
			{"blank", "   ", "must not be blank (leave it empty for the default words)", nil},
			{"invalid-utf8", "Only order {order_id}\xff", "must be valid UTF-8", nil},
			{"401-characters", "{order_id} " + strings.Repeat("é", 390), "must be at most 400 characters", nil},
			{"control-newline", "Only order\n{order_id}", unsafe, nil},
			{"control-tab", "Only order\t{order_id}", unsafe, nil},
			{"control-del", "Only order \x7f{order_id}", unsafe, nil},
			{"control-c1-nel", "Only order \u0085{order_id}", unsafe, nil},
			{"bidi-override", "Only order \u202e{order_id}", unsafe, nil},
			{"bidi-isolate", "Only order \u2066{order_id}\u2069", unsafe, nil},
			{"single-close-brace", "Only order {order_id} }", `has a single "}" at byte 22: write a literal } as "}}"`, nil},
			{"close-brace-first", "} {order_id}", `has a single "}" at byte 0: write a literal } as "}}"`, nil},
			{"unclosed", "Only order {order_id", `has a "{" at byte 11 that no "}" closes: ` + noClose, nil},
			{"nested", "Only {order {order_id}}", `has a "{" at byte 5 that no "}" closes: ` + noClose, nil},
			{"empty-placeholder", "Only order {} {order_id}", `has an empty placeholder "{}" at byte 11`, nil},
			{"unknown-field", "Only order {order}", "has placeholder {order}, " + noField, nil},
			{"type-is-not-a-field", "{type} {order_id}", "has placeholder {type}, " + noField, nil},
			{"spaces-in-placeholder", "Only order { order_id }", "has placeholder { order_id }, " + noField, nil},
			{"no-placeholder", "Cancel one order", noPlaceholder, nil},
			{"only-escaped-braces", "Only order {{order_id}}", noPlaceholder, nil},
			{"renders-2049-bytes", strings.Repeat("{order_id}", 8) + ".", "can render 2049 bytes with the longest values its fields allow; at most 2048", nil},
			{"renders-over-2048-bytes", strings.Repeat("{order_id}", 9), "can render 2304 bytes with the longest values its fields allow; at most 2048", nil},
			{"array-renders-over-2048-bytes", "{actions} {order_id}", "can render 2319 bytes with the longest values its fields allow; at most 2048", longActions(256)},
			{"field-renamed-under-template", good, "has placeholder {order_id}, " + noField, func(d *pactv1.DelegationSettings) {
				d.AuthorizationDetailsTypes[0].Fields[0].Name = "order"
			}},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := withTemplate(tc.tmpl)
				if tc.edit != nil {
					tc.edit(d)
				}
				id := fmt.Sprintf("bad%d", i)
				_, err := svc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: id, DisplayName: "Bad", Delegation: d})
				want := "delegation.authorization_details_types[0].consent_template: " + tc.reason
				if got := badRequest(t, err); len(got) != 1 || got[0] != want {
					t.Fatalf("CreateBrand violations = %q\nwant [%q]", got, want)
				}
				if _, err := svc.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: id}); connect.CodeOf(err) != connect.CodeNotFound {
					t.Fatalf("a refused CreateBrand stored the Brand: %v", err)
				}
				_, err = updateDelegation(svc, t, d)
				if got := badRequest(t, err); len(got) != 1 || got[0] != "brand."+want {
					t.Fatalf("UpdateBrand violations = %q\nwant [%q]", got, "brand."+want)
				}
				if got := storedTemplate(t, svc, "acme"); got != good {
					t.Fatalf("a refused UpdateBrand changed the template to %q", got)
				}
			})
		}

		// Positive controls, each stored by UpdateBrand.
		for _, tc := range []struct {
			name, tmpl string
			edit       func(d *pactv1.DelegationSettings)
		}{
			{"400-characters", "{order_id} " + strings.Repeat("é", 389), nil},
			{"escaped-braces-and-placeholder", "{{Only}} order {order_id} }}", nil},
			{"placeholder-alone", "{order_id}", nil},
			{"renders-2048-bytes", strings.Repeat("{order_id}", 8), nil},
			// 8*254 + 7*2 = 2046 bytes of actions, plus 1 byte of text.
			{"array-renders-2047-bytes", "{actions}.", longActions(254)},
			{"every-field", "Order {order_id} ({actions})", nil},
			{"unicode-text", "Nur Bestellung {order_id} stornieren – 注文", nil},
		} {
			d := withTemplate(tc.tmpl)
			if tc.edit != nil {
				tc.edit(d)
			}
			if _, err := updateDelegation(svc, t, d); err != nil {
				t.Fatalf("%s: UpdateBrand = %v", tc.name, err)
			}
			if got := storedTemplate(t, svc, "acme"); got != tc.tmpl {
				t.Fatalf("%s: stored template %q", tc.name, got)
			}
		}
	})
}

// The template survives the store: CreateBrand and GetBrand return it,
// UpdateBrand replaces it, and an empty template (the default words) is
// stored as none.
func TestConsentTemplateRoundTrip(t *testing.T) {
	storeEngines(t, func(t *testing.T, svc *brand.Service) {
		ctx := t.Context()
		const first, second = "Only order {order_id}: cancel it", "Cancel {{just}} order #{order_id}, nothing else"
		created, err := svc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Delegation: withTemplate(first)})
		if err != nil {
			t.Fatal(err)
		}
		if got := created.GetBrand().GetDelegation().GetAuthorizationDetailsTypes()[0].GetConsentTemplate(); got != first {
			t.Fatalf("CreateBrand returned template %q", got)
		}
		if got := storedTemplate(t, svc, "acme"); got != first {
			t.Fatalf("GetBrand template %q; want %q", got, first)
		}
		upd, err := updateDelegation(svc, t, withTemplate(second))
		if err != nil {
			t.Fatal(err)
		}
		if got := upd.GetBrand().GetDelegation().GetAuthorizationDetailsTypes()[0].GetConsentTemplate(); got != second {
			t.Fatalf("UpdateBrand returned template %q", got)
		}
		if got := storedTemplate(t, svc, "acme"); got != second {
			t.Fatalf("GetBrand after update: template %q; want %q", got, second)
		}
		if _, err := updateDelegation(svc, t, withTemplate("")); err != nil {
			t.Fatal(err)
		}
		if got := storedTemplate(t, svc, "acme"); got != "" {
			t.Fatalf("GetBrand after clearing: template %q; want none", got)
		}
	})
}
