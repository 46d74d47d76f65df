package auth

import (
	"context"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/rpcerr"
)

// frontendProcedures are the procedures a frontend credential may call; an
// admin credential may call every procedure. Anything not listed here is
// admin-only, so a new RPC is closed until someone opens it.
var frontendProcedures = map[string]bool{
	pactv1connect.VerificationServiceVerifyAgentRequestProcedure: true,
	pactv1connect.BrandServiceGetAgentCardProcedure:              true,
	// A frontend serves every Brand pactd has; its root page lists them
	// (names and card links, all of which the cards publish anyway).
	pactv1connect.BrandServiceListBrandsProcedure:                     true,
	pactv1connect.ConversationServiceBeginTurnProcedure:               true,
	pactv1connect.ConversationServiceCompleteTurnProcedure:            true,
	pactv1connect.ConversationServiceAbandonTurnProcedure:             true,
	pactv1connect.ConversationServiceCloseContextProcedure:            true,
	pactv1connect.DelegationServiceStartDeviceAuthorizationProcedure:  true,
	pactv1connect.DelegationServiceDescribeConsentProcedure:           true,
	pactv1connect.DelegationServiceBeginConsentProcedure:              true,
	pactv1connect.DelegationServiceApproveConsentProcedure:            true,
	pactv1connect.DelegationServiceDenyConsentProcedure:               true,
	pactv1connect.DelegationServiceIssueDelegationProcedure:           true,
	pactv1connect.DelegationServiceRevokeGrantProcedure:               true,
	pactv1connect.DelegationServiceRevokeTokenProcedure:               true,
	pactv1connect.DelegationServiceListGrantsProcedure:                true,
	pactv1connect.DelegationServiceStartStepUpProcedure:               true,
	pactv1connect.DelegationServiceCheckGrantProcedure:                true,
	pactv1connect.DelegationServiceBeginConnectedProcedure:            true,
	pactv1connect.DelegationServiceRevokeConnectedProcedure:           true,
	pactv1connect.TokenServiceIntrospectTokenProcedure:                true,
	pactv1connect.TokenServiceSignReceiptProcedure:                    true,
	pactv1connect.TokenServiceGetJwksProcedure:                        true,
	pactv1connect.TokenServiceGetAuthorizationServerMetadataProcedure: true,
	pactv1connect.AuditServiceListBrandAuditEventsProcedure:           true,
	pactv1connect.AgentServiceSelfRegisterAgentProcedure:              true,
	// The whole front door: what a frontend forwards and its agent's answers.
	pactv1connect.FrontDoorServiceServeProcedure:      true,
	pactv1connect.FrontDoorServiceFinishTurnProcedure: true,

	// hdtp.v1: a host's MCP server is a frontend. It serves its identities'
	// cards and uses the stateless trust helpers; everything that changes
	// an identity (create, signing requests, chains, settings, delete) is
	// an owner action and stays admin-only (docs/hdtp.md, "Roles").
	hdtpv1connect.IdentityServiceGetIdentityProcedure:      true,
	hdtpv1connect.IdentityServiceGetCardProcedure:          true,
	hdtpv1connect.TrustServiceValidateChainProcedure:       true,
	hdtpv1connect.TrustServiceParseCardProcedure:           true,
	hdtpv1connect.TrustServiceVerifyCardSignatureProcedure: true,
	hdtpv1connect.TrustServiceCompareLeavesProcedure:       true,
	hdtpv1connect.TrustServiceFingerprintProcedure:         true,
	hdtpv1connect.TrustServiceCheckAddressProcedure:        true,
	// The host service is the MCP server's whole protocol: every inbound
	// call, the dispatch completions, outbound calls and the invite
	// landing. Contacts and invites are the person's decisions
	// (ContactService, InviteService): admin-only.
	hdtpv1connect.HostServiceOpenInboundProcedure:        true,
	hdtpv1connect.HostServiceCompleteInboundProcedure:    true,
	hdtpv1connect.HostServiceSealOutboundProcedure:       true,
	hdtpv1connect.HostServiceOpenOutboundResultProcedure: true,
	hdtpv1connect.HostServiceServeInviteProcedure:        true,
	hdtpv1connect.HostServiceSetContentToolsProcedure:    true,
	hdtpv1connect.HostServiceGetContentToolsProcedure:    true,
}

// Allowed reports whether a role may call a procedure.
func Allowed(role db.Role, procedure string) bool {
	switch role {
	case db.RoleAdmin:
		return true
	case db.RoleFrontend:
		return frontendProcedures[procedure]
	}
	return false
}

type roleKey struct{}

// RoleFrom returns the authenticated caller's role, or "".
func RoleFrom(ctx context.Context) db.Role {
	r, _ := ctx.Value(roleKey{}).(db.Role)
	return r
}

// WithRole returns ctx carrying role as the caller's role, for an in-process
// caller that authenticated the operator another way: the console, whose
// session an admin credential opened and which it checks (the session and
// that credential both live) before every call. Services then see the call
// as an RPC of that role, with the same rules and audit actor.
func WithRole(ctx context.Context, role db.Role) context.Context {
	return context.WithValue(ctx, roleKey{}, role)
}

// Interceptor authenticates every call and checks its role against the
// procedure. Health and reflection are mounted without it.
func (a *Authenticator) Interceptor() connect.Interceptor { return interceptor{a} }

type interceptor struct{ a *Authenticator }

// Admit authenticates the Authorization header value of a call to
// procedure ("/pact.v1.Service/Method") and checks the role against it. It
// returns the context carrying the role, or an Unauthenticated or
// PermissionDenied error. Every transport's interceptor calls it.
func (a *Authenticator) Admit(ctx context.Context, procedure, header string) (context.Context, error) {
	role, err := a.Authenticate(ctx, header)
	if err != nil {
		return nil, err
	}
	if !Allowed(role, procedure) {
		return nil, rpcerr.New(connect.CodePermissionDenied, pactv1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
			"the caller's role ("+string(role)+") may not call "+procedure)
	}
	return context.WithValue(ctx, roleKey{}, role), nil
}

func (i interceptor) admit(ctx context.Context, procedure, header string) (context.Context, error) {
	return i.a.Admit(ctx, procedure, header)
}

func (i interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		ctx, err := i.admit(ctx, req.Spec().Procedure, req.Header().Get("Authorization"))
		if err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (i interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, err := i.admit(ctx, conn.Spec().Procedure, conn.RequestHeader().Get("Authorization"))
		if err != nil {
			return err
		}
		return next(ctx, conn)
	}
}
