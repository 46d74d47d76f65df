package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// globexID is the demo's second Brand, in BRAND_LOGIN_MODE_SIGNED_ASSERTION:
// its login runs on its own origin (brandLogin) and posts a signed,
// single-use assertion to the Provider's consent URL (spec §2.5), so the
// Provider's pages need no cookie for it.
const globexID = "globex"

// assertionTTL is how long the Brand's assertions live (spec: 2 minutes).
const assertionTTL = 120 * time.Second

// globexBrand is the second Brand: the demo Brand's skills and scopes (the
// same demo agent answers), with brandURL's login signing its assertions.
func globexBrand(feURL, brandURL string) *pactv1.CreateBrandRequest {
	b := proto.Clone(demoBrand(feURL)).(*pactv1.CreateBrandRequest)
	b.BrandId, b.DisplayName = globexID, "Globex Outfitters"
	b.Description = "Globex Outfitters support: questions, your orders, cancellations."
	b.Delegation.LoginUrl = brandURL
	b.Delegation.LoginMode = pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION
	b.Delegation.AssertionIssuer = brandURL
	b.Delegation.AssertionJwksUri = brandURL + "/.well-known/jwks.json"
	return b
}

// brandLogin is Globex's own login site: it signs Users in (any name, no
// password: a demo), and hands the Provider an ES256 assertion signed with
// its own key, published at {brandURL}/.well-known/jwks.json.
type brandLogin struct {
	key     *ecdsa.PrivateKey
	kid     string
	url     string // the Brand URL: its origin, and the iss of its assertions
	consent string // the Provider's consent URL of this Brand: aud, and the only return_to
	page    *template.Template
	csp     string
	srv     *http.Server
}

// startBrandLogin serves Globex's login on a loopback port of its own.
func startBrandLogin(feURL string) (*brandLogin, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(brandCSS))
	l := &brandLogin{
		key: key, kid: "globex-login-1", url: "http://" + ln.Addr().String(),
		consent: feURL + "/a2a/" + globexID + "/oauth/consent",
		page:    template.Must(template.New("login").Parse(brandHTML)),
		// Its forms post to itself and, with the assertion, to the Provider.
		csp: "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
			"form-action 'self' " + feURL + "; frame-ancestors 'none'; base-uri 'none'",
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/jwks.json", l.jwks)
	mux.HandleFunc("GET /login", l.form)
	mux.HandleFunc("POST /login", l.signIn)
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = l.srv.Serve(ln) }()
	return l, nil
}

// close stops the site.
func (l *brandLogin) close() { _ = l.srv.Close() }

func (l *brandLogin) jwks(w http.ResponseWriter, _ *http.Request) {
	raw, _ := l.key.PublicKey.Bytes() // 0x04 || X || Y
	doc, _ := json.Marshal(map[string]any{"keys": []any{map[string]string{
		"kty": "EC", "crv": "P-256", "kid": l.kid, "alg": "ES256", "use": "sig",
		"x": base64.RawURLEncoding.EncodeToString(raw[1:33]), "y": base64.RawURLEncoding.EncodeToString(raw[33:]),
	}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(doc)
}

// returnTo checks return_to (spec §2.5: origin plus path must equal this
// Brand's consent URL, so an assertion is never handed to another site)
// and returns its user code ("" when it carries none).
func (l *brandLogin) returnTo(raw string) (userCode string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Scheme+"://"+u.Host+u.Path != l.consent {
		return "", false
	}
	return u.Query().Get("user_code"), true
}

// loginView is what the two pages show.
type loginView struct {
	ReturnTo, Code, Error, User, Email, Consent, Assertion string
	NeedCode                                               bool
	CSS                                                    template.CSS
}

func (l *brandLogin) form(w http.ResponseWriter, r *http.Request) {
	rt := r.URL.Query().Get("return_to")
	code, ok := l.returnTo(rt)
	if !ok {
		l.render(w, http.StatusBadRequest, loginView{Error: "This sign-in link does not lead back to Globex's consent page. Start again from your assistant."})
		return
	}
	l.render(w, http.StatusOK, loginView{ReturnTo: rt, Code: code, NeedCode: code == ""})
}

func (l *brandLogin) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		l.render(w, http.StatusBadRequest, loginView{Error: "The form could not be read."})
		return
	}
	f := r.PostForm
	rt := f.Get("return_to")
	code, ok := l.returnTo(rt)
	if !ok {
		l.render(w, http.StatusBadRequest, loginView{Error: "This sign-in link does not lead back to Globex's consent page. Start again from your assistant."})
		return
	}
	if code == "" {
		code = strings.TrimSpace(f.Get("user_code"))
	}
	v := loginView{ReturnTo: rt, Code: code, NeedCode: f.Get("user_code") != "" || code == ""}
	user, email := f.Get("username"), strings.TrimSpace(f.Get("email"))
	switch {
	case !validUserName(user):
		v.Error = "Use 1 to 64 lower-case letters, digits, dots, dashes or underscores."
	case len(email) > 254 || email != "" && !strings.Contains(email, "@"):
		v.Error = "Type an email address, or leave it empty."
	case code == "" || len(code) > 16:
		v.Error = "Type the code your assistant shows."
	}
	if v.Error != "" {
		l.render(w, http.StatusBadRequest, v)
		return
	}
	tok, err := l.assertion(user, email, code)
	if err != nil {
		l.render(w, http.StatusInternalServerError, loginView{Error: "The sign-in could not be signed."})
		return
	}
	l.render(w, http.StatusOK, loginView{User: user, Email: email, Consent: l.consent, Assertion: tok})
}

// assertion signs the single-use login assertion: iss the Brand URL, aud
// the consent URL, sub, jti, iat, exp (2 minutes), user_code and email.
func (l *brandLogin) assertion(user, email, code string) (string, error) {
	now := time.Now()
	claims := map[string]any{
		"iss": l.url, "aud": l.consent, "sub": user, "jti": rand.Text(),
		"iat": now.Unix(), "exp": now.Add(assertionTTL).Unix(), "user_code": code,
	}
	if email != "" {
		claims["email"] = email
	}
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": l.kid, "typ": "JWT"})
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	d := sha256.Sum256([]byte(input))
	rr, s, err := ecdsa.Sign(rand.Reader, l.key, d[:])
	if err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(append(rr.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)), nil
}

func (l *brandLogin) render(w http.ResponseWriter, status int, v loginView) {
	v.CSS = template.CSS(brandCSS)
	var buf bytes.Buffer
	if err := l.page.Execute(&buf, v); err != nil {
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString("internal error")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", l.csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// register creates Globex through pactd's admin API.
func (l *brandLogin) register(ctx context.Context, pactdURL, adminToken, feURL string) error {
	admin := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+adminToken)
			return next(ctx, req)
		}
	}))
	brands := pactv1connect.NewBrandServiceClient(&http.Client{Timeout: 10 * time.Second}, pactdURL, admin)
	if _, err := brands.CreateBrand(ctx, globexBrand(feURL, l.url)); err != nil {
		return fmt.Errorf("create the Brand %s: %w", globexID, err)
	}
	return nil
}

