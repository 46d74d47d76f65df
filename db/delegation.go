package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// DeviceStatus is the state of a device authorization (RFC 8628). The only
// transitions are pending → approved → consumed and pending → denied; each
// is one guarded statement, so a second decision or redemption matches no
// row and changes nothing.
type DeviceStatus string

// The device authorization states.
const (
	DevicePending  DeviceStatus = "pending"
	DeviceApproved DeviceStatus = "approved"
	DeviceDenied   DeviceStatus = "denied"
	DeviceConsumed DeviceStatus = "consumed"
)

// DeviceAuthorization is one RFC 8628 device authorization: a PA asked for
// scopes at a Brand and waits for the User's decision.
type DeviceAuthorization struct {
	// ID is pactd's id of the authorization.
	ID string
	// BrandID is the Brand the PA asked.
	BrandID string
	// AgentID is pactd's id of the PA.
	AgentID string
	// ClientID is the OAuth client_id, the PA's issuer.
	ClientID string
	// DeviceCodeHash is the SHA-256 of the device code; the code itself is
	// never stored.
	DeviceCodeHash []byte
	// UserCodeHash is a hash of the normalized user code (the caller
	// chooses the hash); the code itself is never stored.
	UserCodeHash []byte
	// Scopes are the requested scope ids, in request order.
	Scopes []string
	// Status is the authorization's state.
	Status DeviceStatus
	// BrandUser is the User's id at the Brand, set on approval.
	BrandUser string
	// GrantID is the grant made on approval.
	GrantID string
	// Interval is the minimum time between token polls; slow_down
	// lengthens it.
	Interval time.Duration
	// LastPolledAt is the last token poll; zero before the first.
	LastPolledAt time.Time
	// ExpiresAt is when the codes stop working.
	ExpiresAt time.Time
	// CreateTime is when the PA asked.
	CreateTime time.Time
	// AuthorizationDetails are the requested RFC 9396 authorization_details
	// (PACT §5.7) in canonical JSON; "" for a scope-only request.
	AuthorizationDetails string
	// AuthorizationDetailsScopes are the scope each entry of
	// AuthorizationDetails was validated under when the PA asked, in the
	// entries' order (see EntryScopeUnknown); empty for a scope-only
	// request. Consent shows, approves and drops each entry by this scope,
	// never by the Brand's current declarations.
	AuthorizationDetailsScopes []string
}

// EntryScopeUnknown ("") is the recorded scope of an authorization_details
// entry stored before entries remembered their scope, when the Brand's
// declarations at migration time could not say which scope it was
// accepted under (the type was gone, or its scope was not one the row
// holds). Such an entry is kept on approval and never lets consent be
// skipped.
const EntryScopeUnknown = ""

// ErrDetailScopes means a device authorization or grant was refused
// because its AuthorizationDetailsScopes do not name one scope for each
// entry of its AuthorizationDetails; nothing was stored.
var ErrDetailScopes = errors.New("db: authorization_details_scopes must name one scope per authorization_details entry")

// Grant is a User's standing permission for one PA at one Brand.
type Grant struct {
	// ID is "a2agrant_" + ULID.
	ID string
	// BrandID is the Brand.
	BrandID string
	// AgentID is pactd's id of the PA.
	AgentID string
	// ClientID is the PA's issuer.
	ClientID string
	// BrandUser is the User's id at the Brand.
	BrandUser string
	// Scopes are the granted scope ids.
	Scopes []string
	// CreateTime is when the User approved.
	CreateTime time.Time
	// ExpireTime is when the grant (and its refresh tokens) expire.
	ExpireTime time.Time
	// RevokeTime is when the grant was revoked; zero while live.
	RevokeTime time.Time
	// AgentDisplayName is the PA's display name; filled by ListGrants only.
	AgentDisplayName string
	// AuthorizationDetails are the approved RFC 9396 authorization_details
	// (PACT §5.7) in canonical JSON; "" for a scope-only grant. Fixed when
	// the grant is made.
	AuthorizationDetails string
	// AuthorizationDetailsScopes are the scope each entry of
	// AuthorizationDetails was approved under, in the entries' order (see
	// EntryScopeUnknown); empty for a scope-only grant. Fixed when the
	// grant is made: a Brand that later moves a type to another scope
	// neither widens nor drops the grant's restriction.
	AuthorizationDetailsScopes []string
}

