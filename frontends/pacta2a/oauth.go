package pacta2a

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// Sessions tells the consent and connected-apps pages who the User is at a
// Brand in BRAND_LOGIN_MODE_TRUSTED_FRONTEND (the frontend vouches for the
// Brand user it passes to pactd). Package demo has a cookie login. Brands
// in BRAND_LOGIN_MODE_SIGNED_ASSERTION need none (see signed.go).
type Sessions interface {
	// BrandUser returns the id at brandID of the User signed in on r, or "".
	BrandUser(r *http.Request, brandID string) string
	// LoginURL is where a User who is not signed in goes first; the login
	// then returns to returnTo, a path on this frontend.
	LoginURL(brandID, returnTo string) string
}

// oauthRoutes are the endpoints under {interfaceUrl}/oauth/: pactd's
// OAuth endpoints by reverse proxy, and the Provider's own pages.
func (h *Handler) oauthRoutes(p string) map[string]endpoint {
	open := func(f func(http.ResponseWriter, *http.Request, *call)) endpoint {
		return endpoint{public: true, serve: f}
	}
	forward := open(func(w http.ResponseWriter, r *http.Request, c *call) { h.forward(w, r, c.brandID, p) })
	switch p {
	case "device_authorization", "token", "revoke":
		return map[string]endpoint{http.MethodPost: forward}
	case ".well-known/oauth-authorization-server", "jwks.json":
		return map[string]endpoint{http.MethodGet: forward}
	}
	switch p {
	case "consent":
		// POST: a signed-assertion Brand's login returns the User here.
		return map[string]endpoint{http.MethodGet: open(h.consentPage), http.MethodPost: open(h.beginConsent)}
	case "consent/decision":
		return map[string]endpoint{http.MethodPost: open(h.decide)}
	case "connected":
		// POST: a signed-assertion Brand's login returns the User here
		// (signedconnected.go).
		return map[string]endpoint{http.MethodGet: open(h.connectedPage), http.MethodPost: open(h.beginConnected)}
	case "connected/revoke":
		if h.cfg.Sessions != nil {
			// GET: the confirmation that names what will be revoked.
			return map[string]endpoint{http.MethodGet: open(h.confirmRevoke), http.MethodPost: open(h.revokeAny)}
		}
		return map[string]endpoint{http.MethodPost: open(h.revokeAny)}
	}
	return nil
}

// newProxy returns the reverse proxy to pactd. pactd authenticates the PA
// (its JWT is the OAuth client authentication) and writes every answer.
func (h *Handler) newProxy() *httputil.ReverseProxy {
	target, _ := url.Parse(h.cfg.PactdURL) // checked by NewHandler
	var transport http.RoundTripper
	if c, ok := h.cfg.HTTPClient.(*http.Client); ok {
		transport = c.Transport
	}
	return &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Del("Cookie") // the User's sessions are not pactd's business
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.cfg.Logger.ErrorContext(r.Context(), "oauth proxy", slog.String("path", r.URL.Path), slog.String("error", err.Error()))
			bare(w, http.StatusBadGateway)
		},
	}
}

// forward sends a request to pactd's endpoint for the Brand, on the path
// the route matched (never the raw path the client sent).
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, brandID, endpoint string) {
	out := r.Clone(r.Context())
	out.URL.Path = "/a2a/" + brandID + "/oauth/" + endpoint
	out.URL.RawPath = "/a2a/" + url.PathEscape(brandID) + "/oauth/" + endpoint
	h.proxy.ServeHTTP(w, out)
}

// consentPage serves GET consent?user_code=…. A signed-assertion Brand's
// User goes to the Brand's login (which posts back here); otherwise the
// User must be signed in at the Brand, and without a code the page asks
// for one (a step-up link carries none).
func (h *Handler) consentPage(w http.ResponseWriter, r *http.Request, c *call) {
	b, ok := h.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	code := r.URL.Query().Get("user_code")
	if b.signed() {
		http.Redirect(w, r, b.loginLink(code), http.StatusSeeOther)
		return
	}
	user, ok := h.signedIn(w, r, c.brandID)
	if !ok {
		return
	}
	if code == "" {
		h.pages.render(w, http.StatusOK, "code", view{Title: "Connect your assistant", User: user, Action: b.consentURL()})
		return
	}
	h.showConsent(w, r, b, user, code, http.StatusOK, "", true)
}

