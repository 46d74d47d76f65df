// Package verification implements pact.v1.VerificationService: the decision
// every A2A request of every frontend goes through (PACT §3, and §5.5 for
// delegation). Refusals are answers, in the manner of Envoy's external
// authorization: the response carries the status and WWW-Authenticate value
// the frontend must send, and a reason for logs and metrics.
package verification

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/internal/ratelimit"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/token/authzdetails"
	"pactd.dev/pactd/token/pajwt"
)

// MaxHeaderBytes bounds each raw header value; a longer one is refused
// as too large without being parsed.
const MaxHeaderBytes = 16 << 10

// Delegation is the grant a verified delegation token carries.
type Delegation struct {
	GrantID   string
	BrandUser string
	Scopes    []string
	ExpiresAt time.Time
	// AuthorizationDetails are the grant's approved details (canonical
	// JSON, "" for a scope-only grant) and Entries the same, decoded.
	AuthorizationDetails string
	Entries              []authzdetails.Entry
}

// Deps are the service's collaborators.
type Deps struct {
	// PA verifies PA JWTs.
	PA PAVerifier
	// Brands holds the Brands; pass a cache (core/brandcache): it is
	// read on every call.
	Brands BrandStore
	// Delegation checks delegation tokens; nil until delegation is built,
	// when a delegation header can only be refused.
	Delegation DelegationChecker
	// AgentLimit and SubjectLimit rate-limit per agent and per (agent, sub);
	// nil means no limit.
	AgentLimit, SubjectLimit *ratelimit.Limiter
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives denies at debug level and faults at error level.
	Logger *slog.Logger
	// Registerer receives the service's metrics; none when nil.
	Registerer prometheus.Registerer
}

// Service implements pactv1connect.VerificationServiceHandler.
type Service struct {
	pactv1connect.UnimplementedVerificationServiceHandler
	d        Deps
	outcomes *prometheus.CounterVec
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{d: d}
	s.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pactd_verify_requests_total",
		Help: "VerifyAgentRequest decisions, by outcome (allow or deny) and reason.",
	}, []string{"outcome", "reason"})
	if d.Registerer != nil {
		d.Registerer.MustRegister(s.outcomes)
	}
	return s
}

// VerifyAgentRequest decides one A2A request. The order follows the
// reference Provider: the PA JWT first (so an unauthenticated caller learns
// nothing about Brands), then the Brand and its agent policy, then rate
// limits, then delegation.
func (s *Service) VerifyAgentRequest(ctx context.Context, req *pactv1.VerifyAgentRequestRequest) (*pactv1.VerifyAgentRequestResponse, error) {
	if req.GetBrandId() == "" {
		return nil, rpcerr.InvalidField("brand_id", "is required")
	}
	if len(req.GetAuthorization()) > MaxHeaderBytes {
		return s.deny(ctx, 401, oauthwire.Challenge, pactv1.DenyReason_DENY_REASON_TOO_LARGE, ""), nil
	}
	res, err := s.d.PA.VerifyPA(ctx, req.GetAuthorization())
	if err != nil {
		var perr *pajwt.Error
		if errors.As(err, &perr) {
			return s.deny(ctx, 401, oauthwire.Challenge, denyReason(perr.Reason), ""), nil
		}
		return nil, rpcerr.Fault(ctx, s.d.Logger, "verify agent request: PA JWT", err)
	}
	agentID := res.Agent.ID
	brand, ok, err := s.brand(ctx, req.GetBrandId())
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, "verify agent request: brand", err)
	}
	if !ok {
		return s.deny(ctx, 404, "", pactv1.DenyReason_DENY_REASON_UNKNOWN_BRAND, agentID), nil
	}
	// The Brand's agent policy: a PA it does not admit is refused as a
	// disabled one is (PACT §1.4: 401), after the Brand lookup so that an
	// unknown Brand stays a 404 for every PA.
	if !brand.Admits(agentID) {
		return s.deny(ctx, 401, oauthwire.Challenge, pactv1.DenyReason_DENY_REASON_AGENT_NOT_ALLOWED, agentID), nil
	}
	if ok, wait := s.d.AgentLimit.Allow(agentID); !ok {
		return s.rateLimited(ctx, agentID, wait), nil
	}
	if ok, wait := s.d.SubjectLimit.Allow(agentID + "\x00" + res.Subject); !ok {
		return s.rateLimited(ctx, agentID, wait), nil
	}
	resp := &pactv1.VerifyAgentRequestResponse{
		Allowed: true, HttpStatus: 200,
		Caller: &pactv1.Caller{AgentId: agentID, Issuer: res.Agent.Issuer, Subject: res.Subject, AgentDisplayName: res.Agent.DisplayName},
	}
	if h := req.GetUserDelegation(); h != "" {
		if len(h) > MaxHeaderBytes {
			return s.deny(ctx, 401, oauthwire.ChallengeInvalidToken, pactv1.DenyReason_DENY_REASON_DELEGATION_INVALID, agentID), nil
		}
		if !brand.Delegation.Enabled || s.d.Delegation == nil {
			return s.deny(ctx, 401, oauthwire.ChallengeInvalidToken, pactv1.DenyReason_DENY_REASON_DELEGATION_DISABLED, agentID), nil
		}
		info, ok, err := s.d.Delegation.CheckDelegation(ctx, brand, res.Agent.Issuer, h)
		if err != nil {
			return nil, rpcerr.Fault(ctx, s.d.Logger, "verify agent request: delegation", err)
		}
		if !ok {
			return s.deny(ctx, 401, oauthwire.ChallengeInvalidToken, pactv1.DenyReason_DENY_REASON_DELEGATION_INVALID, agentID), nil
		}
		resp.Delegation = &pactv1.DelegationInfo{GrantId: info.GrantID, BrandUser: info.BrandUser, Scopes: info.Scopes, ExpiresAt: timestamppb.New(info.ExpiresAt),
			AuthorizationDetailsJson: info.AuthorizationDetails}
		for _, e := range info.Entries {
			resp.Delegation.AuthorizationDetails = append(resp.Delegation.AuthorizationDetails, authzdetails.Proto(e))
		}
	}
	s.outcomes.WithLabelValues("allow", "").Inc()
	return resp, nil
}

