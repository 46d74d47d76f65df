package pacta2a

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
)

//go:embed pages.html
var pagesHTML string

// pageCSS is the pages' only style sheet, inline and allowed by its hash.
const pageCSS = `body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1f24;background:#f4f5f7}
header{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25em 1em;padding:.75em 1.5em;background:#1d3557;color:#fff}
main{max-width:40em;margin:2em auto;padding:1.5em 2em;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4em;line-height:1.3}h2{font-size:1.1em;margin:0}
.agent{color:#1d3557}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em}
.facts dt{font-weight:600}.facts dd{margin:0;overflow-wrap:anywhere}
fieldset{border:1px solid #c5cad3;border-radius:6px;margin:1em 0;padding:.5em 1em}
legend{font-weight:600;padding:0 .25em}
.scope{display:flex;gap:.5em;align-items:baseline;margin:.5em 0}
.scope input{width:1.15em;height:1.15em;flex:none}
code,.id{font-size:.8em;color:#5f6875}
.hint{font-size:.9em;color:#4a5260}
.details{margin:0 0 .5em 1.9em;padding-left:1em}
.usercode{font:600 1.3em ui-monospace,monospace;letter-spacing:.1em;white-space:nowrap}
.compare{padding:.75em 1em;border:2px dashed #1d3557;border-radius:6px;text-align:center}
label{display:block;font-weight:600}.scope label{display:inline;font-weight:400}
input[type=text],input:not([type]){font:1.1em ui-monospace,monospace;padding:.4em;margin:.3em 0 1em;border:1px solid #8a94a3;border-radius:4px;max-width:100%;box-sizing:border-box}
.buttons{display:flex;flex-wrap:wrap;gap:1em;margin-top:1em}
button,a.button{font:inherit;font-weight:600;padding:.5em 1.5em;border-radius:4px;border:2px solid #1d3557;background:#1d3557;color:#fff;cursor:pointer;text-decoration:none}
button.secondary,a.button.secondary{background:#fff;color:#1d3557}
button.danger{background:#b3261e;border-color:#b3261e}
button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid #e76f51;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}
.status{padding:.5em 1em;border-left:4px solid #2a9d8f;background:#e8f6f4}
.pas,.brands,.grants{list-style:none;margin:0;padding:0}
.pa,.brand{border:1px solid #dde1e6;border-radius:6px;padding:.75em 1em;margin:.75em 0}
.pa-head{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:baseline;gap:.25em 1em}
.state{font-size:.85em;font-weight:600;padding:.1em .6em;border-radius:1em;background:#e8f6f4;color:#1f6f65;white-space:nowrap}
.state.off{background:#eceef1;color:#4a5260}
.grants>li{margin:.5em 0;padding-top:.5em;border-top:1px solid #eceef1}
.grants ul{margin:.25em 0;padding-left:1.25em}
.when{font-size:.9em;color:#4a5260}.when time{white-space:nowrap}
.pa form{margin:.5em 0 0}
@media (max-width:40em){main{margin:0;padding:1em;border-radius:0;box-shadow:none}header{padding:.5em 1em}.facts{grid-template-columns:1fr}.facts dd{margin-bottom:.5em}}`

// pages renders the Provider's HTML pages.
type pages struct {
	t        *template.Template
	styleSrc string // the CSP's style-src: the style sheet's hash
	key      []byte // keys the forms' anti-forgery tokens
}

func newPages() *pages {
	sum := sha256.Sum256([]byte(pageCSS))
	return &pages{
		t:        template.Must(template.New("pages").Parse(pagesHTML)),
		styleSrc: "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'",
		key:      newKey(),
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

// scopeView is one requested scope; Details are the conditions in words of
// the authorization_details entries that need it (PACT §5.7), as pactd
// wrote them.
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
