package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func poolRequest(path string, protoMajor int) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, nil)
	r.ProtoMajor = protoMajor
	return r
}

// HTTP/2 pact.v1 calls run on pooled workers, reused one after another;
// HTTP/1.1 and other paths (health, reflection streams, OAuth) run in place.
func TestStreamPoolReusesWorkers(t *testing.T) {
	served := 0
	p := newStreamPool(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served++
		w.WriteHeader(http.StatusTeapot)
	}), 4).(*streamPool)
	for range 10 {
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, poolRequest("/pact.v1.VerificationService/VerifyAgentRequest", 2))
		if rec.Code != http.StatusTeapot {
			t.Fatalf("status %d: the handler's answer was lost", rec.Code)
		}
	}
	if got := p.started.Load(); got != 1 {
		t.Fatalf("%d workers started for 10 sequential calls, want 1 reused", got)
	}
	for _, r := range []*http.Request{
		poolRequest("/pact.v1.VerificationService/VerifyAgentRequest", 1),
		poolRequest("/grpc.health.v1.Health/Watch", 2),
		poolRequest("/a2a/oauth/token", 2),
	} {
		p.ServeHTTP(httptest.NewRecorder(), r)
	}
	if got := p.started.Load(); got != 1 || served != 13 {
		t.Fatalf("after in-place calls: %d workers, %d served; want 1, 13", got, served)
	}
}

// With every worker busy a call runs in place at once instead of queueing.
func TestStreamPoolNeverQueues(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	p := newStreamPool(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Block") != "" {
			entered <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusNoContent)
	}), 1).(*streamPool)
	blocked := poolRequest("/pact.v1.X/Y", 2)
	blocked.Header.Set("Block", "1")
	done := make(chan struct{})
	go func() { p.ServeHTTP(httptest.NewRecorder(), blocked); close(done) }()
	<-entered
	second := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, poolRequest("/pact.v1.X/Y", 2))
		second <- rec.Code
	}()
	select {
	case code := <-second:
		if code != http.StatusNoContent {
			t.Fatalf("second call: status %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call waited for the busy worker")
	}
	if got := p.started.Load(); got != 1 {
		t.Fatalf("%d workers started, want the bound of 1", got)
	}
	close(release)
	<-done
}

// A handler's panic reaches the stream goroutine with its own value, so
// net/http treats it as it would have (http.ErrAbortHandler: silently), and
// the worker survives to serve the next call.
func TestStreamPoolReraisesPanics(t *testing.T) {
	p := newStreamPool(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Panic") != "" {
			panic(http.ErrAbortHandler)
		}
		w.WriteHeader(http.StatusAccepted)
	}), 1).(*streamPool)
	r := poolRequest("/pact.v1.X/Y", 2)
	r.Header.Set("Panic", "1")
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
			}
		}()
		p.ServeHTTP(httptest.NewRecorder(), r)
		t.Fatal("the panic was swallowed")
	}()
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, poolRequest("/pact.v1.X/Y", 2))
	if rec.Code != http.StatusAccepted || p.started.Load() != 1 {
		t.Fatalf("after the panic: status %d, %d workers; want 202 from the same worker", rec.Code, p.started.Load())
	}
}
