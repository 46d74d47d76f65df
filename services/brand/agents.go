package brand

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/paging"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/bounds"
	"pactd.dev/pactd/internal/rpcerr"
)

// maxAgentIDLen bounds an agent id a caller names; no agent has a longer
// one, so a longer id is answered as unknown.
const maxAgentIDLen = bounds.CallerID

// SetBrandAgentPolicy chooses which enabled PAs may call the Brand.
func (s *Service) SetBrandAgentPolicy(ctx context.Context, req *pactv1.SetBrandAgentPolicyRequest) (*pactv1.SetBrandAgentPolicyResponse, error) {
	var p db.AgentPolicy
	switch req.GetPolicy() {
	case pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_ALL:
		p = db.AgentPolicyAll
	case pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED:
		p = db.AgentPolicyListed
	default:
		return nil, rpcerr.InvalidField("policy", "must be BRAND_AGENT_POLICY_ALL or BRAND_AGENT_POLICY_LISTED")
	}
	if _, err := s.load(ctx, req.GetBrandId()); err != nil {
		return nil, err
	}
	b, err := s.d.Store.SetBrandAgentPolicy(ctx, req.GetBrandId(), p, s.d.Now())
	if err != nil {
		return nil, s.storeErr(ctx, "set brand agent policy", err)
	}
	s.d.OnChange(b.ID)
	s.d.Logger.InfoContext(ctx, "brand agent policy set", slog.String("brand_id", b.ID), slog.String("policy", string(p)))
	return &pactv1.SetBrandAgentPolicyResponse{Brand: s.toProto(b)}, nil
}

// AddBrandAgent puts a PA on the Brand's list.
func (s *Service) AddBrandAgent(ctx context.Context, req *pactv1.AddBrandAgentRequest) (*pactv1.AddBrandAgentResponse, error) {
	if err := s.checkAgentID(req.GetAgentId()); err != nil {
		return nil, err
	}
	if _, err := s.load(ctx, req.GetBrandId()); err != nil {
		return nil, err
	}
	if len(req.GetAgentId()) > maxAgentIDLen {
		return nil, rpcerr.NotFound("agent")
	}
	added, err := s.d.Store.AddBrandAgent(ctx, req.GetBrandId(), req.GetAgentId(), s.d.Now())
	switch {
	case errors.Is(err, db.ErrNotFound):
		// The Brand was loaded just now (and Brands are never deleted):
		// the agent is what is missing.
		return nil, rpcerr.NotFound("agent")
	case errors.Is(err, db.ErrFull):
		return nil, rpcerr.AtLimit.Err(
			fmt.Sprintf("the Brand's agent list holds %d agents, the most it may", db.MaxBrandAgents))
	case err != nil:
		return nil, s.fault(ctx, "add brand agent", err)
	}
	if added {
		s.d.OnChange(req.GetBrandId())
		s.d.Logger.InfoContext(ctx, "agent added to brand list", slog.String("brand_id", req.GetBrandId()), slog.String("agent_id", req.GetAgentId()))
	}
	return &pactv1.AddBrandAgentResponse{Added: added}, nil
}

// RemoveBrandAgent takes a PA off the Brand's list.
func (s *Service) RemoveBrandAgent(ctx context.Context, req *pactv1.RemoveBrandAgentRequest) (*pactv1.RemoveBrandAgentResponse, error) {
	if err := s.checkAgentID(req.GetAgentId()); err != nil {
		return nil, err
	}
	if _, err := s.load(ctx, req.GetBrandId()); err != nil {
		return nil, err
	}
	if len(req.GetAgentId()) > maxAgentIDLen {
		return nil, rpcerr.NotFound("listed agent")
	}
	err := s.d.Store.RemoveBrandAgent(ctx, req.GetBrandId(), req.GetAgentId())
	if errors.Is(err, db.ErrNotFound) {
		return nil, rpcerr.NotFound("listed agent")
	}
	if err != nil {
		return nil, s.fault(ctx, "remove brand agent", err)
	}
	s.d.OnChange(req.GetBrandId())
	s.d.Logger.InfoContext(ctx, "agent removed from brand list", slog.String("brand_id", req.GetBrandId()), slog.String("agent_id", req.GetAgentId()))
	return &pactv1.RemoveBrandAgentResponse{}, nil
}

// ListBrandAgents lists the PAs on the Brand's list, by id.
func (s *Service) ListBrandAgents(ctx context.Context, req *pactv1.ListBrandAgentsRequest) (*pactv1.ListBrandAgentsResponse, error) {
	p, err := paging.Parse(req.GetPage())
	if err != nil {
		return nil, err
	}
	b, err := s.load(ctx, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	list, err := s.d.Store.ListBrandAgents(ctx, b.ID, p.AfterID, p.Size)
	if err != nil {
		return nil, s.fault(ctx, "list brand agents", err)
	}
	resp := &pactv1.ListBrandAgentsResponse{Policy: policyToProto(b.AgentPolicy), Agents: make([]*pactv1.BrandAgent, 0, len(list))}
	for _, a := range list {
		resp.Agents = append(resp.Agents, &pactv1.BrandAgent{AgentId: a.AgentID, DisplayName: a.DisplayName, AddTime: timestamppb.New(a.AddTime)})
	}
	if len(list) > 0 {
		resp.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].AgentID)
	}
	return resp, nil
}

func (s *Service) checkAgentID(id string) error {
	if id == "" {
		return rpcerr.InvalidField("agent_id", "is required")
	}
	return nil
}

// policyToProto maps the stored policy; anything but "listed" is ALL.
func policyToProto(p db.AgentPolicy) pactv1.BrandAgentPolicy {
	if p == db.AgentPolicyListed {
		return pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED
	}
	return pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_ALL
}
