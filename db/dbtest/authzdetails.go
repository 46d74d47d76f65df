package dbtest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/token/authzdetails"
)

// runAuthorizationDetails is the part of the contract for resource-bound
// delegation (PACT §5.7): details kept with device authorizations and
// grants, byte for byte, and the Brand's declared types.
func runAuthorizationDetails(t *testing.T, newStore Factory) {
	t.Run("authzdetails/device-and-grant", func(t *testing.T) { t.Parallel(); testDetailsDeviceAndGrant(t, newStore(t)) })
	t.Run("authzdetails/brand-types", func(t *testing.T) { t.Parallel(); testDetailsBrandTypes(t, newStore(t)) })
	t.Run("authzdetails/entry-scopes", func(t *testing.T) { t.Parallel(); testDetailEntryScopes(t, newStore(t)) })
}

const storedDetails = `[{"actions":["cancel"],"order_id":"1002","type":"https://acme.example/authorization/order-cancel/v1"}]`

func testDetailsDeviceAndGrant(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	d := delegDevice("da_rar", "acme", "agt_1", "https://pa.example")
	d.AuthorizationDetails, d.AuthorizationDetailsScopes = storedDetails, []string{"orders:cancel"}
	if got := mustDelegDevice(t, s, d); got.AuthorizationDetails != storedDetails {
		t.Fatalf("CreateDeviceAuthorization returned details %q, want %q", got.AuthorizationDetails, storedDetails)
	}
	for name, get := range map[string]func() (db.DeviceAuthorization, error){
		"by device code": func() (db.DeviceAuthorization, error) {
			return s.GetDeviceAuthorizationByDeviceCode(ctx, "acme", d.DeviceCodeHash)
		},
		"by user code": func() (db.DeviceAuthorization, error) {
			return s.GetDeviceAuthorizationByUserCode(ctx, "acme", d.UserCodeHash)
		},
	} {
		got, err := get()
		if err != nil || got.AuthorizationDetails != storedDetails {
			t.Fatalf("get %s = %q, %v; want the stored details", name, got.AuthorizationDetails, err)
		}
	}
	// A scope-only authorization keeps "".
	plain := mustDelegDevice(t, s, delegDevice("da_plain", "acme", "agt_1", "https://pa.example"))
	if plain.AuthorizationDetails != "" {
		t.Fatalf("scope-only authorization has details %q", plain.AuthorizationDetails)
	}

	// Approval stores the grant's (possibly smaller) details, not the
	// request's.
	g := delegGrant("a2agrant_rar", "acme", "agt_1", "https://pa.example", "user-7", at)
	g.Scopes = []string{"orders:cancel"}
	g.AuthorizationDetails, g.AuthorizationDetailsScopes = storedDetails, []string{"orders:cancel"}
	now := at.Add(time.Minute)
	_, gotG, err := s.ApproveDeviceAuthorization(ctx, "da_rar", g, now)
	if err != nil || gotG.AuthorizationDetails != storedDetails {
		t.Fatalf("ApproveDeviceAuthorization = %q, %v; want the details", gotG.AuthorizationDetails, err)
	}
	if again, err := s.GetGrant(ctx, g.ID); err != nil || again.AuthorizationDetails != storedDetails {
		t.Fatalf("GetGrant details = %q, %v", again.AuthorizationDetails, err)
	}
	if det, live, err := s.LiveGrantDetails(ctx, g.ID, "acme", "https://pa.example", "user-7", now); err != nil || !live || det != storedDetails {
		t.Fatalf("LiveGrantDetails = %q, %v, %v; want the details, live", det, live, err)
	}
	// The liveness guard of GrantLiveAt: another Brand, client or user, or
	// past expiry, is not live and gives no details.
	for name, args := range map[string][4]string{
		"other brand":  {g.ID, "beta", "https://pa.example", "user-7"},
		"other client": {g.ID, "acme", "https://other-pa.example", "user-7"},
		"other user":   {g.ID, "acme", "https://pa.example", "user-8"},
		"unknown":      {"a2agrant_none", "acme", "https://pa.example", "user-7"},
	} {
		if det, live, err := s.LiveGrantDetails(ctx, args[0], args[1], args[2], args[3], now); err != nil || live || det != "" {
			t.Fatalf("LiveGrantDetails(%s) = %q, %v, %v; want not live", name, det, live, err)
		}
	}
	if _, live, err := s.LiveGrantDetails(ctx, g.ID, "acme", "https://pa.example", "user-7", g.ExpireTime); err != nil || live {
		t.Fatalf("LiveGrantDetails(at expiry) = %v, %v; want not live", live, err)
	}
	if _, err := s.RevokeGrant(ctx, g.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, live, err := s.LiveGrantDetails(ctx, g.ID, "acme", "https://pa.example", "user-7", now); err != nil || live {
		t.Fatalf("LiveGrantDetails(revoked) = %v, %v; want not live", live, err)
	}

	// A scope-only grant is live with "".
	g2 := delegGrant("a2agrant_plain", "acme", "agt_1", "https://pa.example", "user-7", at)
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_plain", g2, now); err != nil {
		t.Fatal(err)
	}
	if det, live, err := s.LiveGrantDetails(ctx, g2.ID, "acme", "https://pa.example", "user-7", now); err != nil || !live || det != "" {
		t.Fatalf("LiveGrantDetails(scope-only) = %q, %v, %v; want \"\", live", det, live, err)
	}
	// A failed approval stores no grant (and so no details).
	g3 := g
	g3.ID = "a2agrant_late"
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_rar", g3, now); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("second approval: %v; want ErrNotFound", err)
	}
	if _, err := s.GetGrant(ctx, g3.ID); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("GetGrant(after failed approval) = %v; want ErrNotFound", err)
	}
}

