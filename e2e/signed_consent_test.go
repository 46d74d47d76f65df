package e2e_test

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/frontends/demo"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// mart is the Brand in BRAND_LOGIN_MODE_SIGNED_ASSERTION: the demo Brand's
// skills and scopes, with a login on its own origin that the test plays
// (brandSite), as an outside conformance client plays the PA, the Brand
// login and the browser.
const mart = "mart"

// brandSite is mart's login: an ES256 key, its JWKS at
// {brandUrl}/.well-known/jwks.json, and assertions per spec §2.5.
type brandSite struct {
	key     *ecdsa.PrivateKey
	kid     string
	url     string // the Brand URL: iss of its assertions
	consent string // the Provider's consent URL of mart: aud and return_to of consent
	// connected is mart's connected page at the Provider: aud and
	// return_to of the assertions that open the User's list.
	connected string
	seq       atomic.Int64
}

func newBrandSite(t *testing.T) *brandSite {
	t.Helper()
	b := &brandSite{key: newPA(t).key, kid: "mart-login-1"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/jwks.json":
			enc := func(n *big.Int) string { return base64.RawURLEncoding.EncodeToString(n.FillBytes(make([]byte, 32))) }
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"keys":[{"kty":"EC","crv":"P-256","x":%q,"y":%q,"kid":%q,"alg":"ES256","use":"sig"}]}`, enc(b.key.X), enc(b.key.Y), b.kid)
		case "/login":
			// For the browser: bob is signed in already; the page posts his
			// assertion to return_to.
			rt := r.URL.Query().Get("return_to")
			tok, err := b.sign(rt, "bob", "bob@mart.example")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html lang="en"><title>Mart</title><form method="post" action="%s">`+
				`<input type="hidden" name="assertion" value="%s"><button type="submit">Continue</button></form></html>`,
				html.EscapeString(rt), html.EscapeString(tok))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	b.url = srv.URL
	return b
}

// brandRequest is mart: the demo Brand with this login.
func (b *brandSite) brandRequest(feURL string) *pactv1.CreateBrandRequest {
	b.consent = feURL + "/a2a/" + mart + "/oauth/consent"
	b.connected = feURL + "/a2a/" + mart + "/oauth/connected"
	req := demo.BrandRequest(mart, "Mart Inc.", feURL)
	req.Delegation.LoginUrl = b.url
	req.Delegation.LoginMode = pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION
	req.Delegation.AssertionIssuer = b.url
	req.Delegation.AssertionJwksUri = b.url + "/.well-known/jwks.json"
	return req
}

// login is what the Brand's login does after it signed sub in: validate
// return_to (origin and path must be this Brand's consent URL, spec §2.5)
// and sign the assertion for the user code return_to carries.
func (b *brandSite) login(t *testing.T, w *world, returnTo, sub, email string) string {
	t.Helper()
	if b.consent != w.feURL+"/a2a/"+mart+"/oauth/consent" {
		t.Fatalf("the Brand's consent URL is %q", b.consent)
	}
	tok, err := b.sign(returnTo, sub, email)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// sign checks return_to and signs an assertion: iss the Brand URL, aud the
// consent URL, sub, jti, iat, exp (120 s), user_code, email. A return_to
// of exactly the connected URL gets aud the connected URL and no
// user_code.
func (b *brandSite) sign(returnTo, sub, email string) (string, error) {
	u, err := url.Parse(returnTo)
	connected := err == nil && returnTo == b.connected
	if !connected && (err != nil || u.Scheme+"://"+u.Host+u.Path != b.consent) {
		return "", fmt.Errorf("return_to %q is not this Brand's consent URL", returnTo)
	}
	now := time.Now().Unix()
	claims := map[string]any{"iss": b.url, "aud": b.consent, "sub": sub, "jti": fmt.Sprintf("mart-%d", b.seq.Add(1)),
		"iat": now, "exp": now + 120, "user_code": u.Query().Get("user_code"), "email": email}
	if connected {
		claims["aud"] = b.connected
		delete(claims, "user_code")
	}
	h, _ := json.Marshal(map[string]any{"alg": "ES256", "kid": b.kid, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	d := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, b.key, d[:])
	if err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)), nil
}

// stateless is a browser that keeps NO cookies (no jar) and follows no
// redirect, and fails the test on any Set-Cookie: nothing may depend on
// one.
type stateless struct{ c *http.Client }

