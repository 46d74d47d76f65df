package agent

import (
	"context"
	"errors"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/urlrule"
	"pactd.dev/pactd/token/regjwt"
)

// Self-registration policies (PACT_SELF_REGISTRATION).
const (
	SelfRegistrationOff     = "off"
	SelfRegistrationPending = "pending"
	SelfRegistrationEnabled = "enabled"
)

// SelfRegisterAgent checks a registration with regjwt, then records it with
// the store, which consumes the jti. A refusal stores nothing.
func (s *Service) SelfRegisterAgent(ctx context.Context, req *pactv1.SelfRegisterAgentRequest) (*pactv1.SelfRegisterAgentResponse, error) {
	// The token's one bound is regjwt.MaxTokenBytes, refused below with
	// its named reason before anything decodes it (the message as a whole
	// is within apidesc.MaxRequestBytes).
	if len(req.GetName()) > urlrule.MaxURLLength {
		return nil, rpcerr.InvalidField("name", "longer than %d bytes", urlrule.MaxURLLength)
	}
	if len(req.GetJwksUri()) > urlrule.MaxURLLength {
		return nil, rpcerr.InvalidField("jwks_uri", "longer than %d bytes", urlrule.MaxURLLength)
	}
	if req.GetEndpointUrl() == "" {
		return nil, rpcerr.InvalidField("endpoint_url", "is required")
	}
	resp := s.selfRegister(ctx, req)
	if resp == nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, "self-register agent", errors.New("store failed"))
	}
	if s.d.OnSelfRegistration != nil {
		s.d.OnSelfRegistration(resp.GetResult())
	}
	return resp, nil
}

func (s *Service) selfRegister(ctx context.Context, req *pactv1.SelfRegisterAgentRequest) *pactv1.SelfRegisterAgentResponse {
	refused := func(r pactv1.SelfRegistrationResult, reason string) *pactv1.SelfRegisterAgentResponse {
		return &pactv1.SelfRegisterAgentResponse{Result: r, Reason: reason}
	}
	policy := s.d.SelfRegistration
	if policy != SelfRegistrationPending && policy != SelfRegistrationEnabled {
		return refused(pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CLOSED, regjwt.ReasonRegistrationClosed)
	}
	if s.d.RegistrationKeys == nil {
		return refused(pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CLOSED, regjwt.ReasonRegistrationClosed)
	}
	now := s.d.Now()
	p, ref := regjwt.Checker{Keys: s.d.RegistrationKeys, Dev: s.d.Dev}.Check(ctx,
		regjwt.Request{Token: req.GetToken(), Name: req.GetName(), JWKSURI: req.GetJwksUri(), Endpoint: req.GetEndpointUrl()}, now)
	if ref != nil {
		r := pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_TOKEN
		if ref.Status == regjwt.BadRequest {
			r = pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_REQUEST
		}
		return refused(r, ref.Reason)
	}
	reg := db.SelfRegistration{
		Name: req.GetName(), JTI: p.JTI, JTIExpire: p.Expiry.Add(regjwt.Skew), Now: now,
		Agent: db.Agent{
			ID: ids.New("agt_", now), Issuer: p.Issuer, JWKSURI: req.GetJwksUri(), DisplayName: req.GetName(),
			Enabled: policy == SelfRegistrationEnabled, CreateTime: now, UpdateTime: now,
		},
	}
	a, created, err := s.d.Store.SelfRegisterAgent(ctx, reg)
	if errors.Is(err, db.ErrConflict) {
		// A concurrent registration won a unique key; its commit is visible
		// now, so a second pass answers EXISTS, CONFLICT or jti_replayed.
		a, created, err = s.d.Store.SelfRegisterAgent(ctx, reg)
	}
	switch {
	case errors.Is(err, db.ErrReplay):
		return refused(pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_TOKEN, regjwt.ReasonJTIReplayed)
	case errors.Is(err, db.ErrNameTaken):
		return refused(pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CONFLICT, regjwt.ReasonNameTaken)
	case errors.Is(err, db.ErrIssuerTaken), errors.Is(err, db.ErrConflict):
		return refused(pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CONFLICT, regjwt.ReasonIssuerTaken)
	case err != nil:
		s.d.Logger.ErrorContext(ctx, "self-register agent", "err", err)
		return nil
	}
	out := &pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_EXISTS, Agent: s.toProto(a), Name: req.GetName()}
	if created {
		out.Result = pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CREATED
		s.d.OnChange(a, false)
	}
	return out
}
