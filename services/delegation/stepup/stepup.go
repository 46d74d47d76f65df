// Package stepup prepares the AUTH_REQUIRED task of a turn that needs
// scopes the caller lacks (PACT §5.5).
package stepup

import (
	"context"
	"log/slog"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/codes"
)

// Service answers StartStepUp.
type Service struct{ env *base.Env }

// New returns the step-up part over env.
func New(env *base.Env) *Service { return &Service{env: env} }

// StartStepUp prepares the AUTH_REQUIRED task of a turn that needs scopes
// the caller lacks (PACT §5.5): a task id "t-<uuid>", the missing scopes
// (at least one, each defined by the Brand) and the link for
// pact.verificationUriComplete.
//
// The link is the Brand login leading to the consent page,
// {login_url}/login?return_to={consent URL}, without a user code. pactd
// deliberately creates no device authorization here: its device_code would
// reach nobody, so a User approving it would make a grant no PA can redeem
// (the reference's orphan-code pitfall). The PA repeats the device
// authorization request (§5.3) for the missing scopes, as the spec says,
// and the User enters the code it shows on the consent page this link leads
// to. Only the audit event is stored; the task itself is ephemeral.
func (s *Service) StartStepUp(ctx context.Context, req *pactv1.StartStepUpRequest) (*pactv1.StartStepUpResponse, error) {
	const op = "start step-up"
	var v rpcerr.Violations
	if len(req.GetAgentId()) > base.MaxIDLen {
		v.Add("agent_id", "must be at most %d bytes", base.MaxIDLen)
	}
	if len(req.GetContextId()) > base.MaxIDLen {
		v.Add("context_id", "must be at most %d bytes", base.MaxIDLen)
	}
	switch n := len(req.GetMissingScopes()); {
	case n == 0:
		v.Add("missing_scopes", "name at least one scope")
	case n > codes.MaxScopes:
		v.Add("missing_scopes", "at most %d scopes", codes.MaxScopes)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	b, err := s.env.LoadBrand(ctx, op, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	defined := base.BrandScopes(b)
	resp := &pactv1.StartStepUpResponse{}
	seen := map[string]bool{}
	for _, sc := range req.GetMissingScopes() {
		desc, ok := defined[sc]
		if !ok {
			v.Add("missing_scopes", "%q is not a scope of this Brand", truncate(sc, codes.MaxScopeID))
			continue
		}
		if seen[sc] {
			continue
		}
		seen[sc] = true
		resp.MissingScopes = append(resp.MissingScopes, sc)
		resp.Scopes = append(resp.Scopes, &pactv1.Scope{Id: sc, Description: desc})
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if resp.TaskId, err = codes.NewTaskID(s.env.D.Rand); err != nil {
		return nil, s.env.Fault(ctx, op, err)
	}
	resp.VerificationUriComplete = s.env.StepUpURI(b, resp.TaskId)
	// The step-up is on the trail before the PA hears of it.
	if _, err := s.env.D.Store.RecordAuditEvent(ctx, db.AuditEvent{Kind: db.AuditStepUp, Time: s.env.Now(), BrandID: b.ID,
		AgentID: req.GetAgentId(), Scopes: resp.MissingScopes, Actor: base.CallerActor(ctx), Detail: resp.TaskId}); err != nil {
		return nil, s.env.Fault(ctx, op+": audit", err)
	}
	s.env.Recorded(db.AuditStepUp)
	s.env.D.Logger.InfoContext(ctx, "step-up prepared", slog.String("brand_id", b.ID), slog.String("agent_id", req.GetAgentId()),
		slog.Int("missing_scopes", len(resp.MissingScopes)))
	return resp, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
