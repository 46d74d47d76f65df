package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// post sends body to path on inst with the given Content-Type values (none
// when cts is empty) over HTTP/1.1, as curl does, and returns the answer
// with its body read.
func post(t *testing.T, inst *instance, path, body, token string, cts ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, inst.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range cts {
		req.Header.Add("Content-Type", ct)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return res, string(raw)
}

// TestUnsupportedContentTypeSaysWhatToSend: a POST to an RPC without a
// Content-Type, or with one pactd does not serve (curl's default for -d,
// plain text, a misspelt one), is still connect-go's 415 with its
// Accept-Post header, and now has a plain-text body: what the call sent,
// the Content-Type a JSON call needs, and every accepted type (the
// Accept-Post list, which the test reads from the answer itself). The
// positive controls: the same calls with application/json, with the proto
// codec and through a generated client answer as before, and a refusal
// keeps its Connect JSON error.
func TestUnsupportedContentTypeSaysWhatToSend(t *testing.T) {
	inst := start(t, testConfig(t, "", t.TempDir()))
	const fix = ` A JSON body over the Connect protocol needs "Content-Type: application/json" (curl: -H 'Content-Type: application/json'); gRPC and gRPC-Web clients set theirs.` + "\n"
	long := "application/" + strings.Repeat("x", 150)
	for _, tc := range []struct {
		name, path, token string
		cts               []string
		first             string
	}{
		{"fail/none", "/pact.v1.AgentService/ListAgents", adminToken, nil, "This call has no Content-Type."},
		{"fail/empty", "/grpc.health.v1.Health/Check", "", []string{""}, "This call has no Content-Type."},
		{"fail/curl-form", "/pact.v1.AgentService/ListAgents", adminToken, []string{"application/x-www-form-urlencoded"},
			`pactd does not serve the Content-Type "application/x-www-form-urlencoded".`},
		{"fail/text-unauthenticated", "/pact.v1.AgentService/ListAgents", "", []string{"text/plain"},
			`pactd does not serve the Content-Type "text/plain".`},
		{"fail/misspelt", "/grpc.health.v1.Health/Check", "", []string{"application/jsn"}, `pactd does not serve the Content-Type "application/jsn".`},
		{"fail/unknown-codec", "/grpc.health.v1.Health/Check", "", []string{"application/grpc+xml"}, `pactd does not serve the Content-Type "application/grpc+xml".`},
		{"fail/long-is-cut", "/grpc.health.v1.Health/Check", "", []string{long}, `pactd does not serve the Content-Type "` + long[:100] + `…".`},
		{"fail/two", "/grpc.health.v1.Health/Check", "", []string{"text/plain", "application/json"}, "This call has 2 Content-Type headers; send one."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := post(t, inst, tc.path, "{}", tc.token, tc.cts...)
			accepted := res.Header.Get("Accept-Post")
			if res.StatusCode != http.StatusUnsupportedMediaType {
				t.Fatalf("status %d, want 415; body %q", res.StatusCode, body)
			}
			for _, ct := range []string{"application/json", "application/proto", "application/grpc", "application/grpc-web"} {
				if !strings.Contains(accepted, ct) {
					t.Errorf("Accept-Post %q lacks %s", accepted, ct)
				}
			}
			if want := tc.first + fix + "Accepted: " + accepted + "\n"; body != want {
				t.Errorf("body:\n%q\nwant\n%q", body, want)
			}
			if ct := res.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("Content-Type %q, X-Content-Type-Options %q; want plain text, nosniff", ct, res.Header.Get("X-Content-Type-Options"))
			}
		})
	}

	// Positive controls.
	for _, tc := range []struct {
		name, path, token, ct string
		status                int
		body                  string
	}{
		{"ok/health-json", "/grpc.health.v1.Health/Check", "", "application/json", 200, `{"status":"SERVING`},
		{"ok/health-json-charset", "/grpc.health.v1.Health/Check", "", "application/json; charset=utf-8", 200, `{"status":"SERVING`},
		{"ok/list-json", "/pact.v1.AgentService/ListAgents", adminToken, "application/json", 200, `{}`},
		{"ok/refusal-keeps-its-connect-error", "/pact.v1.AgentService/ListAgents", "", "application/json", 401, `"code":"unauthenticated"`},
		{"ok/upper-case-is-the-same-type", "/grpc.health.v1.Health/Check", "", "Application/JSON", 200, `{"status":"SERVING`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := post(t, inst, tc.path, "{}", tc.token, tc.ct)
			if res.StatusCode != tc.status || !strings.Contains(body, tc.body) || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Errorf("status %d, Content-Type %q, body %q; want %d, JSON and %q", res.StatusCode, res.Header.Get("Content-Type"), body, tc.status, tc.body)
			}
		})
	}
	for name, opts := range protocols {
		if _, err := agents(inst, adminToken, opts...).ListAgents(t.Context(), &pactv1.ListAgentsRequest{}); err != nil {
			t.Errorf("ListAgents over %s: %v", name, err)
		}
	}
}