// printGlobex tells the demo's user about the second Brand.
func printGlobex(w io.Writer, feURL string, l *brandLogin) {
	fmt.Fprintln(w, strings.Join([]string{
		"Second Brand: globex (BRAND_LOGIN_MODE_SIGNED_ASSERTION; its login is its own site, no cookie at the Provider)",
		"  Agent Card                   " + feURL + "/a2a/" + globexID + "/.well-known/agent-card.json",
		"  its login and JWKS           " + l.url + "/login   " + l.url + "/.well-known/jwks.json",
		"  a device grant there: POST " + feURL + "/a2a/" + globexID + "/oauth/device_authorization, open the",
		"  verification_uri_complete, sign in at Globex, Continue, then Allow or Deny on the Provider's page.",
		"",
	}, "\n"))
}

func validUserName(u string) bool {
	return len(u) >= 1 && len(u) <= 64 && strings.Trim(u, "abcdefghijklmnopqrstuvwxyz0123456789._-") == ""
}

const brandCSS = `body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#10241b;background:#eef5f0}
header{padding:.75em 1.5em;background:#1e5b3a;color:#fff;font-weight:700;letter-spacing:.05em}
main{max-width:26em;margin:2em auto;padding:1.5em 2em;background:#fff;border:1px solid #cfe0d5;border-radius:8px}
label{display:block;font-weight:700}
input{font:1.1em system-ui,sans-serif;padding:.4em;margin:.3em 0 1em;width:95%;border:1px solid #6b8a78;border-radius:4px}
button{font:inherit;font-weight:700;padding:.5em 1.5em;border:0;border-radius:4px;background:#1e5b3a;color:#fff}
button:focus-visible,input:focus-visible{outline:3px solid #d4a017;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}.note{color:#4b6356;font-size:.9em}`

const brandHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to Globex</title>
<style>{{.CSS}}</style>
</head>
<body>
<header>Globex Outfitters</header>
<main>
{{if .Assertion}}<h1>Signed in as {{.User}}</h1>
<p class="note">Globex confirms to the Provider who you are, for this request only.</p>
<form method="post" action="{{.Consent}}">
<input type="hidden" name="assertion" value="{{.Assertion}}">
<button type="submit">Continue to the consent page</button>
</form>
{{else}}<h1>Sign in to Globex</h1>
<p class="note">This is the Brand's own sign-in page, on its own site, in a demo: any user name works and there is no password.</p>
{{with .Error}}<p class="error" role="alert">{{.}}</p>{{end}}
{{if .ReturnTo}}<form method="post">
<input type="hidden" name="return_to" value="{{.ReturnTo}}">
<label for="username">User name</label>
<input id="username" name="username" required autocomplete="username" maxlength="64" pattern="[a-z0-9._\-]+">
<label for="email">Email (optional)</label>
<input id="email" name="email" type="email" autocomplete="email" maxlength="254">
{{if .NeedCode}}<label for="user_code">The code your assistant shows</label>
<input id="user_code" name="user_code" required autocomplete="off" maxlength="16" placeholder="XXXX-XXXX" value="{{.Code}}">
{{end}}<button type="submit">Sign in</button>
</form>{{end}}
{{end}}</main>
</body>
</html>`
