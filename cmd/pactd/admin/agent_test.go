package admin_test

import (
	"os"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// TestAgentCommands: every agent command against a real pactd on both
// stores; each table and JSON output is checked against what the RPCs
// return afterwards, refusals name the field and change nothing.
func TestAgentCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		ctx := t.Context()
		const issuer, jwks = "https://pa.example", "https://pa.example/.well-known/jwks.json"

		// register: the table shows the stored agent.
		r := p.must(t, "agent", "register", "-issuer", issuer, "-jwks-uri", jwks, "-name", "Example PA")
		got, notes := fields(t, r.stdout)
		stored, err := p.agents().GetAgent(ctx, &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Issuer{Issuer: issuer}})
		if err != nil {
			t.Fatal(err)
		}
		a := stored.GetAgent()
		if len(notes) != 1 || notes[0] != "registered agent "+a.GetId() {
			t.Errorf("register said %q, want \"registered agent %s\"", notes, a.GetId())
		}
		want := map[string]string{"id": a.GetId(), "issuer": issuer, "jwks uri": jwks, "name": "Example PA",
			"audience": "https://provider.example/a2a", "enabled": "yes",
			"created": a.GetCreateTime().AsTime().UTC().Format("2006-01-02T15:04:05Z"), "updated": a.GetUpdateTime().AsTime().UTC().Format("2006-01-02T15:04:05Z")}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("register table %q = %q, want %q\n%s", k, got[k], v, r.stdout)
			}
		}
		// Registering the same again: created false, the same agent (JSON).
		again := decode(t, p.must(t, "agent", "register", "-o", "json", "-issuer", issuer, "-jwks-uri", jwks, "-name", "Example PA"), &pactv1.RegisterAgentResponse{})
		if again.GetCreated() {
			t.Error("registering an identical agent again says created")
		}
		sameMessage(t, "register -o json agent", again.GetAgent(), a)
		// JSON carries every field, false ones too, so scripts see one shape.
		if r := p.must(t, "agent", "register", "-o", "json", "-issuer", issuer, "-jwks-uri", jwks, "-name", "Example PA"); !strings.Contains(r.stdout, `"created": false`) {
			t.Errorf("-o json leaves out a false field:\n%s", r.stdout)
		}

		// A second agent, then list (table and json) against ListAgents.
		p.must(t, "agent", "register", "-issuer", "https://pa2.example", "-jwks-uri", "https://pa2.example/jwks.json", "-name", "Second PA", "-audience", "https://aud.example")
		list, err := p.agents().ListAgents(ctx, &pactv1.ListAgentsRequest{})
		if err != nil || len(list.GetAgents()) != 2 {
			t.Fatalf("ListAgents = %v, %v", list, err)
		}
		rows := table(t, p.must(t, "agent", "list").stdout)
		if len(rows) != 2 {
			t.Fatalf("agent list printed %d rows, want 2", len(rows))
		}
		for i, ag := range list.GetAgents() {
			if rows[i]["ID"] != ag.GetId() || rows[i]["ISSUER"] != ag.GetIssuer() || rows[i]["NAME"] != ag.GetDisplayName() || rows[i]["ENABLED"] != "yes" {
				t.Errorf("agent list row %d = %v, want agent %v", i, rows[i], ag)
			}
		}
		sameMessage(t, "agent list -o json", decode(t, p.must(t, "agent", "list", "-o", "json"), &pactv1.ListAgentsResponse{}), list)
		// One page at a time: the first page says how to read the next.
		page := decode(t, p.must(t, "agent", "list", "-o", "json", "-page-size", "1"), &pactv1.ListAgentsResponse{})
		if len(page.GetAgents()) != 1 || page.GetAgents()[0].GetId() != list.GetAgents()[0].GetId() || page.GetNextPageToken() == "" {
			t.Fatalf("agent list -page-size 1 = %v", page)
		}
		if out := p.must(t, "agent", "list", "-page-size", "1").stdout; !strings.Contains(out, "more follow: add -page-token "+page.GetNextPageToken()) {
			t.Errorf("the first page's table does not say how to read the next:\n%s", out)
		}
		second := decode(t, p.must(t, "agent", "list", "-o", "json", "-page-size", "1", "-page-token", page.GetNextPageToken()), &pactv1.ListAgentsResponse{})
		if len(second.GetAgents()) != 1 || second.GetAgents()[0].GetId() != list.GetAgents()[1].GetId() {
			t.Fatalf("agent list second page = %v", second)
		}

		// get by id and by issuer, flags after the argument too.
		sameMessage(t, "agent get ID -o json", decode(t, p.must(t, "agent", "get", a.GetId(), "-o", "json"), &pactv1.GetAgentResponse{}).GetAgent(), a)
		sameMessage(t, "agent get ISSUER -o json", decode(t, p.must(t, "agent", "get", "-o", "json", issuer), &pactv1.GetAgentResponse{}).GetAgent(), a)

		// A refusal names the field and changes nothing.
		refused(t, p.cli(t, "agent", "register", "-issuer", "https://pa3.example", "-jwks-uri", "ftp://pa3.example/jwks", "-name", "Third PA"),
			"invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "jwks_uri")
		refused(t, p.cli(t, "agent", "update", a.GetId(), "-name", ""), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "agent.display_name")
		after, err := p.agents().ListAgents(ctx, &pactv1.ListAgentsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		sameMessage(t, "agents after the refusals", after, list)
		refused(t, p.cli(t, "agent", "get", "agt_00000000000000000000000000"), "not_found", "ERROR_REASON_NOT_FOUND")
		// The same issuer with other details already exists.
		refused(t, p.cli(t, "agent", "register", "-issuer", issuer, "-jwks-uri", jwks, "-name", "Another name"), "already_exists", "ERROR_REASON_ALREADY_EXISTS")

		// disable, enable, update: each shows the agent UpdateAgent stored.
		for _, step := range []struct {
			args    []string
			enabled bool
			name    string
		}{
			{[]string{"agent", "disable", issuer}, false, "Example PA"},
			{[]string{"agent", "enable", a.GetId()}, true, "Example PA"},
			{[]string{"agent", "update", a.GetId(), "-name", "Renamed PA"}, true, "Renamed PA"},
		} {
			got, _ := fields(t, p.must(t, step.args...).stdout)
			cur, err := p.agents().GetAgent(ctx, &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: a.GetId()}})
			if err != nil {
				t.Fatal(err)
			}
			if cur.GetAgent().GetEnabled() != step.enabled || cur.GetAgent().GetDisplayName() != step.name {
				t.Errorf("after %q the agent is %v", step.args, cur.GetAgent())
			}
			if got["enabled"] != map[bool]string{true: "yes", false: "no"}[step.enabled] || got["name"] != step.name || got["id"] != a.GetId() {
				t.Errorf("%q printed %v", step.args, got)
			}
		}

		// delete by issuer: gone.
		if r := p.must(t, "agent", "delete", issuer); r.stdout != "deleted agent "+a.GetId()+"\n" {
			t.Errorf("agent delete printed %q", r.stdout)
		}
		_, err = p.agents().GetAgent(ctx, &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: a.GetId()}})
		if connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("GetAgent after delete: %v, want NotFound", err)
		}
		if r := p.must(t, "agent", "delete", "-o", "json", list.GetAgents()[1].GetId()); r.stdout != "{}\n" {
			t.Errorf("agent delete -o json printed %q, want the empty DeleteAgentResponse", r.stdout)
		}

		// The native gRPC port: the same answers over grpc-go's transport.
		p.must(t, "agent", "register", "-issuer", issuer, "-jwks-uri", jwks, "-name", "Example PA")
		list, err = p.agents().ListAgents(ctx, &pactv1.ListAgentsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		viaGRPC := ok(t, run(t, []string{"PACT_ADDR=" + p.grpcURL, "PACT_ADMIN_TOKEN=" + adminToken}, "agent", "list", "-grpc", "-o", "json"))
		sameMessage(t, "agent list -grpc on the native port", decode(t, viaGRPC, &pactv1.ListAgentsResponse{}), list)
		// gRPC errors carry the same details.
		refused(t, run(t, []string{"PACT_ADMIN_TOKEN=" + adminToken}, "agent", "register", "-grpc", "-addr", p.grpcURL, "-issuer", "https://pa4.example", "-jwks-uri", "ftp://x", "-name", "x"),
			"invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "jwks_uri")
		// And gRPC on the main port.
		ok(t, run(t, p.env(), "agent", "get", "-grpc", issuer))
	})
}

