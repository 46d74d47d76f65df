package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/testkit/testcert"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	adminToken    = "console-admin-token-0123456789"
	frontendToken = "console-frontend-token-0123456789"
)

// site is a pactd with its console: the console and the RPC handler each
// on a loopback test server.
type site struct {
	console, rpc *httptest.Server
}

func newSite(t *testing.T, dbURL string, env ...string) *site {
	t.Helper()
	// The server's Close waits for the credential last-use writes it
	// started in the background, so the directory can go after it.
	dataDir := t.TempDir()
	cfg, err := config.Load(nil, append([]string{"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + frontendToken,
		"PACT_DATA_DIR=" + dataDir, "PACT_DATABASE_URL=" + dbURL, "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off",
		"PACT_CONSOLE_LISTEN=127.0.0.1:0", "PACT_PUBLIC_URL=https://provider.example", "PACT_DEV=true"}, env...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Build(t.Context(), cfg, server.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	s := &site{console: httptest.NewUnstartedServer(srv.ConsoleHandler()), rpc: httptest.NewServer(srv.Handler())}
	if cfg.TLSCert != "" {
		s.console.StartTLS()
	} else {
		s.console.Start()
	}
	t.Cleanup(func() { s.console.Close(); s.rpc.Close(); _ = srv.Close() })
	return s
}

func bearer(tok string) connect.ClientOption {
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+tok)
			return next(ctx, req)
		}
	}))
}

// Over TLS (pactd has a certificate) the session cookie is Secure and
// __Host- prefixed, and pages ask for HSTS.
func TestConsoleOverTLS(t *testing.T) {
	// Build loads the files; the console's handler is served here by the
	// test server's own certificate.
	certFile, keyFile, _ := testcert.Write(t, t.TempDir())
	s := newSite(t, "", "PACT_TLS_CERT="+certFile, "PACT_TLS_KEY="+keyFile)
	b := s.browser(t)
	b.client = s.console.Client()
	if p := b.do("GET", "/login", nil); p.header.Get("Strict-Transport-Security") != "max-age=31536000" || b.cookies["__Host-pactd_console_login"] == nil {
		t.Fatalf("sign-in page over TLS: HSTS %q, cookies %v", p.header.Get("Strict-Transport-Security"), b.cookies)
	}
	p := b.signIn(adminToken)
	ck := b.cookies["__Host-pactd_console"]
	if p.status != http.StatusSeeOther || ck == nil || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Domain != "" {
		t.Fatalf("sign-in over TLS: %d, cookie %+v", p.status, ck)
	}
	if p := b.do("GET", "/", nil); p.status != 200 {
		t.Fatalf("ok/overview over TLS: %d", p.status)
	}
}

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	t       *testing.T
	base    string
	cookies map[string]*http.Cookie
	// headers are sent with every request (Sec-Fetch-Site, Origin).
	headers map[string]string
	// client sends the requests (the test server's, over TLS).
	client *http.Client
}

func (s *site) browser(t *testing.T) *browser {
	return &browser{t: t, base: s.console.URL, cookies: map[string]*http.Cookie{}, headers: map[string]string{"Sec-Fetch-Site": "same-origin"}}
}

// page is one answer.
type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range b.headers {
		req.Header.Set(k, v)
	}
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	rt := http.DefaultTransport
	if b.client != nil {
		rt = b.client.Transport
	}
	res, err := rt.RoundTrip(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return page{status: res.StatusCode, header: res.Header, body: string(raw)}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the anti-forgery token of a page's forms.
func (p page) csrf(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field on the page (status %d): %.300s", p.status, p.body)
	}
	return m[1]
}

// alert is the page's error paragraph, or "".
func (p page) alert() string {
	m := regexp.MustCompile(`<p class="error" role="alert">([^<]*)</p>`).FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return htmlUnescape(m[1])
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(s)
}

