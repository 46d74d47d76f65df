// Package base is what every part of the delegation service stands on:
// its collaborators (Deps, Store), the lifetimes and bounds of PACT §5,
// the clock, faults, Brand loading and the PA's OAuth client
// authentication (Env), audit events, and stored authorization_details.
// The parts (device authorization, token issuance, grants, step-up,
// consent) each hold the one Env the service builds.
package base

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"pactd.dev/pactd/core/guesslimit"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/bounds"
	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/internal/pacturl"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/token/brandassert"
	"pactd.dev/pactd/token/delegtoken"
	"pactd.dev/pactd/token/pajwt"
)

// Lifetimes and intervals (PACT §5, reference values).
const (
	// DeviceCodeTTL is how long device and user codes live.
	DeviceCodeTTL = 600 * time.Second
	// PollInterval is the initial minimum time between token polls.
	PollInterval = 3 * time.Second
	// SlowDownStep is how much each too-early poll lengthens the stored
	// interval (RFC 8628 §3.5), matching what a client adds on slow_down.
	SlowDownStep = 5 * time.Second
	// AccessTokenTTL is the delegation token lifetime (capped by the grant).
	AccessTokenTTL = time.Hour
	// GrantTTL is the lifetime of a grant and of its refresh tokens.
	GrantTTL = 30 * 24 * time.Hour
	// MaxBrandUser bounds a Brand user id.
	MaxBrandUser = bounds.BrandUser
	// MaxIDLen bounds ids a caller sends (Brand, grant, agent, context).
	MaxIDLen = bounds.CallerID
	// CreateAttempts bounds retries when fresh codes clash with stored ones.
	CreateAttempts = 5
	// MaxSource bounds the source a frontend passes.
	MaxSource = 128
)

// Deps are the service's collaborators.
type Deps struct {
	// Store holds Brands, agents and delegation state.
	Store Store
	// PA verifies the PA JWT that authenticates the PA as the OAuth client.
	PA PAVerifier
	// Minter signs delegation tokens. Without one, token requests for an
	// approved code or a refresh fail with Unavailable (and change nothing).
	Minter delegtoken.Minter
	// PublicURL is the Provider's public base URL (no trailing slash);
	// interface URLs are {PublicURL}/a2a/{brandId}.
	PublicURL string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Rand is the randomness for codes, tokens and task ids; crypto/rand
	// when nil.
	Rand io.Reader
	// Logger receives audit lines and faults; never codes or tokens.
	Logger *slog.Logger
	// GuessLimit bounds failed user-code lookups per Brand and
	// GuessWindow, over all replicas (default guesslimit.DefaultGuessLimit).
	GuessLimit int
	// SourceGuessLimit bounds them per (Brand, source) for calls that name
	// a source (default guesslimit.DefaultSourceGuessLimit).
	SourceGuessLimit int
	// GuessWindow is the fixed window of both (default guesslimit.DefaultGuessWindow).
	GuessWindow time.Duration
	// MaxPendingPerAgent and MaxPendingPerAgentBrand bound a PA's pending
	// device authorizations in all and at one Brand (defaults
	// guesslimit.DefaultMaxPendingPerAgent and
	// guesslimit.DefaultMaxPendingPerAgentBrand).
	MaxPendingPerAgent, MaxPendingPerAgentBrand int
	// BrandKeys yields the keys Brands publish at their assertion_jwks_uri,
	// for BRAND_LOGIN_MODE_SIGNED_ASSERTION (*jose.JWKSClient satisfies
	// it). Without it, consent decisions of such Brands fail with
	// Unavailable (and change nothing).
	BrandKeys BrandKeys
	// Sessions signs and verifies consent sessions (BeginConsent and the
	// decisions made with them). Without it those calls fail with
	// Unavailable (and change nothing).
	Sessions ConsentSessions
	// OnAudit is called once for each audit event the service stored (for
	// the metric); may be nil.
	OnAudit func(kind db.AuditKind)
	// Grants answers CheckGrant from the replica's grant cache; the store
	// when nil.
	Grants GrantReader
	// Registerer receives the service's metrics; none when nil.
	Registerer prometheus.Registerer
}

// Env is the one environment of every part of the service: the
// collaborators with their defaults filled in and the guessing limits.
type Env struct {
	// D are the collaborators; read-only after NewEnv.
	D Deps
	// Guesses bounds user-code guessing and pending authorizations.
	Guesses *guesslimit.Limiter
}

