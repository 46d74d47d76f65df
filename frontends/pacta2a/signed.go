package pacta2a

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// The consent pages of a Brand in BRAND_LOGIN_MODE_SIGNED_ASSERTION keep
// no state at the frontend and need no cookie: the Brand's login (on the
// Brand's origin) posts its signed assertion to the consent URL, pactd
// verifies it (BeginConsent) and hands back a consent session, the page
// carries that session in its decision form, and the decision passes it
// to pactd. Every form action is absolute, under the interface URL pactd
// names.

// brandPages is what the pages need to know of a Brand, from pactd.
type brandPages struct {
	id           string
	interfaceURL string
	mode         pactv1.BrandLoginMode
	verification string            // the Brand login link without a user code
	name         string            // the Brand's display name (the card's name)
	scopes       map[string]string // the card's scopes: id to the Brand's description
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

// brandPages asks pactd about the Brand of a page; an unknown Brand is a
// 404 (a page for browsers, see notFound), one without delegation a 404
// page.
func (h *Handler) brandPages(w http.ResponseWriter, r *http.Request, brandID string) (brandPages, bool) {
	res, err := h.brands.GetAgentCard(r.Context(), &pactv1.GetAgentCardRequest{BrandId: brandID})
	switch {
	case connect.CodeOf(err) == connect.CodeNotFound:
		h.notFound(w, r, brandID)
		return brandPages{}, false
	case err != nil:
		h.cfg.Logger.ErrorContext(r.Context(), "get agent card", slog.String("error", err.Error()))
		h.pages.render(w, http.StatusInternalServerError, "message", view{Title: "Connect your assistant",
			Error: "Something went wrong on our side. Try again later."})
		return brandPages{}, false
	case res.GetLoginMode() == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_UNSPECIFIED:
		h.pages.render(w, http.StatusNotFound, "message", view{Title: "Connect your assistant",
			Error: "This Brand does not let assistants act for you."})
		return brandPages{}, false
	}
	name, scopes := cardFacts(res.GetCardJson())
	if name == "" {
		name = brandID
	}
	return brandPages{id: brandID, interfaceURL: res.GetInterfaceUrl(), mode: res.GetLoginMode(), verification: res.GetVerificationUri(),
		name: name, scopes: scopes}, true
}

// beginConsent serves POST consent from a signed-assertion Brand's login:
// one form field, assertion. pactd verifies it and uses it up; the page
// it renders carries the consent session. The post comes from the Brand's
// origin, so it is cross-site by design: the assertion is its credential.
func (h *Handler) beginConsent(w http.ResponseWriter, r *http.Request, c *call) {
	b, ok := h.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if !b.signed() {
		h.pages.render(w, http.StatusBadRequest, "message", view{Title: "Connect your assistant",
			Error: "This Brand's sign-in does not post here. Start again from your assistant."})
		return
	}
	status := parseForm(w, r)
	if status == 0 && r.PostForm.Get("assertion") == "" {
		status = http.StatusBadRequest
	}
	if status != 0 {
		h.pages.render(w, status, "message", view{Title: "Connect your assistant",
			Error: "The sign-in could not be read. Start again from your assistant."})
		return
	}
	res, err := h.deleg.BeginConsent(r.Context(), &pactv1.BeginConsentRequest{
		BrandId: c.brandID, BrandAssertion: r.PostForm.Get("assertion"), Source: clientSource(r),
	})
	if err != nil {
		h.signedError(w, r, err)
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
	v.Scopes = scopeViews(d)
	h.pages.render(w, http.StatusOK, "consent", v)
}

// decideSigned serves a signed-assertion Brand's decision: the form's
// session (its only state and its anti-forgery token), decision and
// scopes. It answers 303 to the connected page with the outcome.
func (h *Handler) decideSigned(w http.ResponseWriter, r *http.Request, b brandPages) {
	switch status := parseForm(w, r); {
	case status == http.StatusRequestEntityTooLarge:
		h.pages.render(w, status, "message", view{Title: "Bad request", Error: formProblem[status]})
		return
	case status != 0, r.PostForm.Get("session") == "":
		h.forbidden(w, "")
		return
	}
	f := r.PostForm
	var client, granted string
	outcome := "denied"
	switch f.Get("decision") {
	case "allow":
		res, err := h.deleg.ApproveConsent(r.Context(), &pactv1.ApproveConsentRequest{
			BrandId: b.id, ConsentSession: f.Get("session"), Scopes: f["scope"], Source: clientSource(r),
		})
		if err != nil {
			h.signedError(w, r, err)
			return
		}
		client = res.GetClientId()
		if res.GetGrantId() != "" {
			outcome, granted = "approved", strings.Join(res.GetScopes(), " ")
		}
	case "deny":
		res, err := h.deleg.DenyConsent(r.Context(), &pactv1.DenyConsentRequest{BrandId: b.id, ConsentSession: f.Get("session"), Source: clientSource(r)})
		if err != nil {
			h.signedError(w, r, err)
			return
		}
		client = res.GetClientId()
	default:
		h.pages.render(w, http.StatusBadRequest, "message", view{Title: "Choose Allow or Deny"})
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
func (h *Handler) connectedSigned(w http.ResponseWriter, r *http.Request, b brandPages) {
	q := r.URL.Query()
	v := view{Title: "Connected assistants at " + b.name, Brand: b.name, Signed: true, Status: statusText[q.Get("status")],
		Back: b.connectedURL()}
	if sc := q.Get("scope"); q.Get("status") == "approved" && len(sc) <= 2048 && b.scopeList(sc) {
		// Only when it lists the Brand's scopes: no free text on our page.
		v.Granted = b.scopeViews(strings.Split(sc, " "), nil)
	}
	h.pages.render(w, http.StatusOK, "connected", v)
}

// signedError renders why pactd refused an assertion or a consent session
// (the ErrorInfo reason names it) and changes nothing.
func (h *Handler) signedError(w http.ResponseWriter, r *http.Request, err error) {
	v := view{Title: "Connect your assistant"}
	status := http.StatusBadRequest
	switch reason := errorReason(err); {
	case strings.HasSuffix(reason, "_REPLAYED"):
		v.Error = "This sign-in was used already. Start again from your assistant."
	case strings.HasSuffix(reason, "_NOT_PENDING"):
		v.Error = "This request was already decided or has expired. Ask your assistant to start again."
	case strings.HasSuffix(reason, "_EXPIRED"), strings.HasSuffix(reason, "_TOO_OLD"):
		v.Error = "This page has expired. Start again from your assistant."
	case connect.CodeOf(err) == connect.CodeFailedPrecondition, connect.CodeOf(err) == connect.CodeInvalidArgument:
		v.Error, status = "This sign-in or form could not be verified. Start again from your assistant.", http.StatusForbidden
	case connect.CodeOf(err) == connect.CodeNotFound:
		v.Error, status = "This code is unknown. Start again from your assistant.", http.StatusNotFound
	case connect.CodeOf(err) == connect.CodeResourceExhausted:
		v.Error, status = "Too many unknown codes were tried. Wait a few minutes, then try again.", http.StatusTooManyRequests
	case connect.CodeOf(err) == connect.CodeUnavailable:
		v.Error, status = "The sign-in cannot be checked right now. Try again in a minute.", http.StatusServiceUnavailable
	default:
		h.cfg.Logger.ErrorContext(r.Context(), "consent", slog.String("error", err.Error()))
		v.Error, status = "Something went wrong on our side. Try again later.", http.StatusInternalServerError
	}
	h.pages.render(w, status, "message", v)
}

// errorReason is the google.rpc.ErrorInfo reason of a pactd error, or "".
func errorReason(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, d := range ce.Details() {
		if m, derr := d.Value(); derr == nil {
			if info, ok := m.(*errdetails.ErrorInfo); ok {
				return info.GetReason()
			}
		}
	}
	return ""
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

// scopeList reports whether s is 1 to 50 of the Brand's scope ids
// separated by single spaces, as the decision's redirect writes them.
func (b brandPages) scopeList(s string) bool {
	ids := strings.Split(s, " ")
	if len(ids) > 50 {
		return false
	}
	for _, id := range ids {
		if _, ok := b.scopes[id]; !ok {
			return false
		}
	}
	return true
}

// cardScopes are the scopes of an Agent Card's userDelegation scheme: id
// to description.
func cardScopes(card string) map[string]string {
	_, scopes := cardFacts(card)
	return scopes
}

// cardFacts are an Agent Card's name (the Brand's display name) and the
// scopes of its userDelegation scheme.
func cardFacts(card string) (string, map[string]string) {
	var c struct {
		Name            string `json:"name"`
		SecuritySchemes struct {
			UserDelegation struct {
				OAuth2 struct {
					Flows struct {
						DeviceCode struct {
							Scopes map[string]string `json:"scopes"`
						} `json:"deviceCode"`
					} `json:"flows"`
				} `json:"oauth2SecurityScheme"`
			} `json:"userDelegation"`
		} `json:"securitySchemes"`
	}
	if json.Unmarshal([]byte(card), &c) != nil {
		return "", map[string]string{}
	}
	out := c.SecuritySchemes.UserDelegation.OAuth2.Flows.DeviceCode.Scopes
	if out == nil {
		out = map[string]string{}
	}
	return c.Name, out
}
