package frontdoor_test

import (
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/frontdoor"
)

// TestServeBounds: Serve refuses a request past its bounds or not HTTP
// with InvalidArgument naming the field (a google.rpc.BadRequest
// violation), before any service is asked. The controls: a request at
// every bound at once is served, and so is each field at its limit.
func TestServeBounds(t *testing.T) {
	e := newEnv(t)
	base := func() *pactv1.ServeRequest {
		return &pactv1.ServeRequest{Method: "GET", Path: "/a2a/acme/tasks", Headers: []*pactv1.HttpHeader{
			{Name: "Host", Value: "fe.example"}, {Name: "Authorization", Value: "Bearer good-alice"}}}
	}
	with := func(f func(r *pactv1.ServeRequest)) *pactv1.ServeRequest {
		r := base()
		f(r)
		return r
	}
	cases := []struct {
		name  string
		req   *pactv1.ServeRequest
		field string
	}{
		{"fail/path-empty", with(func(r *pactv1.ServeRequest) { r.Path = "" }), "path"},
		{"fail/path-relative", with(func(r *pactv1.ServeRequest) { r.Path = "a2a/acme/tasks" }), "path"},
		{"fail/path-absolute-url", with(func(r *pactv1.ServeRequest) { r.Path = "http://fe.example/a2a/acme/tasks" }), "path"},
		{"fail/path-asterisk", with(func(r *pactv1.ServeRequest) { r.Path = "*" }), "path"},
		{"fail/path-cr", with(func(r *pactv1.ServeRequest) { r.Path = "/a2a/acme/tasks\r" }), "path"},
		{"fail/path-lf", with(func(r *pactv1.ServeRequest) { r.Path = "/a2a/acme\n/tasks" }), "path"},
		{"fail/path-nul", with(func(r *pactv1.ServeRequest) { r.Path = "/a2a/acme/\x00tasks" }), "path"},
		{"fail/path-space", with(func(r *pactv1.ServeRequest) { r.Path = "/a2a/acme/ tasks" }), "path"},
		{"fail/path-with-query", with(func(r *pactv1.ServeRequest) { r.Path = "/a2a/acme/tasks?pageSize=1" }), "path"},
		{"fail/path-with-fragment", with(func(r *pactv1.ServeRequest) { r.Path = "/a2a/acme/tasks#x" }), "path"},
		{"fail/query-lf", with(func(r *pactv1.ServeRequest) { r.Query = "pageSize=1\n" }), "query"},
		{"fail/query-fragment", with(func(r *pactv1.ServeRequest) { r.Query = "pageSize=1#x" }), "query"},
		{"fail/header-value-cr", with(func(r *pactv1.ServeRequest) { r.Headers[1].Value = "Bearer good-alice\r" }), "headers[1]"},
		{"fail/header-value-lf", with(func(r *pactv1.ServeRequest) {
			r.Headers = append(r.Headers, &pactv1.HttpHeader{Name: "X-Note", Value: "a\nSet-Cookie: x=1"})
		}), "headers[2]"},
		{"fail/header-value-nul", with(func(r *pactv1.ServeRequest) { r.Headers[0].Value = "fe.example\x00" }), "headers[0]"},
		{"fail/header-name-empty", with(func(r *pactv1.ServeRequest) { r.Headers[1].Name = "" }), "headers[1]"},
		{"fail/header-name-space", with(func(r *pactv1.ServeRequest) { r.Headers[1].Name = "Author ization" }), "headers[1]"},
		{"fail/header-name-colon", with(func(r *pactv1.ServeRequest) { r.Headers[1].Name = "Authorization:" }), "headers[1]"},
		{"fail/header-name-lf", with(func(r *pactv1.ServeRequest) { r.Headers[1].Name = "X-A\nB" }), "headers[1]"},
		{"fail/header-name-non-ascii", with(func(r *pactv1.ServeRequest) { r.Headers[1].Name = "X-É" }), "headers[1]"},
		{"fail/headers-too-long", with(func(r *pactv1.ServeRequest) {
			for range 5 {
				r.Headers = append(r.Headers, &pactv1.HttpHeader{Name: "X-Pad", Value: strings.Repeat("a", 16<<10)})
			}
		}), "headers"},
		{"fail/method-empty", with(func(r *pactv1.ServeRequest) { r.Method = "" }), "method"},
		{"fail/method-space", with(func(r *pactv1.ServeRequest) { r.Method = "GE T" }), "method"},
		{"fail/method-crlf", with(func(r *pactv1.ServeRequest) { r.Method = "GET\r\n" }), "method"},
		{"fail/method-slash", with(func(r *pactv1.ServeRequest) { r.Method = "GET/1.1" }), "method"},
		{"fail/method-too-long", with(func(r *pactv1.ServeRequest) { r.Method = strings.Repeat("G", 33) }), "method"},
		{"fail/body-too-long", with(func(r *pactv1.ServeRequest) { r.Body = make([]byte, frontdoor.MaxBodyBytes+1) }), "body"},
		{"fail/body-with-too-large", with(func(r *pactv1.ServeRequest) { r.Body, r.BodyTooLarge = []byte("{}"), true }), "body"},
		{"fail/brand-user-too-long", with(func(r *pactv1.ServeRequest) { r.BrandUser = strings.Repeat("u", frontdoor.MaxBrandUserBytes+1) }), "brand_user"},
		{"fail/brand-user-nul", with(func(r *pactv1.ServeRequest) { r.BrandUser = "alice\x00" }), "brand_user"},
		{"fail/brand-user-lf", with(func(r *pactv1.ServeRequest) { r.BrandUser = "alice\nbob" }), "brand_user"},
		{"fail/brand-user-tab", with(func(r *pactv1.ServeRequest) { r.BrandUser = "alice\tbob" }), "brand_user"},
		{"fail/brand-user-del", with(func(r *pactv1.ServeRequest) { r.BrandUser = "alice\x7f" }), "brand_user"},
		{"fail/sign-in-url-too-long", with(func(r *pactv1.ServeRequest) {
			r.SignInUrl = "https://fe.example/login?x=" + strings.Repeat("a", frontdoor.MaxSignInURLBytes)
		}), "sign_in_url"},
		{"fail/sign-in-url-cr", with(func(r *pactv1.ServeRequest) { r.SignInUrl = "/login\r" }), "sign_in_url"},
		{"fail/sign-in-url-lf", with(func(r *pactv1.ServeRequest) { r.SignInUrl = "/login\nSet-Cookie: x=1" }), "sign_in_url"},
		{"fail/sign-in-url-with-brand-user", with(func(r *pactv1.ServeRequest) { r.SignInUrl, r.BrandUser = "/login", "alice" }), "sign_in_url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := e.serve(t, c.req)
			if connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("Serve = %v, %v; want InvalidArgument", res, err)
			}
			if got := rpcerr.FieldViolations(err); !slices.Equal(got, []string{c.field}) {
				t.Fatalf("field violations %q, want [%q]", got, c.field)
			}
		})
	}
	// Several at once: each is named.
	_, err := e.serve(t, with(func(r *pactv1.ServeRequest) { r.Method, r.Path, r.BrandUser = "", "x", "\x00" }))
	if got := rpcerr.FieldViolations(err); !slices.Equal(got, []string{"method", "path", "brand_user"}) {
		t.Errorf("three violations named %q", got)
	}
	if n := len(e.verifier.calls()); n != 0 || e.calls.Load() != 0 {
		t.Fatalf("refused requests reached the services: %d verifications, %d other calls", n, e.calls.Load())
	}

	// The controls: each field at its limit is served.
	atLimit := []struct {
		name   string
		req    *pactv1.ServeRequest
		status int32
	}{
		{"ok/plain", base(), 200},
		{"ok/path-at-limit", with(func(r *pactv1.ServeRequest) {
			r.Path = "/a2a/acme/tasks/" + strings.Repeat("a", frontdoor.MaxPathBytes-16)
		}), 404},
		{"ok/query-at-limit", with(func(r *pactv1.ServeRequest) { r.Query = "x=" + strings.Repeat("a", frontdoor.MaxQueryBytes-2) }), 200},
		{"ok/method-at-limit", with(func(r *pactv1.ServeRequest) { r.Method = strings.Repeat("G", 32) }), 405},
		{"ok/method-token-chars", with(func(r *pactv1.ServeRequest) { r.Method = "M-SEARCH!#$%&'*+.^_`|~" }), 405},
		{"ok/header-value-tab-and-obs-text", with(func(r *pactv1.ServeRequest) {
			r.Headers = append(r.Headers, &pactv1.HttpHeader{Name: "X-Note", Value: "a\tb é"})
		}), 200},
		{"ok/headers-at-limit", with(func(r *pactv1.ServeRequest) {
			n := frontdoor.MaxHeaderBytes - len("Hostfe.example") - len("AuthorizationBearer good-alice") - len("X-Pad")
			r.Headers = append(r.Headers, &pactv1.HttpHeader{Name: "X-Pad", Value: strings.Repeat("a", n)})
		}), 200},
		{"ok/body-at-limit", with(func(r *pactv1.ServeRequest) { r.Body = make([]byte, frontdoor.MaxBodyBytes) }), 200},
		{"ok/body-too-large-empty", with(func(r *pactv1.ServeRequest) { r.BodyTooLarge = true }), 200},
		{"ok/brand-user-at-limit", with(func(r *pactv1.ServeRequest) { r.BrandUser = strings.Repeat("ü", frontdoor.MaxBrandUserBytes/2) }), 200},
		{"ok/sign-in-url-at-limit", with(func(r *pactv1.ServeRequest) {
			r.SignInUrl = "/login?x=" + strings.Repeat("a", frontdoor.MaxSignInURLBytes-len("/login?x="))
		}), 200},
	}
	// Past the path or query bound: 414, the client's fault, with no
	// service asked (the frontend answers it as it answers any response).
	for name, r := range map[string]*pactv1.ServeRequest{
		"path-too-long":  with(func(r *pactv1.ServeRequest) { r.Path = "/" + strings.Repeat("a", frontdoor.MaxPathBytes) }),
		"query-too-long": with(func(r *pactv1.ServeRequest) { r.Query = strings.Repeat("a", frontdoor.MaxQueryBytes+1) }),
	} {
		before := len(e.verifier.calls())
		res, err := e.serve(t, r)
		if err != nil || res.GetResponse().GetStatus() != 414 || len(res.GetResponse().GetBody()) != 0 || len(e.verifier.calls()) != before {
			t.Errorf("%s: %v %v; want a bare 414 and no verification", name, res, err)
		}
	}
	for _, c := range atLimit {
		res, err := e.serve(t, c.req)
		if err != nil || res.GetResponse().GetStatus() != c.status {
			t.Errorf("%s: %v %v; want %d", c.name, res.GetResponse().GetStatus(), err, c.status)
		}
	}
}

