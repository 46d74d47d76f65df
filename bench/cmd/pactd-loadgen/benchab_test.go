package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchScript runs one of bench/scripts/ with args and extra environment,
// from the repository root and without the caller's PACT_* and BENCH_*
// variables; it returns the combined output and the exit status.
func benchScript(t *testing.T, script string, timeout time.Duration, extra []string, args ...string) (string, int) {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PACT_") && !strings.HasPrefix(kv, "BENCH_") {
			env = append(env, kv)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Dir, cmd.Env = "../../..", append(env, extra...)
	// On a timeout, TERM lets the script's trap stop the pactd and load
	// generator it started (a KILL would leave them running, pinned to the
	// CPUs the next test measures on).
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("%s: %v\n%s", script, err, out)
		return "", -1
	}
}

// benchAB runs bench/scripts/bench-ab.sh (benchScript).
func benchAB(t *testing.T, timeout time.Duration, extra []string, args ...string) (string, int) {
	t.Helper()
	return benchScript(t, "bench/scripts/bench-ab.sh", timeout, extra, args...)
}

// TestBenchABRefusesBadArguments: every malformed setting or bound is
// refused with its reason and exit status 2, before anything is built or
// started.
func TestBenchABRefusesBadArguments(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   []string
		args  []string
		error string
	}{
		{"one setting", nil, []string{"a="}, "usage: bash bench/scripts/bench-ab.sh NAME=[VAR=value ...] NAME=[VAR=value ...] ..."},
		{"no name", nil, []string{"=GOGC=50", "b="}, "bench-ab: '=GOGC=50' is not NAME=[VAR=value ...]"},
		{"not VAR=value", nil, []string{"a=", "b=GOGC"}, "bench-ab: 'GOGC' is not VAR=value"},
		{"the script's own listener", nil, []string{"a=", "b=PACT_LISTEN=127.0.0.1:1"}, "bench-ab: PACT_LISTEN is bench-ab's own setting of pactd"},
		{"the script's own GOMAXPROCS", nil, []string{"a=", "b=GOGC=50 GOMAXPROCS=2"}, "bench-ab: GOMAXPROCS is bench-ab's own setting of pactd"},
		{"shell in a value", nil, []string{"a=", "b=GOGC=$(id)"}, "bench-ab: 'GOGC=$(id)' is not VAR=value"},
		{"rate zero", []string{"BENCH_AB_RATE=0"}, []string{"a=", "b="}, "bench-ab: RATE must be a positive integer, got '0'"},
		{"rate not a number", []string{"BENCH_AB_RATE=5e3"}, []string{"a=", "b="}, "bench-ab: RATE must be a positive integer, got '5e3'"},
		{"unknown native client", []string{"BENCH_NATIVE_CLIENT=grpc"}, []string{"a=", "b="}, "bench-ab: BENCH_NATIVE_CLIENT must be h2grpc or grpc-go"},
		{"rounds too many digits", []string{"BENCH_AB_ROUNDS=12345678"}, []string{"a=", "b="}, "bench-ab: ROUNDS must be a positive integer, got '12345678'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := benchAB(t, 20*time.Second, c.env, c.args...)
			if code != 2 || strings.TrimSpace(out) != c.error {
				t.Errorf("exit %d, output %q; want exit 2 and %q", code, out, c.error)
			}
		})
	}
}

// TestBenchABRuns is the positive control: two settings, one short round,
// each run on its own pactd, every answer valid, and the summary naming
// both settings with the round count.
func TestBenchABRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pactd")
	}
	out, code := benchAB(t, 3*time.Minute,
		[]string{"BENCH_AB_RATE=200", "BENCH_AB_SECONDS=1", "BENCH_AB_WARM=1", "BENCH_AB_ROUNDS=1", "BENCH_AB_POOL=2000"},
		"default=", "gogc50=GOGC=50")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\| 1 \| default \| [0-9.]+ / \*\*[0-9.]+\*\* / [0-9.]+ \| [0-9.]+ \| [0-9.]+ / [0-9.]+ / [0-9.]+ \| [0-9]+ \| true \|$`),
		regexp.MustCompile(`(?m)^\| 1 \| gogc50 \| [0-9.]+ / \*\*[0-9.]+\*\* / [0-9.]+ \| [0-9.]+ \| [0-9.]+ / [0-9.]+ / [0-9.]+ \| [0-9]+ \| true \|$`),
		regexp.MustCompile(`(?m)^- default \(no added variables\): p99 median [0-9.]+ ms, CPU per call median [0-9.]+ µs$`),
		regexp.MustCompile(`(?m)^- gogc50 \(GOGC=50\): p99 median [0-9.]+ ms, CPU per call median [0-9.]+ µs; lower p99 than default in [01] of 1 rounds$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}
