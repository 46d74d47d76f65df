package e2e_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// TestSignedConnectedWithoutCookies: the connected page of a
// signed-assertion Brand, by a client that keeps no cookies. GET sends the
// User to the Brand's login with return_to the connected URL; the
// assertion it posts opens the list (the PA, the scope in the Brand's
// words) once; a consent assertion does not open it, nor a connected
// assertion consent; revoking confirms first, then revokes (the token
// stops introspecting); a forged session changes nothing.
func TestSignedConnectedWithoutCookies(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		ctx := t.Context()
		b := newStateless()
		consentURL := w.feURL + "/a2a/" + mart + "/oauth/consent"
		connectedURL := w.feURL + "/a2a/" + mart + "/oauth/connected"
		tokens := pactv1connect.NewTokenServiceClient(http.DefaultClient, w.pactdURL, bearer(frontendToken))

		// bob grants orders:read through consent.
		d := w.martDevice(t, "user-1", "orders:read")
		_, f, consentAssertion := w.consentFor(t, b, d, "bob")
		if r := b.do(t, f.action, url.Values{"session": {f.hidden["session"]}, "decision": {"allow"}, "scope": {"orders:read"}}); r.status != http.StatusSeeOther {
			t.Fatalf("allow: %d %s", r.status, r.body)
		}
		var tok tokenResponse
		wantOAuthJSON(t, "token", w.oauthPost(t, mart, "token", "Bearer "+w.token(t, "user-1"),
			w.paForm("grant_type", deviceGrant, "device_code", d.DeviceCode)), &tok)

		// The outcome page links to the list.
		if r := b.do(t, connectedURL+"?status=approved&scope=orders:read", nil); r.status != 200 ||
			!strings.Contains(r.body, `<a href="`+html.EscapeString(connectedURL)+`">See all your connected assistants</a>`) {
			t.Fatalf("outcome page: %d %s", r.status, r.body)
		}
		// GET connected: to the Brand's login, returning to the connected URL.
		r := b.do(t, connectedURL, nil)
		wantLogin := w.site.url + "/login?return_to=" + url.QueryEscape(connectedURL)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != wantLogin {
			t.Fatalf("GET connected: %d Location %q, want 303 to %s", r.status, r.header.Get("Location"), wantLogin)
		}
		// The Brand's login page posts bob's assertion to the connected URL.
		login := firstForm(t, b.do(t, wantLogin, nil).body)
		if login.method != "post" || login.action != connectedURL || login.hidden["assertion"] == "" {
			t.Fatalf("Brand login form %+v", login)
		}
		assertion := login.hidden["assertion"]
		page := b.do(t, connectedURL, url.Values{"assertion": {assertion}})
		wantPageHeaders(t, "connected", page)
		if page.status != 200 || !strings.Contains(page.body, "<title>Connected assistants at Mart Inc.</title>") ||
			!strings.Contains(page.body, "<h2>E2E PA</h2>") || !strings.Contains(page.body, "See your orders and their delivery status") {
			t.Fatalf("connected page: %d %s", page.status, page.body)
		}
		rf := firstForm(t, page.body)
		if rf.method != "post" || rf.action != connectedURL+"/revoke" || rf.hidden["session"] == "" || rf.hidden["agent_id"] == "" {
			t.Fatalf("revoke form %+v", rf)
		}
		session := rf.hidden["session"]

		// Refusals, each with the reason the page names; none shows a session.
		for _, c := range []struct {
			name, target, assertion string
			status                  int
			words                   string
		}{
			// The same assertion again: its jti is used up.
			{"replayed", connectedURL, assertion, 400, "used already"},
			// A consent assertion (aud the consent URL, a user_code).
			{"consent-assertion-at-connected", connectedURL, consentAssertion, 403, "could not be verified"},
			// A fresh connected assertion at the consent URL.
			{"connected-assertion-at-consent", consentURL, w.site.login(t, w, connectedURL, "bob", ""), 403, "could not be verified"},
		} {
			r := b.do(t, c.target, url.Values{"assertion": {c.assertion}})
			if r.status != c.status || !strings.Contains(r.body, c.words) || strings.Contains(r.body, `name="session"`) {
				t.Errorf("%s: %d %s", c.name, r.status, r.body)
			}
		}
		// A connected session decides no consent.
		d2 := w.martDevice(t, "user-1", "orders:cancel")
		if r := b.do(t, consentURL+"/decision", url.Values{"session": {session}, "decision": {"allow"}, "scope": {"orders:cancel"}}); r.status != 403 {
			t.Errorf("connected session at the decision: %d %s", r.status, r.body)
		}
		wantOAuthError(t, "still pending", w.oauthPost(t, mart, "token", "Bearer "+w.token(t, "user-1"),
			w.paForm("grant_type", deviceGrant, "device_code", d2.DeviceCode)), 400, "authorization_pending")
		// A forged session revokes nothing.
		forged := url.Values{"session": {session[:len(session)-4] + "AAAA"}, "agent_id": {rf.hidden["agent_id"]}, "confirm": {"1"}}
		if r := b.do(t, rf.action, forged); r.status != 403 {
			t.Errorf("forged session: %d %s", r.status, r.body)
		}
		live := func() bool {
			res, err := tokens.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: tok.AccessToken})
			if err != nil {
				t.Fatal(err)
			}
			return res.GetActive()
		}
		if !live() {
			t.Fatal("the token is not active before the revocation")
		}

		// Revoke: the confirmation names what goes, carrying the session.
		confirm := b.do(t, rf.action, url.Values{"session": {session}, "agent_id": {rf.hidden["agent_id"]}})
		cf := firstForm(t, confirm.body)
		if confirm.status != 200 || !strings.Contains(confirm.body, "<h1>Revoke E2E PA?</h1>") || cf.action != connectedURL+"/revoke" ||
			cf.hidden["session"] != session || cf.hidden["confirm"] != "1" || cf.hidden["agent_id"] != rf.hidden["agent_id"] {
			t.Fatalf("confirmation: %d %+v %s", confirm.status, cf, confirm.body)
		}
		if !live() {
			t.Fatal("the confirmation revoked")
		}
		done := b.do(t, cf.action, url.Values{"session": {session}, "agent_id": {cf.hidden["agent_id"]}, "confirm": {"1"}})
		if done.status != 200 || !strings.Contains(done.body, "Revoked: E2E PA can no longer act for you here.") {
			t.Fatalf("revoke: %d %s", done.status, done.body)
		}
		if live() {
			t.Fatal("the token still introspects after the revocation")
		}
		res, err := w.deleg.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: mart, BrandUser: "bob"})
		if err != nil || len(res.GetGrants()) != 1 || res.GetGrants()[0].GetRevokeTime() == nil {
			t.Fatalf("grants after revoke: %v %v", res, err)
		}
	})
}