// guessSource names the signed-in Brand user to pactd's user-code guessing
// limits, so one user's wrong codes spend that user's budget, not only the
// Brand's. A hash keeps the id printable and out of pactd's logs.
func guessSource(user string) string {
	sum := sha256.Sum256([]byte(user))
	return "user:" + hex.EncodeToString(sum[:12])
}

// showConsent describes the pending authorization and renders the page,
// or the page that says why it cannot be decided.
//
// mayskip: when the Brand skips consent and a grant of this User to this
// PA covers the request already (covered_by_grant), it is approved with
// every requested scope at once, without the page.
func (h *Handler) showConsent(w http.ResponseWriter, r *http.Request, b brandPages, user, code string, status int, problem string, maySkip bool) {
	brandID := b.id
	req := &pactv1.DescribeConsentRequest{BrandId: brandID, UserCode: code, Source: guessSource(user)}
	if maySkip {
		req.BrandUser = user
	}
	d, err := h.deleg.DescribeConsent(r.Context(), req)
	if err != nil {
		h.consentError(w, r, b, user, err)
		return
	}
	if d.GetCoveredByGrant() {
		// pactd checks the cover again, grants what was requested and
		// never past the covering grant's expiry.
		res, err := h.deleg.ApproveConsent(r.Context(), &pactv1.ApproveConsentRequest{
			BrandId: brandID, UserCode: code, BrandUser: user, SkipConsent: true, Source: guessSource(user),
		})
		if err != nil {
			h.consentError(w, r, b, user, err)
			return
		}
		outcome := "denied"
		if res.GetGrantId() != "" {
			outcome = "approved"
		}
		http.Redirect(w, r, b.interfaceURL+"/oauth/connected?status="+outcome, http.StatusSeeOther)
		return
	}
	v := view{
		Title: "Allow " + d.GetAgentDisplayName() + "?", User: user, Error: problem, Action: b.decisionURL(),
		Agent: d.GetAgentDisplayName(), Origin: d.GetAgentOrigin(), Brand: d.GetBrandDisplayName(), Code: d.GetUserCode(),
		Expires: d.GetExpiresAt().AsTime().UTC().Format("15:04 MST"), CSRF: h.pages.csrf(brandID, user, "consent "+d.GetUserCode()),
	}
	v.Scopes = scopeViews(d)
	h.pages.render(w, status, "consent", v)
}

// scopeViews are the consent page's scopes in pactd's words (the Brand's
// descriptions), each with the words of the authorization_details entries
// that need it (PACT §5.7).
func scopeViews(d *pactv1.DescribeConsentResponse) []scopeView {
	var out []scopeView
	for _, sc := range d.GetScopes() {
		sv := scopeView{ID: sc.GetId(), Description: sc.GetDescription()}
		for _, ad := range d.GetAuthorizationDetails() {
			if ad.GetScope() == sc.GetId() {
				sv.Details = append(sv.Details, ad.GetWords())
			}
		}
		out = append(out, sv)
	}
	return out
}

// consentError renders why a code cannot be decided.
func (h *Handler) consentError(w http.ResponseWriter, r *http.Request, b brandPages, user string, err error) {
	v := view{Title: "Connect your assistant", User: user, Action: b.consentURL()}
	status := http.StatusBadRequest
	switch connect.CodeOf(err) {
	case connect.CodeNotFound, connect.CodeInvalidArgument:
		v.Error, status = "This code is unknown. Check the code your assistant shows and type it again.", http.StatusNotFound
	case connect.CodeFailedPrecondition:
		v.Error = "This request was already decided or has expired. Ask your assistant to start again."
	case connect.CodeResourceExhausted:
		v.Error, status = "Too many unknown codes were tried. Wait a few minutes, then try again.", http.StatusTooManyRequests
	default:
		h.cfg.Logger.ErrorContext(r.Context(), "consent", slog.String("error", err.Error()))
		v.Error, status = "Something went wrong on our side. Try again later.", http.StatusInternalServerError
	}
	h.pages.render(w, status, "code", v)
}

