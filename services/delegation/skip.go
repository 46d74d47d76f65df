package delegation

import (
	"context"
	"slices"
	"time"

	"pactd/db"
	"pactd/internal/authzdetails"
)

// maxSkipGrants bounds how many of a User's grants a consent skip reads.
const maxSkipGrants = 500

// coveringGrant reports whether a live grant of brandUser to the PA of d
// (same agent and client_id) at Brand b already covers everything d
// requests, when the Brand skips consent for such requests
// (skip_consent_when_granted). It never errs towards skipping: anything it
// cannot read is "not covered".
func (s *Service) coveringGrant(ctx context.Context, b db.Brand, d db.DeviceAuthorization, brandUser string, now time.Time) (bool, error) {
	if !b.Delegation.SkipConsent || brandUser == "" {
		return false, nil
	}
	before := ""
	for read := 0; read < maxSkipGrants; {
		page, err := s.d.Store.ListGrants(ctx, b.ID, brandUser, before, 100)
		if err != nil {
			return false, err
		}
		for _, g := range page {
			if g.AgentID == d.AgentID && g.ClientID == d.ClientID && g.RevokeTime.IsZero() && now.Before(g.ExpireTime) &&
				covers(b.Delegation.AuthorizationDetailsTypes, g, d) {
				return true, nil
			}
		}
		if len(page) < 100 {
			return false, nil
		}
		read += len(page)
		before = page[len(page)-1].ID
	}
	return false, nil
}

// covers reports whether grant g covers request d: every requested scope
// is granted, and for each requested scope the grant restricts with
// authorization_details, the request restricts it too, to entries the
// grant holds each exactly. A scope the grant holds unrestricted covers any
// request of it. Entries of a type the Brand no longer declares cannot be
// judged: not covered.
func covers(types []authzdetails.Type, g db.Grant, d db.DeviceAuthorization) bool {
	for _, sc := range d.Scopes {
		if !slices.Contains(g.Scopes, sc) {
			return false
		}
	}
	granted, err := authzdetails.Decode(g.AuthorizationDetails)
	if err != nil {
		return false
	}
	requested, err := authzdetails.Decode(d.AuthorizationDetails)
	if err != nil {
		return false
	}
	restricted := map[string]map[string]bool{} // scope → the grant's entries of it
	for _, e := range granted {
		t := authzdetails.Find(types, e.Type)
		if t == nil {
			return false
		}
		if restricted[t.Scope] == nil {
			restricted[t.Scope] = map[string]bool{}
		}
		restricted[t.Scope][e.Canonical()] = true
	}
	asked := map[string]bool{} // scopes the request restricts
	for _, e := range requested {
		t := authzdetails.Find(types, e.Type)
		if t == nil {
			return false
		}
		asked[t.Scope] = true
		if held, ok := restricted[t.Scope]; ok && !held[e.Canonical()] {
			return false
		}
	}
	for _, sc := range d.Scopes {
		if restricted[sc] != nil && !asked[sc] {
			return false // the request asks the scope unrestricted; the grant is bound
		}
	}
	return true
}
