package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestGlobexSignedLogin runs the demo and walks its second Brand as a PA
// and a browser that keeps no cookies: the device grant, Globex's own
// login (return_to checked, the assertion's claims per spec §2.5), the
// assertion posted to the Provider's consent page, Allow, the token.
func TestGlobexSignedLogin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Written by serve while this test reads it: locked, and waited for
	// until its last line (the export line) is there.
	var banner lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"-dir", dir, "-listen", "127.0.0.1:0"}, &banner, io.Discard, inProcess)
	}()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(statePath(dir)); err == nil && strings.Contains(banner.String(), "export P=") {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned early: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo did not start in 30s")
		}
	}
	st, err := loadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := x509.ParsePKCS8PrivateKey(st.Key)
	if err != nil {
		t.Fatal(err)
	}
	st.Brand = globexID
	p := &paClient{st: st, key: k.(*ecdsa.PrivateKey), http: &http.Client{Timeout: 10 * time.Second}, out: io.Discard}
	c, err := p.card(ctx)
	if err != nil {
		t.Fatal(err)
	}
	status, da, err := p.oauth(ctx, c.deviceURL, url.Values{"scope": {"orders:read orders:cancel"}})
	if err != nil || status != 200 {
		t.Fatalf("device authorization: %d %v %v", status, da, err)
	}
	code, _ := da["user_code"].(string)
	link, _ := da["verification_uri_complete"].(string)
	consent := st.Frontend + "/a2a/globex/oauth/consent"
	l, _ := url.Parse(link)
	if l.Path != "/login" || strings.HasPrefix(link, st.Frontend) || l.Query().Get("return_to") != consent+"?user_code="+code ||
		!strings.Contains(banner.String(), "globex") || !strings.Contains(banner.String(), l.Scheme+"://"+l.Host+"/login") {
		t.Fatalf("link %s; banner:\n%s", link, banner.String())
	}
	loginURL := l.Scheme + "://" + l.Host + "/login"

	b := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, u string, form url.Values) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, u, strings.NewReader(form.Encode()))
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		res, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if len(res.Header.Values("Set-Cookie")) > 0 {
			t.Fatalf("%s %s set a cookie", method, u)
		}
		return res.StatusCode, res.Header, string(body)
	}
	field := func(page, name string) string {
		m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no field %s in %s", name, page)
		}
		return html.UnescapeString(m[1])
	}

	// The login page; a return_to elsewhere is refused, on GET and POST.
	s, h, page := do("GET", link, nil)
	if s != 200 || !strings.Contains(page, `name="username"`) || !strings.Contains(h.Get("Content-Security-Policy"), "form-action 'self' "+st.Frontend) ||
		h.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("login page: %d %v %s", s, h, page)
	}
	for _, bad := range []string{"https://evil.example/a2a/globex/oauth/consent", st.Frontend + "/a2a/acme/oauth/consent", st.Frontend + "/a2a/globex/oauth/consent/x"} {
		if s, _, _ := do("GET", loginURL+"?return_to="+url.QueryEscape(bad), nil); s != 400 {
			t.Errorf("GET return_to %s: %d", bad, s)
		}
		if s, _, p := do("POST", loginURL, url.Values{"return_to": {bad}, "username": {"carol"}}); s != 400 || strings.Contains(p, `name="assertion"`) {
			t.Errorf("POST return_to %s: %d", bad, s)
		}
	}
	// Sign in: the page posts the assertion to return_to's consent URL.
	s, _, page = do("POST", loginURL, url.Values{"return_to": {l.Query().Get("return_to")}, "username": {"carol"}, "email": {"carol@globex.example"}})
	if s != 200 || !strings.Contains(page, `action="`+consent+`"`) {
		t.Fatalf("signed in: %d %s", s, page)
	}
	assertion := field(page, "assertion")
	var claims map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(strings.Split(assertion, ".")[1])
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	iat, _ := claims["iat"].(float64)
	exp, _ := claims["exp"].(float64)
	if claims["iss"] != l.Scheme+"://"+l.Host || claims["aud"] != consent || claims["sub"] != "carol" || claims["jti"] == "" ||
		exp-iat != 120 || claims["user_code"] != code || claims["email"] != "carol@globex.example" {
		t.Fatalf("assertion claims %v", claims)
	}
	// The Provider's consent page, then Allow with orders:read only.
	s, _, page = do("POST", consent, url.Values{"assertion": {assertion}})
	if s != 200 || !strings.Contains(page, "carol@globex.example") {
		t.Fatalf("consent page: %d %s", s, page)
	}
	s, h, _ = do("POST", consent+"/decision", url.Values{"session": {field(page, "session")}, "decision": {"allow"}, "scope": {"orders:read"}})
	if loc, _ := url.Parse(h.Get("Location")); s != 303 || loc.Query().Get("status") != "approved" || loc.Query().Get("scope") != "orders:read" {
		t.Fatalf("decision: %d %v", s, h)
	}
	status, tok, err := p.oauth(ctx, c.tokenURL, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {da["device_code"].(string)}})
	if err != nil || status != 200 || tok["scope"] != "orders:read" {
		t.Fatalf("token: %d %v %v", status, tok, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
