package base

import (
	"errors"
	"slices"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/token/authzdetails"
)

// Resource-bound delegation (PACT §5.7, RFC 9396): the requested details
// are validated once, at the device authorization, and stored there in
// canonical JSON, each entry with the scope its type required then; consent
// shows them under that scope in pactd's words; the grant keeps those whose
// scope was granted, each still with its scope; the token response and the
// delegation token carry the grant's value unchanged, on every refresh.
//
// An entry's scope is fixed when the entry is accepted. A Brand may later
// move a type to another scope (UpdateBrand allows it) or remove it; that
// changes no stored entry: consent, approval, consent skipping and the
// connected page read the recorded scope, never the Brand's current
// mapping, so a Brand change can neither widen a grant nor drop a
// restriction the PA asked for. A request pending while the Brand changes
// is decided by the mapping it was validated under.

// ScopedEntry is a stored entry with the scope it was accepted under
// (db.EntryScopeUnknown when a row from before entries remembered their
// scope could not be backfilled).
type ScopedEntry struct {
	authzdetails.Entry
	// Scope is the scope it was accepted under.
	Scope string
}

// ErrDetailScopes: a row's recorded scopes do not align with its entries.
var ErrDetailScopes = errors.New("authorization_details: the recorded scopes do not match the entries")

// StoredEntries reads a row's details back with their recorded scopes.
func StoredEntries(canonical string, scopes []string) ([]ScopedEntry, error) {
	entries, err := authzdetails.Decode(canonical)
	if err != nil {
		return nil, err
	}
	if len(entries) != len(scopes) {
		return nil, ErrDetailScopes
	}
	out := make([]ScopedEntry, len(entries))
	for i, e := range entries {
		out[i] = ScopedEntry{Entry: e, Scope: scopes[i]}
	}
	return out, nil
}

// GrantDetails are the details a grant of these scopes keeps, with their
// scopes: the requested ones minus those recorded under a scope that was
// not granted (a declined scope drops its details with it). An entry whose
// scope is unknown is kept: dropping a restriction would widen the grant.
// Stored details that cannot be read back are an error: nothing is granted
// from them.
func GrantDetails(d db.DeviceAuthorization, granted []string) (string, []string, error) {
	entries, err := StoredEntries(d.AuthorizationDetails, d.AuthorizationDetailsScopes)
	if err != nil {
		return "", nil, err
	}
	var kept []authzdetails.Entry
	var scopes []string
	for _, e := range entries {
		if e.Scope != db.EntryScopeUnknown && !slices.Contains(granted, e.Scope) {
			continue
		}
		kept = append(kept, e.Entry)
		scopes = append(scopes, e.Scope)
	}
	return authzdetails.Encode(kept), scopes, nil
}

// ConsentDetails are stored details as the consent and connected pages
// show them: each under the scope it was accepted under, in the words of
// the Brand's current declaration of its type (its URI and members when
// the Brand no longer declares it).
func ConsentDetails(b db.Brand, canonical string, scopes []string) ([]*pactv1.ConsentAuthorizationDetail, error) {
	entries, err := StoredEntries(canonical, scopes)
	if err != nil {
		return nil, err
	}
	out := make([]*pactv1.ConsentAuthorizationDetail, 0, len(entries))
	for _, e := range entries {
		t := authzdetails.Find(b.Delegation.AuthorizationDetailsTypes, e.Type)
		out = append(out, &pactv1.ConsentAuthorizationDetail{Detail: authzdetails.Proto(e.Entry), Words: authzdetails.Words(t, e.Entry), Scope: e.Scope})
	}
	return out, nil
}
