package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

const (
	testAdminToken    = "admin-loadgen-staging-test-0123456789"
	testFrontendToken = "frontend-loadgen-staging-test-0123456789"
)

// startTLSPactd starts pactd in-process as a staging deployment runs it:
// TLS with the lab certificate, no PACT_DEV, and the load-test PA's host
// named in PACT_JWKS_ALLOW_HOSTS with the lab CA in PACT_JWKS_CA_FILE. It
// returns pactd's https URL.
func startTLSPactd(t *testing.T, lab string, env ...string) string {
	t.Helper()
	base := []string{"PACT_ADMIN_TOKEN=" + testAdminToken, "PACT_FRONTEND_TOKEN=" + testFrontendToken,
		"PACT_DATA_DIR=" + filepath.Join(lab, "data"), "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off",
		"PACT_PUBLIC_URL=https://provider.example", "PACT_TLS_CERT=" + filepath.Join(lab, "pactd.pem"),
		"PACT_TLS_KEY=" + filepath.Join(lab, "pactd-key.pem"), "PACT_JWKS_ALLOW_HOSTS=127.0.0.1",
		"PACT_JWKS_CA_FILE=" + filepath.Join(lab, "ca.pem")}
	cfg, err := config.Load(nil, append(base, env...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dev {
		t.Fatal("the staging test must run pactd without PACT_DEV")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Build(t.Context(), cfg, server.Deps{Listeners: server.Listeners{API: ln}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("pactd did not stop")
		}
	})
	return "https://" + ln.Addr().String()
}

// TestStagingRunOverTLSWithoutDev runs a short -mix run with every kind
// against a TLS pactd without PACT_DEV, whose PA JWKS is served over https
// by the tool, and checks the JSON summary against the run and the HTML
// report in headless Chromium: it renders its plots and shows the JSON's
// p99.
func TestStagingRunOverTLSWithoutDev(t *testing.T) {
	lab := t.TempDir()
	if err := makeCerts(lab); err != nil {
		t.Fatal(err)
	}
	addr := startTLSPactd(t, lab)
	t.Setenv("PACT_ADMIN_TOKEN", testAdminToken)
	t.Setenv("PACT_FRONTEND_TOKEN", testFrontendToken)
	jsonFile, htmlFile := filepath.Join(lab, "summary.json"), filepath.Join(lab, "report.html")
	var stdout, stderr bytes.Buffer
	args := []string{"-addr", addr, "-ca-file", filepath.Join(lab, "ca.pem"),
		"-jwks-listen", "127.0.0.1:0", "-jwks-cert", filepath.Join(lab, "pa.pem"), "-jwks-key", filepath.Join(lab, "pa-key.pem"),
		"-mix", "new=40,repeat=30,floor=5,delegated=10,introspect=8,refresh=4,device=3", "-grants", "2",
		"-ramp", "50:150:2s", "-duration", "3s", "-interval", "500ms", "-c", "16",
		"-json", jsonFile, "-html", htmlFile}
	if code := run(t.Context(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	t.Logf("%s", stdout.String())
	var s summary
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	// The ramp asks for 50→150/s over 2 s, then 150/s: 200 + 150 = 350
	// requests in 3 s; every one must be answered as expected.
	if !s.Valid || s.Errors != 0 || s.Requests < 330 || s.Requests > 351 || s.Loop != "open" {
		t.Fatalf("summary: valid %v, %d requests, %d errors %v, loop %s", s.Valid, s.Requests, s.Errors, s.Failures, s.Loop)
	}
	for _, k := range allKinds {
		if s.ByKind[k].Requests == 0 || s.ByKind[k].Errors != 0 {
			t.Errorf("kind %s: %+v", k, s.ByKind[k])
		}
	}
	var n int64
	for _, iv := range s.Intervals {
		n += iv.Requests
	}
	if n != s.Requests || len(s.Intervals) < 6 || s.Intervals[0].TargetRate != 50 {
		t.Errorf("intervals sum to %d of %d, %d intervals, first target %v", n, s.Requests, len(s.Intervals), s.Intervals[0].TargetRate)
	}
	if l := s.Latency; !(l.P50 > 0 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("latency not ordered: %+v", l)
	}
	if s.Mint.Tokens < s.ByKind[kindNew].Requests || s.Mint.MicrosPerToken <= 0 || s.Mint.CeilingPerS <= 0 {
		t.Errorf("mint report %+v", s.Mint)
	}
	if s.JWKSFetches < 0 || !strings.HasPrefix(s.Issuer, "https://127.0.0.1:") {
		t.Errorf("PA issuer %q", s.Issuer)
	}

	// Closed loop (no rate: a peak run), bounded by -n, with a second PA
	// (a new port, so a new issuer) on the Brand the first run created.
	closedJSON := filepath.Join(lab, "closed.json")
	stdout.Reset()
	args = []string{"-addr", addr, "-ca-file", filepath.Join(lab, "ca.pem"),
		"-jwks-listen", "127.0.0.1:0", "-jwks-cert", filepath.Join(lab, "pa.pem"), "-jwks-key", filepath.Join(lab, "pa-key.pem"),
		"-mix", "new=3,floor=1", "-c", "4", "-n", "200", "-duration", "20s", "-json", closedJSON}
	if code := run(t.Context(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("closed loop: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var c summary
	if b, err = os.ReadFile(closedJSON); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Loop != "closed" || c.Requests != 200 || c.Errors != 0 || c.ByKind[kindNew].Requests != 150 || c.ByKind[kindFloor].Requests != 50 {
		t.Errorf("closed loop: %s, %d requests, %d errors, by kind %+v", c.Loop, c.Requests, c.Errors, c.ByKind)
	}

	dom := renderInChromium(t, htmlFile)
	if !strings.Contains(dom, `data-rendered-series="`) {
		t.Fatalf("the report's load script did not run in the browser:\n%.2000s", dom)
	}
	if m := regexp.MustCompile(`data-rendered-series="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] == "0" {
		t.Errorf("no plotted line has a drawn extent: %v", m)
	}
	p99 := fmtMS(s.Latency.P99)
	if !strings.Contains(dom, `<td id="p99">`+p99+`</td>`) {
		t.Errorf("the rendered page does not show the JSON's p99 %s", p99)
	}
	if strings.Contains(dom, "src=") || strings.Contains(dom, "<link") || strings.Contains(dom, "href=") || strings.Contains(dom, "@import") {
		t.Error("the report refers to something outside itself")
	}
}

// renderInChromium loads file in headless Chromium and returns the DOM
// after the load event. Without chromium the test is skipped, except under
// CI=true (scripts/test.sh installs it).
func renderInChromium(t *testing.T, file string) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed; CI must install it (scripts/test.sh does): %v", err)
		}
		t.Skip("chromium is not installed (apt-get install chromium); CI=true makes this a failure")
	}
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+profile, "--virtual-time-budget=2000", "--dump-dom", "file://"+file)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String()
}
