package server

import (
	"net/http"
	"strings"
	"sync/atomic"
)

// Go's HTTP/2 server runs every stream's handler on a goroutine of its
// own, which starts with a small stack; a PACT verification needs a deeper
// one, so each call paid for growing (copying) the stack two or three times
// (≈ 10 % of the main port's CPU per call, docs/benchmarks.md). The stream
// goroutine now hands a unary pact.v1 call to a pool of long-lived workers
// whose stacks have already grown, and waits. HTTP/1.1 connections keep
// one goroutine for all their requests, so they are served in place.

// streamPool runs HTTP/2 unary pact.v1 calls on a fixed set of worker
// goroutines. When every worker is busy the call runs in place, as before:
// the pool never queues, so it cannot add latency under overload.
type streamPool struct {
	next    http.Handler
	jobs    chan *streamJob
	max     int32
	started atomic.Int32
}

// streamJob is one call handed to a worker; done is closed (or carries the
// handler's panic) when the handler has returned.
type streamJob struct {
	w    http.ResponseWriter
	r    *http.Request
	done chan any
}

// pooledUnaryPrefix selects the calls the pool runs: pactd's own services,
// every one of whose RPCs is unary (health and reflection streams, and the
// OAuth endpoints, stay on their own goroutines).
const pooledUnaryPrefix = "/pact.v1."

// newStreamPool serves next with up to workers pooled goroutines, started
// as calls need them; once started they live as long as the process.
func newStreamPool(next http.Handler, workers int) http.Handler {
	return &streamPool{next: next, jobs: make(chan *streamJob), max: int32(workers)}
}

// work serves first, then every call handed to it.
func (p *streamPool) work(first *streamJob) {
	first.done <- p.serve(first)
	for j := range p.jobs {
		j.done <- p.serve(j)
	}
}

// serve runs one call, returning its panic value (nil when none) so that
// the stream goroutine re-raises it and net/http handles it as it would
// have: logged and the stream reset, or silently for http.ErrAbortHandler.
func (p *streamPool) serve(j *streamJob) (panicked any) {
	defer func() { panicked = recover() }()
	p.next.ServeHTTP(j.w, j.r)
	return nil
}

// ServeHTTP hands an HTTP/2 pact.v1 call to an idle worker and waits for
// it, or serves the request in place.
func (p *streamPool) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 2 || !strings.HasPrefix(r.URL.Path, pooledUnaryPrefix) {
		p.next.ServeHTTP(w, r)
		return
	}
	j := &streamJob{w: w, r: r, done: make(chan any, 1)}
	select {
	case p.jobs <- j:
	default:
		if p.started.Add(1) > p.max {
			// Every worker busy: serve in place rather than queue.
			p.started.Add(-1)
			p.next.ServeHTTP(w, r)
			return
		}
		go p.work(j)
	}
	if v := <-j.done; v != nil {
		panic(v)
	}
}
