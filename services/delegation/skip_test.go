package delegation_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation/base"
)

// skipConsent turns the Brand's skip_consent_when_granted on or off.
func skipConsent(t *testing.T, s db.Store, brandID string, on bool) {
	t.Helper()
	b, err := s.GetBrand(t.Context(), brandID)
	if err != nil {
		t.Fatal(err)
	}
	b.Delegation.SkipConsent = on
	if _, err := s.UpdateBrand(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

// Consent skipping, trusted-frontend mode: DescribeConsent with brand_user
// reports covered_by_grant only when the Brand skips consent and a live
// grant of that User to that PA covers every requested scope; each way it
// can fail to cover is a refusal with its positive control.
func TestConsentSkippingTrustedFrontend(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		ctx := t.Context()
		covered := func(scope, user, agentAuth, client string) bool {
			t.Helper()
			d := e.startDevice("acme", agentAuth, client, scope)
			res, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: d["user_code"].(string), BrandUser: user})
			if err != nil {
				t.Fatal(err)
			}
			return res.GetCoveredByGrant()
		}
		// user-42 grants orders:read and orders:write to PA 1.
		d := e.startDevice("acme", paAuth, paIssuer, "orders:read orders:write")
		res, err := e.approve("acme", d["user_code"].(string), "user-42", "orders:read", "orders:write")
		if err != nil {
			t.Fatal(err)
		}
		if covered("orders:read", "user-42", paAuth, paIssuer) {
			t.Fatal("fail/skip-off-by-default: covered with the Brand's skipping off")
		}
		skipConsent(t, s, "acme", true)
		if !covered("orders:read", "user-42", paAuth, paIssuer) || !covered("orders:write orders:read", "user-42", paAuth, paIssuer) {
			t.Fatal("ok/covered: a granted subset is not reported covered")
		}
		for name, c := range map[string]bool{
			"fail/scope-not-granted": covered("orders:read profile:read", "user-42", paAuth, paIssuer),
			"fail/other-user":        covered("orders:read", "user-43", paAuth, paIssuer),
			"fail/other-pa":          covered("orders:read", "user-42", pa2Auth, pa2Issuer),
		} {
			if c {
				t.Fatalf("%s: reported covered", name)
			}
		}
		// Without brand_user nothing is judged.
		d2 := e.startDevice("acme", paAuth, paIssuer, "orders:read")
		if r, _ := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: d2["user_code"].(string)}); r.GetCoveredByGrant() {
			t.Fatal("fail/no-brand-user: reported covered")
		}
		// A revoked grant covers nothing.
		if _, err := e.rpc.RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: res.GetGrantId(), BrandUser: "user-42"}); err != nil {
			t.Fatal(err)
		}
		if covered("orders:read", "user-42", paAuth, paIssuer) {
			t.Fatal("fail/revoked: reported covered")
		}
		// An expired grant covers nothing (a fresh grant first, as control).
		d3 := e.startDevice("acme", paAuth, paIssuer, "orders:read")
		if _, err := e.approve("acme", d3["user_code"].(string), "user-42", "orders:read"); err != nil {
			t.Fatal(err)
		}
		if !covered("orders:read", "user-42", paAuth, paIssuer) {
			t.Fatal("ok/fresh-grant: not covered")
		}
		e.clk.Advance(base.GrantTTL)
		if covered("orders:read", "user-42", paAuth, paIssuer) {
			t.Fatal("fail/expired: reported covered")
		}
	})
}

