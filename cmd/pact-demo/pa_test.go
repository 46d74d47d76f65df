package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStepUpCommand: the hint after a step-up task names each scope once and
// carries -details exactly when the grant holds the missing scope (so it is
// bound to other resources). The expected commands are written out from the
// request: the scopes held, the task's pact.missingScopes and the order the
// message names, with the demo Brand's declared type, field and action.
func TestStepUpCommand(t *testing.T) {
	const entry1001 = `'[{"type":"https://acme.example/authorization/order-cancel/v1","order_id":"1001","actions":["cancel"]}]'`
	cases := []struct {
		name          string
		held, missing []string
		text, want    string
	}{
		{"nothing-held", nil, []string{"orders:read"}, "show my orders", "connect orders:read"},
		{"held-then-missing", []string{"orders:read"}, []string{"orders:cancel"}, "cancel order 1002", "connect orders:read orders:cancel"},
		{"missing-repeated", []string{"orders:read"}, []string{"orders:cancel", "orders:cancel"}, "cancel order 1002", "connect orders:read orders:cancel"},
		{"held-and-missing-is-bound", []string{"orders:cancel", "orders:read"}, []string{"orders:cancel"}, "cancel order 1001",
			"connect -details " + entry1001 + " orders:cancel orders:read"},
		{"bound-no-order-named", []string{"orders:cancel"}, []string{"orders:cancel"}, "cancel my last order", "connect orders:cancel"},
		// Not bound: the order number alone adds no -details.
		{"not-held-with-order", nil, []string{"orders:cancel"}, "cancel order 1001", "connect orders:cancel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := stepUpCommand(c.held, c.missing, c.text); got != c.want {
				t.Errorf("stepUpCommand(%q, %q, %q)\n got %s\nwant %s", c.held, c.missing, c.text, got, c.want)
			}
		})
	}
}

// TestPAFindsAnyLiveDemo: with two demos running, pa talks to the newer;
// once it stops, pa finds the older one again (a demo that stops never
// hides one that still runs); an entry left by a demo whose process is gone
// is skipped and removed.
func TestPAFindsAnyLiveDemo(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // a private registry
	start := func() (stop func(), dir string) {
		t.Helper()
		before := map[string]bool{}
		for _, e := range liveDemos() {
			before[e.Dir] = true
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- serve(ctx, []string{"-listen", "127.0.0.1:0"}, io.Discard, io.Discard, inProcess) }()
		for deadline := time.Now().Add(30 * time.Second); dir == ""; time.Sleep(20 * time.Millisecond) {
			for _, e := range liveDemos() {
				if !before[e.Dir] {
					dir = e.Dir
				}
			}
			select {
			case err := <-done:
				t.Fatalf("serve returned early: %v", err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("the demo did not register in 30s")
			}
		}
		var once sync.Once
		return func() {
			once.Do(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v", err)
				}
			})
		}, dir
	}
	frontendOf := func(dir string) string {
		st, err := loadState(dir)
		if err != nil {
			t.Fatal(err)
		}
		return st.Frontend
	}
	hello := func() string {
		t.Helper()
		var out strings.Builder
		if err := run(t.Context(), []string{"pa", "send", "-new", "hello"}, &out, io.Discard); err != nil {
			t.Fatalf("pa send hello: %v\n%s", err, out.String())
		}
		return out.String()
	}

	stopA, dirA := start()
	defer stopA()
	stopB, dirB := start()
	if got := defaultDir(); got != dirB {
		t.Fatalf("with two demos the default is %q, want the newer %q", got, dirB)
	}
	if out := hello(); !strings.Contains(out, "agent ← Hi!") {
		t.Fatalf("pa send to the newer demo:\n%s", out)
	}
	stopB()
	if got := defaultDir(); got != dirA {
		t.Fatalf("after the newer demo stopped the default is %q, want the older %q (%s)", got, dirA, frontendOf(dirA))
	}
	if out := hello(); !strings.Contains(out, "agent ← Hi!") {
		t.Fatalf("pa send after the newer demo stopped:\n%s", out)
	}

	// A stale entry, newer than A, of a process that has exited, whose state
	// file still exists: skipped and removed.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	staleDir := filepath.Join(t.TempDir(), "stale")
	if err := os.MkdirAll(staleDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath(staleDir), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	stale := `{"dir":"` + staleDir + `","pid":` + strconv.Itoa(dead.Process.Pid) + `,"started":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `}`
	if err := os.WriteFile(entryPath(staleDir), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := defaultDir(); got != dirA {
		t.Errorf("with a dead demo's entry the default is %q, want %q", got, dirA)
	}
	if _, err := os.Stat(entryPath(staleDir)); !os.IsNotExist(err) {
		t.Errorf("the dead demo's entry was not removed: %v", err)
	}
	stopA()
	if got := defaultDir(); got != "" {
		t.Errorf("with no demo running the default is %q", got)
	}
	if err := run(t.Context(), []string{"pa", "token"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "no running demo") {
		t.Errorf("pa token with no demo: %v, want \"no running demo\"", err)
	}
}

// TestBadCommandLines: a typo of a command or a flag, or a missing
// command, prints nothing but the error, whose last line names the -h that
// prints the usage, and exits 2, even when no demo runs (the command line
// is checked before the demo's state is read). Running no demo is the
// positive control: a correct command then fails for that reason, exit 1.
func TestBadCommandLines(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // a private registry: no demo runs
	const pa, demo = `run "go run ./cmd/pact-demo pa -h" for usage`, `run "go run ./cmd/pact-demo -h" for usage`
	for _, tc := range []struct {
		args        []string
		first, hint string
	}{
		{[]string{"pa", "sned", "hello"}, `pa: unknown command "sned" (send, connect or token)`, pa},
		{[]string{"pa"}, "pa: name a command: send, connect or token", pa},
		{[]string{"pa", "-dri", "x", "send", "hi"}, "pa: flag provided but not defined: -dri", pa},
		{[]string{"pa", "send", "-nwe", "hi"}, "pa send: flag provided but not defined: -nwe", pa},
		{[]string{"pa", "connect", "-as"}, "pa connect: flag needs an argument: -as", pa},
		{[]string{"--lisen", "127.0.0.1:3001"}, "flag provided but not defined: -lisen", demo},
		{[]string{"send", "hi"}, `unexpected argument "send" (the PA commands start with "pa")`, demo},
	} {
		var out, errOut strings.Builder
		err := run(t.Context(), tc.args, &out, &errOut)
		if err == nil || exitCode(err) != 2 || err.Error() != tc.first+"\n"+tc.hint || out.Len()+errOut.Len() != 0 {
			t.Errorf("pact-demo %q: %v (exit %d), printed %q%q\nwant exit 2, nothing printed and %q, then %q", tc.args, err, exitCode(err),
				out.String(), errOut.String(), tc.first, tc.hint)
		}
	}
	for _, args := range [][]string{{"pa", "send", "hello"}, {"pa", "token"}} {
		if err := run(t.Context(), args, io.Discard, io.Discard); err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "no running demo") {
			t.Errorf("pact-demo %q with no demo: %v (exit %d), want exit 1 and \"no running demo\"", args, err, exitCode(err))
		}
	}
}
