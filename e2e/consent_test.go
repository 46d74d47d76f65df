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

	pactv1 "pactd/gen/pact/v1"
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
// sign-in redirects, headers, anti-forgery, the typed code, a subset
// approved, revocation.
func TestConsentPages(t *testing.T) {
	engines(t, func(t *testing.T, dbURL string) {
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
		if r.status != 200 || !strings.Contains(r.body, `<label for="username">`) {
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
			`value="orders:read" checked`, `value="orders:cancel" checked`, `<label for="confirm_code">`, ">Allow</button>", ">Deny</button>", "alice"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("consent page lacks %q", want)
			}
		}
		csrf := hidden(t, page.body, "csrf")
		decide := func(form url.Values, headers ...string) response {
			base := url.Values{"csrf": {csrf}, "user_code": {d.UserCode}, "confirm_code": {d.UserCode}, "decision": {"allow"}, "scope": {"orders:read"}}
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
		if r := decide(url.Values{"confirm_code": {"BCDF-GHJK"}}); r.status != 400 || !strings.Contains(r.body, "not the code of this request") {
			t.Errorf("mismatched typed code: %d", r.status)
		}
		wantOAuthError(t, "still pending", w.poll(t, "user-1", d.DeviceCode), 400, "authorization_pending")

		// Allow with one scope unchecked and the code typed in lower case.
		r = decide(url.Values{"confirm_code": {strings.ToLower(d.UserCode)}})
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

		// Connected apps: the grant, then revoked from the page.
		apps := u.visit(t, "/a2a/shop/oauth/connected?status=approved", nil)
		wantPageHeaders(t, "connected", apps)
		if !strings.Contains(apps.body, "E2E PA") || !strings.Contains(apps.body, "<code>orders:read</code>") || !strings.Contains(apps.body, ">Revoke</button>") {
			t.Fatalf("connected page %s", apps.body)
		}
		grants := func() []*pactv1.Grant {
			res, err := w.deleg.ListGrants(t.Context(), &pactv1.ListGrantsRequest{BrandId: shop, BrandUser: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			return res.GetGrants()
		}
		g := grants()
		if len(g) != 1 || !slices.Equal(g[0].GetScopes(), []string{"orders:read"}) {
			t.Fatalf("grants %v", g)
		}
		revoke := url.Values{"csrf": {hidden(t, apps.body, "csrf")}, "grant_id": {g[0].GetGrantId()}}
		if r := newUser(t, w).visit(t, "/a2a/shop/oauth/connected/revoke", revoke); r.status != http.StatusForbidden {
			t.Errorf("revoke signed out: %d", r.status)
		}
		if r := u.visit(t, "/a2a/shop/oauth/connected/revoke", url.Values{"csrf": {csrf}, "grant_id": revoke["grant_id"]}); r.status != http.StatusForbidden {
			t.Errorf("revoke with the consent form's token: %d", r.status)
		}
		if grants()[0].GetRevokeTime() != nil {
			t.Fatalf("a refused revoke revoked")
		}
		if r := u.visit(t, "/a2a/shop/oauth/connected/revoke", revoke); r.status != http.StatusSeeOther {
			t.Fatalf("revoke: %d %s", r.status, r.body)
		}
		if grants()[0].GetRevokeTime() == nil {
			t.Fatalf("the grant was not revoked")
		}
		wantInvalidToken(t, "revoked from the page", w.delegated(t, "user-1", tok.AccessToken, userMsg("m-1", "", "show my orders")))
	})
}
