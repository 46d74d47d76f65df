package brand_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/brand"
)

const cancelType = "https://acme.example/authorization/order-cancel/v1"

// goodSettings are delegation settings with one valid type.
func goodSettings() *pactv1.DelegationSettings {
	return &pactv1.DelegationSettings{
		Enabled: true, LoginUrl: "https://login.acme.example",
		LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND,
		Scopes: []*pactv1.Scope{
			{Id: "orders:read", Description: "See your orders"},
			{Id: "orders:cancel", Description: "Cancel your orders"},
		},
		AuthorizationDetailsTypes: []*pactv1.AuthorizationDetailsType{{
			Type: cancelType, Description: "Cancel an order", Scope: "orders:cancel",
			Fields: []*pactv1.AuthorizationDetailsField{
				{Name: "order_id", Kind: pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_STRING, Required: true,
					Label: "order", Pattern: `^[0-9]{4}$`},
				{Name: "actions", Kind: pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_ENUM_ARRAY, Required: true,
					Label: "actions", Values: []string{"cancel"}},
			},
		}},
	}
}

func newService(t *testing.T) (*brand.Service, db.Store) {
	t.Helper()
	s := dbtest.Open(t, "", t.TempDir())
	return brand.New(brand.Deps{Store: s, PublicURL: "https://provider.example"}), s
}

