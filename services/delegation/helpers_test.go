package delegation_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/internal/testkit/testsigner"
	"pactd.dev/pactd/server/oauthhttp"
	"pactd.dev/pactd/services/delegation"
	"pactd.dev/pactd/token/delegtoken"
	"pactd.dev/pactd/token/pajwt"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	publicURL = "https://provider.example"
	paIssuer  = "https://pa.example"
	pa2Issuer = "https://other-pa.example"
	// PA JWT stand-ins the fake verifier understands.
	paAuth    = "Bearer pa-1"
	pa2Auth   = "Bearer pa-2"
	badAuth   = "Bearer forged"
	faultAuth = "Bearer fault"
	loginURL  = "https://login.acme.example"
)

// start is the fixed instant tests begin at.
var start = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// fakePA maps an Authorization value to a caller or a refusal.
type fakePA struct{}

func (fakePA) VerifyPA(_ context.Context, authorization string) (pajwt.Result, error) {
	switch authorization {
	case paAuth:
		return pajwt.Result{Agent: pajwt.Agent{ID: "agt_1", Issuer: paIssuer, Enabled: true}, Subject: "pa-user-1"}, nil
	case pa2Auth:
		return pajwt.Result{Agent: pajwt.Agent{ID: "agt_2", Issuer: pa2Issuer, Enabled: true}, Subject: "pa-user-2"}, nil
	case faultAuth:
		return pajwt.Result{}, errors.New("agent directory unavailable")
	case "":
		return pajwt.Result{}, &pajwt.Error{Reason: pajwt.ReasonMalformed}
	}
	return pajwt.Result{}, &pajwt.Error{Reason: pajwt.ReasonSignature}
}

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// fakeToken serves metadata and JWKS like the TokenService would.
type fakeToken struct {
	pactv1connect.UnimplementedTokenServiceHandler
}

func (fakeToken) GetAuthorizationServerMetadata(_ context.Context, req *pactv1.GetAuthorizationServerMetadataRequest) (*pactv1.GetAuthorizationServerMetadataResponse, error) {
	if req.GetBrandId() != "acme" {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("brand not found"))
	}
	return &pactv1.GetAuthorizationServerMetadataResponse{MetadataJson: `{"issuer":"x"}`, CacheControl: "public, max-age=300"}, nil
}

func (fakeToken) GetJwks(context.Context, *pactv1.GetJwksRequest) (*pactv1.GetJwksResponse, error) {
	return &pactv1.GetJwksResponse{JwksJson: `{"keys":[]}`, CacheControl: "public, max-age=300"}, nil
}

// env is one delegation service on a real store, served over HTTP/2 (TLS)
// with its RPCs and the OAuth wire endpoints.
type env struct {
	t        *testing.T
	store    db.Store
	clk      *testclock.Clock
	keys     *testsigner.Signer
	logs     *syncBuffer
	url      string
	http     *http.Client
	rpc      pactv1connect.DelegationServiceClient
	verifier *delegtoken.Verifier
}

type envOption func(*delegation.Deps)

func newEnv(t *testing.T, s db.Store, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, store: s, clk: testclock.New(start), keys: testsigner.New(t, "test-key"), logs: &syncBuffer{}}
	seed(t, s)
	deps := delegation.Deps{
		Store: s, PA: fakePA{}, Minter: delegtoken.NewSigner(e.keys, nil), PublicURL: publicURL,
		Now: e.clk.Now, Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sessions: delegtoken.ConsentSessions{Signer: delegtoken.NewSigner(e.keys, e.clk.Now), Verifier: delegtoken.NewVerifier(e.keys, e.clk.Now)},
	}
	for _, o := range opts {
		o(&deps)
	}
	svc := delegation.New(deps)
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewDelegationServiceHandler(svc))
	oauthhttp.New(svc, fakeToken{}, deps.Logger).Register(mux)
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	e.url, e.http = srv.URL, srv.Client()
	e.rpc = pactv1connect.NewDelegationServiceClient(e.http, e.url, connect.WithGRPC())
	e.verifier = delegtoken.NewVerifier(e.keys, e.clk.Now)
	return e
}