// TestAgentCommandUsage: bad command lines exit 2 with the error first and
// then one line naming the -h that prints the usage (not the usage itself,
// under which the error would scroll away), and call nothing.
func TestAgentCommandUsage(t *testing.T) {
	p := startPactd(t, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "register", "-issuer", "https://pa.example", "-name", "x"}, "-jwks-uri is required"},
		{[]string{"agent", "register", "-isuer", "https://pa.example"}, "flag provided but not defined: -isuer"},
		{[]string{"agent", "list", "-timeout"}, "flag needs an argument: -timeout"},
		{[]string{"agent", "register"}, "-issuer, -jwks-uri, -name are required"},
		{[]string{"agent", "get"}, "missing ID|ISSUER"},
		{[]string{"agent", "get", "a", "b"}, "too many arguments"},
		{[]string{"agent", "list", "extra"}, "takes no arguments"},
		{[]string{"agent", "update", "agt_x"}, "name what to change"},
		{[]string{"agent", "list", "-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{[]string{"agent", "list", "-o", "yaml"}, "-o must be table or json"},
		{[]string{"agent", "list", "-addr", "127.0.0.1:7070"}, "must start with http:// or https://"},
		{[]string{"agent", "list", "-addr", "http://user:pw@127.0.0.1:7070"}, "must not hold user information"},
		{[]string{"agent", "list", "-ca", "ca.pem"}, "-ca needs an https:// address"},
		{[]string{"agent", "frob"}, `unknown command "frob"`},
		{[]string{"agent"}, "name a command"},
	} {
		r := p.cli(t, tc.args...)
		usageOf := "pactd agent" // the group's usage when no command was named
		if len(tc.args) > 1 && tc.args[1] != "frob" {
			usageOf += " " + tc.args[1]
		}
		want := []string{"pactd: agent", `run "` + usageOf + ` -h" for usage`}
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if r.code != 2 || len(lines) != 2 || !strings.HasPrefix(lines[0], want[0]) || !strings.Contains(lines[0], tc.want) ||
			lines[1] != want[1] || r.stdout != "" {
			t.Errorf("pactd %q: exit %d, stderr:\n%s\nwant exit 2 and two lines: %q with %q, then %q", tc.args, r.code, r.stderr, want[0], tc.want, want[1])
		}
	}
	// Nothing was registered by any of them; the positive control registers.
	list, err := p.agents().ListAgents(t.Context(), &pactv1.ListAgentsRequest{})
	if err != nil || len(list.GetAgents()) != 0 {
		t.Fatalf("agents after usage errors: %v, %v", list, err)
	}
	p.must(t, "agent", "register", "-issuer", "https://pa.example", "-jwks-uri", "https://pa.example/jwks", "-name", "x")
}

