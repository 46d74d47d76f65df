package pacta2a

import (
	"net/http"
	"net/url"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

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
func (h *Handler) beginConnected(w http.ResponseWriter, r *http.Request, c *call) {
	b, ok := h.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if !b.signed() {
		h.pages.render(w, http.StatusBadRequest, "message", view{Title: "Connected assistants",
			Error: "This Brand's sign-in does not post here. Open your connected assistants again."})
		return
	}
	status := parseForm(w, r)
	assertion, session := r.PostForm.Get("assertion"), r.PostForm.Get("session")
	if status == 0 && (assertion == "") == (session == "") {
		status = http.StatusBadRequest
	}
	if status != 0 {
		h.pages.render(w, status, "message", view{Title: "Connected assistants",
			Error: "The sign-in could not be read. Open your connected assistants again."})
		return
	}
	req := &pactv1.BeginConnectedRequest{BrandId: c.brandID, Source: clientSource(r)}
	if assertion != "" {
		req.BrandAssertion = assertion
	} else {
		req.ConnectedSession = session
	}
	res, err := h.deleg.BeginConnected(r.Context(), req)
	if err != nil {
		h.signedError(w, r, err)
		return
	}
	h.renderSignedConnected(w, b, res.GetBrandUser(), res.GetConnectedSession(), res.GetGrants(), "")
}

// renderSignedConnected renders the connected page of a signed-assertion
// Brand's User: the shared template, the revoke forms carrying session.
func (h *Handler) renderSignedConnected(w http.ResponseWriter, b brandPages, user, session string, grants []*pactv1.Grant, status string) {
	h.pages.render(w, http.StatusOK, "connected", view{Title: "Connected assistants at " + b.name, Brand: b.name, User: user,
		Action: b.connectedURL() + "/revoke", Agents: groupGrants(b, grants, time.Now()), Session: session, Status: status})
}

// revokeAny serves POST connected/revoke for either login mode.
func (h *Handler) revokeAny(w http.ResponseWriter, r *http.Request, c *call) {
	b, ok := h.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	switch {
	case b.signed():
		h.revokeSigned(w, r, b)
	case h.cfg.Sessions == nil:
		h.notFound(w, r, "")
	default:
		h.revoke(w, r, c)
	}
}

// revokeSigned serves a signed-assertion Brand's revoke form: without
// confirm, the confirmation naming what the PA loses (pactd lists the
// grants for the session); with confirm, RevokeConnected and the page
// after it, naming what was revoked.
func (h *Handler) revokeSigned(w http.ResponseWriter, r *http.Request, b brandPages) {
	switch status := parseForm(w, r); {
	case status == http.StatusRequestEntityTooLarge:
		h.pages.render(w, status, "message", view{Title: "Bad request", Error: formProblem[status]})
		return
	case status != 0, r.PostForm.Get("session") == "", r.PostForm.Get("agent_id") == "":
		h.forbidden(w, "")
		return
	}
	f := r.PostForm
	session, id := f.Get("session"), f.Get("agent_id")
	if f.Get("confirm") == "" {
		res, err := h.deleg.BeginConnected(r.Context(), &pactv1.BeginConnectedRequest{BrandId: b.id, ConnectedSession: session, Source: clientSource(r)})
		if err != nil {
			h.signedError(w, r, err)
			return
		}
		for _, a := range groupGrants(b, res.GetGrants(), time.Now()) {
			if a.ID == id && a.Live {
				h.pages.render(w, http.StatusOK, "revoke", view{Title: "Revoke " + a.Name + "?", Brand: b.name, User: res.GetBrandUser(),
					Revoke: &a, Action: b.connectedURL() + "/revoke", Back: b.connectedURL(), Session: session})
				return
			}
		}
		h.pages.render(w, http.StatusNotFound, "message", view{Title: "Connected assistants", User: res.GetBrandUser(),
			Error: "This assistant has no access to revoke. Go back to your connected assistants."})
		return
	}
	res, err := h.deleg.RevokeConnected(r.Context(), &pactv1.RevokeConnectedRequest{BrandId: b.id, ConnectedSession: session, AgentId: id,
		Source: clientSource(r)})
	if err != nil {
		h.signedError(w, r, err)
		return
	}
	msg := "Access was revoked."
	agents := groupGrants(b, res.GetGrants(), time.Now())
	for _, a := range agents {
		if a.ID == id && !a.Live {
			msg = "Revoked: " + a.Name + " can no longer act for you here."
		}
	}
	h.renderSignedConnected(w, b, res.GetBrandUser(), session, res.GetGrants(), msg)
}
