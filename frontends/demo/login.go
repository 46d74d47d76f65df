package demo

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// SessionTTL is how long a demo sign-in lasts.
const SessionTTL = time.Hour

const loginCSS = `body{margin:0;font:16px/1.5 Georgia,serif;color:#2b1d0e;background:#fbf6ef}
header{padding:.75em 1.5em;background:#6f4e37;color:#fff;font-weight:700;letter-spacing:.05em}
main{max-width:26em;margin:2em auto;padding:1.5em 2em;background:#fff;border:1px solid #e2d6c6;border-radius:8px}
label{display:block;font-weight:700}
input{font:1.1em system-ui,sans-serif;padding:.4em;margin:.3em 0 1em;width:95%;border:1px solid #8c7a66;border-radius:4px}
button{font:inherit;font-weight:700;padding:.5em 1.5em;border:0;border-radius:4px;background:#6f4e37;color:#fff}
button:focus-visible,input:focus-visible{outline:3px solid #d4a017;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}.note{color:#6b5a48;font-size:.9em}`

const loginHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to {{.Brand}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header>{{.Brand}}</header>
<main>
<h1>Sign in to {{.Brand}}</h1>
<p class="note">This is the Brand's own sign-in page, in a demo: any user name works and there is no password.{{with .User}} You are signed in as <strong>{{.}}</strong>.{{end}}</p>
{{with .Error}}<p class="error" role="alert">{{.}}</p>{{end}}
<form method="post">
<input type="hidden" name="return_to" value="{{.ReturnTo}}">
<label for="username">User name</label>
<input id="username" name="username" required autocomplete="username" maxlength="64" pattern="[a-z0-9._\-]+" aria-describedby="username-help">
<p id="username-help" class="note">Lower-case letters, digits, dot, dash or underscore, for example alice.</p>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>`

// Login is the demo Brand's sign-in. It serves the verification URI pactd
// builds from the Brand's login_url (see BrandRequest):
//
//	GET  /demo/{brandId}/login?return_to=…   the form
//	POST /demo/{brandId}/login               sign in, then back to return_to
//
// and, as pacta2a.Sessions, tells the consent and connected-apps pages who is
// signed in: a cookie per Brand holding the user name, its expiry and an
// HMAC under a key of this process. return_to may only name this Brand's
// consent or connected-apps page, and only its path and query are kept, so
// a sign-in never sends the User to another site.
type Login struct {
	// BrandName names a Brand on the sign-in page (its display name, e.g.
	// pacta2a.Handler.BrandName); the Brand id when nil or "".
	BrandName func(ctx context.Context, brandID string) string

	key  []byte
	now  func() time.Time
	page *template.Template
	csp  string
	mux  *http.ServeMux
}

// NewLogin returns the sign-in with a fresh key.
func NewLogin() *Login {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	sum := sha256.Sum256([]byte(loginCSS))
	l := &Login{
		key: key, now: time.Now,
		page: template.Must(template.New("login").Parse(loginHTML)),
		csp: "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
			"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		mux: http.NewServeMux(),
	}
	l.mux.HandleFunc("GET /demo/{brandId}/login", l.form)
	l.mux.HandleFunc("POST /demo/{brandId}/login", l.signIn)
	return l
}

// ServeHTTP serves the sign-in pages.
func (l *Login) ServeHTTP(w http.ResponseWriter, r *http.Request) { l.mux.ServeHTTP(w, r) }

// LoginURL implements pacta2a.Sessions.
func (l *Login) LoginURL(brandID, returnTo string) string {
	return "/demo/" + url.PathEscape(brandID) + "/login?return_to=" + url.QueryEscape(returnTo)
}

// BrandUser implements pacta2a.Sessions: the user name of a valid, unexpired
// cookie for the Brand, or "".
func (l *Login) BrandUser(r *http.Request, brandID string) string {
	c, err := r.Cookie(cookieName(brandID))
	if err != nil {
		return ""
	}
	user, rest, _ := strings.Cut(c.Value, "|")
	exp, sig, _ := strings.Cut(rest, "|")
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || l.now().Unix() >= n || !hmac.Equal([]byte(sig), []byte(l.sign(brandID, user, exp))) {
		return ""
	}
	return user
}

func (l *Login) form(w http.ResponseWriter, r *http.Request) {
	l.render(w, r, http.StatusOK, r.URL.Query().Get("return_to"), "")
}

func (l *Login) signIn(w http.ResponseWriter, r *http.Request) {
	brandID := r.PathValue("brandId")
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		// What is left of the body must not be read as the next request
		// (RFC 9112 §9.3): close the connection after the answer.
		w.Header().Set("Connection", "close")
		status, problem := http.StatusBadRequest, "The form could not be read."
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			status, problem = http.StatusRequestEntityTooLarge, "The form is too large."
		}
		l.render(w, r, status, "", problem)
		return
	}
	returnTo := r.PostForm.Get("return_to")
	next, ok := returnPath(returnTo, brandID)
	if !ok {
		l.render(w, r, http.StatusBadRequest, "", "This sign-in link does not lead back to "+brandID+". Start again from your assistant.")
		return
	}
	user := r.PostForm.Get("username")
	if !validUser(user) {
		l.render(w, r, http.StatusBadRequest, returnTo, "Use 1 to 64 lower-case letters, digits, dots, dashes or underscores.")
		return
	}
	exp := strconv.FormatInt(l.now().Add(SessionTTL).Unix(), 10)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(brandID), Value: user + "|" + exp + "|" + l.sign(brandID, user, exp), Path: "/",
		MaxAge: int(SessionTTL.Seconds()), HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (l *Login) render(w http.ResponseWriter, r *http.Request, status int, returnTo, problem string) {
	brandID := r.PathValue("brandId")
	name := ""
	if l.BrandName != nil && validBrandID(brandID) {
		name = l.BrandName(r.Context(), brandID)
	}
	if name == "" {
		name = brandID
	}
	var buf bytes.Buffer
	_ = l.page.Execute(&buf, struct {
		Brand, User, ReturnTo, Error string
		CSS                          template.CSS
	}{name, l.BrandUser(r, brandID), returnTo, problem, template.CSS(loginCSS)})
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", l.csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (l *Login) sign(brandID, user, exp string) string {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte(brandID + "\x00" + user + "\x00" + exp))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// returnPath is the path and query of return_to when it names this Brand's
// consent or connected-apps page; empty means the connected-apps page.
func returnPath(raw, brandID string) (string, bool) {
	base := "/a2a/" + brandID + "/oauth/"
	if raw == "" {
		return base + "connected", true
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Path != base+"consent" && u.Path != base+"connected") {
		return "", false
	}
	return (&url.URL{Path: u.Path, RawQuery: u.RawQuery}).String(), true
}

func validUser(u string) bool {
	return len(u) >= 1 && len(u) <= 64 && strings.Trim(u, "abcdefghijklmnopqrstuvwxyz0123456789._-") == ""
}

// validBrandID reports whether s has a Brand id's form (1 to 64 of
// [A-Za-z0-9_-]), so nothing else is looked up.
func validBrandID(s string) bool {
	return len(s) >= 1 && len(s) <= 64 && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == ""
}

func cookieName(brandID string) string { return "demo_session_" + brandID }