func (s *Service) brand(ctx context.Context, id string) (db.Brand, bool, error) {
	b, err := s.d.Brands.GetBrand(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Brand{}, false, nil
	}
	return b, err == nil, err
}

func (s *Service) rateLimited(ctx context.Context, agentID string, wait time.Duration) *pactv1.VerifyAgentRequestResponse {
	r := s.deny(ctx, 429, "", pactv1.DenyReason_DENY_REASON_RATE_LIMITED, agentID)
	r.RetryAfterSeconds = ratelimit.RetryAfterSeconds(wait)
	return r
}

func (s *Service) deny(ctx context.Context, status int32, wwwAuth string, reason pactv1.DenyReason, agentID string) *pactv1.VerifyAgentRequestResponse {
	s.outcomes.WithLabelValues("deny", reason.String()).Inc()
	// The token is never logged; the reason and the agent (when known) are.
	s.d.Logger.DebugContext(ctx, "agent request denied", slog.String("reason", reason.String()), slog.String("agent_id", agentID))
	return &pactv1.VerifyAgentRequestResponse{Allowed: false, HttpStatus: status, WwwAuthenticate: wwwAuth, Reason: reason}
}

// denyReason maps the verifier's reasons onto the API's enum.
func denyReason(r pajwt.Reason) pactv1.DenyReason {
	switch r {
	case pajwt.ReasonMalformed:
		return pactv1.DenyReason_DENY_REASON_MALFORMED
	case pajwt.ReasonTooLarge:
		return pactv1.DenyReason_DENY_REASON_TOO_LARGE
	case pajwt.ReasonAlgorithm:
		return pactv1.DenyReason_DENY_REASON_ALGORITHM
	case pajwt.ReasonForbiddenHeader:
		return pactv1.DenyReason_DENY_REASON_FORBIDDEN_HEADER
	case pajwt.ReasonUnknownIssuer:
		return pactv1.DenyReason_DENY_REASON_UNKNOWN_ISSUER
	case pajwt.ReasonAgentDisabled:
		return pactv1.DenyReason_DENY_REASON_AGENT_DISABLED
	case pajwt.ReasonUnknownKey:
		return pactv1.DenyReason_DENY_REASON_UNKNOWN_KEY
	case pajwt.ReasonSignature:
		return pactv1.DenyReason_DENY_REASON_SIGNATURE
	case pajwt.ReasonAudience:
		return pactv1.DenyReason_DENY_REASON_AUDIENCE
	case pajwt.ReasonSubject:
		return pactv1.DenyReason_DENY_REASON_SUBJECT
	case pajwt.ReasonExpired:
		return pactv1.DenyReason_DENY_REASON_EXPIRED
	case pajwt.ReasonNotYetValid:
		return pactv1.DenyReason_DENY_REASON_NOT_YET_VALID
	case pajwt.ReasonLifetime:
		return pactv1.DenyReason_DENY_REASON_LIFETIME
	case pajwt.ReasonJWKSUnavailable:
		return pactv1.DenyReason_DENY_REASON_JWKS_UNAVAILABLE
	case pajwt.ReasonClaims:
		return pactv1.DenyReason_DENY_REASON_CLAIMS
	}
	return pactv1.DenyReason_DENY_REASON_MALFORMED
}
