// Package scripts holds the tests of the repository's scripts that need
// no other package: here, that the test command stops on an interrupt.
package scripts

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stubGo is the go command as scripts/test.sh's first step meets it:
// "go version" answers; anything else (go mod download) records its PID
// and that of a child in a process group of its own, as a server a test
// starts, and waits for it, a step that would run for ten minutes. With
// STUB_FAIL set it fails after 1.5 s instead.
const stubGo = `#!/usr/bin/env bash
if [[ ${1:-} == version ]]; then echo "go version stub"; exit 0; fi
if [[ -n ${STUB_FAIL:-} ]]; then sleep 1.5; exit 3; fi
echo "$$" >>"$STUB_PIDS"
set -m
sleep 600 &
echo "$!" >>"$STUB_PIDS"
wait
`

// lockedBuffer is a bytes.Buffer the script writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testScript is scripts/test.sh started from the repository root with the
// stub go first on PATH, without the caller's CI and PACT_* variables (so
// its first step is the stub's, and nothing is installed), its TMPDIR and
// the stub's PID file private, and MARK in the environment every process
// it starts inherits.
type testScript struct {
	cmd          *exec.Cmd
	out          *lockedBuffer
	done         chan error
	pidFile, tmp string
	mark         string // KEY=VALUE
}

func startTestScript(t *testing.T, extra ...string) *testScript {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the test reads /proc")
	}
	for _, tool := range []string{"bash", "ps", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not on PATH", tool)
			}
			t.Skipf("%s is not on PATH: scripts/test.sh needs it", tool)
		}
	}
	stub := t.TempDir()
	if err := os.WriteFile(filepath.Join(stub, "go"), []byte(stubGo), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &testScript{out: &lockedBuffer{}, done: make(chan error, 1), pidFile: filepath.Join(t.TempDir(), "pids"), tmp: t.TempDir(),
		mark: "TESTSH_INTERRUPT_MARK=" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CI" || k == "PATH" || k == "TMPDIR" || strings.HasPrefix(k, "PACT_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PATH="+stub+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+s.tmp, "STUB_PIDS="+s.pidFile, s.mark)
	s.cmd = exec.Command("bash", "scripts/test.sh")
	s.cmd.Dir, s.cmd.Env = "..", append(env, extra...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	// A process started with SIGINT ignored passes that on, and bash can
	// then not trap it: with a handler of this process's own installed,
	// the script starts with the default, as it does from a terminal.
	if signal.Ignored(syscall.SIGINT) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGINT)
		defer signal.Reset(syscall.SIGINT)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		// Whatever the outcome, nothing the script started outlives the test.
		for _, p := range append(s.markedLeft(), s.stubPIDs()...) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// stubPIDs are the PIDs the stub recorded.
func (s *testScript) stubPIDs() []int {
	raw, _ := os.ReadFile(s.pidFile)
	var pids []int
	for _, f := range strings.Fields(string(raw)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

// running reports whether pid is a process that has not ended (a zombie
// has: it waits only for its parent to collect its status).
func running(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(raw, ')')
	return i < 0 || !bytes.HasPrefix(raw[i+1:], []byte(" Z"))
}

// markedLeft are the running processes whose environment holds the
// script's MARK: everything it started, at any depth, that still runs.
func (s *testScript) markedLeft() []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var left []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, []byte(s.mark+"\x00")) || !running(pid) {
			continue
		}
		left = append(left, pid)
	}
	return left
}

// waitForStub waits until the stub runs with its child: the script is in
// the middle of its first step.
func (s *testScript) waitForStub(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); len(s.stubPIDs()) < 2; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-s.done:
			t.Fatalf("scripts/test.sh ended (%v) before its first step ran the stub:\n%s", err, s.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stub did not start in a minute:\n%s", s.out.String())
		}
	}
}

// wait waits up to limit for the script to exit and returns its status.
func (s *testScript) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &exit):
			return exit.ExitCode()
		default:
			t.Fatalf("scripts/test.sh: %v", err)
		}
	case <-time.After(limit):
		t.Fatalf("scripts/test.sh still runs %v after the signal:\n%s", limit, s.out.String())
	}
	return -1
}

// TestInterruptStopsEverything: SIGINT (Ctrl-C) or SIGTERM to the test
// command alone, in the middle of a step that would run for ten minutes,
// ends it within seconds with 128 + the signal, and leaves no process it
// started running: not the step (the stub go), not the stub's child in a
// process group of its own, not the heartbeat, checked by the PIDs the
// stub wrote and by every process that inherited the script's environment
// marker. Its temporary directory is removed too.
func TestInterruptStopsEverything(t *testing.T) {
	for _, tc := range []struct {
		sig    syscall.Signal
		name   string
		status int
	}{
		{syscall.SIGINT, "SIGINT", 130},
		{syscall.SIGTERM, "SIGTERM", 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestScript(t)
			s.waitForStub(t)
			if left := s.markedLeft(); len(left) < 4 {
				// The control: the marker finds the script, its job, the stub and
				// its child while they run, so an empty list after the signal means
				// they stopped.
				t.Fatalf("only %v run with the marker before the signal: the check would see nothing", left)
			}
			at := time.Now()
			if err := s.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			status := s.wait(t, 15*time.Second)
			took := time.Since(at)
			if status != tc.status {
				t.Errorf("exit status %d after %s, want %d:\n%s", status, tc.name, tc.status, s.out.String())
			}
			if took > 10*time.Second {
				t.Errorf("it took %v to stop after %s, want seconds", took, tc.name)
			}
			if want := tc.name + ": stopping every process the test command started"; !strings.Contains(s.out.String(), want) {
				t.Errorf("the output does not say %q:\n%s", want, s.out.String())
			}
			var left []int
			for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				left = s.markedLeft()
				for _, p := range s.stubPIDs() {
					if running(p) {
						left = append(left, p)
					}
				}
				if len(left) == 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("still running after %s: %v\n%s", tc.name, left, s.out.String())
			}
			if files, _ := os.ReadDir(s.tmp); len(files) != 0 {
				t.Errorf("the script left %d files in its TMPDIR (its work directory)", len(files))
			}
		})
	}
}

// TestFailingStepStillEndsTheRun is the positive control of the same
// machinery: a step's own failure (the stub exits 3) comes back through
// the job it runs in, the heartbeat reports while it runs, and the script
// stops there with its message and status 1, before step 2.
func TestFailingStepStillEndsTheRun(t *testing.T) {
	s := startTestScript(t, "STUB_FAIL=1", "HEARTBEAT_SECONDS=1")
	status := s.wait(t, time.Minute)
	out := s.out.String()
	if status != 1 || !strings.Contains(out, "FAIL: go mod download failed") || strings.Contains(out, "[2/9]") {
		t.Errorf("exit %d, want 1 with \"FAIL: go mod download failed\" before step 2:\n%s", status, out)
	}
	if !strings.Contains(out, "  ... go mod download: still running (1s)") {
		t.Errorf("no heartbeat line while the step ran:\n%s", out)
	}
	if left := s.markedLeft(); len(left) > 0 {
		t.Errorf("still running after the run ended: %v", left)
	}
}
