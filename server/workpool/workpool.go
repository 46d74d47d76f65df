// Package workpool runs calls on a bounded set of long-lived goroutines
// whose stacks stay grown.
//
// A goroutine starts with a small stack and grows it by copying when a call
// needs more; the garbage collector halves the stack of a goroutine that
// uses little of it when a cycle runs. Both transports pactd serves on hand
// each call to a goroutine that is either new (net/http's HTTP/2 server
// starts one per stream) or idle since the last collection (grpc-go's
// stream workers), so a VerifyAgentRequest, whose JOSE and ECDSA frames are
// deep, paid for two or three stack copies on most calls: ≈ 10 % of the CPU
// of a call on either port (docs/benchmarks.md, "Transport and clients"). A Pool's workers wait for
// work beneath a reserved frame, so the collector sees them using enough of
// their stack never to shrink it, and each call runs on a stack that has
// already grown.
package workpool

import (
	"sync"
	"sync/atomic"
)

// reserve is the stack a waiting worker keeps in use. The collector shrinks
// a stack only when less than a quarter of it is in use, so a worker keeps
// a stack of up to 4 × reserve: the 32 KiB a verification grows to.
const reserve = 8 << 10

// Pool runs calls on up to a fixed number of workers, started as calls
// need them; once started they live as long as the process.
type Pool struct {
	jobs    chan *job
	max     int32
	started atomic.Int32
}

type job struct {
	fn   func()
	done chan any // the call's panic value, nil when it returned
}

var jobs = sync.Pool{New: func() any { return &job{done: make(chan any, 1)} }}

// New returns a pool of up to workers goroutines.
func New(workers int) *Pool {
	return &Pool{jobs: make(chan *job), max: int32(workers)}
}

// Do runs fn on an idle worker and waits for it to return; when every
// worker is busy it runs fn in place rather than queue, so the pool never
// adds waiting. A panic in fn is raised again in the caller's goroutine,
// with the same value, and the worker lives on.
func (p *Pool) Do(fn func()) {
	j := jobs.Get().(*job)
	j.fn = fn
	select {
	case p.jobs <- j:
	default:
		if p.started.Add(1) > p.max {
			p.started.Add(-1)
			j.fn = nil
			jobs.Put(j)
			fn()
			return
		}
		go p.work(j)
	}
	v := <-j.done
	j.fn = nil
	jobs.Put(j)
	if v != nil {
		panic(v)
	}
}

// Started returns how many workers have been started.
func (p *Pool) Started() int { return int(p.started.Load()) }

// work serves first, then every job handed to the pool, beneath a frame of
// reserve bytes that stays on the stack while the worker waits.
//
//go:noinline
func (p *Pool) work(first *job) {
	var pad [reserve]byte
	hold(&pad)
	first.done <- run(first.fn)
	for j := range p.jobs {
		j.done <- run(j.fn)
	}
}

// hold keeps pad (and so the frame holding it) from being optimised away.
//
//go:noinline
func hold(pad *[reserve]byte) { pad[0] = 1 }

// run calls fn and returns its panic value, if any.
func run(fn func()) (panicked any) {
	defer func() { panicked = recover() }()
	fn()
	return nil
}
