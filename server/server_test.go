package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	adminToken    = "test-admin-token-0123456789"
	frontendToken = "test-frontend-token-0123456789"
)

// instance is a running pactd on a loopback port.
type instance struct {
	url    string
	addr   string
	stop   func()
	stdout *bytes.Buffer
}

// testConfig loads a configuration on loopback with the native gRPC port
// off (its default, 127.0.0.1:7071, would clash between parallel tests);
// env is applied after the base, so a test that wants the port passes
// PACT_GRPC_LISTEN=127.0.0.1:0.
func testConfig(t *testing.T, dbURL, dataDir string, env ...string) config.Config {
	t.Helper()
	base := []string{"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + frontendToken,
		"PACT_DATA_DIR=" + dataDir, "PACT_DATABASE_URL=" + dbURL, "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off",
		"PACT_PUBLIC_URL=https://provider.example", "PACT_DEV=true",
		"PACT_KEY_ENCRYPTION_KEY=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}
	cfg, err := config.Load(nil, append(base, env...), io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// loopback listens on a free loopback port until the test ends.
func loopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

func start(t *testing.T, cfg config.Config) *instance {
	t.Helper()
	return startWith(t, cfg, server.Deps{})
}

// startWith builds pactd with deps, its API on a loopback listener and its
// generated output in the instance's stdout, and runs it until the test
// ends (or stop).
func startWith(t *testing.T, cfg config.Config, deps server.Deps) *instance {
	t.Helper()
	out := &bytes.Buffer{}
	ln := loopback(t)
	deps.Out = out
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	deps.Listeners.API = ln
	srv, err := server.Build(t.Context(), cfg, deps)
	if err != nil {
		t.Fatalf("server.Build: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	inst := &instance{url: "http://" + ln.Addr().String(), addr: ln.Addr().String(), stdout: out}
	stopped := false
	inst.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("Run did not return after shutdown")
		}
	}
	t.Cleanup(inst.stop)
	return inst
}

// h2c is an HTTP client that speaks HTTP/2 without TLS, as gRPC needs.
func h2c() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p, TLSClientConfig: &tls.Config{}}}
}

// protocols are the three wire protocols every RPC must answer on.
var protocols = map[string][]connect.ClientOption{
	"connect": nil,
	"grpc":    {connect.WithGRPC()},
	"grpcweb": {connect.WithGRPCWeb()},
}

func withToken(tok string) connect.ClientOption {
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if tok != "" {
				req.Header().Set("Authorization", "Bearer "+tok)
			}
			return next(ctx, req)
		}
	}))
}

func agents(inst *instance, tok string, opts ...connect.ClientOption) pactv1connect.AgentServiceClient {
	return pactv1connect.NewAgentServiceClient(h2c(), inst.url, append(opts, withToken(tok))...)
}