func newStateless() *stateless {
	return &stateless{c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do GETs (form nil) or POSTs a form to an absolute URL.
func (s *stateless) do(t *testing.T, target string, form url.Values) response {
	t.Helper()
	method, body := http.MethodGet, ""
	if form != nil {
		method, body = http.MethodPost, form.Encode()
	}
	req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if sc := res.Header.Values("Set-Cookie"); len(sc) > 0 {
		t.Fatalf("%s %s set a cookie: %v", method, target, sc)
	}
	return response{res.StatusCode, res.Header, string(b)}
}

// htmlForm is a page's form as an outside client reads it.
type htmlForm struct {
	method, action string
	hidden         map[string]string
	checkboxes     []checkbox // in page order
	buttons        [][2]string
	texts          []string // names of text inputs
}

type checkbox struct {
	name, value string
	checked     bool
}

var (
	formRe  = regexp.MustCompile(`(?s)<form\b([^>]*)>(.*?)</form>`)
	inputRe = regexp.MustCompile(`<(input|button)\b([^>]*)>`)
	attrRe  = regexp.MustCompile(`([a-zA-Z-]+)(?:="([^"]*)")?`)
)

func attrs(s string) map[string]string {
	m := map[string]string{}
	for _, a := range attrRe.FindAllStringSubmatch(s, -1) {
		m[strings.ToLower(a[1])] = html.UnescapeString(a[2])
	}
	return m
}

// firstForm parses the first <form> of a page.
func firstForm(t *testing.T, page string) htmlForm {
	t.Helper()
	m := formRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no form in the page: %s", page)
	}
	fa := attrs(m[1])
	f := htmlForm{method: strings.ToLower(fa["method"]), action: fa["action"], hidden: map[string]string{}}
	for _, in := range inputRe.FindAllStringSubmatch(m[2], -1) {
		a := attrs(in[2])
		_, checked := a["checked"]
		switch {
		case in[1] == "button":
			f.buttons = append(f.buttons, [2]string{a["name"], a["value"]})
		case a["type"] == "hidden":
			f.hidden[a["name"]] = a["value"]
		case a["type"] == "checkbox":
			f.checkboxes = append(f.checkboxes, checkbox{a["name"], a["value"], checked})
		default:
			f.texts = append(f.texts, a["name"])
		}
	}
	return f
}

// martDevice starts a device authorization at mart and checks its
// verification URIs (spec §2.4: {brandLoginUrl}/login?return_to=<consentUrl>).
func (w *world) martDevice(t *testing.T, sub, scope string) deviceAuthorization {
	t.Helper()
	var d deviceAuthorization
	wantOAuthJSON(t, "device authorization", w.oauthPost(t, mart, "device_authorization", "Bearer "+w.token(t, sub), w.paForm("scope", scope)), &d)
	consent := w.feURL + "/a2a/" + mart + "/oauth/consent"
	if d.VerificationURI != w.site.url+"/login?return_to="+url.QueryEscape(consent) ||
		d.VerificationURIComplete != w.site.url+"/login?return_to="+url.QueryEscape(consent+"?user_code="+d.UserCode) {
		t.Fatalf("device authorization %+v", d)
	}
	return d
}

// consentFor plays the User through mart's login for d: the link to the
// Brand login, the assertion posted to return_to, the consent page. It
// returns the page, its first form and the assertion.
func (w *world) consentFor(t *testing.T, b *stateless, d deviceAuthorization, sub string) (response, htmlForm, string) {
	t.Helper()
	link, _ := url.Parse(d.VerificationURIComplete)
	returnTo := link.Query().Get("return_to")
	assertion := w.site.login(t, w, returnTo, sub, sub+"@mart.example")
	page := b.do(t, returnTo, url.Values{"assertion": {assertion}})
	if page.status != 200 {
		t.Fatalf("POST %s: %d %s", returnTo, page.status, page.body)
	}
	return page, firstForm(t, page.body), assertion
}

// TestSignedConsentWithoutCookies is PACT Delegated for a
// signed-assertion Brand through the frontend, by a client that keeps no
// cookies: grant (a subset), token, step-up, receipt, refresh and its
// reuse, deny, and replays of the session and of the assertion.
func TestSignedConsentWithoutCookies(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		ctx := t.Context()
		b := newStateless()
		consentURL := w.feURL + "/a2a/" + mart + "/oauth/consent"
		decisionURL := consentURL + "/decision"
		tokens := pactv1connect.NewTokenServiceClient(http.DefaultClient, w.pactdURL, bearer(frontendToken))
		martToken := func(sub string, form url.Values) response {
			return w.oauthPost(t, mart, "token", "Bearer "+w.token(t, sub), form)
		}

		// The PA asks in the other order; the page lists the Brand's order.
		d := w.martDevice(t, "user-1", "orders:cancel orders:read")
		wantOAuthError(t, "first poll", martToken("user-1", w.paForm("grant_type", deviceGrant, "device_code", d.DeviceCode)), 400, "authorization_pending")

		// GET consent sends the User to the Brand's login, not a cookie login
		// (a step-up link carries no code: the plain verification URI).
		r := b.do(t, consentURL+"?user_code="+d.UserCode, nil)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != d.VerificationURIComplete {
			t.Fatalf("GET consent: %d Location %q, want 303 to %s", r.status, r.header.Get("Location"), d.VerificationURIComplete)
		}
		if r := b.do(t, consentURL, nil); r.status != http.StatusSeeOther || r.header.Get("Location") != d.VerificationURI {
			t.Fatalf("GET consent without a code: %d Location %q, want 303 to %s", r.status, r.header.Get("Location"), d.VerificationURI)
		}

		page, f, assertion := w.consentFor(t, b, d, "bob")
		wantPageHeaders(t, "consent", page)
		csp := page.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "form-action 'self' "+w.feURL+";") && !strings.Contains(csp, "form-action "+w.feURL) {
			t.Errorf("CSP %q does not allow the form's action %s", csp, decisionURL)
		}
		want := []checkbox{{"scope", "orders:read", true}, {"scope", "orders:cancel", true}}
		if f.method != "post" || f.action != decisionURL || f.hidden["session"] == "" || len(f.texts) != 0 ||
			!slices.Equal(f.checkboxes, want) || !slices.Contains(f.buttons, [2]string{"decision", "allow"}) ||
			!slices.Contains(f.buttons, [2]string{"decision", "deny"}) {
			t.Fatalf("consent form %+v", f)
		}
		for _, s := range []string{"E2E PA", w.issuer, "Mart Inc.", d.UserCode, "bob@mart.example", "See your orders and their delivery status"} {
			if !strings.Contains(page.body, html.EscapeString(s)) {
				t.Errorf("consent page lacks %q", s)
			}
		}
		session := f.hidden["session"]
		// A replayed assertion is refused at the consent URL: no session.
		if r := b.do(t, consentURL, url.Values{"assertion": {assertion}}); r.status != 400 || strings.Contains(r.body, `name="session"`) ||
			!strings.Contains(r.body, "used already") {
			t.Errorf("replayed assertion: %d %s", r.status, r.body)
		}

		// A session is no delegation token and does not introspect.
		wantInvalidToken(t, "session as delegation token", w.send(t, mart, w.token(t, "user-1"), userMsg("m-s", "", "show my orders"),
			"X-A2A-User-Delegation: Bearer "+session))
		if res, err := tokens.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: session}); err != nil || res.GetActive() {
			t.Fatalf("introspect a session: %v %v", res, err)
		}

		// Allow with orders:cancel unchecked.
		r = b.do(t, f.action, url.Values{"session": {session}, "decision": {"allow"}, "scope": {"orders:read"}})
		loc, err := url.Parse(r.header.Get("Location"))
		if r.status != http.StatusSeeOther || err != nil || loc.Scheme+"://"+loc.Host+loc.Path != w.feURL+"/a2a/mart/oauth/connected" ||
			loc.Query().Get("client") != w.issuer || loc.Query().Get("status") != "approved" || loc.Query().Get("scope") != "orders:read" {
			t.Fatalf("allow: %d Location %q %s", r.status, r.header.Get("Location"), r.body)
		}
		if r := b.do(t, loc.String(), nil); r.status != 200 || !strings.Contains(r.body, "Done: your assistant is connected.") ||
			!strings.Contains(r.body, `<li>See your orders and their delivery status <span class="id">orders:read</span></li>`) ||
			!strings.Contains(r.body, "<title>Connected assistants at Mart Inc.</title>") {
			t.Fatalf("connected page: %d %s", r.status, r.body)
		}
		var tok tokenResponse
		wantOAuthJSON(t, "token", martToken("user-1", w.paForm("grant_type", deviceGrant, "device_code", d.DeviceCode)), &tok)
		if tok.TokenType != "Bearer" || tok.Scope != "orders:read" || tok.ExpiresIn != 3600 || !strings.HasPrefix(tok.RefreshToken, "rt_") {
			t.Fatalf("token %+v", tok)
		}
		var claims struct {
			Iss, Aud, Sub, Scope string
			ClientID             string `json:"client_id"`
		}
		jwtPart(t, tok.AccessToken, 1, &claims)
		if claims.Sub != "bob" || claims.Aud != w.feURL+"/a2a/mart" || claims.Iss != w.feURL+"/a2a/mart/oauth" || claims.ClientID != w.issuer || claims.Scope != "orders:read" {
			t.Fatalf("delegation token claims %+v", claims)
		}
		grants := func() []*pactv1.Grant {
			res, err := w.deleg.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: mart, BrandUser: "bob"})
			if err != nil {
				t.Fatal(err)
			}
			return res.GetGrants()
		}

		// A replayed session (either decision) changes nothing.
		for _, dec := range []string{"allow", "deny"} {
			r := b.do(t, f.action, url.Values{"session": {session}, "decision": {dec}, "scope": {"orders:read", "orders:cancel"}})
			if r.status != 400 || !strings.Contains(r.body, "already decided") {
				t.Errorf("replayed session (%s): %d %s", dec, r.status, r.body)
			}
		}
		if g := grants(); len(g) != 1 || !slices.Equal(g[0].GetScopes(), []string{"orders:read"}) || g[0].GetRevokeTime() != nil {
			t.Fatalf("grants after replays: %v", g)
		}
		// After the decision the assertion opens nothing either.
		if r := b.do(t, consentURL, url.Values{"assertion": {assertion}}); r.status != 400 || strings.Contains(r.body, `name="session"`) {
			t.Errorf("assertion after the decision: %d %s", r.status, r.body)
		}
		// A forged session changes nothing either.
		if r := b.do(t, f.action, url.Values{"session": {session[:len(session)-4] + "AAAA"}, "decision": {"allow"}}); r.status != 403 {
			t.Errorf("forged session: %d", r.status)
		}

		// Delegated turns: a receipt verified against pactd's JWKS; a step-up
		// for the scope left unchecked.
		_, rc := w.verifyReceiptAt(t, mart, w.send(t, mart, w.token(t, "user-1"), userMsg("m-1", "", "show my orders"),
			"X-A2A-User-Delegation: Bearer "+tok.AccessToken))
		if rc.User != "bob" || !slices.Equal(rc.ScopesUsed, []string{"orders:read"}) {
			t.Fatalf("receipt %+v", rc)
		}
		decodeStepUp(t, w.send(t, mart, w.token(t, "user-1"), userMsg("m-2", "", "cancel order 1002"),
			"X-A2A-User-Delegation: Bearer "+tok.AccessToken), "orders:cancel")

		// Refresh rotates; reusing the old refresh token is invalid_grant and
		// revokes the grant: the new pair stops working too.
		var next tokenResponse
		wantOAuthJSON(t, "refresh", martToken("user-1", w.paForm("grant_type", "refresh_token", "refresh_token", tok.RefreshToken)), &next)
		if next.RefreshToken == tok.RefreshToken || next.Scope != "orders:read" {
			t.Fatalf("refresh %+v", next)
		}
		wantOAuthError(t, "refresh reuse", martToken("user-1", w.paForm("grant_type", "refresh_token", "refresh_token", tok.RefreshToken)), 400, "invalid_grant")
		wantOAuthError(t, "refresh after reuse", martToken("user-1", w.paForm("grant_type", "refresh_token", "refresh_token", next.RefreshToken)), 400, "invalid_grant")
		if res, err := tokens.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: next.AccessToken}); err != nil || res.GetActive() {
			t.Fatalf("introspect after reuse: %v %v", res, err)
		}
		if g := grants(); len(g) != 1 || g[0].GetRevokeTime() == nil {
			t.Fatalf("the grant is not revoked after reuse: %v", g)
		}

		// Deny: status denied, the PA's poll is access_denied, and approving
		// with the same session afterwards changes nothing.
		d2 := w.martDevice(t, "user-1", "orders:cancel")
		_, f2, _ := w.consentFor(t, b, d2, "bob")
		r = b.do(t, f2.action, url.Values{"session": {f2.hidden["session"]}, "decision": {"deny"}})
		loc, err = url.Parse(r.header.Get("Location"))
		if r.status != http.StatusSeeOther || err != nil || loc.Path != "/a2a/mart/oauth/connected" || loc.Query().Get("status") != "denied" ||
			loc.Query().Get("client") != w.issuer {
			t.Fatalf("deny: %d %q", r.status, r.header.Get("Location"))
		}
		if r := b.do(t, f2.action, url.Values{"session": {f2.hidden["session"]}, "decision": {"allow"}, "scope": {"orders:cancel"}}); r.status != 400 {
			t.Errorf("approve after deny: %d", r.status)
		}
		wantOAuthError(t, "denied", martToken("user-1", w.paForm("grant_type", deviceGrant, "device_code", d2.DeviceCode)), 400, "access_denied")
		if g := grants(); len(g) != 1 {
			t.Fatalf("deny made a grant: %v", g)
		}
	})
}

