// Package grants is what the delegation service answers about grants: a
// Brand user's list, revocation by the Brand or an operator, the action
// guard CheckGrant, and the purge of expired delegation state.
package grants

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/paging"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation/base"
)

// Service answers RevokeGrant, ListGrants, FindGrants, CheckGrant and
// PurgeExpired.
type Service struct {
	env *base.Env
	// checks counts CheckGrant answers by result.
	checks *prometheus.CounterVec
}

// New returns the grants part over env; its metric goes to
// env.D.Registerer when there is one.
func New(env *base.Env) *Service {
	s := &Service{env: env}
	s.checks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_check_grant_total",
		Help: "CheckGrant answers, by result: active, or the reason it is not (unknown, revoked, expired, scope_not_granted, details_not_covered, scope_restricted, agent_not_allowed)."},
		[]string{"result"})
	if env.D.Registerer != nil {
		env.D.Registerer.MustRegister(s.checks)
	}
	return s
}

// RevokeGrant revokes a grant of the Brand (and, when brand_user is given,
// of that Brand user): its refresh tokens stop rotating and its delegation
// tokens stop verifying at once. Revoking a revoked grant succeeds and
// changes nothing; a grant of another Brand or user is NotFound.
func (s *Service) RevokeGrant(ctx context.Context, req *pactv1.RevokeGrantRequest) (*pactv1.RevokeGrantResponse, error) {
	const op = "revoke grant"
	var v rpcerr.Violations
	if req.GetBrandId() == "" {
		v.Add("brand_id", "is required")
	}
	if req.GetGrantId() == "" {
		v.Add("grant_id", "is required")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if len(req.GetGrantId()) > base.MaxIDLen {
		return nil, rpcerr.NotFound("grant")
	}
	g, err := s.env.D.Store.GetGrant(ctx, req.GetGrantId())
	if errors.Is(err, db.ErrNotFound) || (err == nil && (g.BrandID != req.GetBrandId() ||
		(req.GetBrandUser() != "" && g.BrandUser != req.GetBrandUser()))) {
		return nil, rpcerr.NotFound("grant")
	}
	if err != nil {
		return nil, s.env.Fault(ctx, op+": load", err)
	}
	revoked, err := s.env.D.Store.RevokeGrant(s.env.AuditGrant(ctx, db.AuditGrantRevoked, g, base.CallerActor(ctx), ""), g.ID, s.env.Now())
	if err != nil {
		return nil, s.env.Fault(ctx, op, err)
	}
	if revoked {
		s.env.Recorded(db.AuditGrantRevoked)
		s.env.D.Logger.InfoContext(ctx, "grant revoked", slog.String("brand_id", g.BrandID), slog.String("agent_id", g.AgentID),
			slog.String("grant_id", g.ID))
	}
	return &pactv1.RevokeGrantResponse{}, nil
}

// ListGrants lists a Brand user's grants, newest first, live, revoked and
// expired alike (revoke_time tells them apart), a page at a time.
func (s *Service) ListGrants(ctx context.Context, req *pactv1.ListGrantsRequest) (*pactv1.ListGrantsResponse, error) {
	const op = "list grants"
	var v rpcerr.Violations
	if req.GetBrandId() == "" {
		v.Add("brand_id", "is required")
	}
	base.CheckBrandUser(&v, "brand_user", req.GetBrandUser())
	if err := v.Err(); err != nil {
		return nil, err
	}
	p, err := paging.Parse(req.GetPage())
	if err != nil {
		return nil, err
	}
	b, notFound, err := s.env.Brand(ctx, op, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	if notFound {
		return nil, rpcerr.NotFound("brand")
	}
	list, err := s.env.D.Store.ListGrants(ctx, b.ID, req.GetBrandUser(), p.AfterID, p.Size)
	if err != nil {
		return nil, s.env.Fault(ctx, op, err)
	}
	resp := &pactv1.ListGrantsResponse{Grants: make([]*pactv1.Grant, 0, len(list))}
	for _, g := range list {
		out := ToProto(g)
		// The grant's restrictions, in the consent page's words; a stored
		// value that cannot be read is a fault, never silently left out.
		if out.AuthorizationDetails, err = base.ConsentDetails(b, g.AuthorizationDetails, g.AuthorizationDetailsScopes); err != nil {
			return nil, s.env.Fault(ctx, op+": stored authorization_details", err)
		}
		resp.Grants = append(resp.Grants, out)
	}
	if len(list) > 0 {
		resp.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].ID)
	}
	return resp, nil
}