// decide serves POST consent/decision: Allow grants the checked scopes;
// Deny refuses. The page showed the code to compare with the assistant's
// (RFC 8628 §5.4), so Allow is the User's confirmation that they match; no
// code is typed again (typing a code the page shows would be copying, and
// check nothing). A form with a consent session is a signed-assertion
// Brand's (decideSigned).
func (h *Handler) decide(w http.ResponseWriter, r *http.Request, c *call) {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		h.forbidden(w, "")
		return
	}
	b, ok := h.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if b.signed() {
		h.decideSigned(w, r, b)
		return
	}
	if h.cfg.Sessions == nil {
		bare(w, http.StatusNotFound)
		return
	}
	user, f, ok := h.form(w, r, c.brandID)
	if !ok {
		return
	}
	code := f.Get("user_code")
	if !h.pages.checkCSRF(f.Get("csrf"), c.brandID, user, "consent "+code) {
		h.forbidden(w, user)
		return
	}
	var err error
	outcome := "denied"
	switch f.Get("decision") {
	case "deny":
		_, err = h.deleg.DenyConsent(r.Context(), &pactv1.DenyConsentRequest{BrandId: c.brandID, UserCode: code, Source: guessSource(user)})
	case "allow":
		var res *pactv1.ApproveConsentResponse
		res, err = h.deleg.ApproveConsent(r.Context(), &pactv1.ApproveConsentRequest{
			BrandId: c.brandID, UserCode: code, BrandUser: user, Scopes: f["scope"], Source: guessSource(user),
		})
		if res.GetGrantId() != "" {
			outcome = "approved"
		}
	default:
		h.pages.render(w, http.StatusBadRequest, "message", view{Title: "Choose Allow or Deny", User: user})
		return
	}
	if err != nil {
		h.consentError(w, r, b, user, err)
		return
	}
	http.Redirect(w, r, "../connected?status="+outcome, http.StatusSeeOther)
}

// connectedPage serves GET connected: the User's grants at the Brand, one
// entry per PA with its grants grouped, each live PA with a Revoke button.
func (h *Handler) connectedPage(w http.ResponseWriter, r *http.Request, c *call) {
	b, ok := h.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if b.signed() {
		if r.URL.Query().Get("status") == "" {
			// Nobody is signed in here: the Brand's login signs the User
			// in and posts its assertion back (beginConnected).
			http.Redirect(w, r, b.connectedLoginLink(), http.StatusSeeOther)
			return
		}
		h.connectedSigned(w, r, b)
		return
	}
	if h.cfg.Sessions == nil {
		h.notFound(w, r, "")
		return
	}
	user, ok := h.signedIn(w, r, c.brandID)
	if !ok {
		return
	}
	agents, ok := h.userAgents(w, r, b, user)
	if !ok {
		return
	}
	q := r.URL.Query()
	v := view{Title: "Connected assistants at " + b.name, Brand: b.name, User: user, Action: b.interfaceURL + "/oauth/connected/revoke",
		Agents: agents, Status: statusText[q.Get("status")]}
	if q.Get("status") == "revoked" {
		// Name what was revoked, from pactd's list: never words from the link.
		v.Status = "Access was revoked."
		for _, a := range agents {
			if a.ID == q.Get("agent_id") && !a.Live {
				v.Status = "Revoked: " + a.Name + " can no longer act for you here."
			}
		}
	}
	h.pages.render(w, http.StatusOK, "connected", v)
}

// maxGrantPages bounds how many pages of grants the connected page reads.
const maxGrantPages = 10