func TestAgentLifecycleEveryProtocolBothEngines(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		dir := t.TempDir()
		inst := start(t, testConfig(t, dbURL, dir))
		ctx := t.Context()
		for name, opts := range protocols {
			c := agents(inst, adminToken, opts...)
			issuer := "https://" + name + ".pa.example"
			reg, err := c.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: issuer, JwksUri: issuer + "/jwks.json", DisplayName: "PA " + name})
			if err != nil {
				t.Fatalf("%s: RegisterAgent: %v", name, err)
			}
			a := reg.GetAgent()
			if !reg.GetCreated() || !strings.HasPrefix(a.GetId(), "agt_") || !a.GetEnabled() || a.GetAudience() != "https://provider.example/a2a" {
				t.Fatalf("%s: RegisterAgent = %v", name, reg)
			}
			again, err := c.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: issuer, JwksUri: issuer + "/jwks.json", DisplayName: "PA " + name})
			if err != nil || again.GetCreated() || again.GetAgent().GetId() != a.GetId() {
				t.Fatalf("%s: identical RegisterAgent = %v, %v; want the same agent, created=false", name, again, err)
			}
			_, err = c.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: issuer, JwksUri: issuer + "/other.json", DisplayName: "PA " + name})
			if connect.CodeOf(err) != connect.CodeAlreadyExists || rpcerr.Reason(err) != "ERROR_REASON_ALREADY_EXISTS" {
				t.Fatalf("%s: same issuer, other details: err = %v, want AlreadyExists", name, err)
			}
			got, err := c.GetAgent(ctx, &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: a.GetId()}})
			if err != nil || got.GetAgent().GetIssuer() != issuer {
				t.Fatalf("%s: GetAgent(id) = %v, %v", name, got, err)
			}
			got, err = c.GetAgent(ctx, &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Issuer{Issuer: issuer}})
			if err != nil || got.GetAgent().GetId() != a.GetId() {
				t.Fatalf("%s: GetAgent(issuer) = %v, %v", name, got, err)
			}
			upd, err := c.UpdateAgent(ctx, &pactv1.UpdateAgentRequest{
				Agent:      &pactv1.Agent{Id: a.GetId(), Enabled: false, DisplayName: "Renamed"},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled", "display_name"}},
			})
			if err != nil || upd.GetAgent().GetEnabled() || upd.GetAgent().GetDisplayName() != "Renamed" || upd.GetAgent().GetJwksUri() != a.GetJwksUri() {
				t.Fatalf("%s: UpdateAgent = %v, %v", name, upd, err)
			}
		}
		c := agents(inst, adminToken)
		list, err := c.ListAgents(ctx, &pactv1.ListAgentsRequest{Page: &pactv1.PageRequest{PageSize: 2}})
		if err != nil || len(list.GetAgents()) != 2 || list.GetNextPageToken() == "" {
			t.Fatalf("ListAgents page 1 = %v, %v", list, err)
		}
		list2, err := c.ListAgents(ctx, &pactv1.ListAgentsRequest{Page: &pactv1.PageRequest{PageSize: 2, PageToken: list.GetNextPageToken()}})
		if err != nil || len(list2.GetAgents()) != 1 || list2.GetNextPageToken() != "" {
			t.Fatalf("ListAgents page 2 = %v, %v", list2, err)
		}
		if list2.GetAgents()[0].GetId() <= list.GetAgents()[1].GetId() {
			t.Fatalf("pages overlap or are out of order")
		}
		del := list2.GetAgents()[0].GetId()
		if _, err := c.DeleteAgent(ctx, &pactv1.DeleteAgentRequest{Id: del}); err != nil {
			t.Fatalf("DeleteAgent: %v", err)
		}
		if _, err := c.GetAgent(ctx, &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: del}}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("GetAgent after delete: err = %v, want NotFound", err)
		}
		if _, err := c.DeleteAgent(ctx, &pactv1.DeleteAgentRequest{Id: del}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("DeleteAgent twice: err = %v, want NotFound", err)
		}

		// A restart on the same store keeps what was registered.
		inst.stop()
		inst2 := start(t, testConfig(t, dbURL, dir))
		list3, err := agents(inst2, adminToken).ListAgents(ctx, &pactv1.ListAgentsRequest{})
		if err != nil || len(list3.GetAgents()) != 2 {
			t.Fatalf("after restart ListAgents = %v, %v; want the 2 remaining agents", list3, err)
		}
	})
}