// FindGrants finds grants across Brands, Users and PAs, newest first: an
// operator's search. brand_user needs brand_id, and one of brand_id and
// agent_id is required, so no call lists every grant at once by accident;
// an unknown (or over-long) id finds nothing.
func (s *Service) FindGrants(ctx context.Context, req *pactv1.FindGrantsRequest) (*pactv1.FindGrantsResponse, error) {
	const op = "find grants"
	var v rpcerr.Violations
	if req.GetBrandId() == "" && req.GetAgentId() == "" {
		v.Add("brand_id", "brand_id or agent_id is required")
	}
	if u := req.GetBrandUser(); u != "" {
		if req.GetBrandId() == "" {
			v.Add("brand_user", "needs brand_id")
		}
		base.CheckBrandUser(&v, "brand_user", u)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	p, err := paging.Parse(req.GetPage())
	if err != nil {
		return nil, err
	}
	resp := &pactv1.FindGrantsResponse{Grants: []*pactv1.Grant{}}
	if len(req.GetBrandId()) > base.MaxIDLen || len(req.GetAgentId()) > base.MaxIDLen {
		return resp, nil
	}
	list, err := s.env.D.Store.FindGrants(ctx, db.GrantFilter{BrandID: req.GetBrandId(), BrandUser: req.GetBrandUser(), AgentID: req.GetAgentId()},
		p.AfterID, p.Size)
	if err != nil {
		return nil, s.env.Fault(ctx, op, err)
	}
	// Each grant's restrictions in its Brand's words: a page names a few
	// Brands at most, each loaded once.
	brands := map[string]db.Brand{}
	for _, g := range list {
		out := ToProto(g)
		if g.AuthorizationDetails != "" {
			b, ok := brands[g.BrandID]
			if !ok {
				var notFound bool
				if b, notFound, err = s.env.Brand(ctx, op, g.BrandID); err != nil {
					return nil, err
				} else if notFound {
					return nil, s.env.Fault(ctx, op, fmt.Errorf("grant %s: brand %s is gone", g.ID, g.BrandID))
				}
				brands[g.BrandID] = b
			}
			if out.AuthorizationDetails, err = base.ConsentDetails(b, g.AuthorizationDetails, g.AuthorizationDetailsScopes); err != nil {
				return nil, s.env.Fault(ctx, op+": stored authorization_details", err)
			}
		}
		resp.Grants = append(resp.Grants, out)
	}
	if len(list) > 0 {
		resp.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].ID)
	}
	return resp, nil
}

// ToProto is a grant as the API shows it.
func ToProto(g db.Grant) *pactv1.Grant {
	out := &pactv1.Grant{
		GrantId: g.ID, BrandId: g.BrandID, AgentId: g.AgentID, AgentDisplayName: g.AgentDisplayName,
		BrandUser: g.BrandUser, Scopes: g.Scopes,
		CreateTime: timestamppb.New(g.CreateTime), ExpireTime: timestamppb.New(g.ExpireTime),
	}
	if !g.RevokeTime.IsZero() {
		out.RevokeTime = timestamppb.New(g.RevokeTime)
	}
	return out
}

// PurgeExpired deletes device authorizations and refresh tokens that have
// expired (their codes can never be redeemed again; refresh tokens expire
// with their grant, so reuse detection is not weakened). Expired user
// codes otherwise keep occupying the user-code space. It also drops the
// records of used Brand login assertions once the assertions could no
// longer be accepted anyway (exp + brandassert.Skew). Run it periodically; it
// returns how many rows went.
func (s *Service) PurgeExpired(ctx context.Context) (int64, error) {
	n, err := s.env.D.Store.PurgeExpiredDelegation(ctx, s.env.Now())
	if err != nil {
		return 0, fmt.Errorf("purge expired delegation state: %w", err)
	}
	return n, nil
}
