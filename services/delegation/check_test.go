package delegation_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation/base"
)

// checkGrant makes a grant at Brand rar of user-42 to PA 1 with
// orders:read unrestricted and orders:cancel restricted to order 1002 (the
// request's one entry), and returns its id.
func checkGrant(t *testing.T, e *env) string {
	t.Helper()
	r := e.post("rar", "device_authorization", paAuth, rarForm("orders:read orders:cancel", "["+cancelEntry("1002")+"]"))
	if r.status != http.StatusOK {
		t.Fatalf("device authorization: %d %s", r.status, r.body)
	}
	ap, err := e.approve("rar", r.json(t)["user_code"].(string), "user-42", "orders:read", "orders:cancel")
	if err != nil || ap.GetGrantId() == "" {
		t.Fatalf("approve: %v %v", ap, err)
	}
	return ap.GetGrantId()
}

// CheckGrant answers, by the grant's scopes and entries (derived from the
// rule in the proto, not from running it): a scope held unrestricted is
// active with or without an entry of it; a restricted scope is active only
// with an entry the grant holds exactly; an ungranted scope is
// SCOPE_NOT_GRANTED naming it; a grant of another Brand, user or PA is
// UNKNOWN like a made-up id; then REVOKED and EXPIRED.
func TestCheckGrantAnswers(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		seedRAR(t, s)
		id := checkGrant(t, e)
		profile := `{"type":"` + profileType + `","section":"address"}`
		const (
			active       = pactv1.GrantCheckReason_GRANT_CHECK_REASON_UNSPECIFIED
			unknown      = pactv1.GrantCheckReason_GRANT_CHECK_REASON_UNKNOWN
			notGranted   = pactv1.GrantCheckReason_GRANT_CHECK_REASON_SCOPE_NOT_GRANTED
			notCovered   = pactv1.GrantCheckReason_GRANT_CHECK_REASON_DETAILS_NOT_COVERED
			restrictedSc = pactv1.GrantCheckReason_GRANT_CHECK_REASON_SCOPE_RESTRICTED
		)
		for _, tc := range []struct {
			name    string
			req     *pactv1.CheckGrantRequest
			want    pactv1.GrantCheckReason
			missing []string
		}{
			{"ok/grant-alone", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id}, active, nil},
			{"ok/unrestricted-scope", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, Scopes: []string{"orders:read"}}, active, nil},
			{"ok/held-entry", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, AuthorizationDetailsJson: cancelEntry("1002")}, active, nil},
			// Members in another order and whitespace: the same canonical entry.
			{"ok/held-entry-reordered", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, Scopes: []string{"orders:read", "orders:cancel"},
				AuthorizationDetailsJson: ` {"actions":["cancel"], "order_id":"1002", "type":"` + cancelType + `"} `}, active, nil},
			{"ok/user-and-agent", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, BrandUser: "user-42", AgentId: "agt_1"}, active, nil},
			{"fail/other-entry", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, AuthorizationDetailsJson: cancelEntry("1003")}, notCovered, nil},
			{"fail/restricted-scope-without-entry", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, Scopes: []string{"orders:read", "orders:cancel"}},
				restrictedSc, []string{"orders:cancel"}},
			{"fail/scope-not-granted", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, Scopes: []string{"profile:read", "orders:read"}},
				notGranted, []string{"profile:read"}},
			{"fail/entry-scope-not-granted", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, AuthorizationDetailsJson: profile},
				notGranted, []string{"profile:read"}},
			{"fail/undefined-scope", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, Scopes: []string{"admin:all"}}, notGranted, []string{"admin:all"}},
			{"fail/other-brand", &pactv1.CheckGrantRequest{BrandId: "acme", GrantId: id}, unknown, nil},
			{"fail/unknown-brand", &pactv1.CheckGrantRequest{BrandId: "nope", GrantId: id}, unknown, nil},
			{"fail/other-user", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, BrandUser: "user-43"}, unknown, nil},
			{"fail/other-agent", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, AgentId: "agt_2"}, unknown, nil},
			{"fail/made-up-id", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: "a2agrant_01JZZZZZZZZZZZZZZZZZZZZZZZ"}, unknown, nil},
			{"fail/long-id", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: strings.Repeat("g", 200)}, unknown, nil},
		} {
			r, err := e.rpc.CheckGrant(t.Context(), tc.req)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if r.GetActive() != (tc.want == active) || r.GetReason() != tc.want || !slices.Equal(r.GetMissingScopes(), tc.missing) {
				t.Errorf("%s: active %v reason %v missing %v; want reason %v missing %v", tc.name, r.GetActive(), r.GetReason(), r.GetMissingScopes(), tc.want, tc.missing)
			}
			if tc.want == active && !r.GetExpireTime().AsTime().Equal(start.Add(base.GrantTTL)) {
				t.Errorf("%s: expire_time %v, want %v", tc.name, r.GetExpireTime().AsTime(), start.Add(base.GrantTTL))
			}
		}

		// Expiry, at the store's whole-second rule: active one second before.
		e.clk.Advance(base.GrantTTL - 1e9)
		if r, err := e.rpc.CheckGrant(t.Context(), &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id}); err != nil || !r.GetActive() {
			t.Fatalf("ok/one-second-before-expiry: %v %v", r, err)
		}
		e.clk.Advance(1e9)
		if r, err := e.rpc.CheckGrant(t.Context(), &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id}); err != nil ||
			r.GetActive() || r.GetReason() != pactv1.GrantCheckReason_GRANT_CHECK_REASON_EXPIRED {
			t.Fatalf("fail/expired: %v %v", r, err)
		}
		e.clk.Advance(-base.GrantTTL)

		if _, err := e.rpc.RevokeGrant(t.Context(), &pactv1.RevokeGrantRequest{BrandId: "rar", GrantId: id}); err != nil {
			t.Fatal(err)
		}
		if r, err := e.rpc.CheckGrant(t.Context(), &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, Scopes: []string{"orders:read"}}); err != nil ||
			r.GetActive() || r.GetReason() != pactv1.GrantCheckReason_GRANT_CHECK_REASON_REVOKED {
			t.Fatalf("fail/revoked: %v %v", r, err)
		}
	})
}

