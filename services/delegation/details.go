package delegation

import (
	pactv1 "pactd/gen/pact/v1"

	"pactd/db"
	"pactd/internal/authzdetails"
)

// Resource-bound delegation (PACT §5.7, RFC 9396): the requested details
// are validated once, at the device authorization, and stored there in
// canonical JSON; consent shows them in pactd's words; the grant keeps
// those whose scope was granted; the token response and the delegation
// token carry the grant's value unchanged, on every refresh.

// requestDetails validates a device authorization's authorization_details
// (nil: the form has none) against the Brand's types and the requested
// scopes: the canonical JSON to store, or the refusal to send and its
// reason (for the log, which never gets the PA's input).
func requestDetails(b db.Brand, raw *string, scopes []string) (string, authzdetails.Reason, *pactv1.StartDeviceAuthorizationResponse) {
	if raw == nil {
		return "", "", nil
	}
	types := b.Delegation.AuthorizationDetailsTypes
	if len(types) == 0 {
		return "", authzdetails.ReasonUnknownType, refuseDevice(ErrInvalidAuthorizationDetails, "this Brand supports no authorization_details types")
	}
	_, canonical, err := authzdetails.Parse(*raw, types, scopes)
	if err != nil {
		return "", err.Reason, refuseDevice(ErrInvalidAuthorizationDetails, err.Description)
	}
	return canonical, "", nil
}

// grantDetails are the details a grant of these scopes keeps: the
// requested ones minus those of a scope that was not granted
// (authzdetails.Keep). Stored details that cannot be read back are kept
// whole rather than dropped: a restriction is never widened away.
func grantDetails(b db.Brand, d db.DeviceAuthorization, granted []string) string {
	entries, err := authzdetails.Decode(d.AuthorizationDetails)
	if err != nil {
		return d.AuthorizationDetails
	}
	return authzdetails.Encode(authzdetails.Keep(entries, b.Delegation.AuthorizationDetailsTypes, d.Scopes, granted))
}

// consentDetails are the stored details as the consent page shows them.
func consentDetails(b db.Brand, canonical string) ([]*pactv1.ConsentAuthorizationDetail, error) {
	entries, err := authzdetails.Decode(canonical)
	if err != nil {
		return nil, err
	}
	out := make([]*pactv1.ConsentAuthorizationDetail, 0, len(entries))
	for _, e := range entries {
		t := authzdetails.Find(b.Delegation.AuthorizationDetailsTypes, e.Type)
		cd := &pactv1.ConsentAuthorizationDetail{Detail: authzdetails.Proto(e), Words: authzdetails.Words(t, e)}
		if t != nil {
			cd.Scope = t.Scope
		}
		out = append(out, cd)
	}
	return out, nil
}