// signIn signs in with tok and returns the answer to the sign-in.
func (b *browser) signIn(tok string) page {
	b.t.Helper()
	login := b.do("GET", "/login", nil)
	return b.do("POST", "/login", url.Values{"csrf": {login.csrf(b.t)}, "token": {tok}})
}

func TestConsoleHeaders(t *testing.T) {
	s := newSite(t, "")
	b := s.browser(t)
	for _, path := range []string{"/login", "/", "/nope", "/console.css"} {
		p := b.do("GET", path, nil)
		want := map[string]string{
			"Content-Security-Policy": "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
			"X-Frame-Options":         "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
		}
		if path != "/console.css" {
			want["Cache-Control"] = "no-store"
		}
		for k, v := range want {
			if got := p.header.Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, v)
			}
		}
		if p.header.Get("Strict-Transport-Security") != "" {
			t.Errorf("GET %s: HSTS without TLS", path)
		}
	}
	if p := b.do("GET", "/console.css", nil); p.status != 200 || p.header.Get("Content-Type") != "text/css; charset=utf-8" || !strings.Contains(p.body, "focus-visible") {
		t.Fatalf("style sheet: %d %q", p.status, p.header.Get("Content-Type"))
	}
	// No script, no inline style, no third-party asset on any page.
	p := b.do("GET", "/login", nil)
	for _, bad := range []string{"<script", "style=", "<style", "http://", "https://"} {
		if strings.Contains(p.body, bad) {
			t.Errorf("the sign-in page holds %q", bad)
		}
	}
	if p := b.do("GET", "/", nil); p.status != http.StatusSeeOther || p.header.Get("Location") != "/login" {
		t.Fatalf("GET / signed out: %d %s, want 303 to /login", p.status, p.header.Get("Location"))
	}
}

// Sign-in: an admin credential opens a session; every refusal names its
// reason and opens none.
func TestConsoleSignIn(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		s := newSite(t, dbURL)
		b := s.browser(t)
		// Positive control, as Chromium sends it under Referrer-Policy:
		// no-referrer (Origin: null, Sec-Fetch-Site: same-origin).
		b.headers["Origin"] = "null"
		p := b.signIn(adminToken)
		ck := b.cookies["pactd_console"]
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/" || ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode ||
			ck.Path != "/" || ck.Secure || len(ck.Value) != 43 {
			t.Fatalf("ok/sign-in: %d %v cookie %+v", p.status, p.header, ck)
		}
		if _, left := b.cookies["pactd_console_login"]; left {
			t.Errorf("the sign-in form's cookie outlived the sign-in")
		}
		if p := b.do("GET", "/", nil); p.status != 200 || !strings.Contains(p.body, "<h1>Overview</h1>") || !strings.Contains(p.body, "Sign out") {
			t.Fatalf("overview after sign-in: %d %.300s", p.status, p.body)
		}

		for _, c := range []struct {
			name    string
			prepare func(b *browser) url.Values
			status  int
			reason  string
		}{
			{"fail/frontend-credential", func(b *browser) url.Values { return loginForm(b, frontendToken) }, 403,
				"Refused: that credential's role is frontend; the console needs an admin credential."},
			{"fail/unknown-credential", func(b *browser) url.Values { return loginForm(b, "pact_adm_not-a-real-token-0123456789") }, 401,
				"Refused: that is not a live pactd credential."},
			{"fail/empty", func(b *browser) url.Values { return loginForm(b, "") }, 401, "Refused: that is not a live pactd credential."},
			{"fail/too-long", func(b *browser) url.Values { return loginForm(b, strings.Repeat("a", 513)) }, 401, "Refused: that is not a live pactd credential."},
			{"fail/no-form-cookie", func(b *browser) url.Values {
				f := loginForm(b, adminToken)
				delete(b.cookies, "pactd_console_login")
				return f
			}, 403, "Refused: the sign-in form expired or did not come from this page. Try again."},
			{"fail/form-token-mismatch", func(b *browser) url.Values {
				f := loginForm(b, adminToken)
				f.Set("csrf", strings.Repeat("A", 43))
				return f
			}, 403, "Refused: the sign-in form expired or did not come from this page. Try again."},
			{"fail/cross-site", func(b *browser) url.Values {
				b.headers["Sec-Fetch-Site"] = "cross-site"
				return loginForm(b, adminToken)
			}, 403, "Refused: the browser says this form came from another site (Sec-Fetch-Site: cross-site)."},
			{"fail/other-origin", func(b *browser) url.Values {
				delete(b.headers, "Sec-Fetch-Site")
				b.headers["Origin"] = "https://evil.example"
				return loginForm(b, adminToken)
			}, 403, "Refused: the form came from another origin."},
			{"fail/null-origin-without-fetch-metadata", func(b *browser) url.Values {
				delete(b.headers, "Sec-Fetch-Site")
				b.headers["Origin"] = "null"
				return loginForm(b, adminToken)
			}, 403, "Refused: the form came from another origin."},
			{"fail/null-origin-cross-site", func(b *browser) url.Values {
				b.headers["Sec-Fetch-Site"] = "cross-site"
				b.headers["Origin"] = "null"
				return loginForm(b, adminToken)
			}, 403, "Refused: the browser says this form came from another site (Sec-Fetch-Site: cross-site)."},
		} {
			t.Run(c.name, func(t *testing.T) {
				b := s.browser(t)
				form := c.prepare(b)
				p := b.do("POST", "/login", form)
				if p.status != c.status || p.alert() != c.reason {
					t.Fatalf("%d %q; want %d %q", p.status, p.alert(), c.status, c.reason)
				}
				if _, opened := b.cookies["pactd_console"]; opened {
					t.Fatalf("a refused sign-in set a session cookie")
				}
			})
		}
	})
}

