package delegation_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/services/delegation"
)

// auditEvents lists every audit event, oldest first.
func auditEvents(t *testing.T, s db.Store) []db.AuditEvent {
	t.Helper()
	es, err := s.ListAuditEvents(t.Context(), db.AuditFilter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestAuditTrail runs a grant through its life (consent, redemption,
// refresh, reuse, a skipped consent, revocations, a step-up) and checks that
// each change left exactly its event, with the grant's parties, and that
// each refused change left none.
func TestAuditTrail(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		var mu sync.Mutex
		counted := map[db.AuditKind]int{}
		e := newEnv(t, s, func(d *delegation.Deps) {
			d.OnAudit = func(k db.AuditKind) { mu.Lock(); counted[k]++; mu.Unlock() }
		})
		ctx := t.Context()

		// Consent: a refusal (unknown user code) records nothing.
		if _, err := e.approve("acme", "WDJB-MJHT", "user-42", "orders:read"); err == nil {
			t.Fatal("approving an unknown user code succeeded")
		}
		if n := len(auditEvents(t, s)); n != 0 {
			t.Fatalf("a refused approval recorded %d events", n)
		}
		code := e.approvedCode("orders:read orders:write", "orders:read")
		tok := e.redeem(code)
		// Redeeming again is refused and records nothing more.
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(code, paIssuer)), http.StatusBadRequest, oauthwire.ErrInvalidGrant)
		e.clk.Advance(time.Minute)
		r := e.post("acme", "token", paAuth, refreshGrant(tok["refresh_token"].(string), paIssuer))
		if r.status != http.StatusOK {
			t.Fatalf("refresh: %d %s", r.status, r.body)
		}
		// The rotated token again: the grant is revoked for reuse.
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant(tok["refresh_token"].(string), paIssuer)), http.StatusBadRequest, oauthwire.ErrInvalidGrant)
		first := auditEvents(t, s)
		if len(first) != 4 {
			t.Fatalf("events = %+v, want created, redeemed, refreshed, reuse-revoked", first)
		}
		grantID := first[0].GrantID

		// A second grant, then a consent skipped because it covers.
		skipConsent(t, s, "acme", true)
		e.approvedCode("orders:read orders:write", "orders:read", "orders:write")
		d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
		skipped, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: d["user_code"].(string), BrandUser: "user-42", SkipConsent: true})
		if err != nil {
			t.Fatal(err)
		}
		// Revocations: the frontend's RevokeGrant, then the PA's RFC 7009
		// revocation of the skipped grant's token; revoking again records
		// nothing.
		all := auditEvents(t, s)
		grant2 := all[len(all)-2].GrantID
		if _, err := e.rpc.RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: grant2}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rpc.RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: grant2}); err != nil {
			t.Fatal(err)
		}
		tok3 := e.redeem(d["device_code"].(string))
		if r := e.post("acme", "revoke", paAuth, url.Values{"token": {tok3["refresh_token"].(string)}, "client_id": {paIssuer}}); r.status != http.StatusOK {
			t.Fatalf("revoke: %d %s", r.status, r.body)
		}
		if _, err := e.rpc.StartStepUp(ctx, &pactv1.StartStepUpRequest{BrandId: "acme", AgentId: "agt_1", ContextId: "ctx-1", MissingScopes: []string{"profile:read"}}); err != nil {
			t.Fatal(err)
		}

		got := auditEvents(t, s)
		wantKinds := []db.AuditKind{
			db.AuditGrantCreated, db.AuditGrantRedeemed, db.AuditGrantRefreshed, db.AuditGrantReuseRevoked,
			db.AuditGrantCreated, db.AuditConsentSkipped, db.AuditGrantRevoked, db.AuditGrantRedeemed, db.AuditGrantRevoked, db.AuditStepUp,
		}
		kinds := make([]db.AuditKind, 0, len(got))
		for _, ev := range got {
			kinds = append(kinds, ev.Kind)
		}
		if !slices.Equal(kinds, wantKinds) {
			t.Fatalf("kinds = %v\nwant %v", kinds, wantKinds)
		}
		wantGrants := []string{grantID, grantID, grantID, grantID, grant2, skipped.GetGrantId(), grant2, skipped.GetGrantId(), skipped.GetGrantId(), ""}
		wantActors := []string{db.ActorFrontend, db.ActorPA, db.ActorPA, db.ActorPA, db.ActorFrontend, db.ActorFrontend, db.ActorFrontend, db.ActorPA, db.ActorPA, db.ActorFrontend}
		for i, ev := range got {
			if ev.GrantID != wantGrants[i] || ev.Actor != wantActors[i] || ev.BrandID != "acme" || ev.AgentID != "agt_1" {
				t.Errorf("event %d (%s): grant %q actor %q brand %q agent %q; want grant %q actor %q", i, ev.Kind, ev.GrantID, ev.Actor, ev.BrandID, ev.AgentID, wantGrants[i], wantActors[i])
			}
			if ev.Kind != db.AuditStepUp && (ev.BrandUser != "user-42" || ev.ClientID != paIssuer) {
				t.Errorf("event %d (%s): user %q client %q", i, ev.Kind, ev.BrandUser, ev.ClientID)
			}
		}
		if fmt.Sprint(got[0].Scopes) != "[orders:read]" || got[5].Detail != grant2 || fmt.Sprint(got[9].Scopes) != "[profile:read]" || got[9].Detail == "" {
			t.Errorf("scopes/detail: created %v, skipped detail %q, step-up %v %q", got[0].Scopes, got[5].Detail, got[9].Scopes, got[9].Detail)
		}
		mu.Lock()
		total := 0
		for _, n := range counted {
			total += n
		}
		mu.Unlock()
		if total != len(got) || counted[db.AuditGrantRevoked] != 2 {
			t.Errorf("OnAudit counted %v (%d), want %d events", counted, total, len(got))
		}
	})
}
