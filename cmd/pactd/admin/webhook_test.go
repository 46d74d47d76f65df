package admin_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// TestWebhookCommands: pactd webhook create prints the secret once; a
// receiver that answers 500 makes the delivery dead after the attempt
// bound, which webhook list and webhook deliveries show with its error;
// webhook retry sends it again and it is delivered; update, rotate-secret
// and delete do what they say; bad input is refused naming the flag or
// field.
func TestWebhookCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		var status atomic.Int32
		status.Store(http.StatusInternalServerError)
		var hits atomic.Int32
		rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.WriteHeader(int(status.Load()))
		}))
		t.Cleanup(rx.Close)
		p := startPactd(t, dbURL, "PACT_WEBHOOK_POLL_INTERVAL=20ms", "PACT_WEBHOOK_RETRY_BASE=20ms", "PACT_WEBHOOK_RETRY_MAX=50ms",
			"PACT_WEBHOOK_MAX_ATTEMPTS=2")
		ctx := t.Context()

		out := p.must(t, "webhook", "create", "-url", rx.URL+"/siem", "-description", "SIEM", "-kinds", "grant-created,grant-revoked").stdout
		if !strings.Contains(out, "shown only this once") || !strings.Contains(out, "whsec_") {
			t.Fatalf("webhook create printed\n%s", out)
		}
		rows := table(t, p.must(t, "webhook", "list").stdout)
		if len(rows) != 1 || rows[0]["URL"] != rx.URL+"/siem" || rows[0]["KINDS"] != "grant-created,grant-revoked" || rows[0]["ENABLED"] != "true" {
			t.Fatalf("webhook list = %v", rows)
		}
		id := rows[0]["WEBHOOK"]

		// One grant.created event.
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
		if _, err := fe.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: dev.GetUserCode(), BrandUser: "alice", Scopes: []string{"orders:read"}}); err != nil {
			t.Fatal(err)
		}

		waitRows(t, p, "dead after two attempts", []string{"webhook", "list"}, func(r map[string]string) bool { return r["DEAD"] == "1" && r["PENDING"] == "0" })
		if r := table(t, p.must(t, "webhook", "list").stdout)[0]; r["LAST ERROR"] != "HTTP 500" || r["LAG"] != "-" {
			t.Fatalf("webhook list after the attempts = %v", r)
		}
		dead := table(t, p.must(t, "webhook", "deliveries", "-status", "dead").stdout)
		if len(dead) != 1 || dead[0]["KIND"] != "grant-created" || dead[0]["BRAND"] != "acme" || dead[0]["ATTEMPTS"] != "2" ||
			dead[0]["HTTP"] != "500" || dead[0]["LAST ERROR"] != "HTTP 500" || dead[0]["WEBHOOK"] != id {
			t.Fatalf("webhook deliveries -status dead = %v", dead)
		}
		if n := hits.Load(); n != 2 {
			t.Fatalf("receiver hit %d times, want 2 (the attempt bound)", n)
		}

		status.Store(http.StatusNoContent)
		if out := p.must(t, "webhook", "retry", id).stdout; !strings.Contains(out, "1 dead deliveries") {
			t.Fatalf("webhook retry printed %s", out)
		}
		waitRows(t, p, "delivered after the retry", []string{"webhook", "list"}, func(r map[string]string) bool { return r["DELIVERED"] == "1" && r["DEAD"] == "0" })
		if d := table(t, p.must(t, "webhook", "deliveries", "-webhook", id).stdout); len(d) != 1 || d[0]["STATUS"] != "delivered" || d[0]["HTTP"] != "204" {
			t.Fatalf("deliveries after retry = %v", d)
		}

		if out := p.must(t, "webhook", "update", id, "-disable", "-brands", "acme").stdout; !strings.Contains(out, "updated webhook") {
			t.Fatalf("update printed %s", out)
		}
		g := decode(t, p.must(t, "webhook", "get", id, "-o", "json"), &pactv1.GetWebhookResponse{})
		if g.GetWebhook().GetEnabled() || strings.Join(g.GetWebhook().GetBrandIds(), ",") != "acme" || g.GetWebhook().GetDescription() != "SIEM" {
			t.Fatalf("after update: %v", g.GetWebhook())
		}
		if out := p.must(t, "webhook", "rotate-secret", id).stdout; !strings.Contains(out, "whsec_") ||
			!strings.Contains(out, "deliveries are signed with the new and the old secret") {
			t.Fatalf("rotate-secret printed %s", out)
		}
		g = decode(t, p.must(t, "webhook", "get", id, "-o", "json"), &pactv1.GetWebhookResponse{})
		if end := g.GetWebhook().GetPreviousSecretExpireTime(); end == nil || time.Until(end.AsTime()) < 23*time.Hour {
			t.Fatalf("after rotate-secret (default overlap) the previous secret ends %v", end)
		}
		if out := p.must(t, "webhook", "get", id).stdout; !strings.Contains(out, "previous secret valid until") {
			t.Fatalf("webhook get printed %s", out)
		}
		if out := p.must(t, "webhook", "rotate-secret", id, "--overlap", "0").stdout; !strings.Contains(out, "whsec_") ||
			!strings.Contains(out, "the old secret is no longer valid") {
			t.Fatalf("rotate-secret --overlap 0 printed %s", out)
		}
		if g := decode(t, p.must(t, "webhook", "get", id, "-o", "json"), &pactv1.GetWebhookResponse{}); g.GetWebhook().GetPreviousSecretExpireTime() != nil {
			t.Fatalf("after --overlap 0 the previous secret ends %v", g.GetWebhook().GetPreviousSecretExpireTime())
		}
		refused(t, p.cli(t, "webhook", "rotate-secret", id, "--overlap", "169h"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "previous_valid_for")

		// Refusals, each naming what is wrong.
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"webhook", "create"}, "-url"},
			{[]string{"webhook", "create", "-url", rx.URL, "-kinds", "nope"}, `-kinds: "nope" is not one of`},
			{[]string{"webhook", "deliveries", "-status", "lost"}, `-status "lost" is not one of`},
			{[]string{"webhook", "update", id}, "give at least one of"},
			{[]string{"webhook", "update", id, "-enable", "-disable"}, "contradict"},
		} {
			if r := p.cli(t, c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("%v: exit %d, want 2 naming %q\n%s", c.args, r.code, c.want, r.stderr)
			}
		}
		refused(t, p.cli(t, "webhook", "create", "-url", "ftp://siem.example/x"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "url")
		refused(t, p.cli(t, "webhook", "create", "-url", "https://10.1.2.3/x"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "url")
		refused(t, p.cli(t, "webhook", "create", "-url", "https://siem.example/x", "-brands", "a,a"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "brand_ids[1]")
		refused(t, p.cli(t, "webhook", "get", "wh_01JZZZZZZZZZZZZZZZZZZZZZZZ"), "not_found", "ERROR_REASON_NOT_FOUND")
		refused(t, p.cli(t, "webhook", "retry", id, "-delivery", "x"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "delivery_id")

		p.must(t, "webhook", "delete", id)
		if out := p.must(t, "webhook", "list").stdout; strings.Contains(out, id) {
			t.Fatalf("deleted webhook still listed:\n%s", out)
		}
	})
}

// waitRows runs a listing command until its first row satisfies ok.
func waitRows(t *testing.T, p *pactd, what string, args []string, ok func(map[string]string) bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		rows := table(t, p.must(t, args...).stdout)
		if len(rows) > 0 && ok(rows[0]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15s; last %v", what, rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
