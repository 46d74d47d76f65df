package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is stdout, read while run writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServes runs the example with pactd unreachable: the SDK answers
// initialize, a tools request (pactd's) is a bare 502, and the side door
// answers only its token.
func TestServes(t *testing.T) {
	env := map[string]string{"HDTP_LISTEN": "127.0.0.1:0", "PACTD_URL": "http://127.0.0.1:1", "PACT_FRONTEND_TOKEN": "t",
		"AGENT_LISTEN": "127.0.0.1:0", "AGENT_TOKEN": "agent-secret"}
	ctx, cancel := context.WithCancel(t.Context())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(k string) string { return env[k] }, &out) }()
	t.Cleanup(func() { cancel(); <-done })
	addr := regexp.MustCompile(`serving on (\S+)`)
	side := regexp.MustCompile(`agent side door on (\S+)`)
	deadline := time.Now().Add(10 * time.Second)
	for !addr.MatchString(out.String()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	m, s := addr.FindStringSubmatch(out.String()), side.FindStringSubmatch(out.String())
	if m == nil || s == nil {
		t.Fatalf("the example printed %q", out.String())
	}
	post := func(url, auth, body string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		return res.StatusCode
	}
	mcp := "http://" + m[1] + "/mcp"
	if got := post(mcp, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); got != 200 {
		t.Errorf("initialize: %d, want 200 (the SDK)", got)
	}
	if got := post(mcp, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); got != 502 {
		t.Errorf("tools/list with pactd unreachable: %d, want 502", got)
	}
	if got := post(s[1]+"/call", "Bearer wrong", `{}`); got != 404 {
		t.Errorf("the side door with a wrong token: %d, want 404", got)
	}
	if got := post(s[1]+"/call", "Bearer agent-secret", `{"identity_id":"hid_x","contact_root":"sha256:x","tool":"t"}`); got != 502 {
		t.Errorf("the side door's call with pactd unreachable: %d, want 502", got)
	}
}

func TestRoutes(t *testing.T) {
	got := routes(" agent.maya.example=127.0.0.1:9,agent.you.example=[::1]:8 ,bad")
	if len(got) != 2 || got["agent.maya.example:443"] != "127.0.0.1:9" || got["agent.you.example:443"] != "[::1]:8" {
		t.Errorf("routes = %v", got)
	}
	if routes("") != nil {
		t.Error("no HDTP_ROUTES gave routes")
	}
}
