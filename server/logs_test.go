package server_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/server"
)

// syncBuffer is a bytes.Buffer safe for the server's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogsNeverHoldSecrets drives allowed and refused calls with every
// kind of secret pactd handles, logging at debug level, and scans the log
// for them.
func TestLogsNeverHoldSecrets(t *testing.T) {
	logs := &syncBuffer{}
	cfg := testConfig(t, "", t.TempDir(), "PACT_LOG_LEVEL=debug")
	inst := startWith(t, cfg, server.Deps{Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})

	pa := newTestPA(t)
	ac := agents(inst, adminToken)
	if _, err := ac.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/j", DisplayName: "PA"}); err != nil {
		t.Fatal(err)
	}
	if _, err := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken)).CreateBrand(t.Context(),
		&pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
		t.Fatal(err)
	}
	vc := pactv1connect.NewVerificationServiceClient(h2c(), inst.url, withToken(frontendToken))
	good := pa.token(t, map[string]any{"alg": "ES256", "kid": pa.kid}, pa.claims("https://provider.example/a2a", time.Now()))
	bad := pa.token(t, map[string]any{"alg": "HS256", "kid": pa.kid}, pa.claims("https://provider.example/a2a", time.Now()))
	for _, authz := range []string{"Bearer " + good, "Bearer " + bad, "Bearer " + good + "x"} {
		if _, err := vc.VerifyAgentRequest(t.Context(), &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: authz,
			UserDelegation: "Bearer " + good}); err != nil {
			t.Fatal(err)
		}
	}
	// Refused credentials and a refused registration are logged as failures.
	_, _ = agents(inst, "wrong-token-but-long-enough-000").ListAgents(t.Context(), &pactv1.ListAgentsRequest{})
	_, _ = agents(inst, frontendToken).ListAgents(t.Context(), &pactv1.ListAgentsRequest{})
	_, _ = ac.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: "/x", JwksUri: "http://x", DisplayName: ""})

	out := logs.String()
	// Control: the scan reads a log that recorded these calls.
	for _, want := range []string{`"msg":"rpc failed"`, "DENY_REASON_ALGORITHM", "unauthenticated", "permission_denied"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q; the scan would prove nothing:\n%s", want, out)
		}
	}
	for name, secret := range map[string]string{
		"admin token": adminToken, "frontend token": frontendToken, "wrong token": "wrong-token-but-long-enough-000",
		"PA JWT": good, "JWT header": "eyJ", "refused JWT signature": bad[strings.LastIndex(bad, ".")+1:],
	} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds the %s", name)
		}
	}
}
