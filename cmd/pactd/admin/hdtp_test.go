package admin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// TestHDTPCommands walks an identity through the CLI as docs/hdtp.md does,
// on both stores: the development wallet makes a root, hdtp create makes
// the identity and its signing request, the wallet signs it, hdtp install
// takes the answer, hdtp card serves the card; a renewal supersedes the
// first leaf; the trust helpers refuse what they must (exit 1) and accept
// the rest.
func TestHDTPCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		dir := t.TempDir()
		wallet := filepath.Join(dir, "wallet")
		noEnv := []string{"HOME=/nonexistent"}
		w := ok(t, run(t, noEnv, "hdtp", "wallet-init", wallet, "-name", "Alina Rao"), "wallet-init")
		if !strings.Contains(w.stdout, "root sha256:") {
			t.Fatalf("wallet-init printed %q", w.stdout)
		}
		if r := run(t, noEnv, "hdtp", "wallet-init", wallet, "-name", "Alina Rao"); r.code != 1 {
			t.Fatalf("a second wallet-init in the same directory: exit %d", r.code)
		}
		req1 := filepath.Join(dir, "request1.json")
		created := decode(t, p.must(t, "hdtp", "create", "https://agent.alina.example/mcp", "-name", "Alina Rao", "-request-out", req1, "-o", "json"),
			&hdtpv1.CreateIdentityResponse{})
		id := created.GetIdentity().GetIdentityId()
		if _, err := os.Stat(req1); err != nil {
			t.Fatal(err)
		}
		answer := strings.TrimSpace(ok(t, run(t, noEnv, "hdtp", "wallet-sign", wallet, "-request", req1), "wallet-sign").stdout)
		if !strings.HasPrefix(answer, "chain=") || !strings.HasSuffix(answer, "&state="+created.GetSigningRequest().GetState()) {
			t.Fatalf("answer %q", answer)
		}
		inst := p.must(t, "hdtp", "install", id, "-answer", answer)
		if !strings.Contains(inst.stdout, "installed leaf "+created.GetSigningRequest().GetKid()) {
			t.Fatalf("install printed %q", inst.stdout)
		}
		card := p.must(t, "hdtp", "card", id).stdout
		if !strings.HasPrefix(card, "BEGIN:VCARD\nVERSION:4.0\nFN:Alina Rao\nX-HDTP-VERSION:1\nX-HDTP-CERT:") || !strings.Contains(card, "X-HDTP-SEAL:required\nEND:VCARD\n") {
			t.Fatalf("card %q", card)
		}
		// A renewal.
		req2 := filepath.Join(dir, "request2.json")
		p.must(t, "hdtp", "request", id, "-request-out", req2)
		answer2 := strings.TrimSpace(ok(t, run(t, noEnv, "hdtp", "wallet-sign", wallet, "-request", req2), "wallet-sign").stdout)
		p.must(t, "hdtp", "install", id, "-answer", answer2)
		leaves := p.must(t, "hdtp", "leaves", id).stdout
		if !strings.Contains(leaves, "superseded") || !strings.Contains(leaves, "current") {
			t.Fatalf("leaves %q", leaves)
		}
		// The chain the answer carried validates at the endpoint.
		chain := strings.TrimPrefix(strings.Split(answer2, "&")[0], "chain=")
		v := p.must(t, "hdtp", "validate-chain", chain, "-endpoint", "https://agent.alina.example/mcp")
		if !strings.Contains(v.stdout, "valid") || !strings.Contains(v.stdout, "yes") {
			t.Fatalf("validate-chain printed %q", v.stdout)
		}
		if r := p.cli(t, "hdtp", "validate-chain", chain, "-endpoint", "https://agent.alina.example/mcp/"); r.code != 1 || !strings.Contains(r.stdout, "endpoint_mismatch") {
			t.Fatalf("validate-chain at another endpoint: exit %d %q", r.code, r.stdout)
		}
		if r := p.cli(t, "hdtp", "check-address", "https://127.0.0.1/mcp"); r.code != 1 || !strings.Contains(r.stdout, "not_public") {
			t.Fatalf("check-address: exit %d %q", r.code, r.stdout)
		}
		p.must(t, "hdtp", "check-address", "https://agent.alina.example/mcp", "-resolved", "93.184.216.34")
		// A wrong answer is refused, with the rule in the message.
		if r := p.cli(t, "hdtp", "install", id, "-answer", answer); r.code != 1 || !strings.Contains(r.stderr, "failed_precondition") {
			t.Fatalf("an old answer again: exit %d %q", r.code, r.stderr)
		}
		up := p.must(t, "hdtp", "update", id, "-seal", "optional")
		if !strings.Contains(up.stdout, "optional") {
			t.Fatalf("update printed %q", up.stdout)
		}
		if !strings.Contains(p.must(t, "hdtp", "list").stdout, "https://agent.alina.example/mcp") {
			t.Fatal("list lacks the identity")
		}
		p.must(t, "hdtp", "delete", id)
		if r := p.cli(t, "hdtp", "get", id); r.code != 1 {
			t.Fatalf("get after delete: exit %d", r.code)
		}
	})
}