func loginForm(b *browser, tok string) url.Values {
	b.t.Helper()
	p := b.do("GET", "/login", nil)
	return url.Values{"csrf": {p.csrf(b.t)}, "token": {tok}}
}

// Every POST needs the session's anti-forgery token and a same-origin
// browser; refusals change nothing; a service's refusal shows its reason.
func TestConsoleActionRefusals(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		s := newSite(t, dbURL)
		agents := pactv1connect.NewAgentServiceClient(s.rpc.Client(), s.rpc.URL, bearer(adminToken))
		count := func() int {
			res, err := agents.ListAgents(t.Context(), &pactv1.ListAgentsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			return len(res.GetAgents())
		}
		b := s.browser(t)
		b.signIn(adminToken)
		tok := b.do("GET", "/agents", nil).csrf(t)
		register := func(csrf string) url.Values {
			f := url.Values{"issuer": {"https://pa.example"}, "jwks_uri": {"https://pa.example/jwks.json"}, "display_name": {"Example PA"}}
			if csrf != "" {
				f.Set("csrf", csrf)
			}
			return f
		}
		for _, c := range []struct {
			name    string
			form    url.Values
			headers map[string]string
			status  int
			reason  string
		}{
			{"fail/no-csrf", register(""), nil, 403, "Refused: the form's anti-forgery token is missing or wrong. Reload the page and try again."},
			{"fail/wrong-csrf", register(strings.Repeat("x", len(tok))), nil, 403, "Refused: the form's anti-forgery token is missing or wrong. Reload the page and try again."},
			{"fail/cross-site", register(tok), map[string]string{"Sec-Fetch-Site": "same-site"}, 403,
				"Refused: the browser says this form came from another site (Sec-Fetch-Site: same-site)."},
			{"fail/other-origin", register(tok), map[string]string{"Sec-Fetch-Site": "", "Origin": "http://attacker.example"}, 403,
				"Refused: the form came from another origin."},
			{"fail/service-refusal", url.Values{"csrf": {tok}, "issuer": {"not a url"}, "jwks_uri": {"https://pa.example/jwks.json"}, "display_name": {"X"}}, nil, 400, ""},
			{"fail/too-large", url.Values{"csrf": {tok}, "display_name": {strings.Repeat("x", 70<<10)}}, nil, 400, "Refused: the form could not be read (at most 64 KiB)."},
		} {
			t.Run(c.name, func(t *testing.T) {
				saved := map[string]string{}
				for k, v := range c.headers {
					saved[k] = b.headers[k]
					if v == "" {
						delete(b.headers, k)
					} else {
						b.headers[k] = v
					}
				}
				defer func() {
					for k, v := range saved {
						if v == "" {
							delete(b.headers, k)
						} else {
							b.headers[k] = v
						}
					}
				}()
				p := b.do("POST", "/agents", c.form)
				want := c.reason
				if want == "" {
					want = "Refused (invalid_argument): invalid request: issuer: "
				}
				if p.status != c.status || !strings.HasPrefix(p.alert(), want) {
					t.Fatalf("%d %q; want %d %q", p.status, p.alert(), c.status, want)
				}
				if n := count(); n != 0 {
					t.Fatalf("a refused form registered %d agents", n)
				}
			})
		}
		// Positive control: the same form with the token registers.
		if p := b.do("POST", "/agents", register(tok)); p.status != http.StatusSeeOther || p.header.Get("Location") != "/agents?done=registered" || count() != 1 {
			t.Fatalf("ok/register: %d %s, %d agents", p.status, p.header.Get("Location"), count())
		}
		if p := b.do("GET", "/agents?done=registered", nil); !strings.Contains(p.body, "The PA is registered.") || !strings.Contains(p.body, "Example PA") {
			t.Fatalf("the PAs page after registering: %.500s", p.body)
		}
		// Disable and enable it again; an unknown change or PA is refused.
		res, err := agents.ListAgents(t.Context(), &pactv1.ListAgentsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		id := res.GetAgents()[0].GetId()
		enabled := func() bool {
			a, err := agents.GetAgent(t.Context(), &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: id}})
			if err != nil {
				t.Fatal(err)
			}
			return a.GetAgent().GetEnabled()
		}
		for _, c := range []struct {
			change string
			want   bool
		}{{"disable", false}, {"enable", true}, {"disable", false}, {"approve", true}} {
			if p := b.do("POST", "/agents/"+id+"/"+c.change, url.Values{"csrf": {tok}}); p.status != http.StatusSeeOther || enabled() != c.want {
				t.Fatalf("ok/%s: %d %q, enabled %v", c.change, p.status, p.alert(), enabled())
			}
		}
		if p := b.do("POST", "/agents/"+id+"/delete", url.Values{"csrf": {tok}}); p.status != 404 || !enabled() {
			t.Fatalf("POST /agents/ID/delete: %d, enabled %v; want 404 and nothing changed", p.status, enabled())
		}
		if p := b.do("POST", "/agents/agt_nope/disable", url.Values{"csrf": {tok}}); p.status != 404 || !strings.HasPrefix(p.alert(), "Refused (not_found): ") {
			t.Fatalf("disable an unknown PA: %d %q", p.status, p.alert())
		}
	})
}

