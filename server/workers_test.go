package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"pactd.dev/pactd/server/workpool"
)

// HTTP/2 pact.v1 calls run on the pool; HTTP/1.1 calls and other paths
// (health and reflection streams, /metrics, OAuth) are served in place.
func TestOnWorkersSelectsHTTP2PactCalls(t *testing.T) {
	pool := workpool.New(4)
	h := onWorkers(pool, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	serve := func(path string, major int) int {
		r := httptest.NewRequest(http.MethodPost, path, nil)
		r.ProtoMajor = major
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	for _, c := range []struct {
		path  string
		major int
	}{
		{"/pact.v1.VerificationService/VerifyAgentRequest", 1},
		{"/grpc.health.v1.Health/Watch", 2},
		{"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", 2},
		{"/a2a/oauth/token", 2},
		{"/metrics", 2},
	} {
		if got := serve(c.path, c.major); got != http.StatusTeapot || pool.Started() != 0 {
			t.Fatalf("%s over HTTP/%d: status %d, %d workers; want served in place", c.path, c.major, got, pool.Started())
		}
	}
	if got := serve("/pact.v1.VerificationService/VerifyAgentRequest", 2); got != http.StatusTeapot || pool.Started() != 1 {
		t.Fatalf("HTTP/2 pact.v1 call: status %d, %d workers; want it on the pool", got, pool.Started())
	}
}
