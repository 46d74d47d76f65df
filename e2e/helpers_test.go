// Package e2e_test runs pactd, a frontend (each of frontends_test.go's in
// turn) and a personal agent's JWKS together on loopback and checks them as a PA would:
// over HTTP, with ES256 PA JWTs, comparing the bytes PACT clients compare.
package e2e_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/frontends/demo"
	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/freeport"
	"pactd.dev/pactd/internal/testkit/testsigner"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

func TestMain(m *testing.M) { dbtest.Main(m, removeGoSDKBuild) }

const (
	adminToken    = "e2e-admin-token-0123456789"
	frontendToken = "e2e-frontend-token-0123456789"
)

// frontendsAndEngines runs f once per frontend (see frontends_test.go) and
// store engine (dbtest.Engines).
func frontendsAndEngines(t *testing.T, f func(t *testing.T, dbURL string)) {
	for _, fe := range frontends {
		t.Run(fe.name, func(t *testing.T) {
			t.Parallel()
			dbtest.Engines(t, func(t *testing.T, dbURL string) { useFrontend(t, fe); f(t, dbURL) })
		})
	}
}

// pa is a personal agent: an ES256 key published in a JWKS on loopback
// (testsigner's PA), under the names these tests use.
type pa struct {
	key    *ecdsa.PrivateKey
	kid    string
	jwks   struct{ URL string }
	signer *testsigner.PA
}

func newPA(t *testing.T) *pa {
	t.Helper()
	s := testsigner.NewPA(t, "pa-key-1")
	p := &pa{key: s.Key, kid: s.KID, signer: s}
	p.jwks.URL = s.URL
	return p
}

// sign returns a compact JWS of the claims under {"alg":alg,"typ":"JWT",
// "kid":kid}. alg ES256 signs with the PA's key; HS256 is the
// algorithm-confusion attack (HMAC keyed with the PA's public key).
func (p *pa) sign(t *testing.T, alg, kid string, claims map[string]any) string {
	t.Helper()
	return p.signer.JWT(t, map[string]any{"alg": alg, "typ": "JWT", "kid": kid}, claims)
}

// countingAgent is the Brand agent: EchoAgent (the demo agent for the
// delegated Brand shop) that counts its runs and can hold them until
// released.
type countingAgent struct {
	runs    atomic.Int32
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
	demo    *demo.Agent
}

func (a *countingAgent) Reply(ctx context.Context, t pacta2a.Turn) (pacta2a.Reply, error) {
	a.runs.Add(1)
	if a.hold.Load() {
		a.entered <- struct{}{}
		<-a.release
	}
	if t.BrandID == shop || t.BrandID == mart {
		return a.demo.Reply(ctx, t)
	}
	return pacta2a.EchoAgent{}.Reply(ctx, t)
}

// shop is the delegated Brand of every world: the demo Brand (package
// demo) in BRAND_LOGIN_MODE_TRUSTED_FRONTEND, signed in through the demo
// login.
const shop = "shop"

// world is pactd, the frontend and a PA, all on loopback.
type world struct {
	feURL    string // the Provider's public URL: the frontend
	pactdURL string
	audience string
	pa       *pa
	issuer   string // the PA's issuer (registered, enabled)
	agentID  string // its pactd id
	disabled string // another issuer on the same JWKS, registered then disabled
	agent    *countingAgent
	site     *brandSite                // the login of mart, the signed-assertion Brand
	metrics  func(t *testing.T) string // pactd's /metrics page
	agents   pactv1connect.AgentServiceClient
	brands   pactv1connect.BrandServiceClient
	deleg    pactv1connect.DelegationServiceClient // frontend role
}

// newWorld starts everything and registers the PA (plus a disabled one)
// and three Brands through the admin API: acme and beta (identity only)
// and shop (delegation).
func newWorld(t *testing.T, dbURL string) *world {
	t.Helper()
	return newWorldWith(t, dbURL, server.Deps{})
}

