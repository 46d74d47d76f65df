package workpool

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// Calls one after another reuse one worker. (A call that comes before the
// last one's worker is back at its receive starts another worker, up to the
// bound; the pause lets the worker park, as it does between real calls.)
func TestDoReusesAWorker(t *testing.T) {
	p := New(4)
	n := 0
	for range 20 {
		p.Do(func() { n++ })
		time.Sleep(5 * time.Millisecond)
	}
	if n != 20 || p.Started() != 1 {
		t.Fatalf("%d calls ran on %d workers; want 20 on 1", n, p.Started())
	}
}

// With every worker busy a call runs in place at once, never queued, and
// the pool never starts more than its bound.
func TestDoNeverQueues(t *testing.T) {
	p := New(2)
	release := make(chan struct{})
	var entered, wg sync.WaitGroup
	entered.Add(2)
	for range 2 {
		wg.Go(func() { p.Do(func() { entered.Done(); <-release }) })
	}
	entered.Wait()
	ran := make(chan struct{})
	go p.Do(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("a call waited for a busy worker")
	}
	if p.Started() != 2 {
		t.Fatalf("%d workers started, want the bound of 2", p.Started())
	}
	close(release)
	wg.Wait()
}

// A panic reaches the caller with its own value (so net/http treats
// http.ErrAbortHandler as it would have), and the worker survives it.
func TestDoReraisesPanics(t *testing.T) {
	p := New(1)
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
			}
		}()
		p.Do(func() { panic(http.ErrAbortHandler) })
		t.Fatal("the panic was swallowed")
	}()
	time.Sleep(5 * time.Millisecond) // let the worker park again
	ok := false
	p.Do(func() { ok = true })
	if !ok || p.Started() != 1 {
		t.Fatalf("after the panic: ran %v on %d workers; want true on the same 1", ok, p.Started())
	}
}

// Many callers at once: every call runs exactly once (go test -race).
func TestDoConcurrent(t *testing.T) {
	p := New(8)
	var mu sync.Mutex
	count := 0
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 50 {
				p.Do(func() { mu.Lock(); count++; mu.Unlock() })
			}
		})
	}
	wg.Wait()
	if count != 64*50 || p.Started() > 8 {
		t.Fatalf("count %d on %d workers; want %d on at most 8", count, p.Started(), 64*50)
	}
}
