package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/internal/freeport"
)

// TestStagingRecipe runs the "Load-testing staging" recipe of
// docs/performance.md as written — build, lab certificates, pactd with TLS
// and without PACT_DEV, the -mix run — with free ports, a temporary lab
// directory and a short run, then checks the JSON summary it leaves and opens its HTML report in
// headless Chromium.
func TestStagingRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pactd")
	}
	page, err := os.ReadFile("../../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "<!-- staging-recipe:begin -->\n```bash\n")
	script, _, ok2 := strings.Cut(rest, "```\n<!-- staging-recipe:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/performance.md has no staging-recipe block")
	}
	lab := t.TempDir()
	// pactd refuses PACT_* variables it does not know: start from none.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PACT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "LAB="+lab, "PACTD_PORT="+freePort(t), "PA_PORT="+freePort(t), "DURATION=4s", "RAMP=2s")
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = "../../..", env // the recipe runs from the repository root
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(lab, "pactd.log"))
		t.Fatalf("recipe: %v\n%s\npactd log:\n%.3000s", err, out, log)
	}
	t.Logf("%s", out)
	var s summary
	b, err := os.ReadFile(filepath.Join(lab, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	// 50→300/s over 2 s, then 300/s for 2 s: 350 + 600 requests.
	if !s.Valid || s.Errors != 0 || s.Requests < 900 || s.Requests > 951 || !strings.HasPrefix(s.Target, "https://") {
		t.Fatalf("summary: valid %v, %d requests, %d errors %v, target %s", s.Valid, s.Requests, s.Errors, s.Failures, s.Target)
	}
	dom := renderInChromium(t, filepath.Join(lab, "report.html"))
	if p99 := fmtMS(s.Latency.P99); !strings.Contains(dom, `<td id="p99">`+p99+`</td>`) {
		t.Errorf("the rendered report does not show the JSON's p99 %s", p99)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(port)
}
