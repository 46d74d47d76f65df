package frontdoor

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// The connect codes the pages tell apart.
const (
	codeNotFound           = connect.CodeNotFound
	codeInvalidArgument    = connect.CodeInvalidArgument
	codeFailedPrecondition = connect.CodeFailedPrecondition
	codeResourceExhausted  = connect.CodeResourceExhausted
	codeUnavailable        = connect.CodeUnavailable
)

// connectedPage serves GET connected: the User's grants at the Brand, one
// entry per PA with its grants grouped, each live PA with a Revoke button.
func (s *Service) connectedPage(w http.ResponseWriter, r *http.Request, x *exchange, c *call) {
	b, ok := s.brandPages(w, r, c.brandID)
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
		s.connectedSigned(w, r, b)
		return
	}
	user, ok := s.brandUser(w, r, x, c.brandID)
	if !ok {
		return
	}
	agents, ok := s.userAgents(w, r, b, user)
	if !ok {
		return
	}
	q := r.URL.Query()
	v := view{Title: "Connected assistants at " + b.name, Brand: b.name, User: user, Action: b.interfaceURL + "/oauth/connected/revoke",
		Agents: agents, Status: statusText[q.Get("status")]}
	if q.Get("status") == "revoked" {
		// Name what was revoked, from the User's grants: never words from
		// the link.
		v.Status = "Access was revoked."
		for _, a := range agents {
			if a.ID == q.Get("agent_id") && !a.Live {
				v.Status = "Revoked: " + a.Name + " can no longer act for you here."
			}
		}
	}
	s.pages.render(w, http.StatusOK, "connected", v)
}

// maxGrantPages bounds how many pages of grants the connected page reads.
const maxGrantPages = 10

// userAgents lists the User's grants at the Brand grouped by PA, newest
// first; on a failure it renders the error page and reports false.
func (s *Service) userAgents(w http.ResponseWriter, r *http.Request, b brandPages, user string) ([]agentView, bool) {
	grants, err := s.listGrants(r, b.id, user)
	if err != nil {
		s.d.Logger.ErrorContext(r.Context(), "list grants", slog.String("error", err.Error()))
		s.pages.render(w, http.StatusInternalServerError, "message", view{Title: "Connected assistants", User: user,
			Error: "Your connected assistants cannot be shown right now. Try again later."})
		return nil, false
	}
	return groupGrants(b, grants, s.d.Now()), true
}

// listGrants reads the User's grants at the Brand, newest first, at most
// maxGrantPages pages of 500.
func (s *Service) listGrants(r *http.Request, brandID, user string) ([]*pactv1.Grant, error) {
	var grants []*pactv1.Grant
	page := &pactv1.PageRequest{PageSize: 500}
	for range maxGrantPages {
		res, err := s.d.Delegation.ListGrants(r.Context(), &pactv1.ListGrantsRequest{BrandId: brandID, BrandUser: user, Page: page})
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
// grant, with its live grants first. A PA's live grants never repeat a
// permission: a scope (with the same conditions) that a newer live grant
// holds is shown there only, and a live grant with nothing of its own
// left (a step-up's grant covers the one before it) is not listed at all.
// Each grant stays valid on its own until it expires or is revoked: the
// PA may still hold a token of the older one, and revoking the PA revokes
// them all.
func groupGrants(b brandPages, grants []*pactv1.Grant, now time.Time) []agentView {
	var out []agentView
	index := map[string]int{}
	ended := map[string]time.Time{}
	shown := map[string]map[string]bool{} // agent id -> permissions listed
	for _, g := range grants {
		i, seen := index[g.GetAgentId()]
		if !seen {
			i = len(out)
			index[g.GetAgentId()] = i
			out = append(out, agentView{ID: g.GetAgentId(), Name: g.GetAgentDisplayName()})
			shown[g.GetAgentId()] = map[string]bool{}
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
		a.Grants = slices.DeleteFunc(a.Grants, func(g grantView) bool { return g.Live && !newPermissions(&g, shown[a.ID]) })
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

// newPermissions drops from a live grant's scopes those already shown for
// its PA (newest grants come first) and reports whether any are left.
func newPermissions(g *grantView, shown map[string]bool) bool {
	g.Scopes = slices.DeleteFunc(g.Scopes, func(sv scopeView) bool {
		key := sv.ID + "\x00" + strings.Join(sv.Details, "\x00")
		if shown[key] {
			return true
		}
		shown[key] = true
		return false
	})
	return len(g.Scopes) > 0
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
func (s *Service) confirmRevoke(w http.ResponseWriter, r *http.Request, x *exchange, c *call) {
	b, ok := s.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	if b.signed() {
		// The signed-assertion confirmation is a POST carrying the session.
		http.Redirect(w, r, b.connectedURL(), http.StatusSeeOther)
		return
	}
	user, ok := s.brandUser(w, r, x, c.brandID)
	if !ok {
		return
	}
	agents, ok := s.userAgents(w, r, b, user)
	if !ok {
		return
	}
	id := r.URL.Query().Get("agent_id")
	for _, a := range agents {
		if a.ID == id && a.Live {
			s.pages.render(w, http.StatusOK, "revoke", view{Title: "Revoke " + a.Name + "?", Brand: b.name, User: user, Revoke: &a,
				Action: b.connectedURL() + "/revoke", Back: b.connectedURL(), CSRF: s.pages.csrf(c.brandID, user, "revoke "+id)})
			return
		}
	}
	s.pages.render(w, http.StatusNotFound, "message", view{Title: "Connected assistants", User: user,
		Error: "This assistant has no access to revoke. Go back to your connected assistants."})
}

// revokeAny serves POST connected/revoke for either login mode.
func (s *Service) revokeAny(w http.ResponseWriter, r *http.Request, x *exchange, c *call) {
	b, ok := s.brandPages(w, r, c.brandID)
	if !ok {
		return
	}
	switch {
	case b.signed():
		s.revokeSigned(w, r, b)
	case !x.signsInUsers:
		s.notFound(w, r, "")
	default:
		s.revoke(w, r, x, c)
	}
}

// revoke serves a trusted-frontend User's POST connected/revoke: it
// revokes every live grant of one PA to the User, then the connected page
// names what was revoked.
func (s *Service) revoke(w http.ResponseWriter, r *http.Request, x *exchange, c *call) {
	user, f, ok := s.form(w, r, x, c.brandID)
	if !ok {
		return
	}
	id := f.Get("agent_id")
	if !s.pages.checkCSRF(f.Get("csrf"), c.brandID, user, "revoke "+id) {
		s.forbidden(w, user)
		return
	}
	grants, err := s.listGrants(r, c.brandID, user)
	now := s.d.Now()
	for _, g := range grants {
		if err != nil {
			break
		}
		if g.GetAgentId() == id && g.GetRevokeTime() == nil && now.Before(g.GetExpireTime().AsTime()) {
			_, err = s.d.Delegation.RevokeGrant(r.Context(), &pactv1.RevokeGrantRequest{BrandId: c.brandID, GrantId: g.GetGrantId(), BrandUser: user})
			if codeOf(err) == codeNotFound {
				err = nil // revoked meanwhile, or not this User's
			}
		}
	}
	if err != nil {
		s.d.Logger.ErrorContext(r.Context(), "revoke grant", slog.String("error", err.Error()))
		s.pages.render(w, http.StatusInternalServerError, "message", view{Title: "Connected assistants", User: user,
			Error: "Access could not be revoked right now. Try again later."})
		return
	}
	http.Redirect(w, r, "../connected?status=revoked&agent_id="+url.QueryEscape(id), http.StatusSeeOther)
}