// Malformed calls are InvalidArgument naming the field, whether or not the
// grant exists (the answer never depends on it); the positive control is
// the same call made well.
func TestCheckGrantRefusesMalformedCalls(t *testing.T) {
	s := dbtest.Open(t, "", t.TempDir())
	e := newEnv(t, s)
	seedRAR(t, s)
	id := checkGrant(t, e)
	if r, err := e.rpc.CheckGrant(t.Context(), &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: id, Scopes: []string{"orders:cancel"},
		AuthorizationDetailsJson: cancelEntry("1002")}); err != nil || !r.GetActive() {
		t.Fatalf("positive control: %v %v", r, err)
	}
	many := make([]string, 65)
	for i := range many {
		many[i] = "orders:read"
	}
	for _, grant := range []string{id, "a2agrant_01JZZZZZZZZZZZZZZZZZZZZZZZ"} {
		for _, tc := range []struct {
			name, field string
			req         *pactv1.CheckGrantRequest
		}{
			{"no-brand", "brand_id", &pactv1.CheckGrantRequest{GrantId: grant}},
			{"no-grant", "grant_id", &pactv1.CheckGrantRequest{BrandId: "rar"}},
			{"too-many-scopes", "scopes", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant, Scopes: many}},
			{"empty-scope", "scopes", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant, Scopes: []string{""}}},
			{"scope-with-space", "scopes", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant, Scopes: []string{"orders:read orders:cancel"}}},
			{"bad-user", "brand_user", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant, BrandUser: "a\x00b"}},
			{"details-array", "authorization_details_json", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant,
				AuthorizationDetailsJson: "[" + cancelEntry("1002") + "]"}},
			{"details-two-objects", "authorization_details_json", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant,
				AuthorizationDetailsJson: cancelEntry("1002") + "," + cancelEntry("1003")}},
			{"details-not-json", "authorization_details_json", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant, AuthorizationDetailsJson: "{"}},
			{"details-undeclared-type", "authorization_details_json", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant,
				AuthorizationDetailsJson: `{"type":"https://acme.example/other"}`}},
			{"details-bad-value", "authorization_details_json", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant,
				AuthorizationDetailsJson: cancelEntry("12")}},
			{"details-too-large", "authorization_details_json", &pactv1.CheckGrantRequest{BrandId: "rar", GrantId: grant,
				AuthorizationDetailsJson: `{"type":"` + strings.Repeat("x", 9000) + `"}`}},
		} {
			_, err := e.rpc.CheckGrant(t.Context(), tc.req)
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Contains(rpcerr.FieldViolations(err), tc.field) {
				t.Errorf("%s (%s): err = %v (fields %v), want InvalidArgument naming %s", tc.name, grant, err, rpcerr.FieldViolations(err), tc.field)
			}
		}
	}
}