// NewEnv fills in the defaults of d (time.Now, crypto/rand, a discarding
// logger, a PublicURL without trailing slash) and builds the limits.
func NewEnv(d Deps) *Env {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Rand == nil {
		d.Rand = rand.Reader
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.PublicURL = strings.TrimRight(d.PublicURL, "/")
	return &Env{D: d, Guesses: guesslimit.New(d.Store, d.Logger, guesslimit.Limits{
		Window: d.GuessWindow, Brand: d.GuessLimit, Source: d.SourceGuessLimit,
		MaxPendingPerAgent: d.MaxPendingPerAgent, MaxPendingPerAgentBrand: d.MaxPendingPerAgentBrand,
	})}
}

// InterfaceURL is a Brand's A2A interface URL.
func (e *Env) InterfaceURL(brandID string) string {
	return pacturl.Interface(e.D.PublicURL, brandID)
}

// Issuer is a Brand's authorization server issuer, {interfaceUrl}/oauth.
func (e *Env) Issuer(brandID string) string { return pacturl.OAuthIssuer(e.D.PublicURL, brandID) }

// ConsentURL is the Provider consent page a Brand login returns to, and
// the aud of the Brand's login assertions.
func (e *Env) ConsentURL(brandID string) string { return pacturl.Consent(e.D.PublicURL, brandID) }

// Now is the clock in whole seconds, the precision of everything stored.
func (e *Env) Now() time.Time { return e.D.Now().UTC().Truncate(time.Second) }

// RevokeTokenOp names RevokeToken, which a PA may call at a Brand whose
// agent policy no longer admits it.
const RevokeTokenOp = "revoke token"

// Client is a PA authenticated as an OAuth client at a Brand.
type Client struct {
	// PA is the verified PA JWT.
	PA pajwt.Result
	// ID is the client_id, == PA.Agent.Issuer.
	ID string
	// Brand is the Brand it authenticated at.
	Brand db.Brand
}

// Authenticate runs the checks every PA-facing endpoint shares, in order:
// the PA JWT (bare 401), client_id == iss (401 invalid_client), the Brand
// (bare 404) and its delegation settings (400 unauthorized_client). A
// refusal is an OAuthError; an error is an RPC error.
func (e *Env) Authenticate(ctx context.Context, op, brandID, authorization, clientID string) (Client, *pactv1.OAuthError, error) {
	res, err := e.D.PA.VerifyPA(ctx, authorization)
	if err != nil {
		var refused *pajwt.Error
		if errors.As(err, &refused) {
			e.D.Logger.InfoContext(ctx, "oauth client refused", slog.String("op", op), slog.String("brand_id", brandID),
				slog.String("reason", refused.Reason.String()))
			return Client{}, oauthwire.Bare401(), nil
		}
		return Client{}, nil, e.Fault(ctx, op+": verify PA JWT", err)
	}
	if clientID != res.Agent.Issuer {
		e.D.Logger.InfoContext(ctx, "oauth client_id mismatch", slog.String("op", op), slog.String("brand_id", brandID),
			slog.String("agent_id", res.Agent.ID))
		return Client{}, oauthwire.Refusal(oauthwire.ErrInvalidClient, "client_id does not match the issuer of the PA JWT"), nil
	}
	b, notFound, err := e.Brand(ctx, op, brandID)
	if err != nil {
		return Client{}, nil, err
	}
	if notFound {
		return Client{}, oauthwire.Bare404(), nil
	}
	// The Brand's agent policy, as VerifyAgentRequest applies it: a PA the
	// Brand does not admit gets no device authorization or token there (a
	// bare 401, as for a disabled PA). It may still revoke its tokens.
	if !b.Admits(res.Agent.ID) && op != RevokeTokenOp {
		e.D.Logger.InfoContext(ctx, "oauth client refused", slog.String("op", op), slog.String("brand_id", brandID),
			slog.String("agent_id", res.Agent.ID), slog.String("reason", "agent not allowed"))
		return Client{}, oauthwire.Bare401(), nil
	}
	if !b.Delegation.Enabled {
		return Client{}, oauthwire.Refusal(oauthwire.ErrUnauthorizedClient, "this Brand does not offer delegation"), nil
	}
	return Client{PA: res, ID: clientID, Brand: b}, nil, nil
}

// Brand loads a Brand for a PA-facing endpoint; notFound is true for an
// unknown Brand (including ids no Brand can have).
func (e *Env) Brand(ctx context.Context, op, brandID string) (b db.Brand, notFound bool, err error) {
	if brandID == "" || len(brandID) > MaxIDLen {
		return db.Brand{}, true, nil
	}
	b, err = e.D.Store.GetBrand(ctx, brandID)
	if errors.Is(err, db.ErrNotFound) {
		return db.Brand{}, true, nil
	}
	if err != nil {
		return db.Brand{}, false, e.Fault(ctx, op+": load brand", err)
	}
	return b, false, nil
}

// LoadBrand loads a Brand for a frontend or admin RPC: NotFound when
// unknown, FailedPrecondition when it does not offer delegation.
func (e *Env) LoadBrand(ctx context.Context, op, brandID string) (db.Brand, error) {
	if brandID == "" {
		return db.Brand{}, rpcerr.InvalidField("brand_id", "is required")
	}
	b, notFound, err := e.Brand(ctx, op, brandID)
	if err != nil {
		return db.Brand{}, err
	}
	if notFound {
		return db.Brand{}, rpcerr.NotFound("brand")
	}
	if !b.Delegation.Enabled {
		return db.Brand{}, FailedPrecondition("the Brand does not offer delegation")
	}
	return b, nil
}

// TrustedFrontend reports whether the Brand's login is its authenticated
// frontend (BRAND_LOGIN_MODE_TRUSTED_FRONTEND), as db stores the mode.
func TrustedFrontend(b db.Brand) bool {
	return b.Delegation.LoginMode == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND.String()
}

// BrandScopes maps a Brand's scope ids to their descriptions.
func BrandScopes(b db.Brand) map[string]string {
	m := make(map[string]string, len(b.Delegation.Scopes))
	for _, sc := range b.Delegation.Scopes {
		m[sc.ID] = sc.Description
	}
	return m
}

// FailedPrecondition is the error of a call the state does not allow.
func FailedPrecondition(msg string) error {
	return rpcerr.FailedPrecondition.Err(msg)
}

// Fault logs an infrastructure failure once and returns the RPC error
// for it (rpcerr.Fault).
func (e *Env) Fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, e.D.Logger, op, err)
}

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
	FindGrants(ctx context.Context, f db.GrantFilter, beforeID string, limit int) ([]db.Grant, error)

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
// assertions: the assertion verifier's key source (brandassert.KeySource).
// *jose.JWKSClient satisfies it; its errors wrap jose.ErrInvalidURI (the URI
// is refused by policy) or jose.ErrUnavailable and jose.ErrBadDocument (the
// keys cannot be had now).
type BrandKeys = brandassert.KeySource

