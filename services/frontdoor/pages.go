package frontdoor

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The pages a User sees at the Provider: one template set and one style
// sheet, for every frontend.
var (
	//go:embed pages.html
	pagesHTML string
	//go:embed pages.css
	pagesCSSFile string
	// pageCSS is the pages' only style sheet, inline and allowed by its
	// hash in the Content-Security-Policy.
	pageCSS = strings.TrimSuffix(pagesCSSFile, "\n")
)

// pages renders the Provider's HTML pages.
type pages struct {
	t        *template.Template
	styleSrc string // the CSP's style-src: the style sheet's hash
	key      []byte // keys the forms' anti-forgery tokens
	now      func() time.Time
}

func newPages(key []byte, now func() time.Time) *pages {
	sum := sha256.Sum256([]byte(pageCSS))
	return &pages{
		t:        template.Must(template.New("pages").Parse(pagesHTML)),
		styleSrc: "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'",
		key:      key,
		now:      now,
	}
}

// csp is a page's Content-Security-Policy: nothing runs but its style
// sheet, no frame may hold it, and its forms may post only to this origin
// and to the origin of its (absolute) form action.
func (p *pages) csp(action string) string {
	formAction := "'self'"
	if u, err := url.Parse(action); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		formAction += " " + u.Scheme + "://" + u.Host
	}
	return "default-src 'none'; style-src " + p.styleSrc + "; form-action " + formAction + "; frame-ancestors 'none'; base-uri 'none'"
}

// view is what a page shows.
type view struct {
	Title, User, Error, Status string
	// Action is the absolute URL the page's forms post (or get) to.
	Action string
	// The consent page.
	Agent, Origin, Brand, Code, Expires, CSRF string
	Scopes                                    []scopeView
	// Session is the consent session of a signed-assertion Brand's consent
	// page (its form's only state and anti-forgery token), or the
	// connected session of its connected and revoke pages (the revoke
	// forms' only state and anti-forgery token); Email is the User's, from
	// the Brand's assertion.
	Session, Email string
	// The connected-apps page: the grants of a signed-in User grouped by
	// PA, or (Signed, no sign-in at the Provider) only the decision's
	// outcome, Granted (the scopes in words).
	Agents  []agentView
	Signed  bool
	Granted []scopeView
	// Revoke is the PA the revoke confirmation page names; Back is the
	// connected page (also linked from a signed-assertion Brand's outcome
	// page).
	Revoke *agentView
	Back   string
	// Brands are the root page's Brands.
	Brands []brandView
	CSS    template.CSS
}

// scopeView is one scope in the Brand's words; Details are the conditions
// in words of the authorization_details entries under it (PACT §5.7).
type scopeView struct {
	ID, Description string
	Details         []string
}

// agentView is one PA on the connected page: its grants, live ones first.
type agentView struct {
	ID, Name string
	// Live is true while one of its grants is; State says it in words.
	Live  bool
	State string
	// Ended is when its last grant ended (revoked or expired), when none
	// is live.
	Ended  string
	Grants []grantView
}

// grantView is one grant of a PA: its scopes in the Brand's words.
type grantView struct {
	Scopes                []scopeView // each with its authorization_details in words
	Since, Expires, State string
	Live                  bool
}

// brandView is one Brand on the root page.
type brandView struct {
	ID, Name, Description, Card, Connected string
}

// render sends a page with headers that keep it out of frames, caches and
// Referer headers, and let nothing but its own style sheet run.
func (p *pages) render(w http.ResponseWriter, status int, name string, v view) {
	v.CSS = template.CSS(pageCSS)
	var buf bytes.Buffer
	if err := p.t.ExecuteTemplate(&buf, name, v); err != nil {
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString("internal error")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", p.csp(v.Action))
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// csrfWindow is how long a form's anti-forgery token is valid: at least
// one window and at most two.
const csrfWindow = 12 * time.Hour

// csrf is the anti-forgery token of one form: an HMAC of the Brand, the
// signed-in User, what the form decides and the time window, under a key
// every replica shares.
func (p *pages) csrf(brandID, user, purpose string) string {
	return p.token(brandID, user, purpose, p.now().Unix()/int64(csrfWindow.Seconds()))
}

func (p *pages) token(brandID, user, purpose string, window int64) string {
	m := hmac.New(sha256.New, p.key)
	for _, s := range []string{brandID, user, purpose} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	_ = binary.Write(m, binary.BigEndian, window)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF accepts a token of this window or the one before.
func (p *pages) checkCSRF(token, brandID, user, purpose string) bool {
	if token == "" {
		return false
	}
	w := p.now().Unix() / int64(csrfWindow.Seconds())
	for _, win := range []int64{w, w - 1} {
		if hmac.Equal([]byte(token), []byte(p.token(brandID, user, purpose, win))) {
			return true
		}
	}
	return false
}
