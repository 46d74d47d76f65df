package reqlog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestValidID(t *testing.T) {
	for _, ok := range []string{"a", "req-123", "01J.abc_DEF:9", strings.Repeat("x", 128)} {
		if !ValidID(ok) {
			t.Errorf("ValidID(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 129), "a b", "a\nb", "a\"b", "ä", "a/b", "a=b"} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
	if id := IDFrom("bad id"); !ValidID(id) || id == "bad id" || len(id) != 16 {
		t.Fatalf("IDFrom(bad) = %q", id)
	}
	if IDFrom("good-id") != "good-id" {
		t.Fatal("IDFrom dropped a good id")
	}
}

type logLine map[string]any

func lines(t *testing.T, buf *bytes.Buffer) []logLine {
	t.Helper()
	var out []logLine
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m logLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// Records carry the request id; identical warnings and errors are logged
// Burst times, then once per Window with the count of those left out;
// other faults and info lines are not limited.
func TestHandlerAddsIDAndLimitsRepeats(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), func() time.Time { return now }))
	ctx := With(context.Background(), "req-1")
	for range 10 {
		log.ErrorContext(ctx, "get agent", slog.String("error", "connection refused"))
	}
	log.ErrorContext(ctx, "get agent", slog.String("error", "timeout")) // another fault
	for range 5 {
		log.InfoContext(ctx, "hello")
	}
	got := lines(t, &buf)
	if len(got) != Burst+1+5 {
		t.Fatalf("%d lines, want %d: %s", len(got), Burst+1+5, buf.String())
	}
	for _, l := range got {
		if l["request_id"] != "req-1" {
			t.Fatalf("line without the request id: %v", l)
		}
	}
	buf.Reset()
	now = now.Add(Window)
	log.ErrorContext(ctx, "get agent", slog.String("error", "connection refused"))
	log.ErrorContext(ctx, "get agent", slog.String("error", "connection refused"))
	got = lines(t, &buf)
	if len(got) != 1 || got[0]["suppressed"] != float64(10-Burst) {
		t.Fatalf("after a window: %s; want one line with suppressed=%d", buf.String(), 10-Burst)
	}
	// No context request: no request_id member.
	buf.Reset()
	log.Warn("plain")
	if got := lines(t, &buf); len(got) != 1 || got[0]["request_id"] != nil {
		t.Fatalf("without a request: %s", buf.String())
	}
}

func TestFaultLoggedMark(t *testing.T) {
	ctx := With(context.Background(), "r")
	if FaultLogged(ctx) {
		t.Fatal("marked before MarkFaultLogged")
	}
	MarkFaultLogged(ctx)
	if !FaultLogged(ctx) || ID(ctx) != "r" {
		t.Fatal("mark or id lost")
	}
	MarkFaultLogged(context.Background()) // no request: a no-op, no panic
	if FaultLogged(context.Background()) || ID(context.Background()) != "" {
		t.Fatal("a bare context has a request")
	}
}

// Records that differ in any attribute but timings are limited apart:
// one Brand's audit lines never hide another's.
func TestLimitKeyIncludesAttributes(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), func() time.Time { return now }))
	for range 10 {
		log.Warn("user code lookup failed", slog.String("brand_id", "acme"), slog.Float64("duration_ms", 1.5))
	}
	log.Warn("user code lookup failed", slog.String("brand_id", "beta"), slog.Float64("duration_ms", 2.5))
	got := lines(t, &buf)
	if len(got) != Burst+1 || got[len(got)-1]["brand_id"] != "beta" {
		t.Fatalf("%d lines (want %d, the last for beta): %s", len(got), Burst+1, buf.String())
	}
}
