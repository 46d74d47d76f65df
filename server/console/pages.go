package console

import (
	"bytes"
	_ "embed"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"
)

//go:embed pages.html
var pagesHTML string

//go:embed console.css
var consoleCSS []byte

// navItem is one link of the console's navigation.
type navItem struct {
	Href, Label string
	Current     bool
}

// nav is the console's sections, in the order the navigation lists them.
var nav = []navItem{
	{Href: "/", Label: "Overview"}, {Href: "/brands", Label: "Brands"}, {Href: "/agents", Label: "PAs"},
	{Href: "/grants", Label: "Grants"}, {Href: "/audit", Label: "Audit trail"}, {Href: "/credentials", Label: "Credentials"},
	{Href: "/webhooks", Label: "Webhooks"},
}

// view is what a page shows: the frame (title, navigation, the session's
// anti-forgery token, a notice or an error) and the page's own Data.
type view struct {
	Title string
	// Nav is set for a signed-in page.
	Nav []navItem
	// CSRF is the token the page's forms carry.
	CSRF          string
	Notice, Error string
	Data          any
}

// notices are what a page says after an action redirected to it
// (?done=...): fixed sentences, so a link cannot make the console say
// anything else.
var notices = map[string]string{
	"rotated":    "A new signing key is published; it signs once every JWKS cache has had time to fetch it.",
	"brand":      "The Brand is created.",
	"updated":    "The Brand is updated.",
	"policy":     "The Brand's PA policy is saved.",
	"listed":     "The PA is on the Brand's list.",
	"unlisted":   "The PA is off the Brand's list.",
	"registered": "The PA is registered.",
	"enabled":    "The PA is enabled: its tokens are accepted.",
	"disabled":   "The PA is disabled: its tokens are refused from the next verification on.",
	"approved":   "The PA is approved and enabled.",
	"revoked":    "The grant is revoked: its tokens stop verifying and its refresh tokens stop rotating.",
	"credential": "The credential is revoked.",
	"retried":    "The dead deliveries are pending again: the next attempts go out within a poll.",
}

func parsePages() (*template.Template, error) {
	return template.New("pages").Funcs(template.FuncMap{
		"when":   when,
		"iso":    iso,
		"join":   strings.Join,
		"kind":   kindLabel,
		"policy": policyLabel,
		"login":  loginModeLabel,
		"role":   roleLabel,
	}).Parse(pagesHTML)
}

// asTime reads the times the pages show: time.Time or a protobuf
// Timestamp; ok is false for a zero or absent one.
func asTime(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), !t.IsZero()
	case *timestamppb.Timestamp:
		return t.AsTime().UTC(), t != nil
	}
	return time.Time{}, false
}

// when is a time as the pages show it, "—" when there is none.
func when(v any) string {
	t, ok := asTime(v)
	if !ok {
		return "—"
	}
	return t.Format("2006-01-02 15:04 UTC")
}

// iso is a time's datetime attribute.
func iso(v any) string {
	t, _ := asTime(v)
	return t.Format(time.RFC3339)
}

// render writes a page. A signed-in page (v.CSRF set by the caller
// through s) gets the navigation.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	if name != "login" && v.CSRF != "" {
		v.Nav = make([]navItem, len(nav))
		copy(v.Nav, nav)
		for i := range v.Nav {
			h := v.Nav[i].Href
			v.Nav[i].Current = r.URL.Path == h || (h != "/" && strings.HasPrefix(r.URL.Path, h+"/"))
		}
	}
	if v.Notice == "" && v.Error == "" && status < 300 {
		v.Notice = notices[r.URL.Query().Get("done")]
	}
	var buf bytes.Buffer
	if err := c.t.ExecuteTemplate(&buf, name, v); err != nil {
		c.d.Logger.ErrorContext(r.Context(), "console page", "page", name, "error", err.Error())
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString("internal error")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// refuse answers a request the console itself refused (not signed in, a
// cross-site or forged form) with the reason.
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "message", view{Title: "Refused", Error: msg})
}

// fail answers a request the console could not serve.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "message", view{Title: "Something went wrong", Error: msg})
}

// reason is the HTTP status and the sentence for a service's refusal: the
// RPC's code and the service's own message (field violations included).
func reason(err error) (int, string) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return http.StatusInternalServerError, "Internal error: pactd could not do it. The log says why."
	}
	status := http.StatusInternalServerError
	switch ce.Code() {
	case connect.CodeInvalidArgument, connect.CodeOutOfRange:
		status = http.StatusBadRequest
	case connect.CodeNotFound:
		status = http.StatusNotFound
	case connect.CodeAlreadyExists, connect.CodeAborted, connect.CodeFailedPrecondition:
		status = http.StatusConflict
	case connect.CodePermissionDenied:
		status = http.StatusForbidden
	case connect.CodeResourceExhausted:
		status = http.StatusTooManyRequests
	case connect.CodeUnavailable, connect.CodeDeadlineExceeded:
		status = http.StatusServiceUnavailable
	}
	return status, "Refused (" + ce.Code().String() + "): " + ce.Message()
}

// done redirects after an action to the page that shows its result.
func done(w http.ResponseWriter, r *http.Request, path, what string) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	http.Redirect(w, r, path+sep+"done="+what, http.StatusSeeOther)
}

// stylesheet serves the console's one style sheet.
func stylesheet(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	_, _ = w.Write(consoleCSS)
}

func (c *Console) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /console.css", stylesheet)
	m.HandleFunc("GET /login", c.loginPage)
	m.HandleFunc("POST /login", c.login)
	m.HandleFunc("POST /logout", c.action(c.logout))
	m.HandleFunc("GET /{$}", c.page(c.overview))
	m.HandleFunc("POST /keys/rotate", c.action(c.rotateKey))
	m.HandleFunc("GET /brands", c.page(c.brandList))
	m.HandleFunc("POST /brands", c.action(c.createBrand))
	m.HandleFunc("GET /brands/{id}", c.page(c.brandPage))
	m.HandleFunc("POST /brands/{id}", c.action(c.updateBrand))
	m.HandleFunc("POST /brands/{id}/policy", c.action(c.setPolicy))
	m.HandleFunc("POST /brands/{id}/agents", c.action(c.listAgent))
	m.HandleFunc("POST /brands/{id}/agents/remove", c.action(c.unlistAgent))
	m.HandleFunc("GET /agents", c.page(c.agentList))
	m.HandleFunc("POST /agents", c.action(c.registerAgent))
	m.HandleFunc("POST /agents/{id}/{change}", c.action(c.changeAgent))
	m.HandleFunc("GET /grants", c.page(c.grantList))
	m.HandleFunc("GET /grants/revoke", c.page(c.confirmRevoke))
	m.HandleFunc("POST /grants/revoke", c.action(c.revokeGrant))
	m.HandleFunc("GET /audit", c.page(c.auditList))
	m.HandleFunc("GET /audit/{id}", c.page(c.auditEvent))
	m.HandleFunc("GET /credentials", c.page(c.credentialList))
	m.HandleFunc("POST /credentials", c.action(c.createCredential))
	m.HandleFunc("POST /credentials/{id}/revoke", c.action(c.revokeCredential))
	m.HandleFunc("GET /webhooks", c.page(c.webhooks))
	m.HandleFunc("POST /webhooks/{id}/retry", c.action(c.retryWebhook))
	m.HandleFunc("/", c.notFound)
	c.mux = m
}

// notFound answers every other path (and method).
func (c *Console) notFound(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusNotFound, "message", view{Title: "Not found", Error: "The console has no page at " + r.URL.Path + "."})
}
