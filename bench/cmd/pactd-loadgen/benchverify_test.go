package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// benchVerifyShort are the knobs that make bench/scripts/bench-verify.sh a
// seconds-long run of the native row alone.
var benchVerifyShort = []string{
	"BENCH_TRANSPORTS=native", "BENCH_PEAK_SECONDS=1", "BENCH_RATE_SECONDS=1", "BENCH_RAW_SECONDS=1",
	"BENCH_PAIR_RAW_SECONDS=1", "BENCH_POOL=2000",
}

// TestBenchVerifyRefusesBadPactdEnv: a malformed BENCH_PACTD_ENV, or one
// that would override a setting the script makes itself, is refused with
// its reason and exit status 2 before anything is built or started.
func TestBenchVerifyRefusesBadPactdEnv(t *testing.T) {
	for _, c := range []struct{ name, env, error string }{
		{"not VAR=value", "GOGC", "bench-verify: BENCH_PACTD_ENV: 'GOGC' is not VAR=value"},
		{"lower-case name", "gogc=250", "bench-verify: BENCH_PACTD_ENV: 'gogc=250' is not VAR=value"},
		{"shell in a value", "GOGC=$(id)", "bench-verify: BENCH_PACTD_ENV: 'GOGC=$(id)' is not VAR=value"},
		{"a glob", "GOGC=2*", "bench-verify: BENCH_PACTD_ENV: 'GOGC=2*' is not VAR=value"},
		{"the script's own GOMAXPROCS", "GOGC=250 GOMAXPROCS=2", "bench-verify: BENCH_PACTD_ENV: GOMAXPROCS is bench-verify's own setting of pactd"},
		{"the script's own data directory", "PACT_DATA_DIR=/", "bench-verify: BENCH_PACTD_ENV: PACT_DATA_DIR is bench-verify's own setting of pactd"},
		{"the script's own PACT_DEV", "PACT_DEV=false", "bench-verify: BENCH_PACTD_ENV: PACT_DEV is bench-verify's own setting of pactd"},
		{"the script's own setting on a second line", "GOGC=250\nGOMAXPROCS=2", "bench-verify: BENCH_PACTD_ENV: GOMAXPROCS is bench-verify's own setting of pactd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := benchScript(t, "bench/scripts/bench-verify.sh", 20*time.Second, append(benchVerifyShort, "BENCH_PACTD_ENV="+c.env))
			if code != 2 || strings.TrimSpace(out) != c.error {
				t.Errorf("exit %d, output %q; want exit 2 and %q", code, out, c.error)
			}
		})
	}
}

// TestBenchVerifyRefusesAnUnknownNativeClient: BENCH_NATIVE_CLIENT is
// h2grpc or grpc-go; anything else is refused before anything is built.
func TestBenchVerifyRefusesAnUnknownNativeClient(t *testing.T) {
	for _, v := range []string{"connect-go", "http1", "H2GRPC", "h2grpc ", "grpc-go;id"} {
		out, code := benchScript(t, "bench/scripts/bench-verify.sh", 20*time.Second, append(benchVerifyShort, "BENCH_NATIVE_CLIENT="+v))
		if want := "bench-verify: BENCH_NATIVE_CLIENT must be h2grpc or grpc-go"; code != 2 || strings.TrimSpace(out) != want {
			t.Errorf("%q: exit %d, output %q; want exit 2 and %q", v, code, out, want)
		}
	}
}

// TestBenchVerifyPactdEnvReachesPactd: the settings reach pactd itself.
// A value pactd refuses stops the run with pactd's own reason (so the
// variable was in its environment), and the positive control, two
// accepted settings, runs the native row to its table and names them.
func TestBenchVerifyPactdEnvReachesPactd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pactd")
	}
	out, code := benchScript(t, "bench/scripts/bench-verify.sh", 3*time.Minute, append(benchVerifyShort, "BENCH_PACTD_ENV=PACT_ES256_TABLES=maybe"))
	if code == 0 || !strings.Contains(out, "pactd did not become healthy") || !strings.Contains(out, "PACT_ES256_TABLES: must be on or off") {
		t.Errorf("PACT_ES256_TABLES=maybe for pactd: exit %d, want pactd's refusal:\n%s", code, out)
	}

	out, code = benchScript(t, "bench/scripts/bench-verify.sh", 4*time.Minute, append(benchVerifyShort, "BENCH_PACTD_ENV=GOGC=250 PACT_ES256_TABLES=off"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^- added to pactd's environment only: GOGC=250 PACT_ES256_TABLES=off$`),
		regexp.MustCompile(`(?m)^\| native gRPC port, gRPC \(h2grpc\) \| [0-9]+ µs \(`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}
