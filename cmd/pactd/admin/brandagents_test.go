package admin_test

import (
	"strings"
	"testing"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// TestBrandAgentCommands: brand agent-policy, add-agent, remove-agent and
// agents against a real pactd, checked against ListBrandAgents; refusals
// name what is wrong and change nothing.
func TestBrandAgentCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		ctx := t.Context()
		reg, err := p.agents().RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: "https://pa.example", JwksUri: "https://pa.example/jwks.json", DisplayName: "Example PA"})
		if err != nil {
			t.Fatal(err)
		}
		id := reg.GetAgent().GetId()
		p.must(t, "brand", "create", "acme", "-name", "Acme")
		if out := p.must(t, "brand", "get", "acme").stdout; !strings.Contains(out, "agent policy") || !strings.Contains(out, "all") {
			t.Fatalf("brand get does not show the default policy:\n%s", out)
		}
		if out := p.must(t, "brand", "agent-policy", "acme", "listed").stdout; out != "Brand acme now admits only its listed PAs\n" {
			t.Fatalf("agent-policy listed printed %q", out)
		}
		if out := p.must(t, "brand", "add-agent", "acme", id).stdout; out != "added agent "+id+" to Brand acme's list\n" {
			t.Fatalf("add-agent printed %q", out)
		}
		if out := p.must(t, "brand", "add-agent", "acme", id).stdout; out != "agent "+id+" was on Brand acme's list already\n" {
			t.Fatalf("add-agent again printed %q", out)
		}
		out := p.must(t, "brand", "agents", "acme").stdout
		head, rest, _ := strings.Cut(out, "\n")
		if head != "Brand acme admits only its listed PAs" {
			t.Fatalf("agents printed %q", out)
		}
		rows := table(t, rest)
		if len(rows) != 1 || rows[0]["AGENT"] != id || rows[0]["NAME"] != "Example PA" || rows[0]["ADDED"] == "" {
			t.Fatalf("agents rows = %v", rows)
		}
		want, err := p.brands().ListBrandAgents(ctx, &pactv1.ListBrandAgentsRequest{BrandId: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		sameMessage(t, "brand agents -o json", decode(t, p.must(t, "brand", "agents", "acme", "-o", "json"), &pactv1.ListBrandAgentsResponse{}), want)

		refused(t, p.cli(t, "brand", "add-agent", "acme", "agt_nobody"), "not_found", "ERROR_REASON_NOT_FOUND")
		refused(t, p.cli(t, "brand", "add-agent", "nobody", id), "not_found", "ERROR_REASON_NOT_FOUND")
		refused(t, p.cli(t, "brand", "agents", "nobody"), "not_found", "ERROR_REASON_NOT_FOUND")
		if r := p.cli(t, "brand", "agent-policy", "acme", "some"); r.code != 2 || !strings.Contains(r.stderr, "must be all or listed") {
			t.Fatalf("agent-policy some: exit %d, stderr %q; want a usage error", r.code, r.stderr)
		}
		if after, err := p.brands().ListBrandAgents(ctx, &pactv1.ListBrandAgentsRequest{BrandId: "acme"}); err != nil || len(after.GetAgents()) != 1 ||
			after.GetPolicy() != pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED {
			t.Fatalf("the refusals changed the list: %v, %v", after, err)
		}
		p.must(t, "brand", "remove-agent", "acme", id)
		refused(t, p.cli(t, "brand", "remove-agent", "acme", id), "not_found", "ERROR_REASON_NOT_FOUND")
		if out := p.must(t, "brand", "agent-policy", "acme", "all").stdout; out != "Brand acme now admits every enabled PA\n" {
			t.Fatalf("agent-policy all printed %q", out)
		}
	})
}
