package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pactd.dev/pactd/frontends/demo"
	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// One end-to-end suite, five frontends: every test that runs through
// frontendsAndEngines runs against each frontend below, on both stores, with
// the same world (pactd, the PA, the Brands) and the same instrumented agent.
//
//   - go: pacta2a's standalone handler, in this process (as cmd/pact-a2a
//     -demo mounts it).
//   - go-sdk: frontends/a2a-go-example, an a2a-go v2 server with pacta2a
//     in front of it, built once per test binary (go build into a
//     temporary directory) and started as a command like ts, its Brand
//     logic the world's agent over A2A_AGENT_URL. Without the go command
//     its tests skip, except under CI=true, where they fail; a build
//     failure fails them.
//   - ts: the TypeScript frontend of frontends/node, started as a command:
//     PACT_E2E_TS_CMD (default "node ../frontends/node/dist/src/main.js"),
//     given the settings cmd/pact-a2a reads (A2A_LISTEN, PACTD_URL,
//     PACT_FRONTEND_TOKEN, A2A_DEMO=true) plus A2A_TRANSPORT
//     (PACT_E2E_TS_TRANSPORT, default connect) and A2A_AGENT_URL: the world's
//     agent served over HTTP, so runs are counted and held as in-process.
//     Any frontend that honours these settings can be tested the same way.
//     It needs a built frontends/node (npm ci && npm run build); without it
//     the ts tests skip, except under CI=true, where they fail.
//   - js-sdk: frontends/a2a-js-example, an A2A server on @a2a-js/sdk and
//     Express with @pactd/a2a's middleware in front, started the same way:
//     PACT_E2E_JS_SDK_CMD (default "node
//     ../frontends/a2a-js-example/dist/src/main.js"), same settings and
//     transport. It needs the built npm workspace (cd frontends && npm ci &&
//     npm run build --workspaces).
//   - py: the Python frontend of frontends/python on frontends/pacta2a-py,
//     started as a command the same way: PACT_E2E_PY_CMD (default
//     "/usr/bin/python3 -m pact_a2a_py", with both folders on PYTHONPATH).
//     It needs Debian's python3-grpcio, python3-protobuf, python3-starlette,
//     python3-uvicorn and python3-httpx for /usr/bin/python3; without them
//     the py tests skip, except under CI=true, where they fail.

// frontend starts a world's frontend on feLn (the Provider's public URL).
type frontend struct {
	name  string
	start func(t *testing.T, w *world, feLn net.Listener)
}

var (
	goFrontend    = frontend{name: "go", start: startGoFrontend}
	tsFrontend    = frontend{name: "ts", start: startTSFrontend}
	goSDKFrontend = commandFrontend("go-sdk", goSDKCommand)
	jsSDKFrontend = commandFrontend("js-sdk", jsSDKCommand, "A2A_TRANSPORT="+tsTransport())
	pyFrontend    = commandFrontend("py", pyCommand, "PYTHONPATH="+pyPath(), "PYTHONDONTWRITEBYTECODE=1")
	frontends     = []frontend{goFrontend, tsFrontend, goSDKFrontend, jsSDKFrontend, pyFrontend}
)

// goSDK is the build of frontends/a2a-go-example this test binary runs.
var goSDK struct {
	once    sync.Once
	dir     string   // removed when the tests end (TestMain)
	cmdline []string // the binary, or the failing build (see goSDKCommand)
	missing string
}

// goSDKCommand builds frontends/a2a-go-example once and returns the
// binary. When the build fails, the command line is the build itself, so
// the frontend "exits before serving" with the compiler's output in the
// test's failure.
func goSDKCommand() ([]string, string) {
	goSDK.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goSDK.missing = "the go command is not on PATH (it builds frontends/a2a-go-example)"
			return
		}
		if goSDK.dir, err = os.MkdirTemp("", "pact-e2e-go-sdk-"); err != nil {
			goSDK.missing = "no temporary directory for the build: " + err.Error()
			return
		}
		bin := filepath.Join(goSDK.dir, "a2a-go-example")
		build := []string{goTool, "build", "-o", bin, "pactd.dev/pactd/frontends/a2a-go-example"}
		if err := exec.Command(build[0], build[1:]...).Run(); err != nil {
			goSDK.cmdline = build
			return
		}
		goSDK.cmdline = []string{bin}
	})
	return goSDK.cmdline, goSDK.missing
}

// removeGoSDKBuild removes the example's build when the tests end.
func removeGoSDKBuild() {
	if goSDK.dir != "" {
		_ = os.RemoveAll(goSDK.dir)
	}
}

// frontendOf is the frontend of each test that frontendsAndEngines started;
// a test that did not come through it gets the Go frontend.
var frontendOf sync.Map // *testing.T -> frontend

