package e2e_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"slices"
	"testing"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// TestAuditTrailOfADelegatedRun runs a delegated flow through the frontend
// (a step-up, consent, redemption, two delegated turns with receipts, a
// retried turn, a refresh and a reuse that revokes the grant) and then
// lists the trail: ListAuditEvents returns the receipts and grant events in
// the order they happened, each receipt found by the hash of the JWS the
// PA received, and the Brand's frontend sees the same events in its view.
func TestAuditTrailOfADelegatedRun(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		ctx := t.Context()
		const sub = "user-audit"

		// 1. A turn that needs orders:read, without a token: a step-up.
		task := decodeStepUp(t, w.send(t, shop, w.token(t, sub), userMsg("m-1", "", "show my orders")), "orders:read")
		ctxID := task.Task.ContextID
		// 2, 3. Consent and redemption.
		tok := w.connect(t, sub, "dana", "orders:read", "orders:read")
		// 4, 5. Two delegated turns, each with a receipt; a retry of the
		// first answers the stored reply and signs nothing new.
		first := w.delegated(t, sub, tok.AccessToken, userMsg("m-1", ctxID, "show my orders"))
		rep1, rc1 := w.verifyReceipt(t, first)
		if r := w.delegated(t, sub, tok.AccessToken, userMsg("m-1", ctxID, "show my orders")); r.body != first.body {
			t.Fatalf("retry %s\nwant %s", r.body, first.body)
		}
		rep2, _ := w.verifyReceipt(t, w.delegated(t, sub, tok.AccessToken, userMsg("m-2", ctxID, "hello")))
		// 6. A refresh; 7. the rotated token again, which revokes the grant.
		var next tokenResponse
		wantOAuthJSON(t, "refresh", w.refresh(t, sub, tok.RefreshToken), &next)
		wantOAuthError(t, "reuse", w.refresh(t, sub, tok.RefreshToken), 400, "invalid_grant")

		admin := pactv1connect.NewAuditServiceClient(http.DefaultClient, w.pactdURL, bearer(adminToken))
		res, err := admin.ListAuditEvents(ctx, &pactv1.ListAuditEventsRequest{BrandId: shop})
		if err != nil {
			t.Fatalf("ListAuditEvents: %v", err)
		}
		events := res.GetEvents()
		want := []pactv1.AuditEventKind{
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_STEP_UP,
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_CREATED,
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REDEEMED,
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED,
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED,
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REFRESHED,
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REUSE_REVOKED,
		}
		var kinds []pactv1.AuditEventKind
		for _, e := range events {
			kinds = append(kinds, e.GetKind())
		}
		if !slices.Equal(kinds, want) {
			t.Fatalf("kinds = %v\nwant %v\nevents %v", kinds, want, events)
		}
		for i, e := range events {
			if e.GetBrandId() != shop || e.GetAgentId() != w.agentID {
				t.Errorf("event %d (%v): brand %q agent %q, want %q %q", i, e.GetKind(), e.GetBrandId(), e.GetAgentId(), shop, w.agentID)
			}
			if i > 0 && (e.GetGrantId() != rc1.GrantID || e.GetBrandUser() != "dana" || e.GetPaIssuer() != w.issuer) {
				t.Errorf("event %d (%v): grant %q user %q PA %q; want %q dana %q", i, e.GetKind(), e.GetGrantId(), e.GetBrandUser(), e.GetPaIssuer(), rc1.GrantID, w.issuer)
			}
			if i > 0 && e.GetTime().AsTime().Before(events[i-1].GetTime().AsTime()) {
				t.Errorf("event %d is older than event %d", i, i-1)
			}
		}
		if s := events[0].GetScopes(); !slices.Equal(s, []string{"orders:read"}) || events[0].GetDetail() != task.Task.ID {
			t.Errorf("step-up event: scopes %v detail %q; want [orders:read] and task %q", s, events[0].GetDetail(), task.Task.ID)
		}
		// Each receipt event is the receipt the PA holds: the hash of its
		// JWS, its scopes and its action.
		for i, rep := range []receiptReply{rep1, rep2} {
			sum := sha256.Sum256([]byte(rep.Message.Metadata.Receipt.JWS))
			if got := events[3+i].GetDetail(); got != base64.RawURLEncoding.EncodeToString(sum[:]) {
				t.Errorf("receipt event %d names JWS hash %q, not the receipt's", i, got)
			}
		}
		if e := events[3]; !slices.Equal(e.GetScopes(), rc1.ScopesUsed) || len(e.GetActions()) != 1 || e.GetActions()[0].GetTool() != rc1.Actions[0].Tool {
			t.Errorf("first receipt event %v; receipt %+v", e, rc1)
		}

		// The Brand's frontend sees the same events in its view, and only
		// the admin lists across Brands.
		fe := pactv1connect.NewAuditServiceClient(http.DefaultClient, w.pactdURL, bearer(frontendToken))
		own, err := fe.ListBrandAuditEvents(ctx, &pactv1.ListBrandAuditEventsRequest{BrandId: shop})
		if err != nil || len(own.GetEvents()) != len(events) || own.GetEvents()[6].GetId() != events[6].GetId() {
			t.Fatalf("ListBrandAuditEvents = %v, %v", own, err)
		}
		if _, err := fe.ListAuditEvents(ctx, &pactv1.ListAuditEventsRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Fatalf("frontend ListAuditEvents: err = %v, want PermissionDenied", err)
		}
		// Filters: the receipts of this grant, alone.
		rcs, err := admin.ListAuditEvents(ctx, &pactv1.ListAuditEventsRequest{BrandId: shop, Filter: &pactv1.AuditFilter{
			GrantId: rc1.GrantID, Kind: pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED}})
		if err != nil || len(rcs.GetEvents()) != 2 || rcs.GetEvents()[0].GetId() != events[3].GetId() {
			t.Fatalf("receipts of the grant = %v, %v", rcs, err)
		}
	})
}