func testDetailsBrandTypes(t *testing.T, s db.Store) {
	ctx := t.Context()
	types := []authzdetails.Type{{
		Type: "https://acme.example/authorization/order-cancel/v1", Description: "Cancel an order", Scope: "orders:cancel",
		Combination: authzdetails.CombineUnion, ConsentTemplate: "Only order {order_id}: {actions} it",
		Fields: []authzdetails.Field{
			{Name: "order_id", Kind: authzdetails.KindString, Required: true, Label: "order", Pattern: `^[0-9]{4}$`},
			{Name: "actions", Kind: authzdetails.KindEnumArray, Required: true, Label: "actions", Values: []string{"cancel"}},
		},
	}}
	b := db.Brand{ID: "rar", DisplayName: "Rar", CreateTime: at, UpdateTime: at, Delegation: db.Delegation{
		Enabled: true, Scopes: []db.Scope{{ID: "orders:cancel", Description: "Cancel"}}, AuthorizationDetailsTypes: types,
	}}
	if _, err := s.CreateBrand(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBrand(ctx, "rar")
	if err != nil {
		t.Fatal(err)
	}
	gt := got.Delegation.AuthorizationDetailsTypes
	if len(gt) != 1 || gt[0].Type != types[0].Type || gt[0].Scope != "orders:cancel" || len(gt[0].Fields) != 2 ||
		gt[0].Fields[0].Pattern != `^[0-9]{4}$` || !gt[0].Fields[0].Required || gt[0].Fields[1].Values[0] != "cancel" ||
		gt[0].Fields[1].Kind != authzdetails.KindEnumArray || gt[0].Combination != authzdetails.CombineUnion ||
		gt[0].ConsentTemplate != types[0].ConsentTemplate {
		t.Fatalf("GetBrand types = %+v; want them as stored", gt)
	}
	// UpdateBrand replaces the consent template, and an empty one (the
	// default words) reads back empty.
	for _, tmpl := range []string{"Cancel {{exactly}} order #{order_id}", ""} {
		got.Delegation.AuthorizationDetailsTypes[0].ConsentTemplate = tmpl
		if _, err := s.UpdateBrand(ctx, got); err != nil {
			t.Fatal(err)
		}
		again, err := s.GetBrand(ctx, "rar")
		if err != nil {
			t.Fatal(err)
		}
		if ct := again.Delegation.AuthorizationDetailsTypes[0].ConsentTemplate; ct != tmpl {
			t.Fatalf("after UpdateBrand, consent template = %q; want %q", ct, tmpl)
		}
	}
}

// twoDetails is two entries: an order-cancel entry and a profile entry.
const twoDetails = `[{"actions":["cancel"],"order_id":"1002","type":"https://acme.example/authorization/order-cancel/v1"},` +
	`{"section":"email","type":"https://acme.example/authorization/profile-view/v1"}]`

// testDetailEntryScopes: each stored entry keeps the scope it was accepted
// under (one per entry, in order, db.EntryScopeUnknown included), through
// every read of device authorizations and grants and through a Brand update
// that moves the type; a row whose scopes do not align with its entries is
// refused with ErrDetailScopes and stores nothing.
func testDetailEntryScopes(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	wantScopes := []string{"orders:cancel", db.EntryScopeUnknown}
	same := func(got []string) bool { return slices.Equal(got, wantScopes) }

	// Refusals first: nothing of them is stored.
	for name, tc := range map[string]struct {
		details string
		scopes  []string
	}{
		"one-scope-short":        {twoDetails, []string{"orders:cancel"}},
		"one-scope-too-many":     {twoDetails, []string{"orders:cancel", "profile:read", "orders:read"}},
		"scopes-without-entries": {"", []string{"orders:cancel"}},
		"entries-without-scopes": {twoDetails, nil},
		"details-not-an-array":   {`{"type":"x"}`, []string{"orders:cancel"}},
	} {
		d := delegDevice("da_bad_"+name, "acme", "agt_1", "https://pa.example")
		d.AuthorizationDetails, d.AuthorizationDetailsScopes = tc.details, tc.scopes
		if _, err := s.CreateDeviceAuthorization(ctx, d); !errors.Is(err, db.ErrDetailScopes) {
			t.Fatalf("fail/%s: CreateDeviceAuthorization = %v; want ErrDetailScopes", name, err)
		}
		if _, err := s.GetDeviceAuthorizationByDeviceCode(ctx, "acme", d.DeviceCodeHash); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("fail/%s: a refused authorization was stored: %v", name, err)
		}
	}

	// Positive control: stored and read back with its scopes, every way.
	d := delegDevice("da_scoped", "acme", "agt_1", "https://pa.example")
	d.Scopes = []string{"orders:cancel", "profile:read"}
	d.AuthorizationDetails, d.AuthorizationDetailsScopes = twoDetails, wantScopes
	if got := mustDelegDevice(t, s, d); !same(got.AuthorizationDetailsScopes) {
		t.Fatalf("ok/create: scopes %q; want %q", got.AuthorizationDetailsScopes, wantScopes)
	}
	byDevice := func() db.DeviceAuthorization {
		t.Helper()
		got, err := s.GetDeviceAuthorizationByDeviceCode(ctx, "acme", d.DeviceCodeHash)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := byDevice(); !same(got.AuthorizationDetailsScopes) {
		t.Fatalf("ok/by-device-code: scopes %q", got.AuthorizationDetailsScopes)
	}
	if got, err := s.GetDeviceAuthorizationByUserCode(ctx, "acme", d.UserCodeHash); err != nil || !same(got.AuthorizationDetailsScopes) {
		t.Fatalf("ok/by-user-code: scopes %q, %v", got.AuthorizationDetailsScopes, err)
	}
	if got, _, err := s.PollDeviceAuthorization(ctx, d.ID, at.Add(5*time.Second), 5*time.Second); err != nil || !same(got.AuthorizationDetailsScopes) {
		t.Fatalf("ok/poll: scopes %q, %v", got.AuthorizationDetailsScopes, err)
	}
	// A scope-only authorization has none.
	if got := mustDelegDevice(t, s, delegDevice("da_scope_only", "acme", "agt_1", "https://pa.example")); len(got.AuthorizationDetailsScopes) != 0 {
		t.Fatalf("ok/scope-only: scopes %q; want none", got.AuthorizationDetailsScopes)
	}

	// A grant whose scopes do not align is refused inside the approval:
	// the authorization stays pending and no grant is stored.
	now := at.Add(time.Minute)
	bad := delegGrant("a2agrant_bad_scopes", "acme", "agt_1", "https://pa.example", "user-7", at)
	bad.Scopes = []string{"orders:cancel", "profile:read"}
	bad.AuthorizationDetails, bad.AuthorizationDetailsScopes = twoDetails, []string{"orders:cancel"}
	if _, _, err := s.ApproveDeviceAuthorization(ctx, d.ID, bad, now); !errors.Is(err, db.ErrDetailScopes) {
		t.Fatalf("fail/grant-misaligned: ApproveDeviceAuthorization = %v; want ErrDetailScopes", err)
	}
	use := db.BrandAssertionUse{BrandID: "acme", JTI: "jti-scopes", ExpireTime: now.Add(time.Hour)}
	if _, _, err := s.ApproveDeviceAuthorizationWithAssertion(ctx, d.ID, bad, use, now); !errors.Is(err, db.ErrDetailScopes) {
		t.Fatalf("fail/grant-misaligned-with-assertion: = %v; want ErrDetailScopes", err)
	}
	if got := byDevice(); got.Status != db.DevicePending {
		t.Fatalf("fail/grant-misaligned: the authorization is %v; want pending", got.Status)
	}
	if _, err := s.GetGrant(ctx, bad.ID); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("fail/grant-misaligned: a grant was stored: %v", err)
	}
	if err := s.UseBrandAssertion(ctx, use, now); err != nil {
		t.Fatalf("fail/grant-misaligned-with-assertion: the assertion was used up: %v", err)
	}

	// Positive control: the grant keeps its scopes in every read.
	g := bad
	g.ID, g.AuthorizationDetailsScopes = "a2agrant_scoped", wantScopes
	_, got, err := s.ApproveDeviceAuthorization(ctx, d.ID, g, now)
	if err != nil || !same(got.AuthorizationDetailsScopes) {
		t.Fatalf("ok/approve: scopes %q, %v", got.AuthorizationDetailsScopes, err)
	}
	readGrant := func(label string) {
		t.Helper()
		if again, err := s.GetGrant(ctx, g.ID); err != nil || !same(again.AuthorizationDetailsScopes) || again.AuthorizationDetails != twoDetails {
			t.Fatalf("%s: GetGrant scopes %q, %v", label, again.AuthorizationDetailsScopes, err)
		}
		list, err := s.ListGrants(ctx, "acme", "user-7", "", 10)
		if err != nil || len(list) != 1 || !same(list[0].AuthorizationDetailsScopes) || list[0].AuthorizationDetails != twoDetails {
			t.Fatalf("%s: ListGrants = %+v, %v", label, list, err)
		}
	}
	readGrant("ok/grant")

	// A Brand that declares the type, then moves it to another scope,
	// changes no stored entry.
	b, err := s.GetBrand(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	b.Delegation = db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:cancel"}, {ID: "orders:write"}, {ID: "profile:read"}},
		AuthorizationDetailsTypes: []authzdetails.Type{{Type: "https://acme.example/authorization/order-cancel/v1", Scope: "orders:write",
			Description: "Cancel", Fields: []authzdetails.Field{{Name: "order_id", Kind: authzdetails.KindString, Label: "order", Pattern: `^[0-9]{4}$`}}}}}
	if _, err := s.UpdateBrand(ctx, b); err != nil {
		t.Fatal(err)
	}
	readGrant("ok/after-the-brand-moved-the-type")
}
