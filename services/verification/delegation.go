package verification

import (
	"context"
	"errors"
	"strings"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/pacturl"
	"pactd.dev/pactd/token/authzdetails"
	"pactd.dev/pactd/token/delegtoken"
)

// TokenVerifier verifies the signature and claims of a delegation token.
type TokenVerifier interface {
	Verify(ctx context.Context, token string, want delegtoken.Expect) (delegtoken.Claims, error)
}

// GrantStore says whether a grant is live, and with which
// authorization_details (canonical JSON, "" for a scope-only grant): the
// store, or the grant cache in front of it.
type GrantStore interface {
	LiveGrantDetails(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (details string, live bool, err error)
}

// DelegationTokens checks X-A2A-User-Delegation values (PACT §5.5): a
// Bearer delegation token whose signature, typ, iss, aud (this Brand), exp
// and client_id (the PA's issuer) verify, and whose grant is live per
// Grants. pactd passes its grant cache (core/grantcache), so a
// revocation takes effect within the change feed's revocation bound on
// every replica, and a delegated call reads nothing while nothing changed.
//
// The approved authorization_details (PACT §5.7) come from the grant in
// the store, never from the token alone, and the token's claim must match
// them (authzdetails.Match: both absent, or the same canonical JSON);
// otherwise the token is refused as invalid_token. A token that dropped
// the claim would otherwise lift the grant's restrictions, and one that
// changed it would claim authority the User never saw.
type DelegationTokens struct {
	Tokens    TokenVerifier
	Grants    GrantStore
	PublicURL string
	Now       func() time.Time
}

// CheckDelegation implements DelegationChecker.
func (d DelegationTokens) CheckDelegation(ctx context.Context, brand db.Brand, clientID, header string) (Delegation, bool, error) {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		return Delegation{}, false, nil
	}
	claims, err := d.Tokens.Verify(ctx, tok, delegtoken.Expect{
		Issuer:   pacturl.OAuthIssuer(d.PublicURL, brand.ID),
		Audience: pacturl.Interface(d.PublicURL, brand.ID),
		ClientID: clientID,
	})
	if err != nil {
		var refused *delegtoken.Error
		if errors.As(err, &refused) {
			return Delegation{}, false, nil
		}
		return Delegation{}, false, err
	}
	details, live, err := d.Grants.LiveGrantDetails(ctx, claims.GrantID, brand.ID, clientID, claims.Subject, d.Now())
	if err != nil || !live {
		return Delegation{}, false, err
	}
	entries, same := authzdetails.Match(details, claims.AuthorizationDetails)
	if !same {
		return Delegation{}, false, nil
	}
	scopes := claims.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return Delegation{GrantID: claims.GrantID, BrandUser: claims.Subject, Scopes: scopes, ExpiresAt: claims.ExpiresAt,
		AuthorizationDetails: details, Entries: entries}, true, nil
}
