// Package testclock is the one settable clock of the tests: code under
// test takes a func() time.Time (or a clock with tickers, such as
// server.Clock), and a test passes a Clock's Now (or the Clock) and moves
// time with Advance. Safe for concurrent use (handlers and loops read it
// while the test advances it).
package testclock

import (
	"context"
	"sync"
	"time"
)

// Clock is a settable clock. The zero value reads the zero time.
type Clock struct {
	mu      sync.Mutex
	t       time.Time
	tickers map[*ticker]bool
	// changed is closed, and replaced, whenever a ticker starts or stops:
	// WaitForTicker waits on it.
	changed chan struct{}
}

// ticker is one NewTicker's state.
type ticker struct {
	c    chan time.Time
	d    time.Duration
	next time.Time
}

// New returns a clock that reads t until advanced.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d (backwards when d is negative), and fires
// the tickers it moves past.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.fireLocked()
}

// Set moves the clock to t, and fires the tickers it moves past.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
	c.fireLocked()
}

// NewTicker is time.NewTicker on the clock's time: the channel receives
// the clock's time when Advance or Set moves it to or past the next tick
// (d after the ticker started, then every d). Like a time.Ticker's, the
// channel holds one tick and drops ticks its reader is not ready for, so
// one Advance past several ticks delivers one. stop ends the ticker. It
// panics if d is not positive, as time.NewTicker does.
func (c *Clock) NewTicker(d time.Duration) (ticks <-chan time.Time, stop func()) {
	if d <= 0 {
		panic("testclock: non-positive interval for NewTicker")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tk := &ticker{c: make(chan time.Time, 1), d: d, next: c.t.Add(d)}
	if c.tickers == nil {
		c.tickers = map[*ticker]bool{}
	}
	c.tickers[tk] = true
	c.changedLocked()
	return tk.c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.tickers[tk] {
			delete(c.tickers, tk)
			c.changedLocked()
		}
	}
}

// WaitForTicker waits until a ticker of interval d is running (a loop
// under test has started and is waiting for its next tick), or ctx ends:
// then an Advance of d fires it.
func (c *Clock) WaitForTicker(ctx context.Context, d time.Duration) error {
	for {
		c.mu.Lock()
		for tk := range c.tickers {
			if tk.d == d {
				c.mu.Unlock()
				return nil
			}
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// fireLocked sends a tick on every ticker whose next tick the clock has
// reached, and moves that tick past the clock. Called with c.mu held.
func (c *Clock) fireLocked() {
	for tk := range c.tickers {
		if c.t.Before(tk.next) {
			continue
		}
		select {
		case tk.c <- c.t:
		default: // the reader has a tick waiting already
		}
		tk.next = tk.next.Add((c.t.Sub(tk.next)/tk.d + 1) * tk.d)
	}
}

// changedLocked wakes WaitForTicker. Called with c.mu held.
func (c *Clock) changedLocked() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}