func TestCallerAuthentication(t *testing.T) {
	inst := start(t, testConfig(t, "", t.TempDir()))
	ctx := t.Context()
	req := &pactv1.ListAgentsRequest{}
	for name, opts := range protocols {
		cases := []struct {
			name string
			tok  string
			raw  string // raw Authorization header, overrides tok
			want connect.Code
			why  string
		}{
			{name: "ok/admin", tok: adminToken},
			{name: "fail/no-token", want: connect.CodeUnauthenticated, why: "ERROR_REASON_UNAUTHENTICATED"},
			{name: "fail/unknown-token", tok: "not-a-known-token-000000", want: connect.CodeUnauthenticated, why: "ERROR_REASON_UNAUTHENTICATED"},
			{name: "fail/basic-scheme", raw: "Basic " + adminToken, want: connect.CodeUnauthenticated, why: "ERROR_REASON_UNAUTHENTICATED"},
			{name: "fail/oversized", tok: strings.Repeat("a", 600), want: connect.CodeUnauthenticated, why: "ERROR_REASON_UNAUTHENTICATED"},
			{name: "fail/frontend-on-admin-rpc", tok: frontendToken, want: connect.CodePermissionDenied, why: "ERROR_REASON_PERMISSION_DENIED"},
		}
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				opt := withToken(tc.tok)
				if tc.raw != "" {
					opt = connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
						return func(ctx context.Context, r connect.AnyRequest) (connect.AnyResponse, error) {
							r.Header().Set("Authorization", tc.raw)
							return next(ctx, r)
						}
					}))
				}
				c := pactv1connect.NewAgentServiceClient(h2c(), inst.url, append(slices.Clone(opts), opt)...)
				_, err := c.ListAgents(ctx, req)
				if tc.want == 0 {
					if err != nil {
						t.Fatalf("err = %v, want success", err)
					}
					return
				}
				if connect.CodeOf(err) != tc.want || rpcerr.Reason(err) != tc.why {
					t.Fatalf("err = %v (reason %q), want %v / %s", err, rpcerr.Reason(err), tc.want, tc.why)
				}
			})
		}
	}
	// A frontend credential may call frontend procedures: the card of an
	// unknown Brand is NotFound (not PermissionDenied).
	bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(frontendToken))
	if _, err := bc.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "nope"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("frontend GetAgentCard(unknown) err = %v, want NotFound", err)
	}
}

func TestRegisterAgentRefusesBadInputAndWritesNothing(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir(), "PACT_DEV=false"))
		c := agents(inst, adminToken)
		ctx := t.Context()
		good := func() *pactv1.RegisterAgentRequest {
			return &pactv1.RegisterAgentRequest{Issuer: "https://pa.example", JwksUri: "https://pa.example/jwks.json", DisplayName: "PA"}
		}
		cases := []struct {
			name   string
			mutate func(r *pactv1.RegisterAgentRequest)
			fields []string
		}{
			{"fail/http-jwks-non-loopback", func(r *pactv1.RegisterAgentRequest) { r.JwksUri = "http://pa.example/jwks.json" }, []string{"jwks_uri"}},
			{"fail/http-jwks-loopback-without-dev", func(r *pactv1.RegisterAgentRequest) { r.JwksUri = "http://127.0.0.1:9/jwks.json" }, []string{"jwks_uri"}},
			{"fail/private-jwks", func(r *pactv1.RegisterAgentRequest) { r.JwksUri = "https://10.0.0.7/jwks.json" }, []string{"jwks_uri"}},
			{"fail/relative-issuer", func(r *pactv1.RegisterAgentRequest) { r.Issuer = "pa.example" }, []string{"issuer"}},
			{"fail/issuer-with-query", func(r *pactv1.RegisterAgentRequest) { r.Issuer = "https://pa.example/?x=1" }, []string{"issuer"}},
			{"fail/issuer-with-fragment", func(r *pactv1.RegisterAgentRequest) { r.Issuer = "https://pa.example/#x" }, []string{"issuer"}},
			{"fail/empty-name", func(r *pactv1.RegisterAgentRequest) { r.DisplayName = "  " }, []string{"display_name"}},
			{"fail/long-name", func(r *pactv1.RegisterAgentRequest) { r.DisplayName = strings.Repeat("n", 201) }, []string{"display_name"}},
			{"fail/all-three", func(r *pactv1.RegisterAgentRequest) {
				r.Issuer, r.JwksUri, r.DisplayName = "/rel", "http://pa.example/j", ""
			}, []string{"issuer", "jwks_uri", "display_name"}},
		}
		for _, tc := range cases {
			r := good()
			tc.mutate(r)
			_, err := c.RegisterAgent(ctx, r)
			if connect.CodeOf(err) != connect.CodeInvalidArgument || rpcerr.Reason(err) != "ERROR_REASON_INVALID_ARGUMENT" {
				t.Fatalf("%s: err = %v, want InvalidArgument", tc.name, err)
			}
			if got := rpcerr.FieldViolations(err); !slices.Equal(got, tc.fields) {
				t.Fatalf("%s: field violations = %v, want %v", tc.name, got, tc.fields)
			}
		}
		list, err := c.ListAgents(ctx, &pactv1.ListAgentsRequest{})
		if err != nil || len(list.GetAgents()) != 0 {
			t.Fatalf("after refused registrations ListAgents = %v, %v; want none", list, err)
		}
		// Positive control: the unmodified request is accepted.
		if _, err := c.RegisterAgent(ctx, good()); err != nil {
			t.Fatalf("ok/good: %v", err)
		}
	})
}