// Consent skipping, signed-assertion mode: BeginConsent approves a covered
// request at once (skipped_grant_id, no session), uses the assertion up,
// and the PA's poll gets a token for exactly what it asked; with skipping
// off, or nothing covering, the page's session comes back as usual.
func TestConsentSkippingSignedAssertion(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e, login := signedEnv(t, s)
		ctx := t.Context()
		// A first grant through the page.
		code, _ := e.pendingCode()
		first := e.mustBegin(login, code)
		if first.GetSkippedGrantId() != "" || first.GetConsentSession() == "" {
			t.Fatalf("ok/first-grant-shows-the-page: %v", first)
		}
		if _, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", ConsentSession: first.GetConsentSession(),
			Scopes: []string{"orders:read"}}); err != nil {
			t.Fatal(err)
		}
		// Skipping off: the page again.
		code, _ = e.pendingCode()
		if r := e.mustBegin(login, code); r.GetSkippedGrantId() != "" || r.GetConsentSession() == "" {
			t.Fatalf("fail/skip-off: %v", r)
		}
		firstGrant, err := s.ListGrants(ctx, "signed", "user-42", "", 10)
		if err != nil || len(firstGrant) != 1 {
			t.Fatalf("the first grant: %v, %v", firstGrant, err)
		}
		e.clk.Advance(24 * time.Hour) // the skip must not extend the PA's access past the first grant
		skipConsent(t, s, "signed", true)
		code, device := e.pendingCode()
		claims := login.claims(e.clk.Now(), code)
		assertion := login.es256(t, claims)
		r, err := e.rpc.BeginConsent(ctx, &pactv1.BeginConsentRequest{BrandId: "signed", BrandAssertion: assertion})
		if err != nil {
			t.Fatal(err)
		}
		if r.GetSkippedGrantId() == "" || r.GetConsentSession() != "" || len(r.GetGrantedScopes()) != 1 || r.GetGrantedScopes()[0] != "orders:read" {
			t.Fatalf("ok/skipped: %v", r)
		}
		if st := e.status("signed", device); st != db.DeviceApproved {
			t.Fatalf("skipped authorization is %v, want approved", st)
		}
		tr := e.post("signed", "token", paAuth, deviceGrant(device, paIssuer))
		if tok := tr.json(t); tr.status != 200 || tok["scope"] != "orders:read" {
			t.Fatalf("token after a skipped consent: %d %s", tr.status, tr.body)
		}
		// The skipped grant expires with the grant that covered it.
		grants, err := s.ListGrants(ctx, "signed", "user-42", "", 10)
		if err != nil || len(grants) != 2 || grants[0].ID != r.GetSkippedGrantId() || !grants[0].ExpireTime.Equal(firstGrant[0].ExpireTime) {
			t.Fatalf("grants after the skip: %+v, %v; want the new one to expire at %v", grants, err, firstGrant[0].ExpireTime)
		}
		// The assertion was used up by the skip: its jti is taken.
		use := db.BrandAssertionUse{BrandID: "signed", JTI: claims["jti"].(string), ExpireTime: e.clk.Now().Add(time.Hour)}
		if err := s.UseBrandAssertion(ctx, use, e.clk.Now()); !errors.Is(err, db.ErrAssertionReplayed) {
			t.Fatalf("the skip's assertion is not used up: %v, want ErrAssertionReplayed", err)
		}
		// Another User at the same Brand has no grant: the page.
		other := login.claims(e.clk.Now(), "")
		code, _ = e.pendingCode()
		other["user_code"], other["sub"] = code, "user-77"
		r, err = e.rpc.BeginConsent(ctx, &pactv1.BeginConsentRequest{BrandId: "signed", BrandAssertion: login.es256(t, other)})
		if err != nil || r.GetSkippedGrantId() != "" || r.GetConsentSession() == "" {
			t.Fatalf("fail/other-user: %v, %v", r, err)
		}
	})
}