// Signing out ends the session on the server: its cookie, sent again,
// opens nothing. Revoking the credential a session signed in with ends
// the session too.
func TestConsoleSessionEnds(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		s := newSite(t, dbURL)
		b := s.browser(t)
		b.signIn(adminToken)
		old := *b.cookies["pactd_console"]
		tok := b.do("GET", "/", nil).csrf(t)
		p := b.do("POST", "/logout", url.Values{"csrf": {tok}})
		if p.status != 200 || !strings.Contains(p.body, "<h1>Sign in</h1>") {
			t.Fatalf("sign-out: %d %.200s", p.status, p.body)
		}
		if _, kept := b.cookies["pactd_console"]; kept {
			t.Fatalf("sign-out left the session cookie")
		}
		b.cookies["pactd_console"] = &old // replayed
		if p := b.do("GET", "/", nil); p.status != http.StatusSeeOther || p.header.Get("Location") != "/login" {
			t.Fatalf("GET / with the ended session's cookie: %d %s", p.status, p.header.Get("Location"))
		}
		p = b.do("POST", "/agents", url.Values{"csrf": {tok}, "issuer": {"https://pa.example"}, "jwks_uri": {"https://pa.example/jwks.json"}, "display_name": {"X"}})
		if p.status != 403 || p.alert() != "Refused: you are not signed in (your session ended or you signed out). Sign in again." {
			t.Fatalf("POST with the ended session's cookie: %d %q", p.status, p.alert())
		}

		// A second admin credential, revoked while its session is open.
		creds := pactv1connect.NewCredentialServiceClient(s.rpc.Client(), s.rpc.URL, bearer(adminToken))
		c, err := creds.CreateCredential(t.Context(), &pactv1.CreateCredentialRequest{Role: pactv1.CallerRole_CALLER_ROLE_ADMIN, Name: "operator"})
		if err != nil {
			t.Fatal(err)
		}
		b2 := s.browser(t)
		if p := b2.signIn(c.GetToken()); p.status != http.StatusSeeOther {
			t.Fatalf("ok/sign-in with the new credential: %d %q", p.status, p.alert())
		}
		if p := b2.do("GET", "/", nil); p.status != 200 {
			t.Fatalf("ok/overview with the new credential: %d", p.status)
		}
		if _, err := creds.RevokeCredential(t.Context(), &pactv1.RevokeCredentialRequest{Id: c.GetCredential().GetId()}); err != nil {
			t.Fatal(err)
		}
		if p := b2.do("GET", "/", nil); p.status != http.StatusSeeOther || p.header.Get("Location") != "/login" {
			t.Fatalf("GET / after the session's credential was revoked: %d %s", p.status, p.header.Get("Location"))
		}
		// The first browser signs in again (positive control); signing in
		// once more ends the session it had.
		if p := b.signIn(adminToken); p.status != http.StatusSeeOther {
			t.Fatalf("ok/sign-in again: %d", p.status)
		}
		first := *b.cookies["pactd_console"]
		if p := b.signIn(adminToken); p.status != http.StatusSeeOther || b.cookies["pactd_console"].Value == first.Value {
			t.Fatalf("ok/sign-in once more: %d, same id %v", p.status, b.cookies["pactd_console"].Value == first.Value)
		}
		second := *b.cookies["pactd_console"]
		b.cookies["pactd_console"] = &first
		if p := b.do("GET", "/", nil); p.status != http.StatusSeeOther {
			t.Fatalf("the session a new sign-in replaced still opens pages: %d", p.status)
		}
		b.cookies["pactd_console"] = &second
		if p := b.do("GET", "/", nil); p.status != 200 {
			t.Fatalf("ok/the new session: %d", p.status)
		}
	})
}

