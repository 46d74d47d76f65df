package pacta2a

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// Guard is the action guard: a delegated agent asks it, right before a
// tool runs and again after a slow policy decision, whether the turn's
// grant is still active and grants what the tool needs, so a grant the
// User revoked in between stops the tool. It calls pactd's CheckGrant,
// which answers from the replica's grant cache within the same revocation
// bound as VerifyAgentRequest (no database read while nothing changed).
//
// Check fails closed: any answer but "active" is an error, and so is a
// failure to reach pactd; run the tool only when it returns nil.
type Guard struct {
	deleg pactv1connect.DelegationServiceClient
}

// NewGuard returns a Guard that calls pactd at pactdURL with the frontend
// credential token; client is the HTTP client (one with a 10 s timeout
// when nil). A Handler has one already (Handler.Guard).
func NewGuard(pactdURL, token string, client connect.HTTPClient) (*Guard, error) {
	if pactdURL == "" || token == "" {
		return nil, errors.New("pacta2a: NewGuard needs pactd's URL and a frontend token")
	}
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	auth := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}))
	return &Guard{deleg: pactv1connect.NewDelegationServiceClient(client, pactdURL, auth)}, nil
}

// Guard returns the action guard on the Handler's connection to pactd.
func (h *Handler) Guard() *Guard { return &Guard{deleg: h.deleg} }

// Need is what one tool call needs of the grant.
type Need struct {
	// Scopes are the scope ids the tool needs.
	Scopes []string
	// Detail is one RFC 9396 authorization_details entry (a JSON object)
	// describing the action, for a scope the grant may restrict, e.g.
	// {"type":"https://acme.example/order","order_id":"1002","actions":["cancel"]};
	// empty for none.
	Detail string
}

// ErrNotDelegated is Check's answer for a turn without a grant.
var ErrNotDelegated = errors.New("pacta2a: the turn carries no delegation grant")

// InactiveError is Check's answer when pactd says the grant is not active
// for the need.
type InactiveError struct {
	// Reason is pactd's answer (revoked, expired, unknown,
	// scope_not_granted, details_not_covered, scope_restricted,
	// agent_not_allowed).
	Reason pactv1.GrantCheckReason
	// MissingScopes are the scopes the grant lacks (scope_not_granted) or
	// restricts without a covering entry (scope_restricted).
	MissingScopes []string
}

func (e *InactiveError) Error() string {
	r := strings.ToLower(strings.TrimPrefix(e.Reason.String(), "GRANT_CHECK_REASON_"))
	if len(e.MissingScopes) > 0 {
		return fmt.Sprintf("pacta2a: grant not active: %s (%s)", r, strings.Join(e.MissingScopes, " "))
	}
	return "pacta2a: grant not active: " + r
}

// Check asks pactd whether the turn's grant is active now for the need:
// nil when it is, ErrNotDelegated for an identity-only turn, an
// *InactiveError when pactd says no, and pactd's error when it could not
// be asked. The grant must be the turn's PA's and Brand user's.
func (g *Guard) Check(ctx context.Context, t Turn, need Need) error {
	if t.Delegation == nil || t.Delegation.GetGrantId() == "" {
		return ErrNotDelegated
	}
	r, err := g.deleg.CheckGrant(ctx, &pactv1.CheckGrantRequest{
		BrandId: t.BrandID, GrantId: t.Delegation.GetGrantId(), BrandUser: t.Delegation.GetBrandUser(),
		AgentId: t.Caller.GetAgentId(), Scopes: need.Scopes, AuthorizationDetailsJson: need.Detail,
	})
	if err != nil {
		return fmt.Errorf("pacta2a: check grant: %w", err)
	}
	if !r.GetActive() {
		return &InactiveError{Reason: r.GetReason(), MissingScopes: r.GetMissingScopes()}
	}
	return nil
}