// ConsentSessions signs and verifies consent sessions (typ
// pact-consent+jwt) with the Provider's keys; delegtoken.ConsentSessions
// satisfies it. A refused session is a *delegtoken.Error; any other error
// is an infrastructure fault.
type ConsentSessions interface {
	Sign(ctx context.Context, c delegtoken.SessionClaims) (string, error)
	Verify(ctx context.Context, token string, want delegtoken.SessionExpect) (delegtoken.SessionClaims, error)
	// SignConnected and VerifyConnected are the same for connected
	// sessions (typ pact-connected+jwt, BeginConnected).
	SignConnected(ctx context.Context, c delegtoken.SessionClaims) (string, error)
	VerifyConnected(ctx context.Context, token string, want delegtoken.SessionExpect) (delegtoken.SessionClaims, error)
}

// GrantReader returns a grant's row, revoked and expired ones included;
// found is false when there is no such grant. pactd passes its grant cache
// (*grantcache.Cache), so CheckGrant reads nothing while nothing changed
// and obeys the change feed's revocation bound.
type GrantReader interface {
	Grant(ctx context.Context, id string) (g db.Grant, found bool, err error)
}

// VerificationURIs builds {login_url}/login?return_to=<consent URL>, and the
// same with ?user_code=XXXX-XXXX inside the (URL-encoded) return target. An
// empty userCode gives the plain verification URI twice.
func (e *Env) VerificationURIs(b db.Brand, userCode string) (verify, complete string) {
	base := strings.TrimRight(b.Delegation.LoginURL, "/") + "/login?return_to="
	consent := e.ConsentURL(b.ID)
	verify = base + url.QueryEscape(consent)
	if userCode == "" {
		return verify, verify
	}
	return verify, base + url.QueryEscape(consent+"?user_code="+userCode)
}

// StepUpURI is the link a step-up task gives the User: the Brand login,
// returning to the consent page marked with the step-up's task id. No
// authorization is pending yet (the PA starts one when it asks to
// connect), so that page tells the User what comes next instead of asking
// for a code that does not exist.
func (e *Env) StepUpURI(b db.Brand, taskID string) string {
	return strings.TrimRight(b.Delegation.LoginURL, "/") + "/login?return_to=" +
		url.QueryEscape(e.ConsentURL(b.ID)+"?step_up="+url.QueryEscape(taskID))
}

// CheckBrandUser requires a Brand user id: 1 to 256 bytes of UTF-8 without
// control characters.
func CheckBrandUser(v *rpcerr.Violations, field, u string) {
	switch {
	case u == "":
		v.Add(field, "is required")
	case len(u) > MaxBrandUser || !utf8.ValidString(u):
		v.Add(field, "must be valid UTF-8 of at most %d bytes", MaxBrandUser)
	case brandassert.HasControl(u):
		v.Add(field, "must not contain control characters")
	}
}
