package delegation

import (
	"context"
	"time"

	"pactd/db"
	"pactd/internal/jose"
	"pactd/internal/pajwt"
)

// Store is the storage the delegation service needs.
type Store interface {
	GetBrand(ctx context.Context, id string) (db.Brand, error)
	GetAgent(ctx context.Context, id string) (db.Agent, error)

	CreateDeviceAuthorization(ctx context.Context, d db.DeviceAuthorization) (db.DeviceAuthorization, error)
	GetDeviceAuthorizationByDeviceCode(ctx context.Context, brandID string, hash []byte) (db.DeviceAuthorization, error)
	GetDeviceAuthorizationByUserCode(ctx context.Context, brandID string, hash []byte) (db.DeviceAuthorization, error)
	PollDeviceAuthorization(ctx context.Context, id string, now time.Time, slowDownStep time.Duration) (db.DeviceAuthorization, db.PollOutcome, error)
	ApproveDeviceAuthorization(ctx context.Context, id string, g db.Grant, now time.Time) (db.DeviceAuthorization, db.Grant, error)
	DenyDeviceAuthorization(ctx context.Context, id string, now time.Time) (db.DeviceAuthorization, error)
	ApproveDeviceAuthorizationWithAssertion(ctx context.Context, id string, g db.Grant, a db.BrandAssertionUse, now time.Time) (db.DeviceAuthorization, db.Grant, error)
	DenyDeviceAuthorizationWithAssertion(ctx context.Context, id string, a db.BrandAssertionUse, now time.Time) (db.DeviceAuthorization, error)
	UseBrandAssertion(ctx context.Context, a db.BrandAssertionUse, now time.Time) error
	RedeemDeviceAuthorization(ctx context.Context, id string, now time.Time, rt db.RefreshToken) (db.DeviceAuthorization, error)

	GetGrant(ctx context.Context, id string) (db.Grant, error)
	RevokeGrant(ctx context.Context, id string, now time.Time) (bool, error)
	ListGrants(ctx context.Context, brandID, brandUser, beforeID string, limit int) ([]db.Grant, error)

	GetRefreshToken(ctx context.Context, hash []byte) (db.RefreshToken, error)
	RotateRefreshToken(ctx context.Context, old []byte, brandID, clientID string, now time.Time, next db.RefreshToken) (db.RefreshToken, error)

	PurgeExpiredDelegation(ctx context.Context, now time.Time) (int64, error)

	// RecordAuditEvent stores an audit event that goes with no other change
	// (a step-up).
	RecordAuditEvent(ctx context.Context, e db.AuditEvent) (db.AuditEvent, error)

	AddUserCodeFailure(ctx context.Context, scope string, window time.Time) (int64, error)
	RemoveUserCodeFailure(ctx context.Context, scope string, window time.Time) error
	CountPendingDeviceAuthorizations(ctx context.Context, agentID, brandID string, now time.Time) (total, atBrand int64, err error)
}

// PAVerifier checks the PA JWT that authenticates a PA as an OAuth client.
// A refused token is a *pajwt.Error; any other error is an infrastructure
// fault.
type PAVerifier interface {
	VerifyPA(ctx context.Context, authorization string) (pajwt.Result, error)
}

// BrandKeys yields the public keys a Brand publishes for its login
// assertions. *jose.JWKSClient satisfies it; its errors wrap
// jose.ErrInvalidURI (the URI is refused by policy) or jose.ErrUnavailable
// and jose.ErrBadDocument (the keys cannot be had now).
type BrandKeys interface {
	// Keys returns the key set published at uri (cached or fetched).
	Keys(ctx context.Context, uri string) (*jose.KeySet, error)
	// Refresh refetches the set for an unknown kid, subject to the source's
	// per-URI cooldown (inside it, the cached set is returned).
	Refresh(ctx context.Context, uri string) (*jose.KeySet, error)
}