// RefreshToken is a stored refresh token: only its hash is kept.
type RefreshToken struct {
	// TokenHash is the SHA-256 of the token.
	TokenHash []byte
	// GrantID is the grant the token renews.
	GrantID string
	// ExpiresAt is when the token expires (with its grant).
	ExpiresAt time.Time
	// UsedAt is when the token was used (rotated); zero while unused.
	UsedAt time.Time
	// CreateTime is when it was issued.
	CreateTime time.Time
}

// PollOutcome is what a token poll of a pending authorization found.
type PollOutcome int

// The poll outcomes of PollDeviceAuthorization.
const (
	// PollPending: the poll came on time and was recorded
	// (authorization_pending).
	PollPending PollOutcome = iota + 1
	// PollSlowDown: the poll came before the interval had passed; the poll
	// was recorded and the interval lengthened (slow_down).
	PollSlowDown
)

// BrandAssertionUse is the single use of a Brand login assertion
// (BRAND_LOGIN_MODE_SIGNED_ASSERTION): its jti is recorded per Brand until
// ExpireTime, the last instant at which the assertion could be accepted.
type BrandAssertionUse struct {
	// BrandID is the Brand whose login signed the assertion.
	BrandID string
	// JTI is the assertion's jti.
	JTI string
	// ExpireTime is when the record may go: after it the assertion is
	// refused as expired anyway. Stored in whole seconds, so the caller
	// rounds up.
	ExpireTime time.Time
}

// ErrAssertionReplayed means a Brand assertion's jti is recorded already
// (and has not expired): the decision it was to make was not made and
// nothing changed. It wraps ErrConflict.
var ErrAssertionReplayed = fmt.Errorf("%w: Brand assertion already used", ErrConflict)

