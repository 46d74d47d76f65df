package delegation

import (
	"context"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/consent"
	"pactd.dev/pactd/services/delegation/device"
	"pactd.dev/pactd/services/delegation/grants"
	"pactd.dev/pactd/services/delegation/stepup"
	"pactd.dev/pactd/services/delegation/token"
)

// Deps are the service's collaborators (see base.Deps).
type Deps = base.Deps

// BrandKeys yields the keys Brands publish for their login assertions (see
// base.BrandKeys).
type BrandKeys = base.BrandKeys

// Service implements pactv1connect.DelegationServiceHandler: each method
// hands the call to its part (device, token, grants, stepup, consent), and
// every part shares one base.Env.
type Service struct {
	pactv1connect.UnimplementedDelegationServiceHandler
	env     *base.Env
	device  *device.Service
	token   *token.Service
	grants  *grants.Service
	stepUp  *stepup.Service
	consent *consent.Service
}

// New returns the service.
func New(d Deps) *Service {
	env := base.NewEnv(d)
	return &Service{env: env, device: device.New(env), token: token.New(env), grants: grants.New(env), stepUp: stepup.New(env),
		consent: consent.New(env)}
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

// FindGrants finds grants across Brands, Users and PAs (see
// grants.Service.FindGrants).
func (s *Service) FindGrants(ctx context.Context, req *pactv1.FindGrantsRequest) (*pactv1.FindGrantsResponse, error) {
	return s.grants.FindGrants(ctx, req)
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

// DescribeConsent describes a pending authorization for the consent page
// (see consent.Service.DescribeConsent).
func (s *Service) DescribeConsent(ctx context.Context, req *pactv1.DescribeConsentRequest) (*pactv1.DescribeConsentResponse, error) {
	return s.consent.DescribeConsent(ctx, req)
}

// ApproveConsent records the User's approval (see
// consent.Service.ApproveConsent).
func (s *Service) ApproveConsent(ctx context.Context, req *pactv1.ApproveConsentRequest) (*pactv1.ApproveConsentResponse, error) {
	return s.consent.ApproveConsent(ctx, req)
}

// DenyConsent records the User's refusal (see consent.Service.DenyConsent).
func (s *Service) DenyConsent(ctx context.Context, req *pactv1.DenyConsentRequest) (*pactv1.DenyConsentResponse, error) {
	return s.consent.DenyConsent(ctx, req)
}

// BeginConsent opens the consent page of a signed-assertion Brand (see
// consent.Service.BeginConsent).
func (s *Service) BeginConsent(ctx context.Context, req *pactv1.BeginConsentRequest) (*pactv1.BeginConsentResponse, error) {
	return s.consent.BeginConsent(ctx, req)
}

// BeginConnected opens the connected page (see
// consent.Service.BeginConnected).
func (s *Service) BeginConnected(ctx context.Context, req *pactv1.BeginConnectedRequest) (*pactv1.BeginConnectedResponse, error) {
	return s.consent.BeginConnected(ctx, req)
}

// RevokeConnected revokes a grant from the connected page (see
// consent.Service.RevokeConnected).
func (s *Service) RevokeConnected(ctx context.Context, req *pactv1.RevokeConnectedRequest) (*pactv1.RevokeConnectedResponse, error) {
	return s.consent.RevokeConnected(ctx, req)
}