// TestUserNeeded: a trusted-frontend Brand's page needs the User signed in
// at the frontend. Without brand_user, a frontend that signs Users in
// (signs_in_users) is asked (UserNeeded: the Brand id decoded, return_to
// the path and query exactly as received); told sign_in_url (nobody is
// signed in), a page answers 303 to it and a form the 403 page; a
// frontend that signs nobody in gets 404 for those pages. The control:
// with brand_user the page is served.
func TestUserNeeded(t *testing.T) {
	e := newEnv(t)
	form := &pactv1.HttpHeader{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}
	pages := []struct {
		method, path, query string
		body                string
		okStatus            int // with brand_user
	}{
		{"GET", "/a2a/shop/oauth/connected", "status=denied", "", 200},
		{"GET", "/a2a/sh%6Fp/oauth/connected", "", "", 200},
		{"GET", "/a2a/shop/oauth/consent", "user_code=" + pendingCode + "&x=%20y", "", 200},
		{"GET", "/a2a/shop/oauth/consent", "", "", 200},
		{"GET", "/a2a/shop/oauth/connected%2Frevoke", "agent_id=agt_1", "", 404}, // no live grant: the 404 message page
		{"POST", "/a2a/shop/oauth/consent/decision", "", "decision=allow", 403},  // no CSRF token
		{"POST", "/a2a/shop/oauth/connected/revoke", "", "agent_id=agt_1", 403},  // no CSRF token
	}
	for _, p := range pages {
		name := p.method + " " + p.path + "?" + p.query
		req := func(signsIn bool, user, signIn string, headers ...*pactv1.HttpHeader) *pactv1.ServeRequest {
			r := &pactv1.ServeRequest{Method: p.method, Path: p.path, Query: p.query, Body: []byte(p.body), SignsInUsers: signsIn,
				BrandUser: user, SignInUrl: signIn, Headers: []*pactv1.HttpHeader{{Name: "Host", Value: "fe.example"}}}
			if p.method == "POST" {
				r.Headers = append(r.Headers, form)
			}
			r.Headers = append(r.Headers, headers...)
			return r
		}
		res, err := e.serve(t, req(true, "", ""))
		wantReturn := p.path
		if p.query != "" {
			wantReturn += "?" + p.query
		}
		if err != nil || res.GetUserNeeded().GetBrandId() != "shop" || res.GetUserNeeded().GetReturnTo() != wantReturn {
			t.Errorf("%s: %v %v; want UserNeeded{shop, %q}", name, res, err, wantReturn)
		}
		res, err = e.serve(t, req(true, "", "https://fe.example/login?return_to=x"))
		got := res.GetResponse()
		switch {
		case err != nil || got == nil:
			t.Errorf("%s with sign_in_url: %v %v", name, res, err)
		case p.method == "GET" && (got.GetStatus() != 303 || headerOf(got, "Location") != "https://fe.example/login?return_to=x"):
			t.Errorf("%s with sign_in_url: %d %v; want 303 to the sign-in", name, got.GetStatus(), got.GetHeaders())
		case p.method == "POST" && (got.GetStatus() != 403 || !strings.Contains(string(got.GetBody()), "This form has expired or was not sent from this site.")):
			t.Errorf("%s with sign_in_url: %d %s; want the 403 page", name, got.GetStatus(), got.GetBody())
		}
		for _, accept := range []string{"", "text/html"} {
			var hs []*pactv1.HttpHeader
			if accept != "" {
				hs = append(hs, &pactv1.HttpHeader{Name: "Accept", Value: accept})
			}
			res, err = e.serve(t, req(false, "", "", hs...))
			got = res.GetResponse()
			wantHTML := p.method == "GET" && accept != ""
			if err != nil || got.GetStatus() != 404 || (len(got.GetBody()) > 0) != wantHTML {
				t.Errorf("%s without sign-in (Accept %q): %v %v; want 404 (HTML %v)", name, accept, res, err, wantHTML)
			}
		}
		res, err = e.serve(t, req(true, "alice", ""))
		if err != nil || res.GetResponse().GetStatus() != int32(p.okStatus) {
			t.Errorf("%s as alice: %v %v; want %d", name, res, err, p.okStatus)
		}
	}
	// A Brand without delegation has no such pages, and never asks.
	res, err := e.serve(t, &pactv1.ServeRequest{Method: "GET", Path: "/a2a/acme/oauth/connected", SignsInUsers: true})
	if err != nil || res.GetResponse().GetStatus() != 404 || !strings.Contains(string(res.GetResponse().GetBody()), "This Brand does not let assistants act for you.") {
		t.Errorf("identity-only Brand's connected page: %v %v", res, err)
	}
}

