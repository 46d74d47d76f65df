package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"pactd.dev/pactd/frontends/pacta2a"
)

// TestTraceparentGoesOnToPactd: a request that arrives with a W3C
// traceparent makes the frontend call pactd with the same trace id (and the
// caller's span as parent); one without makes it send none.
func TestTraceparentGoesOnToPactd(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	pactd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Traceparent"))
		mu.Unlock()
		http.Error(w, "fake pactd", http.StatusServiceUnavailable)
	}))
	defer pactd.Close()
	h, err := pacta2a.NewHandler(pacta2a.Config{PactdURL: pactd.URL, Token: "fe-token-0123456789abcdef", HTTPClient: pactdClient()})
	if err != nil {
		t.Fatal(err)
	}
	fe := withTraceContext(h)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, in := range []string{tp, ""} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		req := httptest.NewRequest(http.MethodGet, "/a2a/acme/.well-known/agent-card.json", nil)
		if in != "" {
			req.Header.Set("traceparent", in)
		}
		fe.ServeHTTP(httptest.NewRecorder(), req)
		mu.Lock()
		got := append([]string(nil), seen...)
		mu.Unlock()
		if len(got) == 0 {
			t.Fatalf("the frontend did not call pactd for the Agent Card")
		}
		for _, g := range got {
			if in == "" && g != "" {
				t.Errorf("no incoming traceparent, but pactd got %q", g)
			}
			if in != "" && g != tp && !strings.HasPrefix(g, "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
				t.Errorf("pactd got traceparent %q, want the caller's trace 4bf92f35…", g)
			}
		}
	}
}
