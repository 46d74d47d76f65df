package frontdoor

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
)

// The consent pages of a Brand in BRAND_LOGIN_MODE_SIGNED_ASSERTION keep
// no state at the frontend and need no cookie: the Brand's login (on the
// Brand's origin) posts its signed assertion to the consent URL, pactd
// verifies it (BeginConsent) and hands back a consent session, the page
// carries that session in its decision form, and the decision passes it
// to pactd. Every form action is absolute, under the interface URL pactd
// names.

// brandPages is what the pages need to know of a Brand.
type brandPages struct {
	id           string
	interfaceURL string
	mode         pactv1.BrandLoginMode
	verification string            // the Brand login link without a user code
	name         string            // the Brand's display name
	scopes       map[string]string // the Brand's scopes: id to its description
}

// scopeViews are scope ids in the Brand's words (the id itself when the
// card no longer lists it), each with the words of the entries under it.
func (b brandPages) scopeViews(ids []string, details []*pactv1.ConsentAuthorizationDetail) []scopeView {
	out := make([]scopeView, 0, len(ids))
	for _, id := range ids {
		sv := scopeView{ID: id, Description: b.scopes[id]}
		if sv.Description == "" {
			sv.Description = id
		}
		for _, d := range details {
			if d.GetScope() == id {
				sv.Details = append(sv.Details, d.GetWords())
			}
		}
		out = append(out, sv)
	}
	return out
}

// signed reports whether the Brand's login posts signed assertions.
func (b brandPages) signed() bool {
	return b.mode == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION
}

func (b brandPages) consentURL() string  { return b.interfaceURL + "/oauth/consent" }
func (b brandPages) decisionURL() string { return b.interfaceURL + "/oauth/consent/decision" }

// loginLink is the Brand login link; with a user code it returns to the
// consent URL with that code, as verification_uri_complete does.
func (b brandPages) loginLink(code string) string {
	u, err := url.Parse(b.verification)
	if err != nil || code == "" {
		return b.verification
	}
	q := u.Query()
	q.Set("return_to", b.consentURL()+"?user_code="+url.QueryEscape(code))
	u.RawQuery = q.Encode()
	return u.String()
}

// brandPages reads the Brand of a page: its links and login mode as its
// Agent Card has them, its name and scopes as the Brand defines them. An
// unknown Brand is a 404 (a page for browsers, see notFound), one without
// delegation a 404 page.
func (s *Service) brandPages(w http.ResponseWriter, r *http.Request, brandID string) (brandPages, bool) {
	res, err := s.d.Brands.GetAgentCard(r.Context(), &pactv1.GetAgentCardRequest{BrandId: brandID})
	var brand *pactv1.GetBrandResponse
	if err == nil {
		brand, err = s.d.Brands.GetBrand(r.Context(), &pactv1.GetBrandRequest{BrandId: brandID})
	}
	switch {
	case codeOf(err) == codeNotFound:
		s.notFound(w, r, brandID)
		return brandPages{}, false
	case err != nil:
		s.d.Logger.ErrorContext(r.Context(), "get brand", slog.String("error", err.Error()))
		s.pages.render(w, http.StatusInternalServerError, "message", view{Title: "Connect your assistant",
			Error: "Something went wrong on our side. Try again later."})
		return brandPages{}, false
	case res.GetLoginMode() == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_UNSPECIFIED:
		s.pages.render(w, http.StatusNotFound, "message", view{Title: "Connect your assistant",
			Error: "This Brand does not let assistants act for you."})
		return brandPages{}, false
	}
	b := brandPages{id: brandID, interfaceURL: res.GetInterfaceUrl(), mode: res.GetLoginMode(), verification: res.GetVerificationUri(),
		name: brand.GetBrand().GetDisplayName(), scopes: map[string]string{}}
	if b.name == "" {
		b.name = brandID
	}
	for _, sc := range brand.GetBrand().GetDelegation().GetScopes() {
		b.scopes[sc.GetId()] = sc.GetDescription()
	}
	return b, true
}

