package server_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/server/buildinfo"
)

// monitoringFiles are the alert rules and the dashboard in deploy/.
var monitoringFiles = []string{"../deploy/prometheus/pactd-alerts.yml", "../deploy/grafana/pactd-dashboard.json"}

// TestMonitoringUsesOnlyExportedMetrics scrapes a live pactd after one RPC
// and one VerifyAgentRequest decision, and fails if an alert rule or a
// dashboard panel names a metric that is not in the scrape (a renamed or
// made-up metric would alert on nothing, forever).
func TestMonitoringUsesOnlyExportedMetrics(t *testing.T) {
	inst := start(t, testConfig(t, "", t.TempDir()))
	ctx := t.Context()
	if _, err := agents(inst, adminToken).ListAgents(ctx, &pactv1.ListAgentsRequest{}); err != nil {
		t.Fatal(err)
	}
	v := pactv1connect.NewVerificationServiceClient(h2c(), inst.url, withToken(frontendToken))
	res, err := v.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer not-a-jwt"})
	if err != nil || res.GetAllowed() {
		t.Fatalf("VerifyAgentRequest(garbage) = %v, %v; want a denial", res, err)
	}
	exported := scrape(t, inst.url)
	// Positive controls: the scrape parsed, and carries what this test caused.
	for _, m := range []string{"pactd_rpc_requests_total", "pactd_rpc_duration_seconds_bucket", "pactd_verify_requests_total",
		"pactd_build_info", "pactd_database_up", "pactd_jwks_fetches_total", "process_resident_memory_bytes"} {
		if !exported[m] {
			t.Fatalf("the scrape lacks %s; got %v", m, exported)
		}
	}

	nameRE := regexp.MustCompile(`\b(?:pactd|go|process)_[a-z0-9_]*[a-z0-9]\b`)
	for _, f := range monitoringFiles {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		names := nameRE.FindAllString(string(raw), -1)
		if len(names) == 0 {
			t.Fatalf("%s names no metric", f)
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("%s uses %s, which pactd does not export", f, n)
			}
		}
	}
	// What the alert rules must cover (issue: deny spikes by reason, JWKS
	// fetch failures, database unavailability, latency SLO burn).
	rules, _ := os.ReadFile(monitoringFiles[0])
	for _, w := range []string{`sum by (job, reason) (rate(pactd_verify_requests_total{outcome="deny"}`, `pactd_jwks_fetches_total{result="error"}`,
		"pactd_database_up", `pactd_rpc_duration_seconds_bucket{procedure="/pact.v1.VerificationService/VerifyAgentRequest", le="0.025"}`} {
		if !bytes.Contains(rules, []byte(w)) {
			t.Errorf("the alert rules lack %q", w)
		}
	}
}

// TestBuildInfoMetric: pactd_build_info is 1 with the binary's labels.
func TestBuildInfoMetric(t *testing.T) {
	inst := start(t, testConfig(t, "", t.TempDir()))
	body := scrapeBody(t, inst.url)
	bi := buildinfo.Get()
	want := `pactd_build_info{commit="` + bi.Commit + `",goversion="` + bi.GoVersion + `",version="` + bi.Version + `"} 1`
	if !strings.Contains(body, want+"\n") {
		t.Errorf("metrics lack %s:\n%s", want, body)
	}
	if !strings.Contains(body, "pactd_database_up 1\n") {
		t.Errorf("metrics lack pactd_database_up 1 with a working store")
	}
}

func scrapeBody(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d, %v", res.StatusCode, err)
	}
	return string(body)
}

// scrape returns the sample names of a Prometheus text exposition.
func scrape(t *testing.T, url string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(scrapeBody(t, url)))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}
