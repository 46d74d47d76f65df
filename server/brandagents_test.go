package server_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// The per-Brand agent policy through pactd's RPCs on one instance: the
// default admits every enabled PA; LISTED admits exactly the listed ones
// and refuses the others with a bare 401 and DENY_REASON_AGENT_NOT_ALLOWED
// (PACT §1.4's answer for a PA that is not onboarded); an unknown Brand
// stays 404; malformed and unknown names are refused with the field or
// thing named, and change nothing; the frontend role may not manage it.
func TestBrandAgentPolicy(t *testing.T) {
	inst := start(t, testConfig(t, "", t.TempDir()))
	ctx := t.Context()
	listed, other := newTestPA(t), newTestPA(t)
	ids := map[*testPA]string{}
	for _, pa := range []*testPA{listed, other} {
		r, err := agents(inst, adminToken).RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "PA"})
		if err != nil {
			t.Fatal(err)
		}
		ids[pa] = r.GetAgent().GetId()
	}
	bc := brands(inst, adminToken)
	if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
		t.Fatal(err)
	}
	verify := func(pa *testPA, brandID string) *pactv1.VerifyAgentRequestResponse {
		t.Helper()
		return verifyWith(t, inst, pa, brandID)
	}
	// Default: every enabled PA.
	for _, pa := range []*testPA{listed, other} {
		if r := verify(pa, "acme"); !r.GetAllowed() {
			t.Fatalf("ok/default-admits-all: %v", r)
		}
	}
	if r, err := bc.AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: "acme", AgentId: ids[listed]}); err != nil || !r.GetAdded() {
		t.Fatalf("AddBrandAgent = %v, %v", r, err)
	}
	if r, err := bc.AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: "acme", AgentId: ids[listed]}); err != nil || r.GetAdded() {
		t.Fatalf("AddBrandAgent again = %v, %v; want added false", r, err)
	}
	// The list alone changes nothing while the policy is ALL.
	if r := verify(other, "acme"); !r.GetAllowed() {
		t.Fatalf("ok/list-kept-under-all: %v", r)
	}
	set, err := bc.SetBrandAgentPolicy(ctx, &pactv1.SetBrandAgentPolicyRequest{BrandId: "acme", Policy: pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED})
	if err != nil || set.GetBrand().GetAgentPolicy() != pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED {
		t.Fatalf("SetBrandAgentPolicy = %v, %v", set, err)
	}
	if r := verify(listed, "acme"); !r.GetAllowed() {
		t.Fatalf("ok/listed-admitted: %v", r)
	}
	r := verify(other, "acme")
	if r.GetAllowed() || r.GetHttpStatus() != 401 || r.GetWwwAuthenticate() != `Bearer realm="a2a"` || r.GetReason() != pactv1.DenyReason_DENY_REASON_AGENT_NOT_ALLOWED {
		t.Fatalf("fail/not-listed: %v; want 401 Bearer realm=\"a2a\" AGENT_NOT_ALLOWED", r)
	}
	if r := verify(other, "nope"); r.GetHttpStatus() != 404 || r.GetReason() != pactv1.DenyReason_DENY_REASON_UNKNOWN_BRAND {
		t.Fatalf("fail/unknown-brand-stays-404: %v", r)
	}
	got, err := bc.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: "acme"})
	if err != nil || got.GetBrand().GetAgentPolicy() != pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED {
		t.Fatalf("GetBrand = %v, %v", got, err)
	}
	list, err := bc.ListBrandAgents(ctx, &pactv1.ListBrandAgentsRequest{BrandId: "acme"})
	if err != nil || list.GetPolicy() != pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED || len(list.GetAgents()) != 1 ||
		list.GetAgents()[0].GetAgentId() != ids[listed] || list.GetAgents()[0].GetDisplayName() != "PA" || list.GetAgents()[0].GetAddTime() == nil {
		t.Fatalf("ListBrandAgents = %v, %v", list, err)
	}

	// Refusals, each naming what is wrong; none changes the list.
	for _, tc := range []struct {
		name string
		call func() error
		code connect.Code
	}{
		{"policy-unspecified", func() error {
			_, err := bc.SetBrandAgentPolicy(ctx, &pactv1.SetBrandAgentPolicyRequest{BrandId: "acme"})
			return err
		}, connect.CodeInvalidArgument},
		{"policy-unknown-brand", func() error {
			_, err := bc.SetBrandAgentPolicy(ctx, &pactv1.SetBrandAgentPolicyRequest{BrandId: "nope", Policy: pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_ALL})
			return err
		}, connect.CodeNotFound},
		{"add-no-agent", func() error {
			_, err := bc.AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: "acme"})
			return err
		}, connect.CodeInvalidArgument},
		{"add-unknown-agent", func() error {
			_, err := bc.AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: "acme", AgentId: "agt_nope"})
			return err
		}, connect.CodeNotFound},
		{"add-unknown-brand", func() error {
			_, err := bc.AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: "nope", AgentId: ids[other]})
			return err
		}, connect.CodeNotFound},
		{"remove-not-listed", func() error {
			_, err := bc.RemoveBrandAgent(ctx, &pactv1.RemoveBrandAgentRequest{BrandId: "acme", AgentId: ids[other]})
			return err
		}, connect.CodeNotFound},
		{"list-no-brand", func() error {
			_, err := bc.ListBrandAgents(ctx, &pactv1.ListBrandAgentsRequest{})
			return err
		}, connect.CodeInvalidArgument},
		{"frontend-may-not-add", func() error {
			_, err := brands(inst, frontendToken).AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: "acme", AgentId: ids[other]})
			return err
		}, connect.CodePermissionDenied},
	} {
		if err := tc.call(); connect.CodeOf(err) != tc.code {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.code)
		}
	}
	if list, err := bc.ListBrandAgents(ctx, &pactv1.ListBrandAgentsRequest{BrandId: "acme"}); err != nil || len(list.GetAgents()) != 1 {
		t.Fatalf("the refusals changed the list: %v, %v", list, err)
	}
	if r := verify(other, "acme"); r.GetReason() != pactv1.DenyReason_DENY_REASON_AGENT_NOT_ALLOWED {
		t.Fatalf("fail/still-not-listed: %v", r)
	}
	// Taking the listed PA off leaves an empty list, which admits none.
	if _, err := bc.RemoveBrandAgent(ctx, &pactv1.RemoveBrandAgentRequest{BrandId: "acme", AgentId: ids[listed]}); err != nil {
		t.Fatal(err)
	}
	if r := verify(listed, "acme"); r.GetReason() != pactv1.DenyReason_DENY_REASON_AGENT_NOT_ALLOWED {
		t.Fatalf("fail/removed: %v", r)
	}
	if _, err := bc.SetBrandAgentPolicy(ctx, &pactv1.SetBrandAgentPolicyRequest{BrandId: "acme", Policy: pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_ALL}); err != nil {
		t.Fatal(err)
	}
	if r := verify(other, "acme"); !r.GetAllowed() {
		t.Fatalf("ok/back-to-all: %v", r)
	}
}

