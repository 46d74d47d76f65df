package delegation

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"

	"pactd/core/guesslimit"
	"pactd/db"
	pactv1 "pactd/gen/pact/v1"
	"pactd/gen/pact/v1/pactv1connect"
	"pactd/internal/delegtoken"
	"pactd/internal/oauthwire"
	"pactd/internal/pacturl"
	"pactd/internal/pajwt"
	"pactd/internal/rpcerr"
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
	MaxBrandUser = 256
	// maxIDLen bounds ids a caller sends (Brand, grant, agent, context).
	maxIDLen = 128
	// createAttempts bounds retries when fresh codes clash with stored ones.
	createAttempts = 5
	// maxSource bounds the source a frontend passes.
	maxSource = 128
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

// Service implements pactv1connect.DelegationServiceHandler.
type Service struct {
	pactv1connect.UnimplementedDelegationServiceHandler
	d Deps
	// guesses bounds user-code guessing and pending authorizations.
	guesses *guesslimit.Limiter
	// checks counts CheckGrant answers by result.
	checks *prometheus.CounterVec
}

// New returns the service.
func New(d Deps) *Service {
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
	s := &Service{d: d, guesses: guesslimit.New(d.Store, d.Logger, guesslimit.Limits{
		Window: d.GuessWindow, Brand: d.GuessLimit, Source: d.SourceGuessLimit,
		MaxPendingPerAgent: d.MaxPendingPerAgent, MaxPendingPerAgentBrand: d.MaxPendingPerAgentBrand,
	})}
	s.checks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_check_grant_total",
		Help: "CheckGrant answers, by result: active, or the reason it is not (unknown, revoked, expired, scope_not_granted, details_not_covered, scope_restricted, agent_not_allowed)."},
		[]string{"result"})
	if d.Registerer != nil {
		d.Registerer.MustRegister(s.checks)
	}
	return s
}

// InterfaceURL is a Brand's A2A interface URL.
func (s *Service) interfaceURL(brandID string) string {
	return pacturl.Interface(s.d.PublicURL, brandID)
}

// Issuer is a Brand's authorization server issuer, {interfaceUrl}/oauth.
func (s *Service) issuer(brandID string) string { return pacturl.OAuthIssuer(s.d.PublicURL, brandID) }

// consentURL is the Provider consent page a Brand login returns to, and
// the aud of the Brand's login assertions.
func (s *Service) consentURL(brandID string) string { return pacturl.Consent(s.d.PublicURL, brandID) }

// now is the clock in whole seconds, the precision of everything stored.
func (s *Service) now() time.Time { return s.d.Now().UTC().Truncate(time.Second) }

// revokeTokenOp names RevokeToken, which a PA may call at a Brand whose
// agent policy no longer admits it.
const revokeTokenOp = "revoke token"

// client is a PA authenticated as an OAuth client at a Brand.
type client struct {
	pa    pajwt.Result
	id    string // client_id == pa.Agent.Issuer
	brand db.Brand
}

// authenticate runs the checks every PA-facing endpoint shares, in order:
// the PA JWT (bare 401), client_id == iss (401 invalid_client), the Brand
// (bare 404) and its delegation settings (400 unauthorized_client). A
// refusal is an OAuthError; an error is an RPC error.
func (s *Service) authenticate(ctx context.Context, op, brandID, authorization, clientID string) (client, *pactv1.OAuthError, error) {
	res, err := s.d.PA.VerifyPA(ctx, authorization)
	if err != nil {
		var refused *pajwt.Error
		if errors.As(err, &refused) {
			s.d.Logger.InfoContext(ctx, "oauth client refused", slog.String("op", op), slog.String("brand_id", brandID),
				slog.String("reason", refused.Reason.String()))
			return client{}, oauthwire.Bare401(), nil
		}
		return client{}, nil, s.fault(ctx, op+": verify PA JWT", err)
	}
	if clientID != res.Agent.Issuer {
		s.d.Logger.InfoContext(ctx, "oauth client_id mismatch", slog.String("op", op), slog.String("brand_id", brandID),
			slog.String("agent_id", res.Agent.ID))
		return client{}, oauthwire.Refusal(oauthwire.ErrInvalidClient, "client_id does not match the issuer of the PA JWT"), nil
	}
	b, notFound, err := s.brand(ctx, op, brandID)
	if err != nil {
		return client{}, nil, err
	}
	if notFound {
		return client{}, oauthwire.Bare404(), nil
	}
	// The Brand's agent policy, as VerifyAgentRequest applies it: a PA the
	// Brand does not admit gets no device authorization or token there (a
	// bare 401, as for a disabled PA). It may still revoke its tokens.
	if !b.Admits(res.Agent.ID) && op != revokeTokenOp {
		s.d.Logger.InfoContext(ctx, "oauth client refused", slog.String("op", op), slog.String("brand_id", brandID),
			slog.String("agent_id", res.Agent.ID), slog.String("reason", "agent not allowed"))
		return client{}, oauthwire.Bare401(), nil
	}
	if !b.Delegation.Enabled {
		return client{}, oauthwire.Refusal(oauthwire.ErrUnauthorizedClient, "this Brand does not offer delegation"), nil
	}
	return client{pa: res, id: clientID, brand: b}, nil, nil
}

// brand loads a Brand for a PA-facing endpoint; notFound is true for an
// unknown Brand (including ids no Brand can have).
func (s *Service) brand(ctx context.Context, op, brandID string) (b db.Brand, notFound bool, err error) {
	if brandID == "" || len(brandID) > maxIDLen {
		return db.Brand{}, true, nil
	}
	b, err = s.d.Store.GetBrand(ctx, brandID)
	if errors.Is(err, db.ErrNotFound) {
		return db.Brand{}, true, nil
	}
	if err != nil {
		return db.Brand{}, false, s.fault(ctx, op+": load brand", err)
	}
	return b, false, nil
}

// loadBrand loads a Brand for a frontend or admin RPC: NotFound when
// unknown, FailedPrecondition when it does not offer delegation.
func (s *Service) loadBrand(ctx context.Context, op, brandID string) (db.Brand, error) {
	if brandID == "" {
		return db.Brand{}, rpcerr.InvalidField("brand_id", "is required")
	}
	b, notFound, err := s.brand(ctx, op, brandID)
	if err != nil {
		return db.Brand{}, err
	}
	if notFound {
		return db.Brand{}, rpcerr.NotFound("brand")
	}
	if !b.Delegation.Enabled {
		return db.Brand{}, failedPrecondition("the Brand does not offer delegation")
	}
	return b, nil
}

// trustedFrontend reports whether the Brand's login is its authenticated
// frontend (BRAND_LOGIN_MODE_TRUSTED_FRONTEND), as db stores the mode.
func trustedFrontend(b db.Brand) bool {
	return b.Delegation.LoginMode == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND.String()
}

// brandScopes maps a Brand's scope ids to their descriptions.
func brandScopes(b db.Brand) map[string]string {
	m := make(map[string]string, len(b.Delegation.Scopes))
	for _, sc := range b.Delegation.Scopes {
		m[sc.ID] = sc.Description
	}
	return m
}

func failedPrecondition(msg string) error {
	return rpcerr.New(connect.CodeFailedPrecondition, pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION, msg)
}

func (s *Service) fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, s.d.Logger, op, err)
}