// beginConsent serves POST consent from a signed-assertion Brand's login:
// one form field, assertion. pactd verifies it and uses it up; the page
// it renders carries the consent session. The post comes from the Brand's
// origin, so it is cross-site by design: the assertion is its credential.
func (s *Service) beginConsent(w http.ResponseWriter, r *http.Request, _ *exchange, c *call) {
	b, ok := s.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if !b.signed() {
		s.pages.render(w, http.StatusBadRequest, "message", view{Title: "Connect your assistant",
			Error: "This Brand's sign-in does not post here. Start again from your assistant."})
		return
	}
	status := parseForm(w, r)
	if status == 0 && r.PostForm.Get("assertion") == "" {
		status = http.StatusBadRequest
	}
	if status != 0 {
		s.pages.render(w, status, "message", view{Title: "Connect your assistant",
			Error: "The sign-in could not be read. Start again from your assistant."})
		return
	}
	res, err := s.d.Delegation.BeginConsent(r.Context(), &pactv1.BeginConsentRequest{
		BrandId: c.brandID, BrandAssertion: r.PostForm.Get("assertion"), Source: clientSource(r),
	})
	if err != nil {
		s.signedError(w, r, err)
		return
	}
	if res.GetSkippedGrantId() != "" {
		// Consent skipped: a grant of this User to this PA covers the
		// request, and pactd approved it; answer as after an allow.
		http.Redirect(w, r, b.interfaceURL+"/oauth/connected?client="+url.QueryEscape(res.GetClientId())+
			"&status=approved&scope="+url.QueryEscape(strings.Join(res.GetGrantedScopes(), " ")), http.StatusSeeOther)
		return
	}
	d := res.GetConsent()
	v := view{
		Title: "Allow " + d.GetAgentDisplayName() + "?", User: res.GetBrandUser(), Email: res.GetEmail(),
		Agent: d.GetAgentDisplayName(), Origin: d.GetAgentOrigin(), Brand: d.GetBrandDisplayName(), Code: d.GetUserCode(),
		Expires: d.GetExpiresAt().AsTime().UTC().Format("15:04 MST"), Session: res.GetConsentSession(), Action: res.GetDecisionUrl(),
	}
	v.Scopes = describedScopes(d)
	s.pages.render(w, http.StatusOK, "consent", v)
}