// userAgents lists the User's grants at the Brand grouped by PA, newest
// first; on a failure it renders the error page and reports false.
func (h *Handler) userAgents(w http.ResponseWriter, r *http.Request, b brandPages, user string) ([]agentView, bool) {
	grants, err := h.listGrants(r, b.id, user)
	if err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "list grants", slog.String("error", err.Error()))
		h.pages.render(w, http.StatusInternalServerError, "message", view{Title: "Connected assistants", User: user,
			Error: "Your connected assistants cannot be shown right now. Try again later."})
		return nil, false
	}
	return groupGrants(b, grants, time.Now()), true
}

// listGrants reads the User's grants at the Brand, newest first, at most
// maxGrantPages pages of 500.
func (h *Handler) listGrants(r *http.Request, brandID, user string) ([]*pactv1.Grant, error) {
	var grants []*pactv1.Grant
	page := &pactv1.PageRequest{PageSize: 500}
	for range maxGrantPages {
		res, err := h.deleg.ListGrants(r.Context(), &pactv1.ListGrantsRequest{BrandId: brandID, BrandUser: user, Page: page})
		if err != nil {
			return nil, err
		}
		grants = append(grants, res.GetGrants()...)
		if res.GetNextPageToken() == "" {
			break
		}
		page = &pactv1.PageRequest{PageSize: 500, PageToken: res.GetNextPageToken()}
	}
	return grants, nil
}

// groupGrants makes one agentView per PA, in the order of its newest
// grant, with its live grants first.
func groupGrants(b brandPages, grants []*pactv1.Grant, now time.Time) []agentView {
	var out []agentView
	index := map[string]int{}
	ended := map[string]time.Time{}
	for _, g := range grants {
		i, seen := index[g.GetAgentId()]
		if !seen {
			i = len(out)
			index[g.GetAgentId()] = i
			out = append(out, agentView{ID: g.GetAgentId(), Name: g.GetAgentDisplayName()})
		}
		gv := grantView{Scopes: b.scopeViews(g.GetScopes(), g.GetAuthorizationDetails()),
			Since: day(g.GetCreateTime().AsTime()), Expires: day(g.GetExpireTime().AsTime()), State: "Active"}
		end := g.GetExpireTime().AsTime()
		switch {
		case g.GetRevokeTime() != nil:
			gv.State, end = "Revoked", g.GetRevokeTime().AsTime()
		case !now.Before(end):
			gv.State = "Expired"
		default:
			gv.Live = true
			out[i].Live = true
		}
		if !gv.Live && end.After(ended[g.GetAgentId()]) {
			ended[g.GetAgentId()] = end
			out[i].State = gv.State
		}
		out[i].Grants = append(out[i].Grants, gv)
	}
	for i := range out {
		a := &out[i]
		slices.SortStableFunc(a.Grants, func(x, y grantView) int { return cmpBool(y.Live, x.Live) })
		if a.Live {
			n := 0
			for _, g := range a.Grants {
				if g.Live {
					n++
				}
			}
			a.State = "Active"
			if n > 1 {
				a.State = fmt.Sprintf("Active · %d grants", n)
			}
		} else {
			a.Ended = day(ended[a.ID])
		}
	}
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// day is how the pages write a date: short, one line, UTC.
func day(t time.Time) string { return t.UTC().Format("2 Jan 2006") }

// statusText is what the connected page says after a decision; each is
// true whatever else the page lists (a denial shares nothing new, and the
// User's other grants stay as they were).
var statusText = map[string]string{
	"approved": "Done: your assistant is connected.", "denied": "You denied the request: nothing new was shared.",
}

// confirmRevoke serves GET connected/revoke?agent_id=…: the confirmation
// naming the PA and what it will lose.
func (h *Handler) confirmRevoke(w http.ResponseWriter, r *http.Request, c *call) {
	b, ok := h.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if b.signed() {
		// The signed-assertion confirmation is a POST carrying the session.
		http.Redirect(w, r, b.interfaceURL+"/oauth/connected", http.StatusSeeOther)
		return
	}
	user, ok := h.signedIn(w, r, c.brandID)
	if !ok {
		return
	}
	agents, ok := h.userAgents(w, r, b, user)
	if !ok {
		return
	}
	back := b.interfaceURL + "/oauth/connected"
	id := r.URL.Query().Get("agent_id")
	for _, a := range agents {
		if a.ID == id && a.Live {
			h.pages.render(w, http.StatusOK, "revoke", view{Title: "Revoke " + a.Name + "?", Brand: b.name, User: user, Revoke: &a,
				Action: b.interfaceURL + "/oauth/connected/revoke", Back: back, CSRF: h.pages.csrf(c.brandID, user, "revoke "+id)})
			return
		}
	}
	h.pages.render(w, http.StatusNotFound, "message", view{Title: "Connected assistants", User: user,
		Error: "This assistant has no access to revoke. Go back to your connected assistants."})
}

// revoke serves POST connected/revoke: it revokes every live grant of one
// PA to the User, then the connected page names what was revoked.
func (h *Handler) revoke(w http.ResponseWriter, r *http.Request, c *call) {
	user, f, ok := h.form(w, r, c.brandID)
	if !ok {
		return
	}
	id := f.Get("agent_id")
	if !h.pages.checkCSRF(f.Get("csrf"), c.brandID, user, "revoke "+id) {
		h.forbidden(w, user)
		return
	}
	grants, err := h.listGrants(r, c.brandID, user)
	now := time.Now()
	for _, g := range grants {
		if err != nil {
			break
		}
		if g.GetAgentId() == id && g.GetRevokeTime() == nil && now.Before(g.GetExpireTime().AsTime()) {
			_, err = h.deleg.RevokeGrant(r.Context(), &pactv1.RevokeGrantRequest{BrandId: c.brandID, GrantId: g.GetGrantId(), BrandUser: user})
			if connect.CodeOf(err) == connect.CodeNotFound {
				err = nil // revoked meanwhile, or not this User's
			}
		}
	}
	if err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "revoke grant", slog.String("error", err.Error()))
		h.pages.render(w, http.StatusInternalServerError, "message", view{Title: "Connected assistants", User: user,
			Error: "Access could not be revoked right now. Try again later."})
		return
	}
	http.Redirect(w, r, "../connected?status=revoked&agent_id="+url.QueryEscape(id), http.StatusSeeOther)
}