// TestSignInThroughTheFrontend: the test frontend's sign-in hook answers
// UserNeeded: signed out, a page redirects to its login with return_to
// the request as received; signed in (the frontend's cookie, which pactd
// never sees), the page names the User.
func TestSignInThroughTheFrontend(t *testing.T) {
	e := newEnv(t, withSessions)
	r := e.do(t, "GET", "/a2a/shop/oauth/connected?status=denied", "")
	if r.status != 303 || r.header.Get("Location") != "/login?brand=shop&return_to=%2Fa2a%2Fshop%2Foauth%2Fconnected%3Fstatus%3Ddenied" {
		t.Errorf("signed out: %d %v", r.status, r.header)
	}
	wantPage(t, "signed in", e.do(t, "GET", "/a2a/shop/oauth/connected?status=denied", "", "Cookie: user=alice"), 200,
		"Signed in as <strong>alice</strong>", "You denied the request: nothing new was shared.")
	wantPage(t, "signed-out form", e.do(t, "POST", "/a2a/shop/oauth/consent/decision", "decision=allow",
		"Content-Type: application/x-www-form-urlencoded"), 403, "This form has expired or was not sent from this site.")
	if n := e.fe.sessions.calls.Load(); n != 3 {
		t.Errorf("the sign-in hook was asked %d times, want 3", n)
	}
}

// headerOf is the first value of a response header.
func headerOf(res *pactv1.HttpResponse, name string) string {
	for _, h := range res.GetHeaders() {
		if strings.EqualFold(h.GetName(), name) {
			return h.GetValue()
		}
	}
	return ""
}

// TestNewNeedsASecret: New refuses a secret under 32 bytes (it keys the
// turn handles and the pages' CSRF tokens); the control: 32 bytes.
func TestNewNeedsASecret(t *testing.T) {
	for _, n := range []int{0, 16, 31} {
		if _, err := frontdoor.New(frontdoor.Deps{Secret: make([]byte, n)}); err == nil {
			t.Errorf("New with a %d-byte secret succeeded", n)
		}
	}
	if _, err := frontdoor.New(frontdoor.Deps{Secret: make([]byte, 32)}); err != nil {
		t.Errorf("New with a 32-byte secret: %v", err)
	}
}
