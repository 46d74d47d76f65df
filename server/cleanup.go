package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// cleanup is the one path that releases what a server acquired: each
// resource is pushed as it is acquired, and run releases them in reverse
// order, once, whether Build failed part-way or the server stopped.
type cleanup struct {
	mu    sync.Mutex
	stack []closer
}

// closer releases one resource; what names it in errors.
type closer struct {
	what  string
	close func() error
}

// push registers the release of a resource just acquired.
func (c *cleanup) push(what string, close func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stack = append(c.stack, closer{what, close})
}

// run releases every resource pushed, the last first, and returns their
// errors joined. Later calls release only what was pushed since.
func (c *cleanup) run() error {
	c.mu.Lock()
	stack := c.stack
	c.stack = nil
	c.mu.Unlock()
	var errs []error
	for i := len(stack) - 1; i >= 0; i-- {
		if err := stack[i].close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", stack[i].what, err))
		}
	}
	return errors.Join(errs...)
}

// closeListener closes ln; one its server closed already is no error.
func closeListener(ln net.Listener) func() error {
	return func() error {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	}
}

// tasks is one-off background work tied to a server's lifetime, such as a
// key reload after a change: stop cancels what runs and waits for it, so
// the store closes after it; work started after stop is not run.
type tasks struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func newTasks() *tasks {
	ctx, cancel := context.WithCancel(context.Background())
	return &tasks{ctx: ctx, cancel: cancel}
}

// Go runs f in the background with a context that ends at stop.
func (t *tasks) Go(f func(ctx context.Context)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.wg.Go(func() { f(t.ctx) })
}

// stop cancels the tasks and waits for them to return.
func (t *tasks) stop() error {
	t.mu.Lock()
	t.closed = true
	t.cancel()
	t.mu.Unlock()
	t.wg.Wait()
	return nil
}