func TestHealthReflectionAndMetrics(t *testing.T) {
	inst := start(t, testConfig(t, "", t.TempDir()))
	ctx := t.Context()
	conn, err := grpc.NewClient(inst.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// Health and reflection answer without a credential.
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v; want SERVING", h, err)
	}
	h, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "pact.v1.VerificationService"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health(VerificationService) = %v, %v; want SERVING", h, err)
	}
	stream, err := grpc_reflection_v1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&grpc_reflection_v1.ServerReflectionRequest{MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	slices.Sort(names)
	want := []string{"hdtp.v1.ContactService", "hdtp.v1.HostService", "hdtp.v1.IdentityService", "hdtp.v1.InviteService", "hdtp.v1.TrustService", "pact.v1.AgentService", "pact.v1.AuditService", "pact.v1.BrandService", "pact.v1.ConversationService", "pact.v1.CredentialService",
		"pact.v1.DelegationService", "pact.v1.FrontDoorService", "pact.v1.TokenService", "pact.v1.VerificationService", "pact.v1.WebhookService"}
	if !slices.Equal(names, want) {
		t.Fatalf("reflection lists %v, want %v", names, want)
	}

	// A grpc-go client (not connect) round-trips through the connect handler.
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+adminToken)
	gc := pactv1.NewAgentServiceClient(conn)
	if _, err := gc.ListAgents(actx, &pactv1.ListAgentsRequest{}); err != nil {
		t.Fatalf("grpc-go ListAgents: %v", err)
	}
	if _, err := gc.ListAgents(ctx, &pactv1.ListAgentsRequest{}); status.Code(err).String() != "Unauthenticated" {
		t.Fatalf("grpc-go ListAgents without token: %v, want Unauthenticated", err)
	}

	// The Provider JWKS is published from the first start: one ES256 key.
	tc := pactv1connect.NewTokenServiceClient(h2c(), inst.url, withToken(frontendToken))
	jwks, err := tc.GetJwks(ctx, &pactv1.GetJwksRequest{})
	if err != nil || !strings.Contains(jwks.GetJwksJson(), `"alg":"ES256"`) {
		t.Fatalf("GetJwks = %v, %v; want a JWKS with an ES256 key", jwks, err)
	}

	// Metrics need an admin credential on the API port, and count RPCs.
	for tok, want := range map[string]int{"": 401, frontendToken: 401, adminToken: 200} {
		req, _ := http.NewRequest(http.MethodGet, inst.url+"/metrics", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Fatalf("GET /metrics with %q: %d, want %d", tok, r.StatusCode, want)
		}
	}
	mreq, _ := http.NewRequest(http.MethodGet, inst.url+"/metrics", nil)
	mreq.Header.Set("Authorization", "Bearer "+adminToken)
	mresp, err := http.DefaultClient.Do(mreq)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if !bytes.Contains(body, []byte(`pactd_rpc_requests_total{code="ok",procedure="/pact.v1.AgentService/ListAgents"}`)) {
		t.Fatalf("metrics lack the ListAgents counter:\n%s", body)
	}
}

