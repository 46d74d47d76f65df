package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// TestAuditCommands: a grant made by a real device grant and revoked with
// pactd grant revoke is on the trail pactd audit list prints, as
// ListAuditEvents returns it; the filters narrow it and bad ones are
// refused, naming the flag or the field.
func TestAuditCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		ctx := t.Context()
		pa := newTestPA(t)
		p.must(t, "agent", "register", "-issuer", pa.issuer, "-jwks-uri", pa.issuer+"/jwks.json", "-name", "Test PA")
		settings := t.TempDir() + "/delegation.json"
		writeJSON(t, settings, `{"enabled":true,"login_url":"https://login.acme.example","login_mode":"BRAND_LOGIN_MODE_TRUSTED_FRONTEND",
			"scopes":[{"id":"orders:read","description":"See your orders"}]}`)
		p.must(t, "brand", "create", "acme", "-name", "Acme", "-delegation-file", settings)
		fe := p.delegation(frontendToken)
		dev, err := fe.StartDeviceAuthorization(ctx, &pactv1.StartDeviceAuthorizationRequest{BrandId: "acme", Authorization: "Bearer " + pa.jwt(t),
			ClientId: pa.issuer, Scope: "orders:read"})
		if err != nil || dev.GetError() != nil {
			t.Fatalf("StartDeviceAuthorization: %v, %v", dev.GetError(), err)
		}
		g, err := fe.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: dev.GetUserCode(), BrandUser: "alice", Scopes: []string{"orders:read"}})
		if err != nil {
			t.Fatal(err)
		}
		p.must(t, "grant", "revoke", "-brand", "acme", g.GetGrantId())

		want, err := pactv1connect.NewAuditServiceClient(http.DefaultClient, p.url, withToken(adminToken)).ListAuditEvents(ctx, &pactv1.ListAuditEventsRequest{})
		if err != nil || len(want.GetEvents()) != 2 {
			t.Fatalf("ListAuditEvents = %v, %v", want, err)
		}
		rows := table(t, p.must(t, "audit", "list").stdout)
		if len(rows) != 2 {
			t.Fatalf("audit list: %d rows, want 2", len(rows))
		}
		for i, k := range []string{"grant-created", "grant-revoked"} {
			e := want.GetEvents()[i]
			if r := rows[i]; r["ID"] != e.GetId() || r["KIND"] != k || r["BRAND"] != "acme" || r["USER"] != "alice" || r["GRANT"] != g.GetGrantId() ||
				r["SCOPES"] != "orders:read" || r["ACTOR"] != []string{"frontend", "admin"}[i] || r["AGENT"] != e.GetAgentId() {
				t.Errorf("audit list row %d = %v, want %v", i, r, e)
			}
		}
		sameMessage(t, "audit list -o json", decode(t, p.must(t, "audit", "list", "-o", "json"), &pactv1.ListAuditEventsResponse{}), want)
		// Filters narrow the trail (positive controls of the refusals below).
		for name, c := range map[string]struct {
			args []string
			n    int
		}{
			"kind":       {[]string{"-kind", "grant-revoked"}, 1},
			"kind-enum":  {[]string{"-kind", "AUDIT_EVENT_KIND_GRANT_CREATED"}, 1},
			"brand-user": {[]string{"-brand", "acme", "-user", "alice"}, 2},
			"other-user": {[]string{"-brand", "acme", "-user", "bob"}, 0},
			"grant":      {[]string{"-grant", g.GetGrantId()}, 2},
			"since":      {[]string{"-since", "1h"}, 2},
			"until":      {[]string{"-until", "2001-01-01T00:00:00Z"}, 0},
			"one-page":   {[]string{"-page-size", "1"}, 1},
		} {
			if rows := table(t, p.must(t, append([]string{"audit", "list"}, c.args...)...).stdout); len(rows) != c.n {
				t.Errorf("%s: %d rows, want %d", name, len(rows), c.n)
			}
		}
		if r := p.cli(t, "audit", "list", "-kind", "nope"); r.code != 2 || !strings.Contains(r.stderr, `-kind "nope" is not one of receipt-signed`) {
			t.Errorf("audit list -kind nope: exit %d\n%s", r.code, r.stderr)
		}
		if r := p.cli(t, "audit", "list", "-since", "yesterday"); r.code != 2 || !strings.Contains(r.stderr, `-since "yesterday" is neither`) {
			t.Errorf("audit list -since yesterday: exit %d\n%s", r.code, r.stderr)
		}
		refused(t, p.cli(t, "audit", "list", "-user", "alice"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "filter.brand_user")
		refused(t, p.cli(t, "audit", "list", "-since", "2026-12-02T10:00:00Z", "-until", "2026-12-01T10:00:00Z"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "filter.end_time")
	})
}
