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
header{display:flex;justify-content:space-between;gap:1em;padding:.75em 1.5em;background:#1d3557;color:#fff}
main{max-width:38em;margin:2em auto;padding:1.5em 2em;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4em;line-height:1.3}
.agent{color:#1d3557}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em}
.facts dt{font-weight:600}.facts dd{margin:0}
fieldset{border:1px solid #c5cad3;border-radius:6px;margin:1em 0;padding:.5em 1em}
legend{font-weight:600;padding:0 .25em}
.scope{display:flex;gap:.5em;align-items:baseline;margin:.5em 0}
.scope input{width:1.15em;height:1.15em}
code{font-size:.85em;color:#4a5260}
.hint{font-size:.9em;color:#4a5260}
.details{margin:0 0 .5em 1.9em;padding-left:1em}
.usercode{font:600 1.2em ui-monospace,monospace;letter-spacing:.1em}
label{display:block;font-weight:600}.scope label{display:inline;font-weight:400}
input[type=text],input:not([type]){font:1.1em ui-monospace,monospace;padding:.4em;margin:.3em 0 1em;border:1px solid #8a94a3;border-radius:4px}
.buttons{display:flex;gap:1em;margin-top:1em}
button{font:inherit;font-weight:600;padding:.5em 1.5em;border-radius:4px;border:2px solid #1d3557;background:#1d3557;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1d3557}
button:focus-visible,input:focus-visible{outline:3px solid #e76f51;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}
.status{padding:.5em 1em;border-left:4px solid #2a9d8f;background:#e8f6f4}
table{width:100%;border-collapse:collapse}caption{text-align:left;padding:.5em 0}
th,td{text-align:left;padding:.4em;border-bottom:1px solid #dde1e6}
.hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}`

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
	// page (its form's only state and anti-forgery token); Email is the
	// User's, from the Brand's assertion.
	Session, Email string
	// The connected-apps page: the grants of a signed-in User, or (Signed,
	// no sign-in at the Provider) only the decision's outcome.
	Grants  []grantView
	Signed  bool
	Granted string
	CSS     template.CSS
}

// scopeView is one requested scope; Details are the conditions in words of
// the authorization_details entries that need it (PACT §5.7), as pactd
// wrote them.
type scopeView struct {
	ID, Description string
	Details         []string
}

type grantView struct {
	ID, Agent, Scopes, Since, State string
	Live                            bool
	// Details are the grant's authorization_details in words.
	Details []string
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