// verifyWith asks inst about a new PA JWT of pa for the Brand.
func verifyWith(t *testing.T, inst *instance, pa *testPA, brandID string) *pactv1.VerifyAgentRequestResponse {
	t.Helper()
	tok := pa.token(t, map[string]any{"alg": "ES256", "kid": pa.kid}, pa.claims("https://provider.example/a2a", time.Now()))
	r, err := pactv1connect.NewVerificationServiceClient(h2c(), inst.url, withToken(frontendToken)).VerifyAgentRequest(t.Context(), &pactv1.VerifyAgentRequestRequest{BrandId: brandID, Authorization: "Bearer " + tok})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A PA outside a Brand's list is refused on every replica, and a change of
// the policy or the list on replica A is in effect on replica B within the
// revocation bound (B cached the Brand before each change; the cache TTL
// is an hour, so only the change feed can tell B). Both with
// LISTEN/NOTIFY and with polling alone.
func TestBrandAgentPolicyOnEveryReplica(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
	}{{"notify", nil}, {"poll-alone", []string{"PACT_CHANGE_NOTIFY_URL=off"}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dbURL := dbtest.PostgresURL(t)
			p := newReplicaPair(t, dbURL, dbURL, tc.env...)
			ctx := t.Context()
			onA := brands(p.a, adminToken)
			if _, err := onA.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
				t.Fatal(err)
			}
			allowedOnB := func() {
				t.Helper()
				created := time.Now()
				for r := p.verifyOnB(t, "acme"); !r.GetAllowed(); r = p.verifyOnB(t, "acme") {
					if time.Since(created) > bound+time.Second {
						t.Fatalf("replica B still refuses (%v) %v after the change on A", r.GetReason(), time.Since(created))
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			// Positive control: B admits the PA, and caches the Brand.
			allowedOnB()
			// 1. The policy turns LISTED with the PA not on the list.
			if _, err := onA.SetBrandAgentPolicy(ctx, &pactv1.SetBrandAgentPolicyRequest{BrandId: "acme", Policy: pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED}); err != nil {
				t.Fatal(err)
			}
			took := refusedWithin(t, time.Now(), bound, pactv1.DenyReason_DENY_REASON_AGENT_NOT_ALLOWED, p.decideOnB(t, "acme"))
			t.Logf("%s: policy LISTED on A, refused on B after %v", tc.name, took.Round(time.Millisecond))
			if r := verifyWith(t, p.a, p.pa, "acme"); r.GetReason() != pactv1.DenyReason_DENY_REASON_AGENT_NOT_ALLOWED {
				t.Fatalf("fail/refused-on-a-too: %v", r)
			}
			// 2. The PA is listed: admitted on B (B cached the refusal).
			if _, err := onA.AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: "acme", AgentId: p.agentID}); err != nil {
				t.Fatal(err)
			}
			allowedOnB()
			// 3. The PA is taken off the list: refused on B again.
			if _, err := onA.RemoveBrandAgent(ctx, &pactv1.RemoveBrandAgentRequest{BrandId: "acme", AgentId: p.agentID}); err != nil {
				t.Fatal(err)
			}
			took = refusedWithin(t, time.Now(), bound, pactv1.DenyReason_DENY_REASON_AGENT_NOT_ALLOWED, p.decideOnB(t, "acme"))
			t.Logf("%s: PA removed from the list on A, refused on B after %v", tc.name, took.Round(time.Millisecond))
		})
	}
}