// TestCredentialProblems: without a credential nothing is called and the
// message says where one comes from; a wrong or a frontend credential gets
// pactd's reason; each names the pactd it is for and the setting that named
// it (a credential of another pactd, such as the demo's, is the usual
// mistake); the credential is never printed.
func TestCredentialProblems(t *testing.T) {
	p := startPactd(t, "")
	noCred := run(t, []string{"PACT_ADDR=" + p.url}, "agent", "list")
	if want := "no credential for the pactd at " + p.url + " (PACT_ADDR): set PACT_ADMIN_TOKEN"; noCred.code != 1 || !strings.Contains(noCred.stderr, want) || noCred.stdout != "" {
		t.Errorf("agent list without a credential: exit %d\n%s\nwant exit 1 and %q", noCred.code, noCred.stderr, want)
	}
	// The address comes from the default (nothing is called without a
	// credential, so no pactd needs to run there) or from -addr.
	if r, want := run(t, nil, "agent", "list"), "no credential for the pactd at http://127.0.0.1:7070 (the default address; PACT_ADDR or -addr names another)"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("agent list without PACT_ADDR or a credential: exit %d\n%s\nwant exit 1 and %q", r.code, r.stderr, want)
	}
	wrong := run(t, []string{"PACT_ADDR=" + p.url, "PACT_ADMIN_TOKEN=not-a-known-token-0123456789"}, "agent", "list")
	refused(t, wrong, "unauthenticated", "ERROR_REASON_UNAUTHENTICATED")
	if strings.Contains(wrong.stdout+wrong.stderr, "not-a-known-token") {
		t.Errorf("the refused credential was printed:\n%s", wrong.stderr)
	}
	if want := "\n  the pactd at " + p.url + " (PACT_ADDR) does not know this credential (PACT_ADMIN_TOKEN or -token-file)"; !strings.Contains(wrong.stderr, want) {
		t.Errorf("a wrong credential's message does not name the pactd called:\n%s\nwant %q", wrong.stderr, want)
	}
	viaFlag := run(t, []string{"PACT_ADMIN_TOKEN=not-a-known-token-0123456789"}, "agent", "list", "-addr", p.url)
	refused(t, viaFlag, "unauthenticated", "ERROR_REASON_UNAUTHENTICATED")
	if want := "the pactd at " + p.url + " (-addr) does not know this credential"; !strings.Contains(viaFlag.stderr, want) {
		t.Errorf("a wrong credential with -addr:\n%s\nwant %q", viaFlag.stderr, want)
	}
	frontend := run(t, []string{"PACT_ADDR=" + p.url, "PACT_ADMIN_TOKEN=" + frontendToken}, "agent", "list")
	refused(t, frontend, "permission_denied", "ERROR_REASON_PERMISSION_DENIED")
	if want := "not an admin credential of the pactd at " + p.url + " (PACT_ADDR)"; !strings.Contains(frontend.stderr, want) {
		t.Errorf("a frontend credential's message does not name the pactd called:\n%s\nwant %q", frontend.stderr, want)
	}
	if bad := run(t, []string{"PACT_ADDR=" + p.url, "PACT_ADMIN_TOKEN=two words"}, "agent", "list"); bad.code != 1 || !strings.Contains(bad.stderr, "has a space") || strings.Contains(bad.stderr, "two words") {
		t.Errorf("a credential with a space: exit %d\n%s", bad.code, bad.stderr)
	}
	// -token-file: the credential from a file, trimmed; a missing file is named.
	file := t.TempDir() + "/token"
	if err := os.WriteFile(file, []byte(adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok(t, run(t, []string{"PACT_ADDR=" + p.url}, "agent", "list", "-token-file", file))
	if r := run(t, []string{"PACT_ADDR=" + p.url}, "agent", "list", "-token-file", file+".missing"); r.code != 1 || !strings.Contains(r.stderr, "-token-file") {
		t.Errorf("a missing -token-file: exit %d\n%s", r.code, r.stderr)
	}
	// Positive control: the admin credential from the environment works.
	p.must(t, "agent", "list")
	// No pactd at the address: the message says where it looked.
	dead := listen(t)
	addr := "http://" + dead.Addr().String()
	_ = dead.Close()
	r := run(t, []string{"PACT_ADDR=" + addr, "PACT_ADMIN_TOKEN=" + adminToken}, "agent", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "unavailable") || !strings.Contains(r.stderr, "is pactd running at "+addr) {
		t.Errorf("agent list with no pactd: exit %d\n%s", r.code, r.stderr)
	}
}
