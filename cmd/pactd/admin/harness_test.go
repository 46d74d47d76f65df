package admin_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"pactd.dev/pactd/cmd/pactd/admin"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	adminToken    = "cli-test-admin-token-0123456789"
	frontendToken = "cli-test-frontend-token-0123456789"
)

// pactd is a real pactd serving on two loopback ports: the main port
// (Connect, gRPC, gRPC-Web) and the native gRPC port.
type pactd struct {
	url, grpcURL string
}

// startPactd starts pactd in process on a fresh store; env is added to the
// base configuration.
func startPactd(t *testing.T, dbURL string, env ...string) *pactd {
	t.Helper()
	ln, gln := listen(t), listen(t)
	srv := newServer(t, dbURL, server.Listeners{API: ln, GRPC: gln}, env...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return &pactd{url: "http://" + ln.Addr().String(), grpcURL: "http://" + gln.Addr().String()}
}

// newServer builds pactd on a fresh store, serving on lns when it runs.
func newServer(t *testing.T, dbURL string, lns server.Listeners, env ...string) *server.Server {
	t.Helper()
	base := []string{"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + frontendToken,
		"PACT_DATA_DIR=" + t.TempDir(), "PACT_DATABASE_URL=" + dbURL, "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=127.0.0.1:0",
		"PACT_PUBLIC_URL=https://provider.example", "PACT_DEV=true",
		"PACT_KEY_ENCRYPTION_KEY=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}
	cfg, err := config.Load(nil, append(base, env...), io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	srv, err := server.Build(t.Context(), cfg, server.Deps{Listeners: lns})
	if err != nil {
		t.Fatalf("server.Build: %v", err)
	}
	return srv
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// result is what one admin command printed and its exit status, as main
// would exit: 0 on success or -h, else the *admin.Error's code.
type result struct {
	stdout, stderr string
	code           int
}

// run runs "pactd ARGS…" for an admin command with env as the whole
// environment.
func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	err := admin.Run(t.Context(), args[0], args[1:], env, &out, &errOut)
	r := result{stdout: out.String(), stderr: errOut.String()}
	var ae *admin.Error
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ae):
		r.code = ae.ExitCode()
		r.stderr += "pactd: " + ae.Error() + "\n" // as main prints it
	default:
		t.Fatalf("pactd %q returned %T %v, not an *admin.Error", args, err, err)
	}
	if strings.Contains(r.stdout+r.stderr, adminToken) || strings.Contains(r.stdout+r.stderr, frontendToken) {
		t.Fatalf("pactd %q printed a credential it was given:\n%s%s", args, r.stdout, r.stderr)
	}
	return r
}

// cli runs an admin command against p's main port with the admin credential.
func (p *pactd) cli(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, p.env(), args...)
}

func (p *pactd) env() []string {
	return []string{"PACT_ADDR=" + p.url, "PACT_ADMIN_TOKEN=" + adminToken, "HOME=/nonexistent"}
}

// ok fails the test unless the command succeeded.
func ok(t *testing.T, r result, args ...string) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("pactd %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// must runs a command on the main port and fails the test unless it succeeded.
func (p *pactd) must(t *testing.T, args ...string) result {
	t.Helper()
	return ok(t, p.cli(t, args...), args...)
}

// refused checks that a command failed with exit status 1, pactd's status
// code and ErrorInfo reason, and a line naming each field.
func refused(t *testing.T, r result, code, reason string, fields ...string) {
	t.Helper()
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if want := code + " (" + reason + ")"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
	}
	for _, f := range fields {
		if !regexp.MustCompile(`(?m)^  field ` + regexp.QuoteMeta(f) + `: \S`).MatchString(r.stderr) {
			t.Errorf("stderr does not name the field %s on a line of its own:\n%s", f, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("a refused command printed on stdout: %q", r.stdout)
	}
}

// decode reads -o json output into m, strictly.
func decode[M proto.Message](t *testing.T, r result, m M) M {
	t.Helper()
	if err := protojson.Unmarshal([]byte(r.stdout), m); err != nil {
		t.Fatalf("-o json output is not a %T: %v\n%s", m, err, r.stdout)
	}
	return m
}

// sameMessage fails unless got and want are equal messages.
func sameMessage(t *testing.T, what string, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// cells splits a table line into its cells: runs of text separated by at
// least two spaces, with the offset each starts at.
var cellRE = regexp.MustCompile(`\S+(?: \S+)*`)

type cell struct {
	text string
	at   int
}

func cellsOf(line string) []cell {
	var out []cell
	for _, ix := range cellRE.FindAllStringIndex(line, -1) {
		out = append(out, cell{line[ix[0]:ix[1]], ix[0]})
	}
	return out
}

// table parses an aligned table (a header line of upper-case names, then
// rows) into one map per row, and fails unless every cell starts at its
// header's column.
func table(t *testing.T, out string) []map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := cellsOf(lines[0])
	if len(header) == 0 || strings.ToUpper(lines[0]) != lines[0] {
		t.Fatalf("no table header in:\n%s", out)
	}
	var rows []map[string]string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "more follow: ") {
			continue
		}
		cs := cellsOf(l)
		if len(cs) != len(header) {
			t.Fatalf("row %q has %d cells, the header %d:\n%s", l, len(cs), len(header), out)
		}
		m := map[string]string{}
		for i, c := range cs {
			if c.at != header[i].at {
				t.Fatalf("column %s of row %q starts at %d, its header at %d:\n%s", header[i].text, l, c.at, header[i].at, out)
			}
			m[header[i].text] = c.text
		}
		rows = append(rows, m)
	}
	return rows
}

// fields parses "key  value" lines (a single object's table) into a map;
// every value starts at one column. Lines without a value column (a
// status line such as "registered agent …") are returned apart.
func fields(t *testing.T, out string) (map[string]string, []string) {
	t.Helper()
	m := map[string]string{}
	var notes []string
	col := -1
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		cs := cellsOf(l)
		if len(cs) < 2 {
			notes = append(notes, l)
			continue
		}
		if col == -1 {
			col = cs[1].at
		}
		if cs[1].at != col {
			t.Fatalf("the value of %q starts at %d, the others at %d:\n%s", cs[0].text, cs[1].at, col, out)
		}
		var vals []string
		for _, c := range cs[1:] {
			vals = append(vals, c.text)
		}
		m[cs[0].text] = strings.Join(vals, "  ")
	}
	return m, notes
}

// withToken sends a credential on a test's own client calls.
func withToken(tok string) connect.ClientOption {
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+tok)
			return next(ctx, req)
		}
	}))
}

// The test's own clients, to check what a command did against what the RPC
// returns.

func (p *pactd) agents() pactv1connect.AgentServiceClient {
	return pactv1connect.NewAgentServiceClient(http.DefaultClient, p.url, withToken(adminToken))
}

func (p *pactd) brands() pactv1connect.BrandServiceClient {
	return pactv1connect.NewBrandServiceClient(http.DefaultClient, p.url, withToken(adminToken))
}

func (p *pactd) credentials(tok string) pactv1connect.CredentialServiceClient {
	return pactv1connect.NewCredentialServiceClient(http.DefaultClient, p.url, withToken(tok))
}

func (p *pactd) delegation(tok string) pactv1connect.DelegationServiceClient {
	return pactv1connect.NewDelegationServiceClient(http.DefaultClient, p.url, withToken(tok))
}

func (p *pactd) tokens() pactv1connect.TokenServiceClient {
	return pactv1connect.NewTokenServiceClient(http.DefaultClient, p.url, withToken(adminToken))
}

// writeJSON writes a settings file for a command to read.
func writeJSON(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
