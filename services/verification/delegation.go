package verification

import (
	"context"
	"errors"
	"strings"
	"time"

	"pactd/db"
	"pactd/internal/delegtoken"
	"pactd/internal/pacturl"
)

// TokenVerifier verifies the signature and claims of a delegation token.
type TokenVerifier interface {
	Verify(ctx context.Context, token string, want delegtoken.Expect) (delegtoken.Claims, error)
}

// GrantStore says whether a grant is live.
type GrantStore interface {
	GrantLiveAt(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (bool, error)
}

// DelegationTokens checks X-A2A-User-Delegation values (PACT §5.5): a
// Bearer delegation token whose signature, typ, iss, aud (this Brand), exp
// and client_id (the PA's issuer) verify, and whose grant is live in the
// store. The grant is read on every call, so a revocation takes effect on
// the next request on every replica sharing the database.
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
	live, err := d.Grants.GrantLiveAt(ctx, claims.GrantID, brand.ID, clientID, claims.Subject, d.Now())
	if err != nil || !live {
		return Delegation{}, false, err
	}
	scopes := claims.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return Delegation{GrantID: claims.GrantID, BrandUser: claims.Subject, Scopes: scopes, ExpiresAt: claims.ExpiresAt}, true, nil
}
