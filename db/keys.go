package db

import (
	"context"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// SigningKey is one of the Provider's signing keys. The private half is
// stored only sealed (AES-256-GCM under the key-encryption key, which is
// never stored in the database); db neither seals nor opens it.
//
// A key's life: it is published in the JWKS from creation; it signs from
// ActivateTime until RetireTime (the ActivateTime of its successor); it
// stays published until ExpireTime, so every token it signed can still be
// verified. A zero RetireTime/ExpireTime means "not retired" (stored as 0).
type SigningKey struct {
	// KID is the key id: the RFC 7638 JWK thumbprint (base64url SHA-256).
	KID string
	// Seq orders the keys; it is unique, so two replicas that create or
	// rotate at the same moment cannot both succeed.
	Seq int64
	// Alg is the JWS algorithm, "ES256".
	Alg string
	// PublicJWK is the public JWK JSON as published in the JWKS.
	PublicJWK string
	// SealedPrivateKey is the encrypted private key; never plaintext.
	SealedPrivateKey []byte
	// CreateTime is when the key was made (and first published).
	CreateTime time.Time
	// ActivateTime is when the key may start signing.
	ActivateTime time.Time
	// RetireTime is when a newer key takes over signing; zero if none yet.
	RetireTime time.Time
	// ExpireTime is when the key leaves the JWKS; zero while not retired.
	ExpireTime time.Time
}

// KeyStore is the storage of the Provider's signing keys, their private
// halves encrypted with the key-encryption key.
type KeyStore interface {
	// AddSigningKey inserts k and, in the same transaction, retires every
	// key with a lower Seq that is not retired yet: its RetireTime becomes
	// k.ActivateTime and its ExpireTime becomes expireRetired. k's own
	// RetireTime and ExpireTime are stored as given (normally zero).
	// ErrConflict when k.KID or k.Seq exists (another replica created or
	// rotated first); nothing is changed then.
	AddSigningKey(ctx context.Context, k SigningKey, expireRetired time.Time) error
	// ListPublishedSigningKeys returns the keys that are still published at
	// now (ExpireTime zero or after now), by Seq.
	ListPublishedSigningKeys(ctx context.Context, now time.Time) ([]SigningKey, error)
	// DeleteExpiredSigningKeys removes the keys whose ExpireTime is set and
	// not after now, private halves included, and returns how many.
	DeleteExpiredSigningKeys(ctx context.Context, now time.Time) (int64, error)
}

// unixOrZero stores a zero time as 0 ("not set").
func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return unix(t)
}

// fromUnixOrZero reads 0 back as the zero time.
func fromUnixOrZero(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return fromUnix(s)
}

func signingKeyFromRow(r liteq.SigningKey) SigningKey {
	return SigningKey{
		KID: r.Kid, Seq: r.Seq, Alg: r.Alg, PublicJWK: r.PublicJwk, SealedPrivateKey: r.SealedPrivateKey,
		CreateTime: fromUnix(r.CreateTime), ActivateTime: fromUnix(r.ActivateTime),
		RetireTime: fromUnixOrZero(r.RetireTime), ExpireTime: fromUnixOrZero(r.ExpireTime),
	}
}

func signingKeyFromPG(r pgq.SigningKey) SigningKey { return signingKeyFromRow(liteq.SigningKey(r)) }

func signingKeysFromRows[R any](rows []R, conv func(R) SigningKey) []SigningKey {
	out := make([]SigningKey, 0, len(rows))
	for _, r := range rows {
		out = append(out, conv(r))
	}
	return out
}

func createSigningKeyParams(k SigningKey) liteq.CreateSigningKeyParams {
	return liteq.CreateSigningKeyParams{
		Kid: k.KID, Seq: k.Seq, Alg: k.Alg, PublicJwk: k.PublicJWK, SealedPrivateKey: k.SealedPrivateKey,
		CreateTime: unix(k.CreateTime), ActivateTime: unix(k.ActivateTime),
		RetireTime: unixOrZero(k.RetireTime), ExpireTime: unixOrZero(k.ExpireTime),
	}
}

func retireSigningKeysParams(k SigningKey, expireRetired time.Time) liteq.RetireSigningKeysBeforeParams {
	return liteq.RetireSigningKeysBeforeParams{
		RetireTime: unix(k.ActivateTime), ExpireTime: unix(expireRetired), BeforeSeq: k.Seq,
	}
}