func TestGeneratedAdminTokenIsPrintedOnceAndWorks(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Load(nil, []string{"PACT_DATA_DIR=" + dir, "PACT_GRPC_LISTEN=off"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	inst := start(t, cfg)
	out := inst.stdout.String()
	_, tok, ok := strings.Cut(out, "PACT_ADMIN_TOKEN=")
	tok, _, _ = strings.Cut(tok, "\n")
	if !ok || !strings.HasPrefix(tok, "pact_adm_") {
		t.Fatalf("no generated admin token in output %q", out)
	}
	if _, err := agents(inst, tok).ListAgents(t.Context(), &pactv1.ListAgentsRequest{}); err != nil {
		t.Fatalf("generated token refused: %v", err)
	}
	inst.stop()
	inst2 := start(t, cfg)
	if strings.Contains(inst2.stdout.String(), "PACT_ADMIN_TOKEN=") {
		t.Fatalf("a second start printed a token again")
	}
	if _, err := agents(inst2, tok).ListAgents(t.Context(), &pactv1.ListAgentsRequest{}); err != nil {
		t.Fatalf("generated token refused after restart: %v", err)
	}
}

func TestBrandsAndAgentCard(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir()))
		ctx := t.Context()
		bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken))
		created, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Description: "Acme support",
			Skills: []*pactv1.Skill{{Id: "orders", Name: "Orders", Description: "Order status", Tags: []string{"orders"}}}})
		if err != nil || created.GetBrand().GetInterfaceUrl() != "https://provider.example/a2a/acme" {
			t.Fatalf("CreateBrand = %v, %v", created, err)
		}
		if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Again"}); connect.CodeOf(err) != connect.CodeAlreadyExists {
			t.Fatalf("duplicate CreateBrand err = %v", err)
		}
		gen, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{GenerateBrandId: true, DisplayName: "Generated"})
		if err != nil || len(gen.GetBrand().GetBrandId()) != 26 {
			t.Fatalf("CreateBrand(generate_brand_id) = %v, %v", gen, err)
		}
		for name, r := range map[string]*pactv1.CreateBrandRequest{
			"brand_id":          {BrandId: "a/b", DisplayName: "X"},
			"generate_brand_id": {BrandId: "ok", GenerateBrandId: true, DisplayName: "X"},
			"display_name":      {BrandId: "ok"},
			"skills[0].id":      {BrandId: "ok", DisplayName: "X", Skills: []*pactv1.Skill{{Id: "", Name: "n"}}},
		} {
			_, err := bc.CreateBrand(ctx, r)
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Contains(rpcerr.FieldViolations(err), name) {
				t.Fatalf("CreateBrand(bad %s) err = %v, violations %v", name, err, rpcerr.FieldViolations(err))
			}
		}
		// No id and no generate_brand_id: refused, nothing stored.
		_, err = bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{DisplayName: "Nameless"})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), []string{"brand_id"}) {
			t.Fatalf("CreateBrand(no id) err = %v, violations %v", err, rpcerr.FieldViolations(err))
		}
		if _, err := bc.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: "ok"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("a refused CreateBrand stored a row: %v", err)
		}
		if list, err := bc.ListBrands(ctx, &pactv1.ListBrandsRequest{}); err != nil || len(list.GetBrands()) != 2 {
			t.Fatalf("after refusals ListBrands = %v, %v; want acme and the generated one", list, err)
		}
		_, err = bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "deleg", DisplayName: "D", Delegation: &pactv1.DelegationSettings{Enabled: true}})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Contains(rpcerr.FieldViolations(err), "delegation.scopes") {
			t.Fatalf("incomplete delegation settings err = %v (%v), want InvalidArgument", err, rpcerr.FieldViolations(err))
		}

		fc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(frontendToken), connect.WithGRPC())
		card, err := fc.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		const want = `{"name":"Acme","description":"Acme support","version":"1.0.0",` +
			`"supportedInterfaces":[{"url":"https://provider.example/a2a/acme","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],` +
			`"capabilities":{"streaming":false,"pushNotifications":false,"extendedAgentCard":false},` +
			`"securitySchemes":{"platformJwt":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}},` +
			`"securityRequirements":[{"schemes":{"platformJwt":{"list":[]}}}],` +
			`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
			`"skills":[{"id":"orders","name":"Orders","description":"Order status","tags":["orders"]}]}`
		if unsignedCard(t, inst, card.GetCardJson()) != want || card.GetContentType() != "application/a2a+json" || card.GetCacheControl() != "public, max-age=300" {
			t.Fatalf("card = %s (%s, %s)\nwant %s", card.GetCardJson(), card.GetContentType(), card.GetCacheControl(), want)
		}
		for _, id := range []string{"nope", "../acme", ""} {
			_, err := fc.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: id})
			wantCode := connect.CodeNotFound
			if id == "" {
				wantCode = connect.CodeInvalidArgument
			}
			if connect.CodeOf(err) != wantCode {
				t.Fatalf("GetAgentCard(%q) err = %v, want %v", id, err, wantCode)
			}
		}

		upd, err := bc.UpdateBrand(ctx, &pactv1.UpdateBrandRequest{Brand: &pactv1.Brand{BrandId: "acme", Description: "New"},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"description"}}})
		if err != nil || upd.GetBrand().GetDescription() != "New" || upd.GetBrand().GetDisplayName() != "Acme" || len(upd.GetBrand().GetSkills()) != 1 {
			t.Fatalf("UpdateBrand = %v, %v", upd, err)
		}
		list, err := bc.ListBrands(ctx, &pactv1.ListBrandsRequest{})
		if err != nil || len(list.GetBrands()) != 2 {
			t.Fatalf("ListBrands = %v, %v", list, err)
		}
	})
}

// JSON request bodies with a member the message does not have are refused
// with InvalidArgument naming it, and change nothing; .proto names and
// lowerCamelCase names are both accepted (positive controls).
func TestUnknownJSONFieldsAreRefused(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir()))
		post := func(token, procedure, body string) (int, string) {
			t.Helper()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, inst.url+procedure, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		const create = "/pact.v1.BrandService/CreateBrand"
		for name, tc := range map[string]struct{ token, procedure, body, field string }{
			"typo-of-brand_id":       {adminToken, create, `{"brand":"acme","display_name":"Acme"}`, "brand"},
			"nested-unknown":         {adminToken, create, `{"brand_id":"acme","display_name":"Acme","delegation":{"enabled":false,"scopez":[]}}`, "scopez"},
			"frontend-rpc":           {frontendToken, "/pact.v1.VerificationService/VerifyAgentRequest", `{"brand_id":"acme","authorisation":"Bearer x"}`, "authorisation"},
			"agent-rpc-wrong-case":   {adminToken, "/pact.v1.AgentService/RegisterAgent", `{"Issuer":"https://pa.example","jwks_uri":"https://pa.example/jwks","display_name":"PA"}`, "Issuer"},
			"unknown-next-to-a-good": {adminToken, create, `{"brand_id":"acme","display_name":"Acme","descripton":"typo"}`, "descripton"},
		} {
			status, body := post(tc.token, tc.procedure, tc.body)
			var e struct{ Code, Message string }
			_ = json.Unmarshal([]byte(body), &e)
			if status != http.StatusBadRequest || e.Code != "invalid_argument" || !strings.Contains(e.Message, `unknown field "`+tc.field+`"`) {
				t.Errorf("fail/%s: %d %s; want 400 invalid_argument naming %q", name, status, body, tc.field)
			}
		}
		bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken))
		if list, err := bc.ListBrands(t.Context(), &pactv1.ListBrandsRequest{}); err != nil || len(list.GetBrands()) != 0 {
			t.Fatalf("refused bodies created Brands: %v, %v", list, err)
		}
		ac := pactv1connect.NewAgentServiceClient(h2c(), inst.url, withToken(adminToken))
		if list, err := ac.ListAgents(t.Context(), &pactv1.ListAgentsRequest{}); err != nil || len(list.GetAgents()) != 0 {
			t.Fatalf("refused body registered an agent: %v, %v", list, err)
		}
		// Positive controls: .proto names, lowerCamelCase names.
		for id, body := range map[string]string{
			"snake": `{"brand_id":"snake","display_name":"Snake"}`,
			"camel": `{"brandId":"camel","displayName":"Camel","generateBrandId":false}`,
		} {
			if status, resp := post(adminToken, create, body); status != http.StatusOK || !strings.Contains(resp, `"brandId":"`+id+`"`) {
				t.Fatalf("ok/%s: %d %s", id, status, resp)
			}
		}
	})
}
