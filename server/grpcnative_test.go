package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/server"
)

// TestNativeGRPCPort runs the API on PACT_GRPC_LISTEN (grpc-go's transport)
// and checks it applies what the main port applies: authentication, the
// role table, errors with their details, and the same decisions.
func TestNativeGRPCPort(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		cfg := testConfig(t, dbURL, t.TempDir(), "PACT_GRPC_LISTEN=127.0.0.1:0")
		gln := loopback(t)
		startWith(t, cfg, server.Deps{Listeners: server.Listeners{GRPC: gln}})
		conn, err := grpc.NewClient(gln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		tctx := t.Context()
		as := func(tok string) context.Context {
			return metadata.AppendToOutgoingContext(tctx, "authorization", "Bearer "+tok)
		}

		// Health answers without a credential.
		if h, err := healthpb.NewHealthClient(conn).Check(tctx, &healthpb.HealthCheckRequest{}); err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health = %v, %v", h, err)
		}
		ac := pactv1.NewAgentServiceClient(conn)
		// Refusals with their exact code and reason.
		for name, c := range map[string]struct {
			ctx  context.Context
			code codes.Code
			why  string
		}{
			"fail/no-token":       {tctx, codes.Unauthenticated, "ERROR_REASON_UNAUTHENTICATED"},
			"fail/unknown-token":  {as("not-a-known-token-000000"), codes.Unauthenticated, "ERROR_REASON_UNAUTHENTICATED"},
			"fail/frontend-admin": {as(frontendToken), codes.PermissionDenied, "ERROR_REASON_PERMISSION_DENIED"},
		} {
			_, err := ac.ListAgents(c.ctx, &pactv1.ListAgentsRequest{})
			if st := status.Convert(err); st.Code() != c.code || reasonOf(st) != c.why {
				t.Errorf("%s: %v (reason %q), want %v %s", name, err, reasonOf(st), c.code, c.why)
			}
		}
		// Field violations survive the conversion to a gRPC status.
		_, err = ac.RegisterAgent(as(adminToken), &pactv1.RegisterAgentRequest{Issuer: "/rel", JwksUri: "https://pa.example/j", DisplayName: "PA"})
		st := status.Convert(err)
		var fields []string
		for _, d := range st.Details() {
			if br, ok := d.(*errdetails.BadRequest); ok {
				for _, v := range br.GetFieldViolations() {
					fields = append(fields, v.GetField())
				}
			}
		}
		if st.Code() != codes.InvalidArgument || !slices.Equal(fields, []string{"issuer"}) {
			t.Fatalf("bad RegisterAgent: %v, fields %v", err, fields)
		}

		// Positive control: the same verification decision as the main port.
		pa := newTestPA(t)
		if _, err := ac.RegisterAgent(as(adminToken), &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/j", DisplayName: "PA"}); err != nil {
			t.Fatal(err)
		}
		if _, err := pactv1.NewBrandServiceClient(conn).CreateBrand(as(adminToken), &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
			t.Fatal(err)
		}
		// Request ids: the caller's comes back as header metadata; a
		// malformed one is replaced by a fresh one.
		for sent, want := range map[string]func(string) bool{
			"grpc-call-7": func(got string) bool { return got == "grpc-call-7" },
			"bad id!":     func(got string) bool { return len(got) == 16 && got != "bad id!" },
		} {
			var hdr metadata.MD
			rctx := metadata.AppendToOutgoingContext(as(adminToken), "x-request-id", sent)
			if _, err := ac.ListAgents(rctx, &pactv1.ListAgentsRequest{}, grpc.Header(&hdr)); err != nil {
				t.Fatal(err)
			}
			if got := hdr.Get("x-request-id"); len(got) != 1 || !want(got[0]) {
				t.Fatalf("x-request-id for %q: %v", sent, got)
			}
		}
		vc := pactv1.NewVerificationServiceClient(conn)
		good := pa.token(t, map[string]any{"alg": "ES256", "kid": pa.kid}, pa.claims("https://provider.example/a2a", time.Now()))
		r, err := vc.VerifyAgentRequest(as(frontendToken), &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer " + good})
		if err != nil || !r.GetAllowed() || r.GetCaller().GetSubject() != "user-1" {
			t.Fatalf("ok/allowed: %v, %v", r, err)
		}
		none := pa.token(t, map[string]any{"alg": "none"}, pa.claims("https://provider.example/a2a", time.Now()))
		r, err = vc.VerifyAgentRequest(as(frontendToken), &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer " + none})
		if err != nil || r.GetAllowed() || r.GetReason() != pactv1.DenyReason_DENY_REASON_ALGORITHM || r.GetWwwAuthenticate() != `Bearer realm="a2a"` {
			t.Fatalf("fail/alg-none: %v, %v", r, err)
		}
	})
}

func reasonOf(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}

// TestNativeGRPCPortListensOnItsAddress: with PACT_GRPC_LISTEN set and no
// listener handed in, Serve binds the address itself, answers gRPC there,
// and the startup line names both addresses; with off it names none.
func TestNativeGRPCPortListensOnItsAddress(t *testing.T) {
	for _, tc := range []struct{ name, grpcListen string }{{"on", "127.0.0.1:0"}, {"off", "off"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			cfg := testConfig(t, "", t.TempDir(), "PACT_GRPC_LISTEN="+tc.grpcListen)
			inst := startWith(t, cfg, server.Deps{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			var line struct {
				Addr     string `json:"addr"`
				GRPCAddr string `json:"grpc_addr"`
			}
			waitFor(t, 10*time.Second, "the startup line", func() bool {
				for l := range strings.Lines(logs.String()) {
					if strings.Contains(l, `"msg":"pactd serving"`) {
						if err := json.Unmarshal([]byte(l), &line); err != nil {
							t.Fatal(err)
						}
						return true
					}
				}
				return false
			})
			if line.Addr != inst.addr {
				t.Errorf("startup addr = %q, want %q", line.Addr, inst.addr)
			}
			if tc.grpcListen == "off" {
				if line.GRPCAddr != "off" {
					t.Errorf("startup grpc_addr = %q, want off", line.GRPCAddr)
				}
				return
			}
			if !strings.HasPrefix(line.GRPCAddr, "127.0.0.1:") || line.GRPCAddr == "127.0.0.1:0" || line.GRPCAddr == line.Addr {
				t.Fatalf("startup grpc_addr = %q, want the bound loopback port", line.GRPCAddr)
			}
			conn, err := grpc.NewClient(line.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			res, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
			if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("health on the native port = %v, %v; want SERVING", res, err)
			}
		})
	}
}