// signedIn returns the Brand user, or sends the User to the Brand's login
// (which returns here) and reports false.
func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request, brandID string) (string, bool) {
	if u := h.cfg.Sessions.BrandUser(r, brandID); u != "" {
		return u, true
	}
	http.Redirect(w, r, h.cfg.Sessions.LoginURL(brandID, r.URL.RequestURI()), http.StatusSeeOther)
	return "", false
}

// form reads a page's POST form (parseForm) from a signed-in User. A
// request another site started is refused before anything is read.
func (h *Handler) form(w http.ResponseWriter, r *http.Request, brandID string) (string, url.Values, bool) {
	user := h.cfg.Sessions.BrandUser(r, brandID)
	if user == "" || r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		h.forbidden(w, user)
		return "", nil, false
	}
	if status := parseForm(w, r); status != 0 {
		h.pages.render(w, status, "message", view{Title: "Bad request", User: user, Error: formProblem[status]})
		return "", nil, false
	}
	return user, r.PostForm, true
}

// formProblem is what a page says about a form parseForm refused.
var formProblem = map[int]string{
	http.StatusBadRequest:            "The form could not be read.",
	http.StatusRequestEntityTooLarge: "The form is too large.",
}

func (h *Handler) forbidden(w http.ResponseWriter, user string) {
	h.pages.render(w, http.StatusForbidden, "message", view{Title: "Please try again", User: user,
		Error: "This form has expired or was not sent from this site. Go back, reload the page and try again."})
}

// csrf is the anti-forgery token of one form: an HMAC of the Brand, the
// signed-in User and what the form decides, under a key of this process.
func (p *pages) csrf(brandID, user, purpose string) string {
	m := hmac.New(sha256.New, p.key)
	for _, s := range []string{brandID, user, purpose} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (p *pages) checkCSRF(token, brandID, user, purpose string) bool {
	return token != "" && hmac.Equal([]byte(token), []byte(p.csrf(brandID, user, purpose)))
}

// newKey is a fresh random key.
func newKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	return k
}
