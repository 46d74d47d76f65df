package console

import (
	"net/http"
	"net/url"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// grantQuery is the grant search: a Brand, a User at it, a PA.
type grantQuery struct {
	Brand, User, Agent string
}

func grantQueryOf(v url.Values) grantQuery {
	return grantQuery{Brand: v.Get("brand"), User: v.Get("user"), Agent: v.Get("agent")}
}

// Empty reports whether nothing was asked.
func (q grantQuery) Empty() bool { return q == grantQuery{} }

// values is the query as URL parameters.
func (q grantQuery) values() url.Values {
	v := url.Values{}
	for k, x := range map[string]string{"brand": q.Brand, "user": q.User, "agent": q.Agent} {
		if x != "" {
			v.Set(k, x)
		}
	}
	return v
}

// grantListData is the grants page: the search and one page of results.
type grantListData struct {
	Query  grantQuery
	Grants []*pactv1.Grant
	// Searched is whether a search ran (and Grants is its answer).
	Searched bool
	// Next is the URL of the next page, "" on the last.
	Next string
	// Now tells live grants from expired ones.
	Now time.Time
}

// State is a grant's state at Now: live, expired or revoked.
func (d grantListData) State(g *pactv1.Grant) string {
	switch {
	case g.GetRevokeTime() != nil:
		return "revoked"
	case !d.Now.Before(g.GetExpireTime().AsTime()):
		return "expired"
	}
	return "live"
}

// RevokeURL is the confirmation page of a grant in the results.
func (d grantListData) RevokeURL(g *pactv1.Grant) string {
	v := url.Values{"brand": {g.GetBrandId()}, "user": {g.GetBrandUser()}, "agent": {g.GetAgentId()}, "grant": {g.GetGrantId()}}
	return "/grants/revoke?" + v.Encode()
}

// grantList is DelegationService.FindGrants with the page's filters.
func (c *Console) grantList(w http.ResponseWriter, r *http.Request, s session) {
	q := grantQueryOf(r.URL.Query())
	d := grantListData{Query: q, Now: c.d.Now()}
	status, msg := http.StatusOK, ""
	if !q.Empty() {
		res, err := c.d.Delegation.FindGrants(s.ctx, &pactv1.FindGrantsRequest{BrandId: q.Brand, BrandUser: q.User, AgentId: q.Agent,
			Page: &pactv1.PageRequest{PageSize: listPage, PageToken: r.URL.Query().Get("page")}})
		if err != nil {
			status, msg = reason(err)
		} else {
			d.Searched, d.Grants = true, res.GetGrants()
			if n := res.GetNextPageToken(); n != "" {
				v := q.values()
				v.Set("page", n)
				d.Next = "/grants?" + v.Encode()
			}
		}
	}
	c.render(w, r, status, "grants", view{Title: "Grants", CSRF: s.csrf, Error: msg, Data: d})
}

// revokeData is the revoke confirmation: the grant, its scopes in its
// Brand's words, and where to go back to.
type revokeData struct {
	Grant  *pactv1.Grant
	Brand  *pactv1.Brand
	Scopes []*pactv1.Scope
	Back   string
}

// maxRevokePages bounds the search for the grant a confirmation names
// (one User's grants to one PA at one Brand).
const maxRevokePages = 20

// findGrant finds the grant named by the query and id through FindGrants.
func (c *Console) findGrant(s session, q grantQuery, id string) (*pactv1.Grant, error) {
	tok := ""
	for range maxRevokePages {
		res, err := c.d.Delegation.FindGrants(s.ctx, &pactv1.FindGrantsRequest{BrandId: q.Brand, BrandUser: q.User, AgentId: q.Agent,
			Page: &pactv1.PageRequest{PageSize: 500, PageToken: tok}})
		if err != nil {
			return nil, err
		}
		for _, g := range res.GetGrants() {
			if g.GetGrantId() == id {
				return g, nil
			}
		}
		if tok = res.GetNextPageToken(); tok == "" {
			break
		}
	}
	return nil, nil
}

// confirmRevoke names what a revocation takes away before it happens.
func (c *Console) confirmRevoke(w http.ResponseWriter, r *http.Request, s session) {
	q, id := grantQueryOf(r.URL.Query()), r.URL.Query().Get("grant")
	back := "/grants?" + q.values().Encode()
	g, err := c.findGrant(s, q, id)
	if err != nil || g == nil {
		status, msg := http.StatusNotFound, "Refused: there is no such grant among this search's results."
		if err != nil {
			status, msg = reason(err)
		}
		c.render(w, r, status, "message", view{Title: "Revoke a grant", CSRF: s.csrf, Error: msg})
		return
	}
	d := revokeData{Grant: g, Back: back}
	if b, err := c.d.Brands.GetBrand(s.ctx, &pactv1.GetBrandRequest{BrandId: g.GetBrandId()}); err == nil {
		d.Brand = b.GetBrand()
	}
	words := map[string]string{}
	for _, sc := range d.Brand.GetDelegation().GetScopes() {
		words[sc.GetId()] = sc.GetDescription()
	}
	for _, id := range g.GetScopes() {
		d.Scopes = append(d.Scopes, &pactv1.Scope{Id: id, Description: words[id]})
	}
	c.render(w, r, http.StatusOK, "revoke", view{Title: "Revoke this grant?", CSRF: s.csrf, Data: d})
}

// revokeGrant is DelegationService.RevokeGrant.
func (c *Console) revokeGrant(w http.ResponseWriter, r *http.Request, s session) {
	f := r.PostForm
	req := &pactv1.RevokeGrantRequest{BrandId: f.Get("brand"), GrantId: f.Get("grant"), BrandUser: f.Get("user")}
	if _, err := c.d.Delegation.RevokeGrant(s.ctx, req); err != nil {
		status, msg := reason(err)
		c.render(w, r, status, "message", view{Title: "Revoke a grant", CSRF: s.csrf, Error: msg})
		return
	}
	done(w, r, "/grants?"+grantQueryOf(f).values().Encode(), "revoked")
}