// PACT §5.7: a Brand's authorization_details types are validated strictly
// on CreateBrand and UpdateBrand (InvalidArgument naming the field, nothing
// stored), and GetBrand returns them.
func TestAuthorizationDetailsTypesValidation(t *testing.T) {
	svc, store := newService(t)
	ctx := t.Context()
	const base = "delegation.authorization_details_types"
	cases := []struct {
		name, field string
		edit        func(d *pactv1.DelegationSettings)
	}{
		{"type-relative-uri", base + "[0].type", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Type = "order-cancel" }},
		{"type-empty", base + "[0].type", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Type = "" }},
		{"type-with-space", base + "[0].type", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Type = "https://acme.example/a b" }},
		{"type-too-long", base + "[0].type", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes[0].Type = "https://acme.example/" + strings.Repeat("a", 256)
		}},
		{"type-duplicated", base + "[1].type", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes = append(d.AuthorizationDetailsTypes, proto.Clone(d.AuthorizationDetailsTypes[0]).(*pactv1.AuthorizationDetailsType))
		}},
		{"description-missing", base + "[0].description", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Description = " " }},
		{"description-too-long", base + "[0].description", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes[0].Description = strings.Repeat("x", 201)
		}},
		{"scope-not-the-brands", base + "[0].scope", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Scope = "orders:write" }},
		{"scope-empty", base + "[0].scope", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Scope = "" }},
		{"combination-unknown", base + "[0].combination", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Combination = 9 }},
		{"no-fields", base + "[0].fields", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields = nil }},
		{"too-many-fields", base + "[0].fields", func(d *pactv1.DelegationSettings) {
			for i := range 16 {
				d.AuthorizationDetailsTypes[0].Fields = append(d.AuthorizationDetailsTypes[0].Fields, &pactv1.AuthorizationDetailsField{
					Name: fmt.Sprintf("f%d", i), Kind: pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_ENUM, Label: "f", Values: []string{"a"}})
			}
		}},
		{"too-many-types", base, func(d *pactv1.DelegationSettings) {
			for i := range 16 {
				c := proto.Clone(d.AuthorizationDetailsTypes[0]).(*pactv1.AuthorizationDetailsType)
				c.Type = fmt.Sprintf("https://acme.example/t%d", i)
				d.AuthorizationDetailsTypes = append(d.AuthorizationDetailsTypes, c)
			}
		}},
		{"field-named-type", base + "[0].fields[0].name", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Name = "type" }},
		{"field-name-bad", base + "[0].fields[0].name", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Name = "order-id" }},
		{"field-name-duplicated", base + "[0].fields[1].name", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[1].Name = "order_id" }},
		{"common-field-actions-as-string", base + "[0].fields[1].kind", func(d *pactv1.DelegationSettings) {
			f := d.AuthorizationDetailsTypes[0].Fields[1]
			f.Kind, f.Values, f.Pattern = pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_STRING, nil, `^cancel$`
		}},
		{"common-field-identifier-as-array", base + "[0].fields[1].kind", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes[0].Fields[1].Name = "identifier"
		}},
		{"kind-unspecified", base + "[0].fields[0].kind", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes[0].Fields[0].Kind = pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_UNSPECIFIED
		}},
		{"label-missing", base + "[0].fields[0].label", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Label = "" }},
		{"label-control-character", base + "[0].fields[0].label", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Label = "or\x00der" }},
		{"pattern-missing", base + "[0].fields[0].pattern", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Pattern = "" }},
		{"pattern-not-re2", base + "[0].fields[0].pattern", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes[0].Fields[0].Pattern = `^(?=1)[0-9]{4}$`
		}},
		{"pattern-unanchored", base + "[0].fields[0].pattern", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Pattern = `[0-9]{4}` }},
		{"pattern-start-only", base + "[0].fields[0].pattern", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Pattern = `^[0-9]{4}` }},
		{"pattern-alternation-half-anchored", base + "[0].fields[0].pattern", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Pattern = `^1002|1003$` }},
		{"pattern-multiline", base + "[0].fields[0].pattern", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes[0].Fields[0].Pattern = `(?m)^[0-9]{4}$`
		}},
		{"pattern-escaped-dollar", base + "[0].fields[0].pattern", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Pattern = `^[0-9]{4}\$` }},
		{"pattern-too-long", base + "[0].fields[0].pattern", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes[0].Fields[0].Pattern = "^" + strings.Repeat("a", 256) + "$"
		}},
		{"pattern-on-enum", base + "[0].fields[1].pattern", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[1].Pattern = `^x$` }},
		{"values-on-string", base + "[0].fields[0].values", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[0].Values = []string{"1002"} }},
		{"enum-no-values", base + "[0].fields[1].values", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[1].Values = nil }},
		{"enum-value-duplicated", base + "[0].fields[1].values[1]", func(d *pactv1.DelegationSettings) {
			d.AuthorizationDetailsTypes[0].Fields[1].Values = []string{"cancel", "cancel"}
		}},
		{"enum-value-empty", base + "[0].fields[1].values[0]", func(d *pactv1.DelegationSettings) { d.AuthorizationDetailsTypes[0].Fields[1].Values = []string{""} }},
		{"enum-too-many-values", base + "[0].fields[1].values", func(d *pactv1.DelegationSettings) {
			for i := range 33 {
				d.AuthorizationDetailsTypes[0].Fields[1].Values = append(d.AuthorizationDetailsTypes[0].Fields[1].Values, fmt.Sprintf("v%d", i))
			}
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := goodSettings()
			tc.edit(d)
			id := fmt.Sprintf("bad%d", i)
			_, err := svc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: id, DisplayName: "Bad", Delegation: d})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Contains(rpcerr.FieldViolations(err), tc.field) {
				t.Fatalf("CreateBrand err = %v, violations %v; want InvalidArgument naming %s", err, rpcerr.FieldViolations(err), tc.field)
			}
			if _, err := store.GetBrand(ctx, id); err == nil {
				t.Fatal("a refused CreateBrand stored the Brand")
			}
		})
	}

	// Positive control: the good settings are stored and come back.
	created, err := svc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Delegation: goodSettings()})
	if err != nil {
		t.Fatalf("CreateBrand(good) = %v", err)
	}
	got, err := svc.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	want := goodSettings().GetAuthorizationDetailsTypes()
	// UNSPECIFIED combination is stored and returned as UNION.
	want[0].Combination = pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_UNION
	for _, b := range []*pactv1.Brand{created.GetBrand(), got.GetBrand()} {
		gt := b.GetDelegation().GetAuthorizationDetailsTypes()
		if len(gt) != 1 || !proto.Equal(gt[0], want[0]) {
			t.Fatalf("types = %v\nwant %v", gt, want)
		}
	}

	// UpdateBrand refuses the same way and changes nothing.
	bad := goodSettings()
	bad.AuthorizationDetailsTypes[0].Fields[0].Pattern = `[0-9]+`
	_, err = svc.UpdateBrand(ctx, &pactv1.UpdateBrandRequest{Brand: &pactv1.Brand{BrandId: "acme", Delegation: bad},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delegation"}}})
	if connect.CodeOf(err) != connect.CodeInvalidArgument ||
		!slices.Contains(rpcerr.FieldViolations(err), "brand.delegation.authorization_details_types[0].fields[0].pattern") {
		t.Fatalf("UpdateBrand(unanchored) err = %v, %v", err, rpcerr.FieldViolations(err))
	}
	after, _ := svc.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: "acme"})
	if p := after.GetBrand().GetDelegation().GetAuthorizationDetailsTypes()[0].GetFields()[0].GetPattern(); p != `^[0-9]{4}$` {
		t.Fatalf("a refused UpdateBrand changed the pattern to %q", p)
	}
	// A valid update (single, another anchored pattern) is stored.
	okSettings := goodSettings()
	okSettings.AuthorizationDetailsTypes[0].Combination = pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_SINGLE
	okSettings.AuthorizationDetailsTypes[0].Fields[0].Pattern = `^(?:1|2)[0-9]{3}$`
	upd, err := svc.UpdateBrand(ctx, &pactv1.UpdateBrandRequest{Brand: &pactv1.Brand{BrandId: "acme", Delegation: okSettings},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delegation"}}})
	if err != nil {
		t.Fatalf("UpdateBrand(good) = %v", err)
	}
	ut := upd.GetBrand().GetDelegation().GetAuthorizationDetailsTypes()[0]
	if ut.GetCombination() != pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_SINGLE || ut.GetFields()[0].GetPattern() != `^(?:1|2)[0-9]{3}$` {
		t.Fatalf("updated type = %v", ut)
	}
}
