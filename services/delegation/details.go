package delegation

import (
	"errors"
	"slices"

	pactv1 "pactd/gen/pact/v1"
	"pactd/internal/oauthwire"

	"pactd/db"
	"pactd/internal/authzdetails"
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

// scopedEntry is a stored entry with the scope it was accepted under
// (db.EntryScopeUnknown when a row from before entries remembered their
// scope could not be backfilled).
type scopedEntry struct {
	authzdetails.Entry
	scope string
}

// errDetailScopes: a row's recorded scopes do not align with its entries.
var errDetailScopes = errors.New("authorization_details: the recorded scopes do not match the entries")

// storedEntries reads a row's details back with their recorded scopes.
func storedEntries(canonical string, scopes []string) ([]scopedEntry, error) {
	entries, err := authzdetails.Decode(canonical)
	if err != nil {
		return nil, err
	}
	if len(entries) != len(scopes) {
		return nil, errDetailScopes
	}
	out := make([]scopedEntry, len(entries))
	for i, e := range entries {
		out[i] = scopedEntry{Entry: e, scope: scopes[i]}
	}
	return out, nil
}

// requestDetails validates a device authorization's authorization_details
// (nil: the form has none) against the Brand's types and the requested
// scopes: the canonical JSON to store and the scope each entry's type
// requires now (to store with it), or the refusal to send and its reason
// (for the log, which never gets the PA's input).
func requestDetails(b db.Brand, raw *string, scopes []string) (string, []string, authzdetails.Reason, *pactv1.StartDeviceAuthorizationResponse) {
	if raw == nil {
		return "", nil, "", nil
	}
	types := b.Delegation.AuthorizationDetailsTypes
	if len(types) == 0 {
		return "", nil, authzdetails.ReasonUnknownType, refuseDevice(oauthwire.ErrInvalidAuthorizationDetails, "this Brand supports no authorization_details types")
	}
	entries, canonical, err := authzdetails.Parse(*raw, types, scopes)
	if err != nil {
		return "", nil, err.Reason, refuseDevice(oauthwire.ErrInvalidAuthorizationDetails, err.Description)
	}
	entryScopes := make([]string, len(entries))
	for i, e := range entries {
		entryScopes[i] = authzdetails.Find(types, e.Type).Scope // Parse accepted only declared types
	}
	return canonical, entryScopes, "", nil
}

// grantDetails are the details a grant of these scopes keeps, with their
// scopes: the requested ones minus those recorded under a scope that was
// not granted (a declined scope drops its details with it). An entry whose
// scope is unknown is kept: dropping a restriction would widen the grant.
// Stored details that cannot be read back are an error: nothing is granted
// from them.
func grantDetails(d db.DeviceAuthorization, granted []string) (string, []string, error) {
	entries, err := storedEntries(d.AuthorizationDetails, d.AuthorizationDetailsScopes)
	if err != nil {
		return "", nil, err
	}
	var kept []authzdetails.Entry
	var scopes []string
	for _, e := range entries {
		if e.scope != db.EntryScopeUnknown && !slices.Contains(granted, e.scope) {
			continue
		}
		kept = append(kept, e.Entry)
		scopes = append(scopes, e.scope)
	}
	return authzdetails.Encode(kept), scopes, nil
}

// consentDetails are stored details as the consent and connected pages
// show them: each under the scope it was accepted under, in the words of
// the Brand's current declaration of its type (its URI and members when
// the Brand no longer declares it).
func consentDetails(b db.Brand, canonical string, scopes []string) ([]*pactv1.ConsentAuthorizationDetail, error) {
	entries, err := storedEntries(canonical, scopes)
	if err != nil {
		return nil, err
	}
	out := make([]*pactv1.ConsentAuthorizationDetail, 0, len(entries))
	for _, e := range entries {
		t := authzdetails.Find(b.Delegation.AuthorizationDetailsTypes, e.Type)
		out = append(out, &pactv1.ConsentAuthorizationDetail{Detail: authzdetails.Proto(e.Entry), Words: authzdetails.Words(t, e.Entry), Scope: e.scope})
	}
	return out, nil
}