// decideSigned serves a signed-assertion Brand's decision: the form's
// session (its only state and its anti-forgery token), decision and
// scopes. It answers 303 to the connected page with the outcome.
func (s *Service) decideSigned(w http.ResponseWriter, r *http.Request, b brandPages) {
	switch status := parseForm(w, r); {
	case status == http.StatusRequestEntityTooLarge:
		s.pages.render(w, status, "message", view{Title: "Bad request", Error: formProblem[status]})
		return
	case status != 0, r.PostForm.Get("session") == "":
		s.forbidden(w, "")
		return
	}
	f := r.PostForm
	var client, granted string
	outcome := "denied"
	switch f.Get("decision") {
	case "allow":
		res, err := s.d.Delegation.ApproveConsent(r.Context(), &pactv1.ApproveConsentRequest{
			BrandId: b.id, ConsentSession: f.Get("session"), Scopes: f["scope"], Source: clientSource(r),
		})
		if err != nil {
			s.signedError(w, r, err)
			return
		}
		client = res.GetClientId()
		if res.GetGrantId() != "" {
			outcome, granted = "approved", strings.Join(res.GetScopes(), " ")
		}
	case "deny":
		res, err := s.d.Delegation.DenyConsent(r.Context(), &pactv1.DenyConsentRequest{BrandId: b.id, ConsentSession: f.Get("session"), Source: clientSource(r)})
		if err != nil {
			s.signedError(w, r, err)
			return
		}
		client = res.GetClientId()
	default:
		s.pages.render(w, http.StatusBadRequest, "message", view{Title: "Choose Allow or Deny"})
		return
	}
	next := b.interfaceURL + "/oauth/connected?client=" + url.QueryEscape(client) + "&status=" + outcome
	if outcome == "approved" {
		next += "&scope=" + url.QueryEscape(granted)
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// connectedSigned answers the connected page of a signed-assertion Brand
// after a decision: the outcome the decision redirected with, and a link
// to the User's list (which needs the Brand's login: see
// signedconnected.go).
func (s *Service) connectedSigned(w http.ResponseWriter, r *http.Request, b brandPages) {
	q := r.URL.Query()
	v := view{Title: "Connected assistants at " + b.name, Brand: b.name, Signed: true, Status: statusText[q.Get("status")],
		Back: b.connectedURL()}
	if sc := q.Get("scope"); q.Get("status") == "approved" && len(sc) <= 2048 && b.scopeList(sc) {
		// Only when it lists the Brand's scopes: no free text on our page.
		v.Granted = b.scopeViews(strings.Split(sc, " "), nil)
	}
	s.pages.render(w, http.StatusOK, "connected", v)
}

// signedError renders why pactd refused an assertion or a consent session
// (the ErrorInfo reason names it) and changes nothing.
func (s *Service) signedError(w http.ResponseWriter, r *http.Request, err error) {
	v := view{Title: "Connect your assistant"}
	status := http.StatusBadRequest
	switch reason := rpcerr.Reason(err); {
	case strings.HasSuffix(reason, "_REPLAYED"):
		v.Error = "This sign-in was used already. Start again from your assistant."
	case strings.HasSuffix(reason, "_NOT_PENDING"):
		v.Error = "This request was already decided or has expired. Ask your assistant to start again."
	case strings.HasSuffix(reason, "_EXPIRED"), strings.HasSuffix(reason, "_TOO_OLD"):
		v.Error = "This page has expired. Start again from your assistant."
	case codeOf(err) == codeFailedPrecondition, codeOf(err) == codeInvalidArgument:
		v.Error, status = "This sign-in or form could not be verified. Start again from your assistant.", http.StatusForbidden
	case codeOf(err) == codeNotFound:
		v.Error, status = "This code is unknown. Start again from your assistant.", http.StatusNotFound
	case codeOf(err) == codeResourceExhausted:
		v.Error, status = "Too many unknown codes were tried. Wait a few minutes, then try again.", http.StatusTooManyRequests
	case codeOf(err) == codeUnavailable:
		v.Error, status = "The sign-in cannot be checked right now. Try again in a minute.", http.StatusServiceUnavailable
	default:
		s.d.Logger.ErrorContext(r.Context(), "consent", slog.String("error", err.Error()))
		v.Error, status = "Something went wrong on our side. Try again later.", http.StatusInternalServerError
	}
	s.pages.render(w, status, "message", v)
}

// clientSource names the browser's address to pactd's user-code guessing
// limits (hashed: printable, and no address in pactd's logs).
func clientSource(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	sum := sha256.Sum256([]byte(host))
	return "ip:" + hex.EncodeToString(sum[:12])
}

// scopeList reports whether s is one or more of the Brand's scope ids,
// each once, separated by single spaces, as the decision's redirect writes
// them.
func (b brandPages) scopeList(s string) bool {
	ids := strings.Split(s, " ")
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if _, ok := b.scopes[id]; !ok || seen[id] {
			return false
		}
		seen[id] = true
	}
	return true
}

// The connected page of a Brand in BRAND_LOGIN_MODE_SIGNED_ASSERTION works
// as its consent page does, with no cookie: GET connected sends the User
// to the Brand's login with return_to the connected URL; the login posts
// its signed assertion (aud the connected URL, no user_code) to the
// connected URL; pactd verifies and uses it up (BeginConnected) and
// answers the User's grants and a connected session, which the page's
// revoke forms carry in a hidden field (it is their only state and their
// anti-forgery token). Revoking confirms first (pactd relists the grants
// for the session) and then calls RevokeConnected.

// connectedURL is the Brand's connected page.
func (b brandPages) connectedURL() string { return b.interfaceURL + "/oauth/connected" }

// connectedLoginLink is the Brand login link that returns to the
// connected page.
func (b brandPages) connectedLoginLink() string {
	u, err := url.Parse(b.verification)
	if err != nil {
		return b.verification
	}
	q := u.Query()
	q.Set("return_to", b.connectedURL())
	u.RawQuery = q.Encode()
	return u.String()
}

// beginConnected serves POST connected: from the Brand's login, one form
// field, assertion (cross-site by design: the assertion is its
// credential); or, from the revoke confirmation's "Keep it", the session.
func (s *Service) beginConnected(w http.ResponseWriter, r *http.Request, _ *exchange, c *call) {
	b, ok := s.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if !b.signed() {
		s.pages.render(w, http.StatusBadRequest, "message", view{Title: "Connected assistants",
			Error: "This Brand's sign-in does not post here. Open your connected assistants again."})
		return
	}
	status := parseForm(w, r)
	assertion, session := r.PostForm.Get("assertion"), r.PostForm.Get("session")
	if status == 0 && (assertion == "") == (session == "") {
		status = http.StatusBadRequest
	}
	if status != 0 {
		s.pages.render(w, status, "message", view{Title: "Connected assistants",
			Error: "The sign-in could not be read. Open your connected assistants again."})
		return
	}
	req := &pactv1.BeginConnectedRequest{BrandId: c.brandID, Source: clientSource(r)}
	if assertion != "" {
		req.BrandAssertion = assertion
	} else {
		req.ConnectedSession = session
	}
	res, err := s.d.Delegation.BeginConnected(r.Context(), req)
	if err != nil {
		s.signedError(w, r, err)
		return
	}
	s.renderSignedConnected(w, b, res.GetBrandUser(), res.GetConnectedSession(), res.GetGrants(), "")
}

// renderSignedConnected renders the connected page of a signed-assertion
// Brand's User: the shared template, the revoke forms carrying session.
func (s *Service) renderSignedConnected(w http.ResponseWriter, b brandPages, user, session string, grants []*pactv1.Grant, status string) {
	s.pages.render(w, http.StatusOK, "connected", view{Title: "Connected assistants at " + b.name, Brand: b.name, User: user,
		Action: b.connectedURL() + "/revoke", Agents: groupGrants(b, grants, s.d.Now()), Session: session, Status: status})
}

// revokeSigned serves a signed-assertion Brand's revoke form: without
// confirm, the confirmation naming what the PA loses (pactd lists the
// grants for the session); with confirm, RevokeConnected and the page
// after it, naming what was revoked.
func (s *Service) revokeSigned(w http.ResponseWriter, r *http.Request, b brandPages) {
	switch status := parseForm(w, r); {
	case status == http.StatusRequestEntityTooLarge:
		s.pages.render(w, status, "message", view{Title: "Bad request", Error: formProblem[status]})
		return
	case status != 0, r.PostForm.Get("session") == "", r.PostForm.Get("agent_id") == "":
		s.forbidden(w, "")
		return
	}
	f := r.PostForm
	session, id := f.Get("session"), f.Get("agent_id")
	if f.Get("confirm") == "" {
		res, err := s.d.Delegation.BeginConnected(r.Context(), &pactv1.BeginConnectedRequest{BrandId: b.id, ConnectedSession: session, Source: clientSource(r)})
		if err != nil {
			s.signedError(w, r, err)
			return
		}
		for _, a := range groupGrants(b, res.GetGrants(), s.d.Now()) {
			if a.ID == id && a.Live {
				s.pages.render(w, http.StatusOK, "revoke", view{Title: "Revoke " + a.Name + "?", Brand: b.name, User: res.GetBrandUser(),
					Revoke: &a, Action: b.connectedURL() + "/revoke", Back: b.connectedURL(), Session: session})
				return
			}
		}
		s.pages.render(w, http.StatusNotFound, "message", view{Title: "Connected assistants", User: res.GetBrandUser(),
			Error: "This assistant has no access to revoke. Go back to your connected assistants."})
		return
	}
	res, err := s.d.Delegation.RevokeConnected(r.Context(), &pactv1.RevokeConnectedRequest{BrandId: b.id, ConnectedSession: session, AgentId: id,
		Source: clientSource(r)})
	if err != nil {
		s.signedError(w, r, err)
		return
	}
	msg := "Access was revoked."
	agents := groupGrants(b, res.GetGrants(), s.d.Now())
	for _, a := range agents {
		if a.ID == id && !a.Live {
			msg = "Revoked: " + a.Name + " can no longer act for you here."
		}
	}
	s.renderSignedConnected(w, b, res.GetBrandUser(), session, res.GetGrants(), msg)
}