// DelegationStore is the storage of PACT Delegated: device authorizations,
// grants and refresh tokens. Every state change is one guarded statement
// (or one transaction of them); a guard that matches nothing is ErrNotFound
// and changes nothing, so the caller re-reads to learn why.
type DelegationStore interface {
	// CreateDeviceAuthorization stores a pending authorization (Status,
	// BrandUser, GrantID and LastPolledAt are ignored). ErrConflict when the
	// id or either code hash exists: the caller draws new codes.
	// ErrDetailScopes when AuthorizationDetailsScopes do not align with
	// AuthorizationDetails.
	CreateDeviceAuthorization(ctx context.Context, d DeviceAuthorization) (DeviceAuthorization, error)
	// GetDeviceAuthorizationByDeviceCode finds an authorization by Brand and
	// device code hash.
	GetDeviceAuthorizationByDeviceCode(ctx context.Context, brandID string, hash []byte) (DeviceAuthorization, error)
	// GetDeviceAuthorizationByUserCode finds an authorization by Brand and
	// user code hash.
	GetDeviceAuthorizationByUserCode(ctx context.Context, brandID string, hash []byte) (DeviceAuthorization, error)
	// PollDeviceAuthorization records a token poll of a pending
	// authorization: on time (PollPending) or too early (PollSlowDown, and
	// the interval grows by slowDownStep). ErrNotFound when it is not
	// pending.
	PollDeviceAuthorization(ctx context.Context, id string, now time.Time, slowDownStep time.Duration) (DeviceAuthorization, PollOutcome, error)
	// ApproveDeviceAuthorization, in one transaction, moves a pending,
	// unexpired authorization to approved (recording g.BrandUser and g.ID)
	// and stores the grant g. ErrNotFound when it is not pending or has
	// expired, ErrDetailScopes when g's AuthorizationDetailsScopes do not
	// align with its AuthorizationDetails; nothing is stored then.
	ApproveDeviceAuthorization(ctx context.Context, id string, g Grant, now time.Time) (DeviceAuthorization, Grant, error)
	// DenyDeviceAuthorization moves a pending, unexpired authorization to
	// denied. ErrNotFound when it is not pending or has expired.
	DenyDeviceAuthorization(ctx context.Context, id string, now time.Time) (DeviceAuthorization, error)
	// ApproveDeviceAuthorizationWithAssertion is ApproveDeviceAuthorization
	// in the transaction that also records the single use a (insert-if-
	// absent, first). ErrAssertionReplayed when (a.BrandID, a.JTI) is
	// recorded and its record has not expired at now; ErrNotFound when the
	// authorization is not pending or has expired. Either way nothing is
	// stored, so an assertion whose decision failed is not used up.
	ApproveDeviceAuthorizationWithAssertion(ctx context.Context, id string, g Grant, a BrandAssertionUse, now time.Time) (DeviceAuthorization, Grant, error)
	// DenyDeviceAuthorizationWithAssertion is DenyDeviceAuthorization in the
	// transaction that also records the single use a, with the errors of
	// ApproveDeviceAuthorizationWithAssertion.
	DenyDeviceAuthorizationWithAssertion(ctx context.Context, id string, a BrandAssertionUse, now time.Time) (DeviceAuthorization, error)
	// UseBrandAssertion records the single use a on its own (a consent
	// session is opened with it; the decision comes later). An expired
	// record of the same jti is taken over. ErrAssertionReplayed when
	// (a.BrandID, a.JTI) is recorded and its record has not expired at now;
	// nothing changes then.
	UseBrandAssertion(ctx context.Context, a BrandAssertionUse, now time.Time) error
	// RedeemDeviceAuthorization, in one transaction, moves an approved,
	// unexpired authorization to consumed and stores the first refresh
	// token rt of its grant (rt.GrantID is taken from the authorization).
	// ErrNotFound when it is not approved or has expired: exactly one of
	// any number of concurrent redemptions succeeds.
	RedeemDeviceAuthorization(ctx context.Context, id string, now time.Time, rt RefreshToken) (DeviceAuthorization, error)

	// GetGrant returns a grant by id.
	GetGrant(ctx context.Context, id string) (Grant, error)
	// RevokeGrant revokes a live grant; revoked is false when it was
	// revoked already. ErrNotFound when there is no such grant.
	RevokeGrant(ctx context.Context, id string, now time.Time) (revoked bool, err error)
	// ListGrants returns up to limit grants of a Brand user, newest first,
	// with ids before beforeID ("" for the newest), live or not, with
	// AgentDisplayName filled.
	ListGrants(ctx context.Context, brandID, brandUser, beforeID string, limit int) ([]Grant, error)
	// FindGrants returns up to limit grants matching f, newest first, with
	// ids before beforeID ("" starts at the newest), with the PA's display
	// name (an operator's search across Brands, Users and PAs).
	FindGrants(ctx context.Context, f GrantFilter, beforeID string, limit int) ([]Grant, error)
	// GrantLiveAt reports whether the grant exists for this Brand, client
	// and Brand user and is neither revoked nor expired at now.
	GrantLiveAt(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (bool, error)
	// LiveGrantDetails is GrantLiveAt that also returns the grant's
	// AuthorizationDetails ("" for a scope-only grant) when it is live.
	LiveGrantDetails(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (details string, live bool, err error)

	// GetRefreshToken returns a refresh token by hash, used or not.
	GetRefreshToken(ctx context.Context, hash []byte) (RefreshToken, error)
	// RotateRefreshToken, in one transaction, marks the refresh token with
	// hash old used (only if unused, unexpired, and its grant is live and
	// belongs to brandID and clientID) and stores next for the same grant.
	// ErrNotFound when the guard fails: exactly one of any number of
	// concurrent rotations succeeds, and nothing else changes.
	RotateRefreshToken(ctx context.Context, old []byte, brandID, clientID string, now time.Time, next RefreshToken) (RefreshToken, error)

	// PurgeExpiredDelegation deletes device authorizations and refresh
	// tokens that expired at or before now, used Brand assertions whose
	// ExpireTime is before now, and user-code failure windows that started
	// more than an hour before now, returning how many rows went.
	PurgeExpiredDelegation(ctx context.Context, now time.Time) (int64, error)

	// AddUserCodeFailure counts one failed (or reserved) user-code lookup
	// in scope's window starting at window, and returns the window's count
	// including it. Concurrent calls each see a distinct count.
	AddUserCodeFailure(ctx context.Context, scope string, window time.Time) (int64, error)
	// RemoveUserCodeFailure takes one back (never below zero).
	RemoveUserCodeFailure(ctx context.Context, scope string, window time.Time) error
	// CountPendingDeviceAuthorizations counts an agent's pending device
	// authorizations that have not expired at now: in all, and at brandID.
	CountPendingDeviceAuthorizations(ctx context.Context, agentID, brandID string, now time.Time) (total, atBrand int64, err error)
}

// delegFromUnix0 reads 0 (never) back as the zero time.
func delegFromUnix0(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return fromUnix(s)
}

func delegJoinScopes(s []string) string { return strings.Join(s, " ") }

func delegSplitScopes(s string) []string {
	out := strings.Fields(s)
	if out == nil {
		out = []string{}
	}
	return out
}

func deviceFromRow(r liteq.DeviceAuthorization) DeviceAuthorization {
	return DeviceAuthorization{
		ID: r.ID, BrandID: r.BrandID, AgentID: r.AgentID, ClientID: r.ClientID,
		DeviceCodeHash: r.DeviceCodeHash, UserCodeHash: r.UserCodeHash, Scopes: delegSplitScopes(r.Scopes),
		Status: DeviceStatus(r.Status), BrandUser: r.BrandUser, GrantID: r.GrantID,
		Interval: time.Duration(r.IntervalSeconds) * time.Second, LastPolledAt: delegFromUnix0(r.LastPolledAt),
		ExpiresAt: fromUnix(r.ExpiresAt), CreateTime: fromUnix(r.CreateTime), AuthorizationDetails: r.AuthorizationDetails,
		AuthorizationDetailsScopes: readDetailScopes(r.AuthorizationDetailsScopes),
	}
}

func deviceFromPG(r pgq.DeviceAuthorization) DeviceAuthorization {
	return deviceFromRow(liteq.DeviceAuthorization(r))
}

func createDeviceParams(d DeviceAuthorization) liteq.CreateDeviceAuthorizationParams {
	return liteq.CreateDeviceAuthorizationParams{
		ID: d.ID, BrandID: d.BrandID, AgentID: d.AgentID, ClientID: d.ClientID,
		DeviceCodeHash: d.DeviceCodeHash, UserCodeHash: d.UserCodeHash, Scopes: delegJoinScopes(d.Scopes),
		IntervalSeconds: int64(d.Interval / time.Second), ExpiresAt: unix(d.ExpiresAt), CreateTime: unix(d.CreateTime),
		AuthorizationDetails: d.AuthorizationDetails, AuthorizationDetailsScopes: writeDetailScopes(d.AuthorizationDetailsScopes),
	}
}

func grantFromRow(r liteq.Grant) Grant {
	return Grant{
		ID: r.ID, BrandID: r.BrandID, AgentID: r.AgentID, ClientID: r.ClientID, BrandUser: r.BrandUser,
		Scopes: delegSplitScopes(r.Scopes), CreateTime: fromUnix(r.CreateTime), ExpireTime: fromUnix(r.ExpireTime),
		RevokeTime: delegFromUnix0(r.RevokeTime), AuthorizationDetails: r.AuthorizationDetails,
		AuthorizationDetailsScopes: readDetailScopes(r.AuthorizationDetailsScopes),
	}
}

func grantFromPG(r pgq.Grant) Grant { return grantFromRow(liteq.Grant(r)) }

func grantFromListRow(r liteq.ListGrantsByUserRow) Grant {
	g := grantFromRow(liteq.Grant{
		ID: r.ID, BrandID: r.BrandID, AgentID: r.AgentID, ClientID: r.ClientID, BrandUser: r.BrandUser,
		Scopes: r.Scopes, CreateTime: r.CreateTime, ExpireTime: r.ExpireTime, RevokeTime: r.RevokeTime, AuthorizationDetails: r.AuthorizationDetails,
		AuthorizationDetailsScopes: r.AuthorizationDetailsScopes,
	})
	g.AgentDisplayName = r.AgentDisplayName
	return g
}

func grantFromPGListRow(r pgq.ListGrantsByUserRow) Grant {
	return grantFromListRow(liteq.ListGrantsByUserRow(r))
}

func createGrantParams(g Grant) liteq.CreateGrantParams {
	return liteq.CreateGrantParams{
		ID: g.ID, BrandID: g.BrandID, AgentID: g.AgentID, ClientID: g.ClientID, BrandUser: g.BrandUser,
		Scopes: delegJoinScopes(g.Scopes), CreateTime: unix(g.CreateTime), ExpireTime: unix(g.ExpireTime),
		AuthorizationDetails: g.AuthorizationDetails, AuthorizationDetailsScopes: writeDetailScopes(g.AuthorizationDetailsScopes),
	}
}

// checkDetailScopes is the rule every stored row keeps: one recorded scope
// per authorization_details entry, none without entries. Details that are
// not a JSON array cannot be counted and are refused too.
func checkDetailScopes(details string, scopes []string) error {
	if details == "" {
		if len(scopes) != 0 {
			return ErrDetailScopes
		}
		return nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal([]byte(details), &entries); err != nil || len(entries) != len(scopes) {
		return ErrDetailScopes
	}
	return nil
}

// writeDetailScopes is the column's text: a JSON array of scope ids, ""
// for none.
func writeDetailScopes(scopes []string) string {
	if len(scopes) == 0 {
		return ""
	}
	b, _ := json.Marshal(scopes) // strings: cannot fail
	return string(b)
}

// readDetailScopes reads the column back. A value that is not a JSON
// array of strings (never written by pactd) reads as nil, which matches
// no entries: the services then treat the row's details as unreadable and
// fail closed.
func readDetailScopes(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil
	}
	return out
}

func refreshFromRow(r liteq.RefreshToken) RefreshToken {
	return RefreshToken{
		TokenHash: r.TokenHash, GrantID: r.GrantID, ExpiresAt: fromUnix(r.ExpiresAt),
		UsedAt: delegFromUnix0(r.UsedAt), CreateTime: fromUnix(r.CreateTime),
	}
}

func refreshFromPG(r pgq.RefreshToken) RefreshToken { return refreshFromRow(liteq.RefreshToken(r)) }

func createRefreshParams(rt RefreshToken) liteq.CreateRefreshTokenParams {
	return liteq.CreateRefreshTokenParams{
		TokenHash: rt.TokenHash, GrantID: rt.GrantID, ExpiresAt: unix(rt.ExpiresAt), CreateTime: unix(rt.CreateTime),
	}
}

// normRefresh gives a refresh token the precision it has once stored.
func normRefresh(rt RefreshToken) RefreshToken {
	p := createRefreshParams(rt)
	return refreshFromRow(liteq.RefreshToken{TokenHash: p.TokenHash, GrantID: p.GrantID, ExpiresAt: p.ExpiresAt, CreateTime: p.CreateTime})
}

func useAssertionParams(a BrandAssertionUse) liteq.UseBrandAssertionParams {
	return liteq.UseBrandAssertionParams{BrandID: a.BrandID, Jti: a.JTI, ExpireTime: unixCeil(a.ExpireTime)}
}

func releaseAssertionParams(a BrandAssertionUse, now time.Time) liteq.ReleaseExpiredBrandAssertionParams {
	return liteq.ReleaseExpiredBrandAssertionParams{BrandID: a.BrandID, Jti: a.JTI, Now: unix(now)}
}

// unixCeil is t in unix seconds, rounded up: a record kept until then is
// never dropped early.
func unixCeil(t time.Time) int64 {
	s := unix(t)
	if fromUnix(s).Before(t) {
		s++
	}
	return s
}

// GrantFilter selects grants; an empty field matches every grant.
type GrantFilter struct {
	BrandID, BrandUser, AgentID string
}

func findGrantsParams(f GrantFilter, beforeID string, limit int) liteq.FindGrantsParams {
	return liteq.FindGrantsParams{BrandID: f.BrandID, BrandUser: f.BrandUser, AgentID: f.AgentID, BeforeID: beforeID, PageLimit: int64(limit)}
}