// The Brand page's changes go through BrandService: each refusal shows
// the service's reason and changes nothing; each change shows on the page.
func TestConsoleBrandChanges(t *testing.T) {
	s := newSite(t, "")
	ctx := t.Context()
	agents := pactv1connect.NewAgentServiceClient(s.rpc.Client(), s.rpc.URL, bearer(adminToken))
	reg, err := agents.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: "https://pa.example", JwksUri: "https://pa.example/jwks.json", DisplayName: "Example PA"})
	if err != nil {
		t.Fatal(err)
	}
	id := reg.GetAgent().GetId()
	brands := pactv1connect.NewBrandServiceClient(s.rpc.Client(), s.rpc.URL, bearer(adminToken))
	listed := func() []string {
		res, err := brands.ListBrandAgents(ctx, &pactv1.ListBrandAgentsRequest{BrandId: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range res.GetAgents() {
			out = append(out, a.GetAgentId())
		}
		return out
	}
	b := s.browser(t)
	b.signIn(adminToken)
	tok := b.do("GET", "/brands", nil).csrf(t)
	post := func(path string, f url.Values) page {
		t.Helper()
		f.Set("csrf", tok)
		return b.do("POST", path, f)
	}
	for _, c := range []struct {
		name, path string
		form       url.Values
		status     int
		reason     string
	}{
		{"fail/create-bad-id", "/brands", url.Values{"brand_id": {"Not An Id"}, "display_name": {"Acme"}}, 400, "Refused (invalid_argument): invalid request: brand_id: "},
		{"fail/policy-of-unknown-brand", "/brands/acme/policy", url.Values{"policy": {"BRAND_AGENT_POLICY_LISTED"}}, 404, "Refused (not_found): brand not found"},
	} {
		if p := post(c.path, c.form); p.status != c.status || !strings.HasPrefix(p.alert(), c.reason) {
			t.Fatalf("%s: %d %q; want %d %q", c.name, p.status, p.alert(), c.status, c.reason)
		}
	}
	if p := post("/brands", url.Values{"brand_id": {"acme"}, "display_name": {"Acme"}, "description": {"Support"}}); p.status != 303 || p.header.Get("Location") != "/brands/acme?done=brand" {
		t.Fatalf("ok/create: %d %s %q", p.status, p.header.Get("Location"), p.alert())
	}
	for _, c := range []struct {
		name, path string
		form       url.Values
		status     int
		reason     string
	}{
		{"fail/policy-unknown", "/brands/acme/policy", url.Values{"policy": {"BRAND_AGENT_POLICY_SOME"}}, 400,
			"Refused (invalid_argument): invalid request: policy: must be BRAND_AGENT_POLICY_ALL or BRAND_AGENT_POLICY_LISTED"},
		{"fail/list-unknown-agent", "/brands/acme/agents", url.Values{"agent_id": {"agt_nope"}}, 404, "Refused (not_found): "},
		{"fail/unlist-not-listed", "/brands/acme/agents/remove", url.Values{"agent_id": {id}}, 404, "Refused (not_found): "},
		{"fail/edit-scope-line", "/brands/acme", url.Values{"display_name": {"Acme"}, "scopes": {"orders:read"}}, 400,
			`Refused: scopes: line 1: write the scope id, "=" and the words the consent page shows`},
		{"fail/edit-delegation-without-scopes", "/brands/acme", url.Values{"display_name": {"Acme"}, "delegation": {"on"}}, 400,
			"Refused (invalid_argument): invalid request: brand.delegation.scopes: name at least one scope when delegation is enabled"},
	} {
		if p := post(c.path, c.form); p.status != c.status || !strings.HasPrefix(p.alert(), c.reason) {
			t.Fatalf("%s: %d %q; want %d %q", c.name, p.status, p.alert(), c.status, c.reason)
		}
	}
	if l := listed(); len(l) != 0 {
		t.Fatalf("refusals listed %v", l)
	}
	for _, c := range []struct{ path, done string }{{"/brands/acme/policy", "policy"}, {"/brands/acme/agents", "listed"}} {
		if p := post(c.path, url.Values{"policy": {"BRAND_AGENT_POLICY_LISTED"}, "agent_id": {id}}); p.header.Get("Location") != "/brands/acme?done="+c.done {
			t.Fatalf("ok/%s: %d %q", c.done, p.status, p.alert())
		}
	}
	if l := listed(); len(l) != 1 || l[0] != id {
		t.Fatalf("listed %v, want [%s]", l, id)
	}
	if p := b.do("GET", "/brands/acme?done=listed", nil); !strings.Contains(p.body, "The PA is on the Brand&#39;s list.") || !strings.Contains(p.body, "Remove Example PA") ||
		!strings.Contains(p.body, `id="policy-listed" name="policy" value="BRAND_AGENT_POLICY_LISTED" checked`) {
		t.Fatalf("the Brand's page: %.2000s", p.body)
	}
	if p := post("/brands/acme/agents/remove", url.Values{"agent_id": {id}}); p.header.Get("Location") != "/brands/acme?done=unlisted" || len(listed()) != 0 {
		t.Fatalf("ok/unlist: %d %q %v", p.status, p.alert(), listed())
	}
	if p := post("/brands/acme", url.Values{"display_name": {"Acme Inc."}, "description": {"Orders"}, "delegation": {"on"},
		"login_mode": {"BRAND_LOGIN_MODE_TRUSTED_FRONTEND"}, "login_url": {"https://login.acme.example"},
		"scopes": {"orders:read = See your orders\r\n\r\norders:cancel=Cancel an order\r\n"}}); p.header.Get("Location") != "/brands/acme?done=updated" {
		t.Fatalf("ok/edit: %d %q", p.status, p.alert())
	}
	got, err := brands.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	d := got.GetBrand().GetDelegation()
	if got.GetBrand().GetDisplayName() != "Acme Inc." || !d.GetEnabled() || d.GetLoginUrl() != "https://login.acme.example" || len(d.GetScopes()) != 2 ||
		d.GetScopes()[1].GetId() != "orders:cancel" || d.GetScopes()[1].GetDescription() != "Cancel an order" {
		t.Fatalf("after the edit: %v", got.GetBrand())
	}
	// Unknown pages and a Brand that does not exist.
	for path, status := range map[string]int{"/brands/nope": 404, "/audit/0": 404, "/audit/99": 404, "/nope": 404, "/audit?kind=NOPE": 400, "/audit?since=yesterday": 400,
		"/grants?user=alice": 400} {
		if p := b.do("GET", path, nil); p.status != status || p.alert() == "" {
			t.Errorf("GET %s: %d %q, want %d with a reason", path, p.status, p.alert(), status)
		}
	}
}

// TestWebhooksPage: the page lists each destination with its delivery
// state from WebhookService, and its retry form needs the session's
// anti-forgery token: without it nothing is retried and the page says
// why; with it the destination's dead deliveries are pending again.
func TestWebhooksPage(t *testing.T) {
	s := newSite(t, "")
	hooks := pactv1connect.NewWebhookServiceClient(http.DefaultClient, s.rpc.URL, bearer(adminToken))
	b := s.browser(t)
	b.signIn(adminToken)
	if p := b.do("GET", "/webhooks", nil); p.status != 200 || !strings.Contains(p.body, "No webhook destination is configured.") {
		t.Fatalf("ok/empty: %d %s", p.status, p.body)
	}
	created, err := hooks.CreateWebhook(t.Context(), &pactv1.CreateWebhookRequest{Url: "https://siem.example/pactd", Description: "the SIEM"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetWebhook().GetWebhookId()
	p := b.do("GET", "/webhooks", nil)
	for _, want := range []string{`<span class="name">https://siem.example/pactd</span> <code>` + id + `</code>`, "the SIEM", `<span class="state">enabled</span>`,
		"<caption>Webhook destinations and their delivery state</caption>"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("ok/listed: the page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "previous secret valid until") {
		t.Errorf("ok/listed: a destination never rotated shows a previous secret")
	}
	if _, err := hooks.RotateWebhookSecret(t.Context(), &pactv1.RotateWebhookSecretRequest{WebhookId: id}); err != nil {
		t.Fatal(err)
	}
	if p := b.do("GET", "/webhooks", nil); !strings.Contains(p.body, "previous secret valid until <time") {
		t.Errorf("ok/rotated: the page does not show the overlap's end: %.2000s", p.body)
	}
	if p := b.do("POST", "/webhooks/"+id+"/retry", url.Values{}); p.status != http.StatusForbidden {
		t.Errorf("fail/retry-without-csrf: %d", p.status)
	}
	if p := b.do("POST", "/webhooks/"+id+"/retry", url.Values{"csrf": {p.csrf(t)}}); p.status != http.StatusSeeOther || p.header.Get("Location") != "/webhooks?done=retried" {
		t.Fatalf("ok/retry: %d %v", p.status, p.header)
	}
	if p := b.do("POST", "/webhooks/whk_unknown/retry", url.Values{"csrf": {p.csrf(t)}}); p.status < 400 || !strings.Contains(p.body, "Refused (") {
		t.Errorf("fail/retry-unknown: %d %.300s", p.status, p.body)
	}
}
