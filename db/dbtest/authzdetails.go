package dbtest

import (
	"errors"
	"testing"
	"time"

	"pactd/db"
	"pactd/internal/authzdetails"
)

// runAuthorizationDetails is the part of the contract for resource-bound
// delegation (PACT §5.7): details kept with device authorizations and
// grants, byte for byte, and the Brand's declared types.
func runAuthorizationDetails(t *testing.T, newStore Factory) {
	t.Run("authzdetails/device-and-grant", func(t *testing.T) { t.Parallel(); testDetailsDeviceAndGrant(t, newStore(t)) })
	t.Run("authzdetails/brand-types", func(t *testing.T) { t.Parallel(); testDetailsBrandTypes(t, newStore(t)) })
}

const storedDetails = `[{"actions":["cancel"],"order_id":"1002","type":"https://acme.example/authorization/order-cancel/v1"}]`

func testDetailsDeviceAndGrant(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	d := delegDevice("da_rar", "acme", "agt_1", "https://pa.example")
	d.AuthorizationDetails = storedDetails
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
	g.AuthorizationDetails = storedDetails
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
