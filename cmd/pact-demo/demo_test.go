package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"pactd.dev/pactd/frontends/demo"
	"pactd.dev/pactd/frontends/pacta2a"
)

// inProcess runs the frontend in this process (the command builds and runs
// cmd/pact-a2a; a test must not depend on the go command).
func inProcess(_ context.Context, ln net.Listener, pactdURL, token, _ string, _ io.Writer) (func(), error) {
	login := demo.NewLogin()
	h, err := pacta2a.NewHandler(pacta2a.Config{PactdURL: pactdURL, Token: token, Agent: demo.NewAgent(), Sessions: login})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/demo/", login)
	mux.Handle("/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}

// TestDemo runs the demo and the README's PA commands against it.
func TestDemo(t *testing.T) { walkDemo(t, inProcess) }

// TestDemoFrontends: -frontend starts each named frontend, and the README's
// walk passes through it. The TypeScript and Python ones run from this
// checkout and must be built or installed first: without them their walks
// skip, except under CI=true (the test command builds them before go test).
func TestDemoFrontends(t *testing.T) {
	t.Chdir(filepath.Join("..", "..")) // pact-demo runs from the checkout's root
	for _, kind := range []string{"a2a-go", "ts", "a2a-js", "python"} {
		t.Run(kind, func(t *testing.T) {
			fe, err := namedFrontend(kind)
			if err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatal(err)
				}
				t.Skip(err)
			}
			walkDemo(t, fe.start)
		})
	}
	for _, bad := range []string{"rust", "./frontends/none/bin/x"} {
		if _, err := namedFrontend(bad); err == nil {
			t.Errorf("namedFrontend(%q) accepted", bad)
		}
	}
}

// walkDemo runs the demo with its frontend started by start, and the
// README's PA commands against it.
func walkDemo(t *testing.T, start frontendStarter) {
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithCancel(t.Context())
	var banner lockedBuffer // serve writes it while this test reads it
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"-dir", dir, "-listen", "127.0.0.1:0"}, &banner, io.Discard, start)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(statePath(dir)); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned early: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo did not start in 30s")
		}
	}
	pa := func(args ...string) string {
		t.Helper()
		var out strings.Builder
		if err := run(t.Context(), append([]string{"pa", "-dir", dir}, args...), &out, io.Discard); err != nil {
			t.Fatalf("pa %v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	self := "go run ./cmd/pact-demo pa -dir " + dir // a demo given -dir is named by it
	steps := []struct {
		args []string
		want []string
	}{
		{[]string{"send", "hello"}, []string{"agent ← Hi! This is the acme support agent"}},
		{[]string{"send", "show my orders"}, []string{"task TASK_STATE_AUTH_REQUIRED: needs [orders:read]", "/login?return_to="}},
		{[]string{"connect", "-as", "alice", "orders:read"}, []string{"granted: orders:read"}},
		{[]string{"send", "show my orders"}, []string{"#1002 Milk frother: processing", "receipt ✔", "user alice", "scopes used [orders:read]", "actions [list_orders]"}},
		// The hint: each scope once, those held first (orders:read), then the missing one.
		{[]string{"send", "cancel order 1002"}, []string{"needs [orders:cancel]", "\nnext: " + self + " connect orders:read orders:cancel\n"}},
		{[]string{"connect", "-as", "alice", "orders:cancel"}, []string{"granted: orders:cancel orders:read"}},
		{[]string{"send", "cancel order 1002"}, []string{"Done: order #1002 (Milk frother) is cancelled.", "receipt ✔", "actions [cancel_order]"}},
		{[]string{"token"}, []string{"eyJ"}},
		// Resource-bound delegation (PACT §5.7): a grant for order 1001 only.
		{[]string{"connect", "-as", "alice", "-details", `[{"type":"https://acme.example/authorization/order-cancel/v1","order_id":"1001","actions":["cancel"]}]`, "orders:cancel"},
			[]string{`limited to authorization_details [{"actions":["cancel"],"order_id":"1001","type":"https://acme.example/authorization/order-cancel/v1"}]`}},
		// orders:cancel is held but missing: the grant is bound to other
		// orders, so the hint asks again with an entry for the order the
		// message names (the Brand's declared type, field order_id, action
		// cancel), and each held scope once.
		{[]string{"send", "cancel order 1002"}, []string{"needs [orders:cancel]", "\nnext: " + self +
			` connect -details '[{"type":"https://acme.example/authorization/order-cancel/v1","order_id":"1002","actions":["cancel"]}]' orders:cancel orders:read` + "\n"}},
		{[]string{"send", "cancel order 1001"}, []string{"Order #1001 is delivered, so it can no longer be cancelled."}},
	}
	for _, s := range steps {
		out := pa(s.args...)
		for _, w := range s.want {
			if !strings.Contains(out, w) {
				t.Errorf("pa %v:\n%s\nlacks %q", s.args, out, w)
			}
		}
	}
	// A scope the Brand does not define: pactd refuses it (invalid_scope),
	// and the PA names each unknown scope and lists the Brand's scopes, one
	// per line with its description, in the Brand's order.
	err := run(t.Context(), []string{"pa", "-dir", dir, "connect", "orders:reed", "profile:read", "returns:write"}, io.Discard, io.Discard)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("pa connect with unknown scopes: %v (exit %d), want a refusal (exit 1)", err, exitCode(err))
	}
	want := `pa connect: the Brand acme does not define the scopes "orders:reed", "returns:write" (device authorization refused: 400 invalid_scope`
	if msg := err.Error(); !strings.HasPrefix(msg, want) || strings.Contains(msg, "map[") {
		t.Errorf("pa connect with unknown scopes:\n%s\nwant it to start with %q", msg, want)
	} else {
		lines := strings.Split(msg, "\n")
		brandScopes := demoBrand("").GetDelegation().GetScopes()
		if len(lines) != 2+len(brandScopes) || lines[1] != "its scopes:" {
			t.Fatalf("pa connect with unknown scopes: %d lines, want the refusal, \"its scopes:\" and %d scopes:\n%s", len(lines), len(brandScopes), msg)
		}
		for i, sc := range brandScopes {
			if f := strings.Fields(lines[2+i]); len(f) < 2 || f[0] != sc.GetId() || strings.Join(f[1:], " ") != sc.GetDescription() {
				t.Errorf("scope line %d is %q, want %s and %q", i, lines[2+i], sc.GetId(), sc.GetDescription())
			}
		}
	}
	if !strings.Contains(banner.String(), " send \"hello\"") {
		t.Errorf("banner:\n%s", banner.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the demo left %s behind", dir)
	}
}

// TestDemoBrandMatchesTheAgent: the Brand the command registers is the one
// the demo agent's scopes are written for.
func TestDemoBrandMatchesTheAgent(t *testing.T) {
	const fe = "http://127.0.0.1:3000"
	if got, want := demoBrand(fe), demo.BrandRequest(brandID, "ACME Coffee", fe); !proto.Equal(got, want) {
		t.Fatalf("demoBrand = %v\nwant demo.BrandRequest = %v", got, want)
	}
}