// The Brand's agent policy reaches the OAuth endpoints and the action
// guard too: a PA the Brand no longer admits gets a bare 401 from device
// authorization and the token endpoint (so it cannot obtain or refresh a
// delegation token there), may still revoke its token (RFC 7009: 200),
// and CheckGrant answers AGENT_NOT_ALLOWED for its grant. Positive
// controls: the same calls before, and another PA's after it is listed.
func TestAgentPolicyAtTheOAuthEndpointsAndCheckGrant(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		ctx := t.Context()
		tokens := e.redeem(e.approvedCode("orders:read", "orders:read"))
		rt := tokens["refresh_token"].(string)
		grants, err := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "user-42"})
		if err != nil || len(grants.GetGrants()) != 1 {
			t.Fatalf("ListGrants = %v, %v", grants, err)
		}
		check := &pactv1.CheckGrantRequest{BrandId: "acme", GrantId: grants.GetGrants()[0].GetGrantId(), Scopes: []string{"orders:read"}}
		if r, err := e.rpc.CheckGrant(ctx, check); err != nil || !r.GetActive() {
			t.Fatalf("ok/active-before: %v %v", r, err)
		}
		// Listed policy, only PA 2 on the list.
		if _, err := s.SetBrandAgentPolicy(ctx, "acme", db.AgentPolicyListed, start); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddBrandAgent(ctx, "acme", "agt_2", start); err != nil {
			t.Fatal(err)
		}
		wantBare401(t, e.post("acme", "device_authorization", paAuth, deviceForm("orders:read")))
		wantBare401(t, e.post("acme", "token", paAuth, refreshGrant(rt, paIssuer)))
		if r, err := e.rpc.CheckGrant(ctx, check); err != nil || r.GetActive() || r.GetReason() != pactv1.GrantCheckReason_GRANT_CHECK_REASON_AGENT_NOT_ALLOWED {
			t.Fatalf("fail/check-agent-not-allowed: %v %v", r, err)
		}
		// Another Brand is untouched; the listed PA 2 is admitted.
		if r := e.post("beta", "device_authorization", paAuth, deviceForm("beta:read")); r.status != http.StatusOK {
			t.Fatalf("ok/other-brand: %d %s", r.status, r.body)
		}
		if r := e.post("acme", "device_authorization", pa2Auth, url.Values{"client_id": {pa2Issuer}, "scope": {"orders:read"}}); r.status != http.StatusOK {
			t.Fatalf("ok/listed-pa: %d %s", r.status, r.body)
		}
		// Revocation stays open to the refused PA, and revokes the grant.
		if r := e.post("acme", "revoke", paAuth, url.Values{"client_id": {paIssuer}, "token": {rt}}); r.status != http.StatusOK {
			t.Fatalf("ok/revoke-still-allowed: %d %s", r.status, r.body)
		}
		if g, err := s.GetGrant(ctx, check.GetGrantId()); err != nil || g.RevokeTime.IsZero() {
			t.Fatalf("the revocation did not revoke the grant: %+v, %v", g, err)
		}
	})
}

// A Brand that moves a type to another scope never widens what CheckGrant
// lets run: the grant's entry keeps the scope it was approved under, so
// orders:cancel stays restricted to order 1002 after the Brand maps the
// cancel type to orders:read (judged by the Brand's mapping, orders:cancel
// would now read as unrestricted).
func TestCheckGrantAfterTheBrandMovesAType(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		seedRAR(t, s)
		id := checkGrant(t, e)
		ask := func(req *pactv1.CheckGrantRequest) (pactv1.GrantCheckReason, []string) {
			t.Helper()
			req.BrandId, req.GrantId = "rar", id
			r, err := e.rpc.CheckGrant(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			return r.GetReason(), r.GetMissingScopes()
		}
		restricted := pactv1.GrantCheckReason_GRANT_CHECK_REASON_SCOPE_RESTRICTED
		if reason, missing := ask(&pactv1.CheckGrantRequest{Scopes: []string{"orders:cancel"}}); reason != restricted || !slices.Equal(missing, []string{"orders:cancel"}) {
			t.Fatalf("before the move: %v %v", reason, missing)
		}
		b, err := s.GetBrand(t.Context(), "rar")
		if err != nil {
			t.Fatal(err)
		}
		b.Delegation.AuthorizationDetailsTypes[0].Scope = "orders:read"
		if _, err := s.UpdateBrand(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		if reason, missing := ask(&pactv1.CheckGrantRequest{Scopes: []string{"orders:cancel"}}); reason != restricted || !slices.Equal(missing, []string{"orders:cancel"}) {
			t.Fatalf("fail/still-restricted-after-the-move: %v %v", reason, missing)
		}
		// Positive control: orders:read, held unrestricted, is still active.
		if reason, _ := ask(&pactv1.CheckGrantRequest{Scopes: []string{"orders:read"}}); reason != pactv1.GrantCheckReason_GRANT_CHECK_REASON_UNSPECIFIED {
			t.Fatalf("ok/orders-read: %v", reason)
		}
	})
}
