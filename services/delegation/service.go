package delegation

import (
	"context"

	pactv1 "pactd/gen/pact/v1"
	"pactd/gen/pact/v1/pactv1connect"
	"pactd/services/delegation/base"
	"pactd/services/delegation/device"
	"pactd/services/delegation/grants"
	"pactd/services/delegation/stepup"
	"pactd/services/delegation/token"
)

// Deps are the service's collaborators (see base.Deps).
type Deps = base.Deps

// BrandKeys yields the keys Brands publish for their login assertions (see
// base.BrandKeys).
type BrandKeys = base.BrandKeys

// Service implements pactv1connect.DelegationServiceHandler. Its parts
// live in the subpackages (device, token, grants, stepup); consent, the
// consent session, the connected page and consent skipping are in this
// package. Every part shares one base.Env.
type Service struct {
	pactv1connect.UnimplementedDelegationServiceHandler
	env    *base.Env
	device *device.Service
	token  *token.Service
	grants *grants.Service
	stepUp *stepup.Service
}

// New returns the service.
func New(d Deps) *Service {
	env := base.NewEnv(d)
	return &Service{env: env, device: device.New(env), token: token.New(env), grants: grants.New(env), stepUp: stepup.New(env)}
}

// StartDeviceAuthorization is the device authorization endpoint (see
// device.Service.StartDeviceAuthorization).
func (s *Service) StartDeviceAuthorization(ctx context.Context, req *pactv1.StartDeviceAuthorizationRequest) (*pactv1.StartDeviceAuthorizationResponse, error) {
	return s.device.StartDeviceAuthorization(ctx, req)
}

// IssueDelegation is the token endpoint (see token.Service.IssueDelegation).
func (s *Service) IssueDelegation(ctx context.Context, req *pactv1.IssueDelegationRequest) (*pactv1.IssueDelegationResponse, error) {
	return s.token.IssueDelegation(ctx, req)
}

// RevokeToken is the revocation endpoint (see token.Service.RevokeToken).
func (s *Service) RevokeToken(ctx context.Context, req *pactv1.RevokeTokenRequest) (*pactv1.RevokeTokenResponse, error) {
	return s.token.RevokeToken(ctx, req)
}

// RevokeGrant revokes a grant (see grants.Service.RevokeGrant).
func (s *Service) RevokeGrant(ctx context.Context, req *pactv1.RevokeGrantRequest) (*pactv1.RevokeGrantResponse, error) {
	return s.grants.RevokeGrant(ctx, req)
}

// ListGrants lists a Brand user's grants (see grants.Service.ListGrants).
func (s *Service) ListGrants(ctx context.Context, req *pactv1.ListGrantsRequest) (*pactv1.ListGrantsResponse, error) {
	return s.grants.ListGrants(ctx, req)
}

// CheckGrant is the action guard (see grants.Service.CheckGrant).
func (s *Service) CheckGrant(ctx context.Context, req *pactv1.CheckGrantRequest) (*pactv1.CheckGrantResponse, error) {
	return s.grants.CheckGrant(ctx, req)
}

// PurgeExpired deletes expired delegation state and returns how many rows
// went (see grants.Service.PurgeExpired).
func (s *Service) PurgeExpired(ctx context.Context) (int64, error) {
	return s.grants.PurgeExpired(ctx)
}

// StartStepUp prepares a step-up task (see stepup.Service.StartStepUp).
func (s *Service) StartStepUp(ctx context.Context, req *pactv1.StartStepUpRequest) (*pactv1.StartStepUpResponse, error) {
	return s.stepUp.StartStepUp(ctx, req)
}