func useFrontend(t *testing.T, fe frontend) {
	frontendOf.Store(t, fe)
	t.Cleanup(func() { frontendOf.Delete(t) })
}

func frontendFor(t *testing.T) frontend {
	if fe, ok := frontendOf.Load(t); ok {
		return fe.(frontend)
	}
	return goFrontend
}

// eachFrontend runs f once per frontend, one after another, on SQLite (the
// browser tests: one Chromium at a time is enough for two cores).
func eachFrontend(t *testing.T, f func(t *testing.T)) {
	for _, fe := range frontends {
		t.Run(fe.name, func(t *testing.T) { useFrontend(t, fe); f(t) })
	}
}

func startGoFrontend(t *testing.T, w *world, feLn net.Listener) {
	login := demo.NewLogin()
	h, err := pacta2a.NewHandler(pacta2a.Config{PactdURL: w.pactdURL, Token: frontendToken, Agent: w.agent, Sessions: login})
	if err != nil {
		t.Fatal(err)
	}
	login.BrandName = h.BrandName
	mux := http.NewServeMux() // as cmd/pact-a2a -demo mounts them
	mux.Handle("/demo/", login)
	mux.Handle("/", h)
	// As cmd/pact-a2a -public-url mounts it: self-service PA registration, aud = pactd's public URL + /api/platforms.
	mux.Handle(pacta2a.RegistrationPath, h)
	fe := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = fe.Serve(feLn) }()
	t.Cleanup(func() { _ = fe.Close() })
}

// commandFrontend is a frontend started as its own process: command gives
// its command line (or why it cannot run here), and the process gets the
// settings of docs/frontends.md ("Process settings") plus extraEnv.
func commandFrontend(name string, command func() ([]string, string), extraEnv ...string) frontend {
	return frontend{name: name, start: func(t *testing.T, w *world, feLn net.Listener) {
		startCommandFrontend(t, w, feLn, name, command, extraEnv)
	}}
}

// tsCommand is the TypeScript frontend's command line, or a reason it
// cannot run here.
func tsCommand() ([]string, string) {
	if c := strings.Fields(os.Getenv("PACT_E2E_TS_CMD")); len(c) > 0 {
		return c, ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return nil, "node is not on PATH (Node 20 runs frontends/node)"
	}
	main := filepath.Join("..", "frontends", "node", "dist", "src", "main.js")
	if _, err := os.Stat(main); err != nil {
		return nil, "frontends/node is not built: run npm ci && npm run build there"
	}
	return []string{"node", main}, ""
}

// jsSDKCommand is the @a2a-js/sdk example's command line, or a reason it
// cannot run here.
func jsSDKCommand() ([]string, string) {
	if c := strings.Fields(os.Getenv("PACT_E2E_JS_SDK_CMD")); len(c) > 0 {
		return c, ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return nil, "node is not on PATH (Node 20 runs frontends/a2a-js-example)"
	}
	main := filepath.Join("..", "frontends", "a2a-js-example", "dist", "src", "main.js")
	if _, err := os.Stat(main); err != nil {
		return nil, "frontends/a2a-js-example is not built: run npm ci && npm run build --workspaces in frontends/"
	}
	return []string{"node", main}, ""
}

// tsTransport is how the TypeScript frontends call pactd in e2e
// (PACT_E2E_TS_TRANSPORT, default connect).
func tsTransport() string {
	if t := os.Getenv("PACT_E2E_TS_TRANSPORT"); t != "" {
		return t
	}
	return "connect"
}

func startTSFrontend(t *testing.T, w *world, feLn net.Listener) {
	startCommandFrontend(t, w, feLn, "ts", tsCommand, []string{"A2A_TRANSPORT=" + tsTransport()})
}

// startCommandFrontend starts a frontend process on feLn's address and
// waits until it logs "pact-a2a serving". Its Brand logic is the world's
// agent, served over HTTP (A2A_AGENT_URL), so runs are counted and held as
// in-process. Without the program the test skips, except under CI=true,
// where it fails.
func startCommandFrontend(t *testing.T, w *world, feLn net.Listener, name string, command func() ([]string, string), extraEnv []string) {
	cmdline, missing := command()
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the %s frontend cannot run: %s", name, missing)
		}
		t.Skipf("the %s frontend cannot run: %s", name, missing)
	}
	agentSrv := httptest.NewServer(agentHandler(t, w.agent))
	t.Cleanup(agentSrv.Close)
	addr := feLn.Addr().String()
	_ = feLn.Close() // the process binds the same address

	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Env = append(os.Environ(), "A2A_LISTEN="+addr, "PACTD_URL="+w.pactdURL, "PACT_FRONTEND_TOKEN="+frontendToken,
		"A2A_DEMO=true", "A2A_AGENT_URL="+agentSrv.URL, "A2A_PUBLIC_URL="+w.feURL)
	cmd.Env = append(cmd.Env, extraEnv...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", cmdline, err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if strings.Contains(sc.Text(), `"msg":"pact-a2a serving"`) {
				once.Do(func() { close(ready) })
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
		if t.Failed() {
			logMu.Lock()
			t.Logf("%s frontend log:\n%s", name, logs.String())
			logMu.Unlock()
		}
	})
	select {
	case <-ready:
	case <-done:
		t.Fatalf("the %s frontend exited before serving:\n%s", name, logs.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("the %s frontend did not serve within 20 s:\n%s", name, logs.String())
	}
}

