// Package skip is the consent-skipping rule of the delegation service
// (DelegationSettings.skip_consent_when_granted): which live grant, if
// any, already covers everything a device authorization requests. It never
// errs towards skipping.
package skip

import (
	"context"
	"slices"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/services/delegation/base"
)

// Store is what the rule reads: a Brand user's grants, newest first.
type Store interface {
	ListGrants(ctx context.Context, brandID, brandUser, beforeID string, limit int) ([]db.Grant, error)
}

// maxSkipGrants bounds how many of a User's grants a consent skip reads.
const maxSkipGrants = 500

// CoveringGrant reports whether a live grant of brandUser to the PA of d
// (same agent and client_id) at Brand b already covers everything d
// requests, when the Brand skips consent for such requests
// (skip_consent_when_granted). It never errs towards skipping: anything it
// cannot read is "not covered".
//
// It returns the covering grant that expires last; a grant made by the
// skip expires no later than it, so skipping never extends a PA's access
// in time.
func CoveringGrant(ctx context.Context, store Store, b db.Brand, d db.DeviceAuthorization, brandUser string, now time.Time) (db.Grant, bool, error) {
	if !b.Delegation.SkipConsent || brandUser == "" {
		return db.Grant{}, false, nil
	}
	var best db.Grant
	found := false
	before := ""
	for read := 0; read < maxSkipGrants; {
		page, err := store.ListGrants(ctx, b.ID, brandUser, before, 100)
		if err != nil {
			return db.Grant{}, false, err
		}
		for _, g := range page {
			if g.AgentID == d.AgentID && g.ClientID == d.ClientID && g.RevokeTime.IsZero() && now.Before(g.ExpireTime) &&
				covers(g, d) && (!found || g.ExpireTime.After(best.ExpireTime)) {
				best, found = g, true
			}
		}
		if len(page) < 100 {
			break
		}
		read += len(page)
		before = page[len(page)-1].ID
	}
	return best, found, nil
}

// covers reports whether grant g covers request d: every requested scope
// is granted, and for each requested scope the grant restricts with
// authorization_details, the request restricts it too, to entries the
// grant holds each exactly. A scope the grant holds unrestricted covers any
// request of it.
//
// Each entry counts under the scope it was accepted under (recorded with
// it), on both sides, never under the Brand's current mapping: a Brand
// that moved a type from scope A to B after the grant leaves the grant's
// A restricted and its B as it was. An entry whose scope is unknown (a row
// from before scopes were recorded that the migration could not place), or
// recorded scopes that do not match the entries, cannot be judged: not
// covered.
func covers(g db.Grant, d db.DeviceAuthorization) bool {
	for _, sc := range d.Scopes {
		if !slices.Contains(g.Scopes, sc) {
			return false
		}
	}
	granted, err := base.StoredEntries(g.AuthorizationDetails, g.AuthorizationDetailsScopes)
	if err != nil {
		return false
	}
	requested, err := base.StoredEntries(d.AuthorizationDetails, d.AuthorizationDetailsScopes)
	if err != nil {
		return false
	}
	restricted := map[string]map[string]bool{} // scope → the grant's entries of it
	for _, e := range granted {
		if e.Scope == db.EntryScopeUnknown {
			return false
		}
		if restricted[e.Scope] == nil {
			restricted[e.Scope] = map[string]bool{}
		}
		restricted[e.Scope][e.Canonical()] = true
	}
	asked := map[string]bool{} // scopes the request restricts
	for _, e := range requested {
		if e.Scope == db.EntryScopeUnknown {
			return false
		}
		asked[e.Scope] = true
		if held, ok := restricted[e.Scope]; ok && !held[e.Canonical()] {
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
