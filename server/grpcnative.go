package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"

	"pactd.dev/pactd/core/auth"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/apidesc"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/server/reqlog"
	"pactd.dev/pactd/server/workpool"
	"pactd.dev/pactd/services/frontdoor"
	hdtpsvc "pactd.dev/pactd/services/hdtp"
)

// The native gRPC transport (PACT_GRPC_LISTEN) serves the same service
// values as the main port, but through grpc-go's own HTTP/2 server: it
// batches writes and does not start a goroutine per stream, so a gRPC
// frontend's VerifyAgentRequest costs 40-45 % less CPU than through
// net/http and connect-go (docs/benchmarks.md, "Transport and clients"). It applies the same
// authentication, role table, size bound, metrics and panic recovery.

// Each adapter embeds the connect handler (its methods are promoted at
// depth 1) and, one level deeper, grpc-go's Unimplemented server, which only
// contributes the marker methods grpc-go requires: the handler's methods win.
type (
	grpcCredential struct {
		pactv1connect.CredentialServiceHandler
		unimplCredential
	}
	unimplCredential struct {
		pactv1.UnimplementedCredentialServiceServer
	}
	grpcAgent struct {
		pactv1connect.AgentServiceHandler
		unimplAgent
	}
	unimplAgent struct {
		pactv1.UnimplementedAgentServiceServer
	}
	grpcBrand struct {
		pactv1connect.BrandServiceHandler
		unimplBrand
	}
	unimplBrand struct {
		pactv1.UnimplementedBrandServiceServer
	}
	grpcVerification struct {
		pactv1connect.VerificationServiceHandler
		unimplVerification
	}
	unimplVerification struct {
		pactv1.UnimplementedVerificationServiceServer
	}
	grpcConversation struct {
		pactv1connect.ConversationServiceHandler
		unimplConversation
	}
	unimplConversation struct {
		pactv1.UnimplementedConversationServiceServer
	}
	grpcDelegation struct {
		pactv1connect.DelegationServiceHandler
		unimplDelegation
	}
	unimplDelegation struct {
		pactv1.UnimplementedDelegationServiceServer
	}
	grpcToken struct {
		pactv1connect.TokenServiceHandler
		unimplToken
	}
	unimplToken struct {
		pactv1.UnimplementedTokenServiceServer
	}
	grpcAudit struct {
		pactv1connect.AuditServiceHandler
		unimplAudit
	}
	unimplAudit struct {
		pactv1.UnimplementedAuditServiceServer
	}
	grpcWebhook struct {
		pactv1connect.WebhookServiceHandler
		unimplWebhook
	}
	unimplWebhook struct {
		pactv1.UnimplementedWebhookServiceServer
	}
	grpcFrontDoor struct {
		pactv1connect.FrontDoorServiceHandler
		unimplFrontDoor
	}
	unimplFrontDoor struct {
		pactv1.UnimplementedFrontDoorServiceServer
	}
	grpcHDTPIdentity struct {
		hdtpv1connect.IdentityServiceHandler
		unimplHDTPIdentity
	}
	unimplHDTPIdentity struct {
		hdtpv1.UnimplementedIdentityServiceServer
	}
	grpcHDTPTrust struct {
		hdtpv1connect.TrustServiceHandler
		unimplHDTPTrust
	}
	unimplHDTPTrust struct {
		hdtpv1.UnimplementedTrustServiceServer
	}
	grpcHDTPHost struct {
		hdtpv1connect.HostServiceHandler
		unimplHDTPHost
	}
	unimplHDTPHost struct {
		hdtpv1.UnimplementedHostServiceServer
	}
	grpcHDTPContact struct {
		hdtpv1connect.ContactServiceHandler
		unimplHDTPContact
	}
	unimplHDTPContact struct {
		hdtpv1.UnimplementedContactServiceServer
	}
	grpcHDTPInvite struct {
		hdtpv1connect.InviteServiceHandler
		unimplHDTPInvite
	}
	unimplHDTPInvite struct {
		hdtpv1.UnimplementedInviteServiceServer
	}
)

// streamWorkers is the size of each port's pool of stream goroutines (the
// native server's NumStreamWorkers, the main port's streamPool): as many
// calls in flight as a busy frontend keeps open reuse grown stacks; calls
// beyond it still get a goroutine of their own. An idle worker costs only
// its stack.
const streamWorkers = 256

