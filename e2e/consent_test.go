package e2e_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// user is a User's browser without JavaScript: a cookie jar, redirects
// not followed, so every hop can be checked.
type user struct {
	w *world
	c *http.Client
}

func newUser(t *testing.T, w *world) *user {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &user{w: w, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// visit GETs or POSTs (when form is not nil) a path or URL on the frontend.
func (u *user) visit(t *testing.T, target string, form url.Values, headers ...string) response {
	t.Helper()
	target = strings.TrimPrefix(target, u.w.feURL)
	method, body := "GET", ""
	if form != nil {
		method, body = "POST", form.Encode()
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u.w.feURL+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := u.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, string(b)}
}

// signIn signs in at the demo Brand's login through the consent link.
func (u *user) signIn(t *testing.T, link, name string) response {
	t.Helper()
	l, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	r := u.visit(t, link, url.Values{"username": {name}, "return_to": {l.Query().Get("return_to")}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", r.status, r.body)
	}
	return r
}

// hidden returns a hidden field of a page.
func hidden(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no hidden %s in the page", name)
	}
	return m[1]
}

// wantPageHeaders checks the headers every Provider and Brand page sends.
func wantPageHeaders(t *testing.T, name string, r response) {
	t.Helper()
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.HasPrefix(csp, "default-src 'none'") ||
		r.header.Get("X-Frame-Options") != "DENY" || r.header.Get("Cache-Control") != "no-store" ||
		r.header.Get("Referrer-Policy") != "no-referrer" || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("%s: page headers %v", name, r.header)
	}
}

// TestConsentPages drives the consent and connected-apps pages over HTTP:
// sign-in redirects, headers, anti-forgery, the code to compare (never
// typed again), a subset approved, the connected page (one entry per PA,
// the Brand's words, expiry), revocation after a confirmation that names
// what it revokes.
func TestConsentPages(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		d := w.startDevice(t, "user-1", "orders:read orders:cancel")
		consentPath := "/a2a/shop/oauth/consent?user_code=" + d.UserCode
		u := newUser(t, w)

		// Not signed in: to the Brand login, which returns here.
		r := u.visit(t, consentPath, nil)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/demo/shop/login?return_to="+url.QueryEscape(consentPath) {
			t.Fatalf("consent without a session: %d %v", r.status, r.header)
		}
		r = u.visit(t, d.VerificationURIComplete, nil)
		wantPageHeaders(t, "login", r)
		// The sign-in names the Brand by its display name, not its id.
		if r.status != 200 || !strings.Contains(r.body, `<label for="username">`) || !strings.Contains(r.body, "<title>Sign in to Shop Inc.</title>") {
			t.Fatalf("login page %d %s", r.status, r.body)
		}
		// return_to may only name this Brand's pages.
		for _, bad := range []string{"/a2a/acme/oauth/consent", "/elsewhere", "https://evil.example/x"} {
			if r := u.visit(t, "/demo/shop/login", url.Values{"username": {"alice"}, "return_to": {bad}}); r.status != 400 {
				t.Errorf("return_to %s: %d", bad, r.status)
			}
		}
		if r := u.visit(t, "/demo/shop/login", url.Values{"username": {"Alice!"}, "return_to": {consentPath}}); r.status != 400 {
			t.Errorf("bad user name: %d", r.status)
		}
		r = u.signIn(t, d.VerificationURIComplete, "alice")
		if r.header.Get("Location") != consentPath {
			t.Fatalf("after sign-in: Location %q", r.header.Get("Location"))
		}

		page := u.visit(t, consentPath, nil)
		wantPageHeaders(t, "consent", page)
		for _, want := range []string{`<html lang="en">`, "E2E PA", w.issuer, "Shop Inc.", d.UserCode, "<legend>",
			`<label for="scope-0">See your orders and their delivery status`, `<label for="scope-1">Cancel your orders`,
			`value="orders:read" checked`, `value="orders:cancel" checked`, `<p class="compare"><strong class="usercode">` + d.UserCode + `</strong></p>`,
			`aria-describedby="code-help">Allow</button>`, ">Deny</button>", "alice"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("consent page lacks %q", want)
			}
		}
		// Compare, or type: not both (RFC 8628 §5.4).
		if strings.Contains(page.body, "confirm_code") {
			t.Errorf("the consent page asks to type the code it shows")
		}
		csrf := hidden(t, page.body, "csrf")
		decide := func(form url.Values, headers ...string) response {
			base := url.Values{"csrf": {csrf}, "user_code": {d.UserCode}, "decision": {"allow"}, "scope": {"orders:read"}}
			for k, v := range form {
				base[k] = v
			}
			return u.visit(t, "/a2a/shop/oauth/consent/decision", base, headers...)
		}
		// Forged or foreign decisions change nothing.
		for name, r := range map[string]response{
			"no csrf":         decide(url.Values{"csrf": nil}),
			"wrong csrf":      decide(url.Values{"csrf": {"x" + csrf}}),
			"cross-site":      decide(nil, "Sec-Fetch-Site: cross-site"),
			"signed out":      newUser(t, w).visit(t, "/a2a/shop/oauth/consent/decision", url.Values{"csrf": {csrf}, "user_code": {d.UserCode}, "decision": {"allow"}}),
			"other code csrf": decide(url.Values{"user_code": {"BCDF-GHJK"}}),
		} {
			if r.status != http.StatusForbidden {
				t.Errorf("%s: %d", name, r.status)
			}
		}
		if r := decide(url.Values{"decision": {"maybe"}}); r.status != 400 {
			t.Errorf("neither allow nor deny: %d", r.status)
		}
		wantOAuthError(t, "still pending", w.poll(t, "user-1", d.DeviceCode), 400, "authorization_pending")

		// Allow with one scope unchecked.
		r = decide(nil)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/a2a/shop/oauth/connected?status=approved" {
			t.Fatalf("allow: %d %v %s", r.status, r.header, r.body)
		}
		var tok tokenResponse
		wantOAuthJSON(t, "token", w.poll(t, "user-1", d.DeviceCode), &tok)
		if tok.Scope != "orders:read" {
			t.Fatalf("granted %q", tok.Scope)
		}
		if r := u.visit(t, consentPath, nil); r.status != 400 || !strings.Contains(r.body, "already decided") {
			t.Errorf("decided code: %d", r.status)
		}
		if r := u.visit(t, "/a2a/shop/oauth/consent?user_code=BCDF-GHJK", nil); r.status != 404 {
			t.Errorf("unknown code: %d", r.status)
		}
		if r := u.visit(t, "/a2a/shop/oauth/consent", nil); r.status != 200 || !strings.Contains(r.body, `name="user_code"`) {
			t.Errorf("code entry page: %d", r.status)
		}

		// A second connection of the same PA: the page still shows one
		// entry for it, both grants under it, in the Brand's words, with
		// their expiry.
		d2 := w.startDevice(t, "user-1", "orders:cancel")
		page2 := u.visit(t, "/a2a/shop/oauth/consent?user_code="+d2.UserCode, nil)
		if r := u.visit(t, "/a2a/shop/oauth/consent/decision", url.Values{"csrf": {hidden(t, page2.body, "csrf")}, "user_code": {d2.UserCode},
			"decision": {"allow"}, "scope": {"orders:cancel"}}); r.status != http.StatusSeeOther {
			t.Fatalf("second allow: %d %s", r.status, r.body)
		}
		grants := func() []*pactv1.Grant {
			res, err := w.deleg.ListGrants(t.Context(), &pactv1.ListGrantsRequest{BrandId: shop, BrandUser: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			return res.GetGrants()
		}
		g := grants()
		if len(g) != 2 || !slices.Equal(g[1].GetScopes(), []string{"orders:read"}) || !slices.Equal(g[0].GetScopes(), []string{"orders:cancel"}) {
			t.Fatalf("grants %v", g)
		}
		apps := u.visit(t, "/a2a/shop/oauth/connected?status=denied", nil)
		wantPageHeaders(t, "connected", apps)
		expires := g[0].GetExpireTime().AsTime().UTC().Format("2 Jan 2006")
		for _, want := range []string{"<title>Connected assistants at Shop Inc.</title>", "You denied the request: nothing new was shared.",
			`<h2>E2E PA</h2><span class="state">Active · 2 grants</span>`,
			`<li>See your orders and their delivery status <span class="id">orders:read</span></li>`,
			`<li>Cancel your orders that have not shipped yet <span class="id">orders:cancel</span></li>`,
			"expires <time>" + expires + "</time>", ">Revoke…</button>"} {
			if !strings.Contains(apps.body, want) {
				t.Errorf("connected page lacks %q", want)
			}
		}
		if n := strings.Count(apps.body, `<li class="pa"`); n != 1 || strings.Contains(apps.body, "Done: nothing was shared") {
			t.Errorf("connected page: %d entries for one PA:\n%s", n, apps.body)
		}

		// Revoke: a confirmation naming the PA and what it loses, then the
		// revocation of both grants, which the page then names.
		confirm := u.visit(t, "/a2a/shop/oauth/connected/revoke?agent_id="+g[0].GetAgentId(), nil)
		wantPageHeaders(t, "revoke", confirm)
		for _, want := range []string{"<h1>Revoke E2E PA?</h1>", "<p>At Shop Inc., <strong>E2E PA</strong> will no longer be able to act for you. It loses:</p>",
			`<span class="id">orders:read</span>`, `<span class="id">orders:cancel</span>`, ">Revoke E2E PA</button>", ">Keep it</a>"} {
			if !strings.Contains(confirm.body, want) {
				t.Errorf("revoke confirmation lacks %q", want)
			}
		}
		if r := u.visit(t, "/a2a/shop/oauth/connected/revoke?agent_id=agt_unknown", nil); r.status != http.StatusNotFound {
			t.Errorf("confirmation for a PA without grants: %d", r.status)
		}
		revoke := url.Values{"csrf": {hidden(t, confirm.body, "csrf")}, "agent_id": {g[0].GetAgentId()}}
		if r := newUser(t, w).visit(t, "/a2a/shop/oauth/connected/revoke", revoke); r.status != http.StatusForbidden {
			t.Errorf("revoke signed out: %d", r.status)
		}
		if r := u.visit(t, "/a2a/shop/oauth/connected/revoke", url.Values{"csrf": {csrf}, "agent_id": revoke["agent_id"]}); r.status != http.StatusForbidden {
			t.Errorf("revoke with the consent form's token: %d", r.status)
		}
		if r := u.visit(t, "/a2a/shop/oauth/connected/revoke", url.Values{"csrf": revoke["csrf"], "agent_id": {"agt_other"}}); r.status != http.StatusForbidden {
			t.Errorf("revoke another PA with this PA's token: %d", r.status)
		}
		for _, g := range grants() {
			if g.GetRevokeTime() != nil {
				t.Fatalf("a refused revoke revoked")
			}
		}
		r = u.visit(t, "/a2a/shop/oauth/connected/revoke", revoke)
		if r.status != http.StatusSeeOther || !strings.HasSuffix(r.header.Get("Location"), "/a2a/shop/oauth/connected?status=revoked&agent_id="+url.QueryEscape(g[0].GetAgentId())) {
			t.Fatalf("revoke: %d %v %s", r.status, r.header, r.body)
		}
		for _, g := range grants() {
			if g.GetRevokeTime() == nil {
				t.Fatalf("grant %s was not revoked", g.GetGrantId())
			}
		}
		after := u.visit(t, "/a2a/shop/oauth/connected?status=revoked&agent_id="+url.QueryEscape(g[0].GetAgentId()), nil)
		if !strings.Contains(after.body, "Revoked: E2E PA can no longer act for you here.") || !strings.Contains(after.body, `<span class="state off">Revoked</span>`) ||
			strings.Contains(after.body, ">Revoke…</button>") {
			t.Errorf("connected page after revoking:\n%s", after.body)
		}
		wantInvalidToken(t, "revoked from the page", w.delegated(t, "user-1", tok.AccessToken, userMsg("m-1", "", "show my orders")))
	})
}