// TestSignedConsentRefusals: at the consent URL, an assertion of another
// Brand's audience, one signed by another key and an empty post are
// refused without a session; the trusted-frontend Brand's consent URL
// takes no assertion.
func TestSignedConsentRefusals(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		b := newStateless()
		consentURL := w.feURL + "/a2a/" + mart + "/oauth/consent"
		d := w.martDevice(t, "user-1", "orders:read")
		link, _ := url.Parse(d.VerificationURIComplete)
		returnTo := link.Query().Get("return_to")
		good := w.site.login(t, w, returnTo, "bob", "")
		parts := strings.Split(good, ".")
		var c map[string]any
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		_ = json.Unmarshal(raw, &c)
		resign := func(key *ecdsa.PrivateKey, claims map[string]any) string {
			cb, _ := json.Marshal(claims)
			input := parts[0] + "." + base64.RawURLEncoding.EncodeToString(cb)
			h := sha256.Sum256([]byte(input))
			r, s, _ := ecdsa.Sign(rand.Reader, key, h[:])
			return input + "." + base64.RawURLEncoding.EncodeToString(append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...))
		}
		otherAud := map[string]any{}
		for k, v := range c {
			otherAud[k] = v
		}
		otherAud["aud"] = w.feURL + "/a2a/shop/oauth/consent"
		// An assertion pactd read and refused (FAILED_PRECONDITION: AUDIENCE,
		// SIGNATURE) is 403; a post without one cannot be read, 400.
		for name, tc := range map[string]struct {
			form   url.Values
			status int
		}{
			"other-audience": {url.Values{"assertion": {resign(w.site.key, otherAud)}}, 403},
			"other-key":      {url.Values{"assertion": {resign(w.pa.key, c)}}, 403},
			"empty":          {url.Values{"assertion": {""}}, 400},
		} {
			r := b.do(t, consentURL, tc.form)
			if r.status != tc.status || strings.Contains(r.body, `name="session"`) {
				t.Errorf("%s: %d %s; want %d without a session", name, r.status, r.body, tc.status)
			}
			wantPageHeaders(t, name, r)
		}
		if r := b.do(t, w.feURL+"/a2a/shop/oauth/consent", url.Values{"assertion": {good}}); r.status != 400 {
			t.Errorf("assertion at the trusted-frontend Brand: %d", r.status)
		}
		// What pactd tells the frontend about each Brand's pages.
		for _, c := range []struct {
			brand, verification string
			mode                pactv1.BrandLoginMode
		}{
			{mart, w.site.url + "/login?return_to=" + url.QueryEscape(consentURL), pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION},
			{shop, w.feURL + "/demo/shop/login?return_to=" + url.QueryEscape(w.feURL+"/a2a/shop/oauth/consent"), pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND},
			{"acme", "", pactv1.BrandLoginMode_BRAND_LOGIN_MODE_UNSPECIFIED}, // no delegation
		} {
			res, err := w.brands.GetAgentCard(t.Context(), &pactv1.GetAgentCardRequest{BrandId: c.brand})
			if err != nil || res.GetInterfaceUrl() != w.feURL+"/a2a/"+c.brand || res.GetLoginMode() != c.mode || res.GetVerificationUri() != c.verification {
				t.Errorf("GetAgentCard(%s) = %v, %v", c.brand, res, err)
			}
		}
		// Positive control: the good assertion opens the page.
		if r := b.do(t, consentURL, url.Values{"assertion": {good}}); r.status != 200 || firstForm(t, r.body).hidden["session"] == "" {
			t.Fatalf("positive control: %d %s", r.status, r.body)
		}
		wantOAuthError(t, "still pending", w.oauthPost(t, mart, "token", "Bearer "+w.token(t, "user-1"),
			w.paForm("grant_type", deviceGrant, "device_code", d.DeviceCode)), 400, "authorization_pending")
	})
}