// newGRPCServer builds the native gRPC server over the same services.
func (s *Server) newGRPCServer(svc Services, authn *auth.Authenticator, m *rpcMetrics, workers *workpool.Pool) *grpc.Server {
	opts := []grpc.ServerOption{
		// The front door's requests carry whole HTTP bodies and the HDTP
		// host service's whole JSON-RPC bodies; every other method keeps
		// apidesc.MaxRequestBytes (grpcAdmitted).
		grpc.MaxRecvMsgSize(max(frontdoor.MaxRequestBytes, hdtpsvc.MaxHostRequestBytes)),
		// The bounds net/http applies on the main port.
		grpc.MaxConcurrentStreams(250),
		grpc.MaxHeaderListSize(apidesc.MaxHeaderBytes),
		grpc.ConnectionTimeout(10 * time.Second),
		// Reuse stream goroutines rather than start one per stream.
		grpc.NumStreamWorkers(streamWorkers),
		// One interceptor does what the main port's chain does (grpcUnary).
		grpc.UnaryInterceptor(s.grpcUnary(workers, authn, m)),
	}
	if s.traced {
		// A server span per RPC, the child of the caller's traceparent.
		opts = append(opts, grpc.StatsHandler(otelgrpc.NewServerHandler()))
	}
	if s.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.tls)))
	}
	g := grpc.NewServer(opts...)
	pactv1.RegisterCredentialServiceServer(g, grpcCredential{CredentialServiceHandler: svc.Credential})
	pactv1.RegisterAgentServiceServer(g, grpcAgent{AgentServiceHandler: svc.Agent})
	pactv1.RegisterBrandServiceServer(g, grpcBrand{BrandServiceHandler: svc.Brand})
	pactv1.RegisterVerificationServiceServer(g, grpcVerification{VerificationServiceHandler: svc.Verification})
	pactv1.RegisterConversationServiceServer(g, grpcConversation{ConversationServiceHandler: svc.Conversation})
	pactv1.RegisterDelegationServiceServer(g, grpcDelegation{DelegationServiceHandler: svc.Delegation})
	pactv1.RegisterTokenServiceServer(g, grpcToken{TokenServiceHandler: svc.Token})
	pactv1.RegisterAuditServiceServer(g, grpcAudit{AuditServiceHandler: svc.Audit})
	pactv1.RegisterWebhookServiceServer(g, grpcWebhook{WebhookServiceHandler: svc.Webhook})
	pactv1.RegisterFrontDoorServiceServer(g, grpcFrontDoor{FrontDoorServiceHandler: svc.FrontDoor})
	hdtpv1.RegisterIdentityServiceServer(g, grpcHDTPIdentity{IdentityServiceHandler: svc.HDTPIdentity})
	hdtpv1.RegisterTrustServiceServer(g, grpcHDTPTrust{TrustServiceHandler: svc.HDTPTrust})
	hdtpv1.RegisterHostServiceServer(g, grpcHDTPHost{HostServiceHandler: svc.HDTPHost})
	hdtpv1.RegisterContactServiceServer(g, grpcHDTPContact{ContactServiceHandler: svc.HDTPContact})
	hdtpv1.RegisterInviteServiceServer(g, grpcHDTPInvite{InviteServiceHandler: svc.HDTPInvite})
	healthpb.RegisterHealthServer(g, grpcHealth{c: s.health})
	// The same documented descriptors as the main port's reflection.
	ropts := reflection.ServerOptions{Services: g, DescriptorResolver: s.descriptors()}
	reflectionv1.RegisterServerReflectionServer(g, reflection.NewServerV1(ropts))
	reflectionv1alpha.RegisterServerReflectionServer(g, reflection.NewServer(ropts))
	return g
}

// noAuthMethods answer without a credential, as on the main port.
func noAuthMethod(fullMethod string) bool {
	return len(fullMethod) > 0 && (hasPrefix(fullMethod, "/grpc.health.v1.") || hasPrefix(fullMethod, "/grpc.reflection."))
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// grpcUnary is the native port's one unary interceptor. It runs the call on
// pool (workers.go), beneath grpc-go's stream goroutine, then, in order:
// gives it a request id; observes it (metrics, the failure log) with the
// service's own error; admits its credential; turns a panic into Internal;
// and last turns the error into a gRPC status. It is one function rather
// than grpc.ChainUnaryInterceptor's chain, which builds a closure per
// level on every call (docs/benchmarks.md, "The collector and memory": bytes allocated per call).
func (s *Server) grpcUnary(pool *workpool.Pool, a *auth.Authenticator, m *rpcMetrics) grpc.UnaryServerInterceptor {
	o := observer{log: s.log, m: m}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
		pool.Do(func() { resp, err = s.serveGRPC(ctx, req, info, next, a, o) })
		return resp, err
	}
}

