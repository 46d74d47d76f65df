package frontdoor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// oauthRoutes are the endpoints under {interfaceUrl}/oauth/: pactd's OAuth
// endpoints, and the Provider's pages. None takes a PA JWT at the route:
// the OAuth endpoints authenticate the PA themselves, the pages the User.
func (s *Service) oauthRoutes(p string) map[string]endpoint {
	open := func(f func(http.ResponseWriter, *http.Request, *exchange, *call)) endpoint {
		return endpoint{public: true, serve: f}
	}
	forward := open(func(w http.ResponseWriter, r *http.Request, _ *exchange, c *call) { s.forward(w, r, c.brandID, p) })
	switch p {
	case "device_authorization", "token", "revoke":
		return map[string]endpoint{http.MethodPost: forward}
	case ".well-known/oauth-authorization-server", "jwks.json":
		return map[string]endpoint{http.MethodGet: forward}
	case "consent":
		// POST: a signed-assertion Brand's login returns the User here.
		return map[string]endpoint{http.MethodGet: open(s.consentPage), http.MethodPost: open(s.beginConsent)}
	case "consent/decision":
		return map[string]endpoint{http.MethodPost: open(s.decide)}
	case "connected":
		// POST: a signed-assertion Brand's login returns the User here.
		return map[string]endpoint{http.MethodGet: open(s.connectedPage), http.MethodPost: open(s.beginConnected)}
	case "connected/revoke":
		// GET: the confirmation that names what will be revoked (the
		// signed-assertion one is a POST carrying the session).
		return map[string]endpoint{http.MethodGet: open(s.confirmRevoke), http.MethodPost: open(s.revokeAny)}
	}
	return nil
}

// forward serves one of pactd's OAuth endpoints for the Brand, on the path
// the route matched (never the raw path the client sent).
func (s *Service) forward(w http.ResponseWriter, r *http.Request, brandID, endpoint string) {
	out := r.Clone(r.Context())
	out.URL = &url.URL{Path: "/a2a/" + brandID + "/oauth/" + endpoint, RawPath: "/a2a/" + url.PathEscape(brandID) + "/oauth/" + endpoint,
		RawQuery: r.URL.RawQuery}
	out.RequestURI = out.URL.RequestURI()
	s.d.OAuth.ServeHTTP(w, out)
}

// brandUser returns the trusted-frontend User for the Brand, or answers
// for a request without one and reports false. The first time, Serve asks
// the frontend (UserNeeded), which calls again with brand_user, or with
// sign_in_url when nobody is signed in: a page then sends the User there
// (303, returning to this request), a form is refused (403). A frontend
// that signs nobody in gets a 404 for these pages.
func (s *Service) brandUser(w http.ResponseWriter, r *http.Request, x *exchange, brandID string) (string, bool) {
	switch {
	case x.brandUser != "":
		return x.brandUser, true
	case x.signInURL != "" && r.Method == http.MethodGet:
		http.Redirect(w, r, x.signInURL, http.StatusSeeOther)
		return "", false
	case x.signInURL != "":
		s.forbidden(w, "")
		return "", false
	case !x.signsInUsers:
		s.notFound(w, r, "")
		return "", false
	}
	x.userNeeded = &pactv1.UserNeeded{BrandId: brandID, ReturnTo: r.RequestURI}
	if r.URL.RawQuery != "" {
		x.userNeeded.ReturnTo += "?" + r.URL.RawQuery
	}
	return "", false
}

// guessSource names the signed-in Brand user to pactd's user-code guessing
// limits, so one user's wrong codes spend that user's budget, not only the
// Brand's. A hash keeps the id printable and out of the logs.
func guessSource(user string) string {
	sum := sha256.Sum256([]byte(user))
	return "user:" + hex.EncodeToString(sum[:12])
}

// consentPage serves GET consent?user_code=…. A signed-assertion Brand's
// User goes to the Brand's login (which posts back here); otherwise the
// User must be signed in at the Brand. Without a code the page asks for
// one (the verification_uri of RFC 8628 §3.3), except after a step-up
// (step_up=…), when no code exists yet and the page says what comes next.
func (s *Service) consentPage(w http.ResponseWriter, r *http.Request, x *exchange, c *call) {
	b, ok := s.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	q := r.URL.Query()
	code := q.Get("user_code")
	if b.signed() {
		http.Redirect(w, r, b.loginLink(code), http.StatusSeeOther)
		return
	}
	user, ok := s.brandUser(w, r, x, c.brandID)
	if !ok {
		return
	}
	switch {
	case code == "" && q.Get("step_up") != "":
		s.pages.render(w, http.StatusOK, "stepup", view{Title: "Connect your assistant", User: user, Back: b.connectedURL()})
	case code == "":
		s.pages.render(w, http.StatusOK, "code", view{Title: "Connect your assistant", User: user, Action: b.consentURL()})
	default:
		s.showConsent(w, r, b, user, code, http.StatusOK, "", true)
	}
}

