package server_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Every response on the main port carries X-Request-Id: the caller's when
// well-formed, else a fresh one; the OAuth HTTP endpoints are counted in
// pactd_http_requests_total by endpoint and status, like the RPCs.
func TestRequestIDsAndOAuthMetrics(t *testing.T) {
	inst := start(t, testConfig(t, "", t.TempDir()))
	do := func(method, path, requestID, token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, inst.url+path, strings.NewReader("{}"))
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
		}
		if requestID != "" {
			req.Header.Set("X-Request-Id", requestID)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp
	}
	generated := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for _, tc := range []struct {
		name, sent string
		ok         func(string) bool
	}{
		{"kept", "frontend-42.req:7", func(got string) bool { return got == "frontend-42.req:7" }},
		{"absent", "", generated.MatchString},
		{"with-space", "a b", generated.MatchString},
		{"too-long", strings.Repeat("x", 129), generated.MatchString},
	} {
		for _, path := range []string{"/pact.v1.AgentService/ListAgents", "/a2a/acme/oauth/jwks.json"} {
			method := http.MethodPost
			if strings.HasPrefix(path, "/a2a/") {
				method = http.MethodGet
			}
			if got := do(method, path, tc.sent, adminToken).Header.Get("X-Request-Id"); !tc.ok(got) {
				t.Errorf("%s %s: X-Request-Id %q", tc.name, path, got)
			}
		}
	}
	// Four JWKS requests and one unknown OAuth path, counted by endpoint.
	do(http.MethodGet, "/a2a/acme/oauth/nope", "", "")
	resp, err := func() (string, error) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, inst.url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		return string(b), err
	}()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`pactd_http_requests_total{endpoint="jwks.json",status="200"} 4`,
		`pactd_http_requests_total{endpoint="other",status="404"} 1`,
		`pactd_http_duration_seconds_count{endpoint="jwks.json"} 4`,
	} {
		if !strings.Contains(resp, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