// Consent skipping with authorization_details (§5.7): a grant restricted to
// some entries covers a request for a subset of them only; a request for
// the scope unrestricted, or for another entry, is not covered; a grant of
// the scope unrestricted covers a restricted request.
func TestConsentSkippingWithDetails(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		seedRAR(t, s)
		skipConsent(t, s, "rar", true)
		ctx := t.Context()
		start := func(scope, details string) string {
			t.Helper()
			form := rarForm(scope, details)
			if details == "" {
				form.Del("authorization_details")
			}
			r := e.post("rar", "device_authorization", paAuth, form)
			if r.status != 200 {
				t.Fatalf("device authorization %q %q: %d %s", scope, details, r.status, r.body)
			}
			return r.json(t)["user_code"].(string)
		}
		covered := func(user, scope, details string) bool {
			t.Helper()
			res, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "rar", UserCode: start(scope, details), BrandUser: user})
			if err != nil {
				t.Fatal(err)
			}
			return res.GetCoveredByGrant()
		}
		grant := func(user, scope, details string, scopes ...string) {
			t.Helper()
			if _, err := e.approve("rar", start(scope, details), user, scopes...); err != nil {
				t.Fatal(err)
			}
		}
		// alice: cancel of orders 1002 and 1004 only.
		grant("alice", "orders:cancel", "["+cancelEntry("1002")+","+cancelEntry("1004")+"]", "orders:cancel")
		if !covered("alice", "orders:cancel", "["+cancelEntry("1004")+"]") {
			t.Fatal("ok/subset-of-entries: not covered")
		}
		for name, c := range map[string]bool{
			"fail/other-entry":          covered("alice", "orders:cancel", "["+cancelEntry("1003")+"]"),
			"fail/unrestricted-request": covered("alice", "orders:cancel", ""),
			"fail/one-entry-too-many":   covered("alice", "orders:cancel", "["+cancelEntry("1002")+","+cancelEntry("1003")+"]"),
		} {
			if c {
				t.Fatalf("%s: reported covered", name)
			}
		}
		// ListGrants shows a grant's restrictions in the consent page's words.
		list, err := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "rar", BrandUser: "alice"})
		if err != nil || len(list.GetGrants()) != 1 {
			t.Fatalf("ListGrants(alice) = %v, %v", list, err)
		}
		if ds := list.GetGrants()[0].GetAuthorizationDetails(); len(ds) != 2 || ds[0].GetScope() != "orders:cancel" ||
			!strings.Contains(ds[0].GetWords(), "1002") || !strings.Contains(ds[1].GetWords(), "1004") {
			t.Fatalf("listed grant's details = %v", ds)
		}
		// bob: cancel unrestricted covers any one order.
		grant("bob", "orders:cancel", "", "orders:cancel")
		if !covered("bob", "orders:cancel", "["+cancelEntry("1003")+"]") || !covered("bob", "orders:cancel", "") {
			t.Fatal("ok/unrestricted-grant: a request is not covered")
		}
	})
}

// ApproveConsent with skip_consent (trusted-frontend mode): pactd checks
// the cover itself; not covered is FailedPrecondition and the request stays
// pending; covered grants every requested scope, expiring with the covering
// grant.
func TestApproveConsentAsASkip(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		ctx := t.Context()
		skip := func(code, user string) (*pactv1.ApproveConsentResponse, error) {
			return e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: code, BrandUser: user, SkipConsent: true})
		}
		d := e.startDevice("acme", paAuth, paIssuer, "orders:read orders:write")
		first, err := e.approve("acme", d["user_code"].(string), "user-42", "orders:read", "orders:write")
		if err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(48 * time.Hour)
		// Skipping off: refused, and the request stays pending.
		next := e.startDevice("acme", paAuth, paIssuer, "orders:read")
		if _, err := skip(next["user_code"].(string), "user-42"); rpcerr.Reason(err) != "ERROR_REASON_FAILED_PRECONDITION" {
			t.Fatalf("fail/skip-off: %v", err)
		}
		if st := e.status("acme", next["device_code"].(string)); st != db.DevicePending {
			t.Fatalf("a refused skip changed the request: %v", st)
		}
		skipConsent(t, s, "acme", true)
		// Not covered (another user): refused, nothing changes.
		if _, err := skip(next["user_code"].(string), "user-43"); rpcerr.Reason(err) != "ERROR_REASON_FAILED_PRECONDITION" {
			t.Fatalf("fail/not-covered: %v", err)
		}
		if st := e.status("acme", next["device_code"].(string)); st != db.DevicePending {
			t.Fatalf("a refused skip changed the request: %v", st)
		}
		// Covered: approved with what was requested, expiring with the cover.
		res, err := skip(next["user_code"].(string), "user-42")
		if err != nil || res.GetGrantId() == "" || len(res.GetScopes()) != 1 || res.GetScopes()[0] != "orders:read" {
			t.Fatalf("ok/covered: %v, %v", res, err)
		}
		grants, err := s.ListGrants(ctx, "acme", "user-42", "", 10)
		if err != nil || len(grants) != 2 || grants[0].ID != res.GetGrantId() || grants[1].ID != first.GetGrantId() ||
			!grants[0].ExpireTime.Equal(grants[1].ExpireTime) {
			t.Fatalf("grants after the skip: %+v, %v; want the new one to expire with the first", grants, err)
		}
	})
}