// seed stores the agents and Brands every test uses: acme (trusted
// frontend login, three scopes), beta (its own scope), plain (no
// delegation) and signed (signed-assertion login).
func seed(t *testing.T, s db.Store) {
	t.Helper()
	ctx := t.Context()
	for _, a := range []db.Agent{
		{ID: "agt_1", Issuer: paIssuer, JWKSURI: paIssuer + "/jwks.json", DisplayName: "Pocket Assistant", Enabled: true},
		{ID: "agt_2", Issuer: pa2Issuer, JWKSURI: pa2Issuer + "/jwks.json", DisplayName: "Other PA", Enabled: true},
	} {
		a.CreateTime, a.UpdateTime = start, start
		if _, err := s.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	trusted := pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND.String()
	for _, b := range []db.Brand{
		{ID: "acme", DisplayName: "Acme", Delegation: db.Delegation{Enabled: true, LoginURL: loginURL, LoginMode: trusted, Scopes: []db.Scope{
			{ID: "orders:read", Description: "See your orders"},
			{ID: "orders:write", Description: "Change your orders"},
			{ID: "profile:read", Description: "See your profile"},
		}}},
		{ID: "beta", DisplayName: "Beta", Delegation: db.Delegation{Enabled: true, LoginURL: "https://login.beta.example/", LoginMode: trusted,
			Scopes: []db.Scope{{ID: "beta:read", Description: "Read Beta"}}}},
		{ID: "plain", DisplayName: "Plain"},
		{ID: "signed", DisplayName: "Signed", Delegation: db.Delegation{Enabled: true, LoginURL: loginURL,
			LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION.String(), AssertionIssuer: loginURL,
			AssertionJWKSURI: loginURL + "/jwks.json", Scopes: []db.Scope{{ID: "orders:read", Description: "See your orders"}}}},
	} {
		b.CreateTime, b.UpdateTime = start, start
		if _, err := s.CreateBrand(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
}

// response is an HTTP answer, read whole.
type response struct {
	status int
	header http.Header
	body   string
}

// json decodes the body into a map.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

func (e *env) do(method, path, auth, contentType, body string) response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// post sends a form to one of a Brand's OAuth endpoints.
func (e *env) post(brand, endpoint, auth string, form url.Values) response {
	e.t.Helper()
	return e.do(http.MethodPost, "/a2a/"+brand+"/oauth/"+endpoint, auth, "application/x-www-form-urlencoded", form.Encode())
}

// deviceForm is a device authorization form of PA 1.
func deviceForm(scope string) url.Values {
	return url.Values{"client_id": {paIssuer}, "scope": {scope}}
}

// startDevice runs a successful device authorization and returns its body.
func (e *env) startDevice(brand, auth, clientID, scope string) map[string]any {
	e.t.Helper()
	r := e.post(brand, "device_authorization", auth, url.Values{"client_id": {clientID}, "scope": {scope}})
	if r.status != http.StatusOK {
		e.t.Fatalf("device authorization: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

func deviceGrant(code, clientID string) url.Values {
	return url.Values{"grant_type": {oauthwire.GrantTypeDeviceCode}, "device_code": {code}, "client_id": {clientID}}
}

func refreshGrant(token, clientID string) url.Values {
	return url.Values{"grant_type": {oauthwire.GrantTypeRefreshToken}, "refresh_token": {token}, "client_id": {clientID}}
}

// approve approves a user code as brand user u, choosing scopes.
func (e *env) approve(brand, userCode, user string, scopes ...string) (*pactv1.ApproveConsentResponse, error) {
	return e.rpc.ApproveConsent(e.t.Context(), &pactv1.ApproveConsentRequest{BrandId: brand, UserCode: userCode, BrandUser: user, Scopes: scopes})
}

// approvedCode starts an authorization at acme for PA 1 and approves it.
func (e *env) approvedCode(scope string, chosen ...string) (deviceCode string) {
	e.t.Helper()
	d := e.startDevice("acme", paAuth, paIssuer, scope)
	if _, err := e.approve("acme", d["user_code"].(string), "user-42", chosen...); err != nil {
		e.t.Fatalf("approve: %v", err)
	}
	return d["device_code"].(string)
}

// redeem turns an approved code into tokens.
func (e *env) redeem(deviceCode string) map[string]any {
	e.t.Helper()
	r := e.post("acme", "token", paAuth, deviceGrant(deviceCode, paIssuer))
	if r.status != http.StatusOK {
		e.t.Fatalf("redeem: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

// wantBare401 checks a bare 401: the challenge and no body.
func wantBare401(t *testing.T, r response) {
	t.Helper()
	if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != `Bearer realm="a2a"` || r.body != "" {
		t.Fatalf("got %d %q WWW-Authenticate=%q; want a bare 401 with Bearer realm=\"a2a\"", r.status, r.body, r.header.Get("WWW-Authenticate"))
	}
}

// wantOAuthError checks an OAuth JSON error: status, error code, and the
// no-store headers.
func wantOAuthError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d (%s), want %d %s", r.status, r.body, status, code)
	}
	if got := r.json(t)["error"]; got != code {
		t.Fatalf("error = %v (%s), want %s", got, r.body, code)
	}
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
		t.Fatalf("headers = %v; want application/json, no-store, no-cache", r.header)
	}
	if status == http.StatusUnauthorized && r.header.Get("WWW-Authenticate") != `Bearer realm="a2a"` {
		t.Fatalf("401 without the Bearer challenge: %v", r.header)
	}
}

func deviceHash(code string) []byte { h := sha256.Sum256([]byte(code)); return h[:] }
