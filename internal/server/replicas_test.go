package server_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd/db/dbtest"
	pactv1 "pactd/gen/pact/v1"
	"pactd/gen/pact/v1/pactv1connect"
)

// TestReplicasLearnChangesThroughPostgres runs two replicas on one
// PostgreSQL database with a cache lifetime of an hour, so only a change
// notification can make replica B see what replica A changed.
func TestReplicasLearnChangesThroughPostgres(t *testing.T) {
	dbURL := dbtest.PostgresURL(t)
	a := start(t, testConfig(t, dbURL, t.TempDir(), "PACT_CACHE_TTL=1h"))
	b := start(t, testConfig(t, dbURL, t.TempDir(), "PACT_CACHE_TTL=1h"))
	ctx := t.Context()
	pa := newTestPA(t)
	reg, err := agents(a, adminToken).RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "PA"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pactv1connect.NewBrandServiceClient(h2c(), a.url, withToken(adminToken)).CreateBrand(ctx,
		&pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
		t.Fatal(err)
	}
	vb := pactv1connect.NewVerificationServiceClient(h2c(), b.url, withToken(frontendToken))
	tok := pa.token(t, map[string]any{"alg": "ES256", "kid": pa.kid}, pa.claims("https://provider.example/a2a", time.Now()))
	verifyOnB := func() *pactv1.VerifyAgentRequestResponse {
		t.Helper()
		r, err := vb.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer " + tok})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Positive control: B allows (and now caches the agent and the Brand).
	if r := verifyOnB(); !r.GetAllowed() {
		t.Fatalf("ok/replica-b-allows: %v", r)
	}
	// A disables the agent; B must refuse well within the hour its cache
	// would otherwise last.
	if _, err := agents(a, adminToken).UpdateAgent(ctx, &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: reg.GetAgent().GetId()},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled"}}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := verifyOnB()
		if !r.GetAllowed() {
			if r.GetReason() != pactv1.DenyReason_DENY_REASON_AGENT_DISABLED {
				t.Fatalf("replica B refused with %v, want AGENT_DISABLED", r.GetReason())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica B still allows a disabled agent 10 s after replica A disabled it")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