// showConsent describes the pending authorization and renders the page,
// or the page that says why it cannot be decided.
//
// maySkip: when the Brand skips consent and a grant of this User to this
// PA covers the request already (covered_by_grant), it is approved with
// every requested scope at once, without the page.
func (s *Service) showConsent(w http.ResponseWriter, r *http.Request, b brandPages, user, code string, status int, problem string, maySkip bool) {
	req := &pactv1.DescribeConsentRequest{BrandId: b.id, UserCode: code, Source: guessSource(user)}
	if maySkip {
		req.BrandUser = user
	}
	d, err := s.d.Delegation.DescribeConsent(r.Context(), req)
	if err != nil {
		s.consentError(w, r, b, user, err)
		return
	}
	if d.GetCoveredByGrant() {
		// The delegation service checks the cover again, grants what was
		// requested and never past the covering grant's expiry.
		res, err := s.d.Delegation.ApproveConsent(r.Context(), &pactv1.ApproveConsentRequest{
			BrandId: b.id, UserCode: code, BrandUser: user, SkipConsent: true, Source: guessSource(user),
		})
		if err != nil {
			s.consentError(w, r, b, user, err)
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
		Expires: d.GetExpiresAt().AsTime().UTC().Format("15:04 MST"), CSRF: s.pages.csrf(b.id, user, "consent "+d.GetUserCode()),
	}
	v.Scopes = describedScopes(d)
	s.pages.render(w, status, "consent", v)
}

// describedScopes are the consent page's scopes in the Brand's words, each
// with the words of the authorization_details entries that need it (PACT
// §5.7).
func describedScopes(d *pactv1.DescribeConsentResponse) []scopeView {
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
func (s *Service) consentError(w http.ResponseWriter, r *http.Request, b brandPages, user string, err error) {
	v := view{Title: "Connect your assistant", User: user, Action: b.consentURL()}
	status := http.StatusBadRequest
	switch codeOf(err) {
	case codeNotFound, codeInvalidArgument:
		v.Error, status = "This code is unknown. Check the code your assistant shows and type it again.", http.StatusNotFound
	case codeFailedPrecondition:
		v.Error = "This request was already decided or has expired. Ask your assistant to start again."
	case codeResourceExhausted:
		v.Error, status = "Too many unknown codes were tried. Wait a few minutes, then try again.", http.StatusTooManyRequests
	default:
		s.d.Logger.ErrorContext(r.Context(), "consent", slog.String("error", err.Error()))
		v.Error, status = "Something went wrong on our side. Try again later.", http.StatusInternalServerError
	}
	s.pages.render(w, status, "code", v)
}

// decide serves POST consent/decision: Allow grants the checked scopes;
// Deny refuses. The page showed the code to compare with the assistant's
// (RFC 8628 §5.4), so Allow is the User's confirmation that they match; no
// code is typed again. A form with a consent session is a signed-assertion
// Brand's (decideSigned).
func (s *Service) decide(w http.ResponseWriter, r *http.Request, x *exchange, c *call) {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		s.forbidden(w, "")
		return
	}
	b, ok := s.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if b.signed() {
		s.decideSigned(w, r, b)
		return
	}
	if !x.signsInUsers {
		bare(w, http.StatusNotFound)
		return
	}
	user, f, ok := s.form(w, r, x, c.brandID)
	if !ok {
		return
	}
	code := f.Get("user_code")
	if !s.pages.checkCSRF(f.Get("csrf"), c.brandID, user, "consent "+code) {
		s.forbidden(w, user)
		return
	}
	var err error
	outcome := "denied"
	switch f.Get("decision") {
	case "deny":
		_, err = s.d.Delegation.DenyConsent(r.Context(), &pactv1.DenyConsentRequest{BrandId: c.brandID, UserCode: code, Source: guessSource(user)})
	case "allow":
		var res *pactv1.ApproveConsentResponse
		res, err = s.d.Delegation.ApproveConsent(r.Context(), &pactv1.ApproveConsentRequest{
			BrandId: c.brandID, UserCode: code, BrandUser: user, Scopes: f["scope"], Source: guessSource(user),
		})
		if res.GetGrantId() != "" {
			outcome = "approved"
		}
	default:
		s.pages.render(w, http.StatusBadRequest, "message", view{Title: "Choose Allow or Deny", User: user})
		return
	}
	if err != nil {
		s.consentError(w, r, b, user, err)
		return
	}
	http.Redirect(w, r, "../connected?status="+outcome, http.StatusSeeOther)
}

// form reads a page's POST form (parseForm) from a signed-in User. A
// request another site started is refused before anything is read.
func (s *Service) form(w http.ResponseWriter, r *http.Request, x *exchange, brandID string) (string, url.Values, bool) {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		s.forbidden(w, x.brandUser)
		return "", nil, false
	}
	user, ok := s.brandUser(w, r, x, brandID)
	if !ok {
		return "", nil, false
	}
	if status := parseForm(w, r); status != 0 {
		s.pages.render(w, status, "message", view{Title: "Bad request", User: user, Error: formProblem[status]})
		return "", nil, false
	}
	return user, r.PostForm, true
}

// maxFormBytes bounds the body of a page's form.
const maxFormBytes = 16 << 10

// parseForm reads a page's POST form (at most maxFormBytes) into
// r.PostForm. It returns 0, or the status to refuse it with: 413 past the
// bound, 400 when it cannot be read; either way the connection is closed
// after the answer, so no rest of a body is ever read as a request.
func parseForm(w http.ResponseWriter, r *http.Request) int {
	r.Body = http.MaxBytesReader(nil, r.Body, maxFormBytes)
	err := r.ParseForm()
	if err == nil {
		return 0
	}
	w.Header().Set("Connection", "close")
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// formProblem is what a page says about a form parseForm refused.
var formProblem = map[int]string{
	http.StatusBadRequest:            "The form could not be read.",
	http.StatusRequestEntityTooLarge: "The form is too large.",
}

func (s *Service) forbidden(w http.ResponseWriter, user string) {
	s.pages.render(w, http.StatusForbidden, "message", view{Title: "Please try again", User: user,
		Error: "This form has expired or was not sent from this site. Go back, reload the page and try again."})
}