// agentHandler serves a pacta2a.Agent over the RemoteAgent protocol of
// docs/frontends.md (clients: frontends/demo's RemoteAgent and
// @pactd/a2a/demo's, frontends/pacta2a-js/src/demo/remote.ts).
func agentHandler(t *testing.T, agent pacta2a.Agent) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var in struct {
			BrandID, ContextID, Text string
			NewContext               bool
			Caller                   *struct{ AgentID, Issuer, Subject, AgentDisplayName string }
			Delegation               *struct {
				GrantID, BrandUser, AuthorizationDetailsJSON string
				Scopes                                       []string
				AuthorizationDetails                         []struct {
					Type, JSON string
					Members    []struct {
						Name   string
						Values []string
						Array  bool
					}
				}
			}
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		turn := pacta2a.Turn{BrandID: in.BrandID, ContextID: in.ContextID, NewContext: in.NewContext, Text: in.Text}
		if c := in.Caller; c != nil {
			turn.Caller = &pactv1.Caller{AgentId: c.AgentID, Issuer: c.Issuer, Subject: c.Subject, AgentDisplayName: c.AgentDisplayName}
		}
		if d := in.Delegation; d != nil {
			turn.Delegation = &pactv1.DelegationInfo{GrantId: d.GrantID, BrandUser: d.BrandUser, Scopes: d.Scopes,
				AuthorizationDetailsJson: d.AuthorizationDetailsJSON}
			for _, ad := range d.AuthorizationDetails {
				detail := &pactv1.AuthorizationDetail{Type: ad.Type, Json: ad.JSON}
				for _, m := range ad.Members {
					detail.Members = append(detail.Members, &pactv1.AuthorizationDetailMember{Name: m.Name, Values: m.Values, Array: m.Array})
				}
				turn.Delegation.AuthorizationDetails = append(turn.Delegation.AuthorizationDetails, detail)
			}
		}
		reply, err := agent.Reply(context.WithoutCancel(r.Context()), turn)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		type action struct {
			Tool string `json:"tool"`
			Args any    `json:"args,omitempty"`
		}
		out := struct {
			Text       string   `json:"text"`
			NeedScopes []string `json:"needScopes,omitempty"`
			ScopesUsed []string `json:"scopesUsed,omitempty"`
			Actions    []action `json:"actions,omitempty"`
		}{Text: reply.Text, NeedScopes: reply.NeedScopes, ScopesUsed: reply.ScopesUsed}
		for _, a := range reply.Actions {
			out.Actions = append(out.Actions, action{a.Tool, a.Args})
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(out)
	})
}

// pyPath is the PYTHONPATH of the Python frontend: its program and its
// package, as absolute paths (the test runs in e2e/).
func pyPath() string {
	var dirs []string
	for _, d := range []string{"../frontends/python", "../frontends/pacta2a-py/src"} {
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		dirs = append(dirs, abs)
	}
	return strings.Join(dirs, string(os.PathListSeparator))
}

// pyMissing is why /usr/bin/python3 cannot run the Python frontend ("" when
// it can), checked once.
var pyMissing = sync.OnceValue(func() string {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		return python + " is missing (Debian: apt-get install python3)"
	}
	probe := exec.Command(python, "-c", "import grpc, google.protobuf, h11, httpx, starlette, uvicorn")
	if out, err := probe.CombinedOutput(); err != nil {
		return python + " lacks the frontend's packages (Debian: apt-get install python3-grpcio python3-protobuf " +
			"python3-starlette python3-uvicorn python3-httpx): " + strings.TrimSpace(string(out))
	}
	return ""
})

// pyCommand is the Python frontend's command line, or a reason it cannot
// run here.
func pyCommand() ([]string, string) {
	if c := strings.Fields(os.Getenv("PACT_E2E_PY_CMD")); len(c) > 0 {
		return c, ""
	}
	if why := pyMissing(); why != "" {
		return nil, why
	}
	return []string{"/usr/bin/python3", "-m", "pact_a2a_py"}, ""
}