// serveGRPC is grpcUnary's work on a pool worker.
func (s *Server) serveGRPC(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler, a *auth.Authenticator, o observer) (any, error) {
	ctx = grpcRequestID(ctx)
	start := time.Now()
	resp, err := s.grpcAdmitted(ctx, req, info, next, a)
	o.record(ctx, info.FullMethod, start, err)
	if err != nil {
		return nil, grpcStatus(err)
	}
	return resp, nil
}

// grpcRequestID gives a call a request id as the main port does: the
// caller's x-request-id metadata when well-formed, else a new one, sent
// back as header metadata.
func grpcRequestID(ctx context.Context) context.Context {
	// ValueFromIncomingContext reads one key without copying the whole
	// metadata map, as FromIncomingContext does on every call.
	var caller string
	if v := metadata.ValueFromIncomingContext(ctx, "x-request-id"); len(v) == 1 {
		caller = v[0]
	}
	id := reqlog.IDFrom(caller)
	// A literal, not metadata.Pairs: the key is lower-case already, and
	// grpc-go copies it into the stream's header map anyway.
	_ = grpc.SetHeader(ctx, metadata.MD{"x-request-id": []string{id}}) // fails only after headers were sent
	return reqlog.With(ctx, id)
}

// grpcAdmitted admits a call exactly as the main port's interceptor does,
// then runs it under grpcRecover.
func (s *Server) grpcAdmitted(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler, a *auth.Authenticator) (any, error) {
	if m, ok := req.(proto.Message); ok {
		limit := apidesc.MaxRequestBytes
		switch {
		case strings.HasPrefix(info.FullMethod, "/"+pactv1connect.FrontDoorServiceName+"/"):
			limit = frontdoor.MaxRequestBytes
		case strings.HasPrefix(info.FullMethod, "/"+hdtpv1connect.HostServiceName+"/"):
			limit = hdtpsvc.MaxHostRequestBytes
		}
		if proto.Size(m) > limit {
			return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("the request is larger than %d bytes", limit))
		}
	}
	if !noAuthMethod(info.FullMethod) {
		var header string
		if v := metadata.ValueFromIncomingContext(ctx, "authorization"); len(v) == 1 {
			header = v[0]
		}
		var err error
		if ctx, err = a.Admit(ctx, info.FullMethod, header); err != nil {
			return nil, err
		}
	}
	return s.grpcRecover(ctx, req, info, next)
}

// grpcRecover turns a panic into Internal, like connect.WithRecover.
func (s *Server) grpcRecover(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "panic in handler", slog.String("procedure", info.FullMethod), slog.Any("panic", p))
			reqlog.MarkFaultLogged(ctx)
			resp, err = nil, rpcerr.Internal()
		}
	}()
	return next(ctx, req)
}

// grpcStatus turns a service's connect error into a gRPC status with the
// same code, message and details (ErrorInfo, BadRequest, ...); context
// errors become Canceled or DeadlineExceeded.
func grpcStatus(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		if _, isStatus := status.FromError(err); isStatus {
			return err // a gRPC status already (grpc.health.v1's NotFound)
		}
		switch {
		case errors.Is(err, context.Canceled):
			return status.Error(codes.Canceled, "canceled")
		case errors.Is(err, context.DeadlineExceeded):
			return status.Error(codes.DeadlineExceeded, "deadline exceeded")
		}
		return status.Error(codes.Unknown, "internal error")
	}
	st := status.New(codes.Code(ce.Code()), ce.Message())
	var details []protoadapt.MessageV1
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			details = append(details, protoadapt.MessageV1Of(v))
		}
	}
	if len(details) > 0 {
		if withDetails, derr := st.WithDetails(details...); derr == nil {
			st = withDetails
		}
	}
	return st.Err()
}

// grpcHealth answers grpc.health.v1 Check on the native port with the main
// port's per-service checker; Watch and List are not offered there.
type grpcHealth struct {
	healthpb.UnimplementedHealthServer
	c *storeChecker
}

// Check implements healthpb.HealthServer.
func (h grpcHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	res, err := h.c.Check(ctx, &grpchealth.CheckRequest{Service: req.GetService()})
	if err != nil {
		return nil, status.Error(codes.NotFound, "unknown service "+req.GetService())
	}
	if res.Status == grpchealth.StatusServing {
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}, nil
}
