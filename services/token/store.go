package token

import (
	"context"
	"time"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/token/delegtoken"
)

// BrandStore finds Brands.
type BrandStore interface {
	GetBrand(ctx context.Context, id string) (db.Brand, error)
}

// GrantChecker says whether a grant is live: it exists for this Brand and
// client (PA issuer) with this Brand user, and is neither revoked nor
// expired at now. The delegation store satisfies it.
type GrantChecker interface {
	GrantLiveAt(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (bool, error)
	// LiveGrantDetails is GrantLiveAt that also returns the grant's
	// authorization_details (canonical JSON, "" for a scope-only grant).
	LiveGrantDetails(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (details string, live bool, err error)
}

// AuditRecorder stores audit events (the store satisfies it).
type AuditRecorder interface {
	RecordAuditEvent(ctx context.Context, e db.AuditEvent) (db.AuditEvent, error)
}

// KeyRing publishes and rotates the Provider's signing keys
// (*provkeys.Ring satisfies it).
type KeyRing interface {
	JWKS(ctx context.Context) ([]byte, error)
	Rotate(ctx context.Context) (provkeys.KeyInfo, error)
}

// TokenVerifier verifies delegation tokens (*delegtoken.Verifier).
type TokenVerifier interface {
	Verify(ctx context.Context, token string, want delegtoken.Expect) (delegtoken.Claims, error)
}

// ReceiptSigner signs receipts (*delegtoken.Signer).
type ReceiptSigner interface {
	SignReceipt(ctx context.Context, c delegtoken.ReceiptClaims) (jws string, claimsJSON []byte, err error)
}
