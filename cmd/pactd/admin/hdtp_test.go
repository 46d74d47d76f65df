package admin_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/peertest"
	"pactd.dev/pactd/internal/hdtp/wire"
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

// TestHDTPContactCommands runs the owner's side through the CLI, on both
// stores: a stranger's request_contact arrives over HostService (as a host
// forwards it); hdtp contact list shows it waiting; approve prints the
// contact_accepted call to deliver (its body written with -call-out);
// permissions, block and unblock change it; an invite is made (its URL and
// token printed once), listed without its token and revoked; a request to
// someone's card prints the request_contact call; hdtp update sets the
// new-host policy. Refusals exit 1 with the RPC's code.
func TestHDTPContactCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		ctx := t.Context()
		dir := t.TempDir()
		wallet := filepath.Join(dir, "wallet")
		noEnv := []string{"HOME=/nonexistent"}
		ok(t, run(t, noEnv, "hdtp", "wallet-init", wallet, "-name", "Bharat Mehta"), "wallet-init")
		req := filepath.Join(dir, "request.json")
		created := decode(t, p.must(t, "hdtp", "create", "https://agent.bharat.example/mcp", "-name", "Bharat Mehta", "-request-out", req, "-o", "json"),
			&hdtpv1.CreateIdentityResponse{})
		id := created.GetIdentity().GetIdentityId()
		p.must(t, "hdtp", "install", id, "-answer", strings.TrimSpace(ok(t, run(t, noEnv, "hdtp", "wallet-sign", wallet, "-request", req), "wallet-sign").stdout))
		card := decode(t, p.must(t, "hdtp", "card", id, "-o", "json"), &hdtpv1.GetCardResponse{})
		leafDER, _ := wire.B64Decode(card.GetChain()[0])
		leaf, err := cert.Parse(leafDER, cert.KindLeaf, wire.HDTP1)
		if err != nil {
			t.Fatal(err)
		}

		// A stranger asks, through the host's forwarder.
		alina, err := peertest.NewPeer(wire.HDTP1, "Alina Rao", "https://agent.alina.example/mcp", time.Now().Add(-time.Hour), false)
		if err != nil {
			t.Fatal(err)
		}
		quoted, _ := json.Marshal(alina.Card)
		c, err := alina.Seal(leaf, 1, "env-1", time.Now(), "request_contact", `{"card":`+string(quoted)+`}`, false)
		if err != nil {
			t.Fatal(err)
		}
		host := hdtpv1connect.NewHostServiceClient(http.DefaultClient, p.url, withToken(frontendToken))
		if r, err := host.OpenInbound(ctx, &hdtpv1.OpenInboundRequest{IdentityId: id, Body: c.Body}); err != nil || !r.GetRespond().GetSealed() {
			t.Fatalf("OpenInbound = %v, %v", r, err)
		}
		root := alina.RootFingerprint()
		if l := p.must(t, "hdtp", "contact", "list", id, "-state", "pending_in").stdout; !strings.Contains(l, root) || !strings.Contains(l, "Alina Rao") {
			t.Fatalf("contact list = %q", l)
		}
		callFile := filepath.Join(dir, "call.json")
		ap := p.must(t, "hdtp", "contact", "approve", id, root, "-preset", "basic", "-call-out", callFile).stdout
		if !strings.Contains(ap, "deliver to") || !strings.Contains(ap, "https://agent.alina.example/mcp") || !strings.Contains(ap, "active") {
			t.Fatalf("approve = %q", ap)
		}
		if b, err := os.ReadFile(callFile); err != nil || !strings.Contains(string(b), `"name":"sealed_call"`) {
			t.Fatalf("call body = %s, %v", b, err)
		}
		if r := p.cli(t, "hdtp", "contact", "approve", id, root, "-preset", "basic"); r.code != 1 || !strings.Contains(r.stderr, "failed_precondition") {
			t.Fatalf("approving twice: exit %d %q", r.code, r.stderr)
		}
		if out := p.must(t, "hdtp", "contact", "permissions", id, root, "-preset", "work").stdout; !strings.Contains(out, "calendar.book") {
			t.Fatalf("permissions = %q", out)
		}
		if out := p.must(t, "hdtp", "contact", "block", id, root).stdout; !strings.Contains(out, "blocked") {
			t.Fatalf("block = %q", out)
		}
		if out := p.must(t, "hdtp", "contact", "unblock", id, root).stdout; !strings.Contains(out, "active") {
			t.Fatalf("unblock = %q", out)
		}
		if r := p.cli(t, "hdtp", "contact", "get", id, "sha256:nope"); r.code != 1 || !strings.Contains(r.stderr, "invalid_argument") {
			t.Fatalf("a bad root: exit %d %q", r.code, r.stderr)
		}
		// Invites.
		inv := decode(t, p.must(t, "hdtp", "invite", "create", id, "-label", "party", "-max-uses", "3", "-o", "json"), &hdtpv1.CreateInviteResponse{})
		if !strings.HasPrefix(inv.GetUrl(), "https://agent.bharat.example/i/inv_") || inv.GetInvite().GetMaxUses() != 3 {
			t.Fatalf("invite create = %v", inv)
		}
		if l := p.must(t, "hdtp", "invite", "list", id).stdout; !strings.Contains(l, "party") || strings.Contains(l, inv.GetToken()) {
			t.Fatalf("invite list = %q", l)
		}
		p.must(t, "hdtp", "invite", "revoke", id, inv.GetInvite().GetInviteId())
		if r := p.cli(t, "hdtp", "invite", "revoke", id, inv.GetInvite().GetInviteId()); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
			t.Fatalf("revoking twice: exit %d %q", r.code, r.stderr)
		}
		// A request to someone's card.
		chandra, err := peertest.NewPeer(wire.HDTP1, "Chandra Iyer", "https://agent.chandra.example/mcp", time.Now().Add(-time.Hour), false)
		if err != nil {
			t.Fatal(err)
		}
		cardFile := filepath.Join(dir, "chandra.vcf")
		if err := os.WriteFile(cardFile, []byte(chandra.Card), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := p.must(t, "hdtp", "contact", "request", id, "-card", cardFile, "-note", "Hello").stdout; !strings.Contains(out, "pending_out") ||
			!strings.Contains(out, "https://agent.chandra.example/mcp") {
			t.Fatalf("contact request = %q", out)
		}
		if out := p.must(t, "hdtp", "update", id, "-accept-new-hosts", "ask").stdout; !strings.Contains(out, "ask") {
			t.Fatalf("update = %q", out)
		}
		p.must(t, "hdtp", "contact", "remove", id, root)
		if r := p.cli(t, "hdtp", "contact", "get", id, root); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
			t.Fatalf("get after remove: exit %d %q", r.code, r.stderr)
		}
	})
}
