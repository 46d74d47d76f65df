package pacta2a_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"connectrpc.com/connect"

	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// fakeCheck stands in for pactd's CheckGrant: grant "live" is active,
// "gone" revoked, "narrow" lacks every scope asked, "fault" fails.
type fakeCheck struct {
	pactv1connect.UnimplementedDelegationServiceHandler
	mu   sync.Mutex
	last *pactv1.CheckGrantRequest
}

func (f *fakeCheck) CheckGrant(ctx context.Context, req *pactv1.CheckGrantRequest) (*pactv1.CheckGrantResponse, error) {
	if info, ok := connect.CallInfoForHandlerContext(ctx); !ok || info.RequestHeader().Get("Authorization") != "Bearer "+frontendToken {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("no frontend token"))
	}
	f.mu.Lock()
	f.last = req
	f.mu.Unlock()
	switch req.GetGrantId() {
	case "live":
		return &pactv1.CheckGrantResponse{Active: true}, nil
	case "gone":
		return &pactv1.CheckGrantResponse{Reason: pactv1.GrantCheckReason_GRANT_CHECK_REASON_REVOKED}, nil
	case "narrow":
		return &pactv1.CheckGrantResponse{Reason: pactv1.GrantCheckReason_GRANT_CHECK_REASON_SCOPE_NOT_GRANTED, MissingScopes: req.GetScopes()}, nil
	}
	return nil, connect.NewError(connect.CodeUnavailable, errors.New("database down"))
}

// Check passes the turn's Brand, grant, user and PA and the need to
// pactd, and runs the tool (nil) only on an active answer: every other
// answer, an identity-only turn and an unreachable pactd are errors.
const frontendToken = "frontend-secret"

func TestGuardCheck(t *testing.T) {
	f := &fakeCheck{}
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewDelegationServiceHandler(f))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	g, err := pacta2a.NewGuard(srv.URL, frontendToken, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	turn := func(grant string) pacta2a.Turn {
		return pacta2a.Turn{BrandID: "acme", Caller: &pactv1.Caller{AgentId: "agt_1", Subject: "pa-user"},
			Delegation: &pactv1.DelegationInfo{GrantId: grant, BrandUser: "user-42", Scopes: []string{"orders:read"}}}
	}
	need := pacta2a.Need{Scopes: []string{"orders:write"}, Detail: `{"type":"https://acme.example/order","order_id":"1002"}`}
	ctx := t.Context()
	if err := g.Check(ctx, turn("live"), need); err != nil {
		t.Fatalf("ok/active: %v", err)
	}
	f.mu.Lock()
	got := f.last
	f.mu.Unlock()
	if got.GetBrandId() != "acme" || got.GetGrantId() != "live" || got.GetBrandUser() != "user-42" || got.GetAgentId() != "agt_1" ||
		!slices.Equal(got.GetScopes(), need.Scopes) || got.GetAuthorizationDetailsJson() != need.Detail {
		t.Fatalf("CheckGrant got %v", got)
	}
	var inactive *pacta2a.InactiveError
	if err := g.Check(ctx, turn("gone"), need); !errors.As(err, &inactive) || inactive.Reason != pactv1.GrantCheckReason_GRANT_CHECK_REASON_REVOKED ||
		err.Error() != "pacta2a: grant not active: revoked" {
		t.Fatalf("fail/revoked: %v", err)
	}
	if err := g.Check(ctx, turn("narrow"), need); !errors.As(err, &inactive) || !slices.Equal(inactive.MissingScopes, []string{"orders:write"}) ||
		err.Error() != "pacta2a: grant not active: scope_not_granted (orders:write)" {
		t.Fatalf("fail/scope-not-granted: %v", err)
	}
	if err := g.Check(ctx, turn("fault"), need); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("fail/pactd-unavailable: %v, want Unavailable", err)
	}
	identity := turn("live")
	identity.Delegation = nil
	if err := g.Check(ctx, identity, need); !errors.Is(err, pacta2a.ErrNotDelegated) {
		t.Fatalf("fail/not-delegated: %v", err)
	}
	if _, err := pacta2a.NewGuard(srv.URL, "", nil); err == nil {
		t.Fatal("fail/no-token: NewGuard accepted an empty token")
	}
}