// newWorldWith is newWorld with pactd built with deps (a test clock).
func newWorldWith(t *testing.T, dbURL string, deps server.Deps) *world {
	t.Helper()
	w := &world{pa: newPA(t), agent: &countingAgent{entered: make(chan struct{}), release: make(chan struct{}), demo: demo.NewAgent()}}
	// A frontend process binds this address after the listener closes: the
	// port is outside the kernel's ephemeral range, so no other socket takes it meanwhile.
	feLn, err := freeport.Listen()
	if err != nil {
		t.Fatal(err)
	}
	w.feURL = "http://" + feLn.Addr().String()
	w.audience = w.feURL + "/a2a"

	cfg, err := config.Load(nil, []string{
		"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + frontendToken,
		"PACT_DATA_DIR=" + t.TempDir(), "PACT_DATABASE_URL=" + dbURL, "PACT_LISTEN=127.0.0.1:0",
		"PACT_PUBLIC_URL=" + w.feURL, "PACT_DEV=true", "PACT_GRPC_LISTEN=off", // pactd is served through Handler only
		"PACT_SELF_REGISTRATION=enabled", // POST /api/platforms (TestSelfRegistration); PACT_DEV lets the PA's JWKS be http on loopback
	}, io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	srv, err := server.Build(t.Context(), cfg, deps)
	if err != nil {
		t.Fatalf("server.Build: %v", err)
	}
	pactd := httptest.NewUnstartedServer(srv.Handler())
	pactd.Config.Protocols = new(http.Protocols) // HTTP/1.1 and h2c, for frontends on gRPC or Connect over HTTP/2
	pactd.Config.Protocols.SetHTTP1(true)
	pactd.Config.Protocols.SetUnencryptedHTTP2(true)
	pactd.Start()
	t.Cleanup(func() { pactd.Close(); _ = srv.Close() })

	w.pactdURL = pactd.URL
	w.metrics = func(t *testing.T) string {
		req := httptest.NewRequestWithContext(t.Context(), "GET", "/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec.Body.String()
	}
	frontendFor(t).start(t, w, feLn)

	admin := bearer(adminToken)
	w.agents = pactv1connect.NewAgentServiceClient(pactd.Client(), pactd.URL, admin)
	w.brands = pactv1connect.NewBrandServiceClient(pactd.Client(), pactd.URL, admin)
	w.deleg = pactv1connect.NewDelegationServiceClient(pactd.Client(), pactd.URL, bearer(frontendToken))
	ctx := t.Context()
	w.issuer = w.pa.jwks.URL
	w.disabled = w.pa.jwks.URL + "/disabled-pa"
	var disabledID string
	for _, iss := range []string{w.issuer, w.disabled} {
		res, err := w.agents.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: iss, JwksUri: iss + "/jwks.json", DisplayName: "E2E PA"})
		if err != nil {
			t.Fatalf("RegisterAgent(%s): %v", iss, err)
		}
		if w.agentID == "" {
			w.agentID = res.GetAgent().GetId()
		}
		disabledID = res.GetAgent().GetId()
	}
	if _, err := w.agents.UpdateAgent(ctx, &pactv1.UpdateAgentRequest{
		Agent: &pactv1.Agent{Id: disabledID, Enabled: false}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled"}},
	}); err != nil {
		t.Fatalf("disable agent: %v", err)
	}
	for _, b := range []string{"acme", "beta"} {
		if _, err := w.brands.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: b, DisplayName: strings.ToUpper(b) + " Inc.", Description: "Support for " + b}); err != nil {
			t.Fatalf("CreateBrand(%s): %v", b, err)
		}
	}
	if _, err := w.brands.CreateBrand(ctx, demo.BrandRequest(shop, "Shop Inc.", w.feURL)); err != nil {
		t.Fatalf("CreateBrand(%s): %v", shop, err)
	}
	w.site = newBrandSite(t)
	if _, err := w.brands.CreateBrand(ctx, w.site.brandRequest(w.feURL)); err != nil {
		t.Fatalf("CreateBrand(%s): %v", mart, err)
	}
	return w
}

// bearer is a client option that sends a pactd caller credential.
func bearer(token string) connect.ClientOption {
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}))
}

// claims are valid PA JWT claims for sub, issued now for 120 s.
func (w *world) claims(sub string) map[string]any {
	now := time.Now().Unix()
	return map[string]any{"iss": w.issuer, "sub": sub, "aud": w.audience, "iat": now, "exp": now + 120}
}

// token is a valid PA JWT for sub.
func (w *world) token(t *testing.T, sub string) string {
	t.Helper()
	return w.pa.sign(t, "ES256", w.pa.kid, w.claims(sub))
}

// response is one HTTP answer.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request to the frontend; headers are "Name: value" strings
// and replace the defaults (none).
func (w *world) do(t *testing.T, method, path, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, w.feURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, string(b)}
}

// send posts message:send as sub (a PA JWT is made for it) with the given
// message fields.
func (w *world) send(t *testing.T, brand, tok string, msg map[string]any, headers ...string) response {
	t.Helper()
	b, err := json.Marshal(map[string]any{"message": msg})
	if err != nil {
		t.Fatal(err)
	}
	return w.do(t, "POST", "/a2a/"+brand+"/message:send", string(b), append([]string{"Authorization: Bearer " + tok,
		"Content-Type: application/json", "A2A-Version: 1.0"}, headers...)...)
}

// userMsg is a text message from the User.
func userMsg(id, contextID, text string) map[string]any {
	m := map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	return m
}

// reply is the strict shape of a message:send answer.
type reply struct {
	Message struct {
		MessageID string `json:"messageId"`
		ContextID string `json:"contextId"`
		Role      string `json:"role"`
		Parts     []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"message"`
}

// decodeReply parses a 200 answer as strictly as the PA client does: no
// unknown keys at any level, the exact content type.
func decodeReply(t *testing.T, r response) reply {
	t.Helper()
	if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" {
		t.Fatalf("message:send = %d %q %s; want 200 application/a2a+json", r.status, r.header.Get("Content-Type"), r.body)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(r.body)))
	dec.DisallowUnknownFields()
	var out reply
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("reply %s: %v", r.body, err)
	}
	if out.Message.Role != "ROLE_AGENT" || out.Message.MessageID == "" || out.Message.ContextID == "" || len(out.Message.Parts) != 1 {
		t.Fatalf("reply %s is not an agent message with one text part", r.body)
	}
	return out
}

// verifications is how many PA JWT verifications pactd has run
// (pactd_verify_requests_total, every outcome).
func (w *world) verifications(t *testing.T) int {
	t.Helper()
	n := 0
	for line := range strings.Lines(w.metrics(t)) {
		if strings.HasPrefix(line, "pactd_verify_requests_total{") {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatalf("metrics line %q", line)
			}
			n += int(v)
		}
	}
	return n
}
