package server

import (
	"net/http"
	"strings"

	"pactd.dev/pactd/server/workpool"
)

// Both ports run pactd's unary calls on one pool of long-lived workers
// whose stacks stay grown (package workpool): net/http's HTTP/2 server
// starts a goroutine per stream, and grpc-go's stream workers sit idle
// between calls long enough for the collector to shrink their stacks, so
// without the pool most calls paid for growing a stack two or three times.
// An HTTP/1.1 connection keeps one goroutine for all its requests, and
// handing its calls over measured no better (docs/benchmarks.md, "Transport and clients"), so those
// are served in place.

// pooledUnaryPrefix selects the HTTP calls the pool runs: pactd's own
// services, every one of whose RPCs is unary (health and reflection
// streams, /metrics and the OAuth endpoints stay on their own goroutines).
const pooledUnaryPrefix = "/pact.v1."

// onWorkers serves HTTP/2 pact.v1 calls of next on pool, and everything
// else in place.
func onWorkers(pool *workpool.Pool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || !strings.HasPrefix(r.URL.Path, pooledUnaryPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		pool.Do(func() { next.ServeHTTP(w, r) })
	})
}
