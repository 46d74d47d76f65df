package testclock_test

import (
	"context"
	"testing"
	"time"

	"pactd.dev/pactd/internal/testkit/testclock"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// received returns the tick waiting on c, if any, without blocking.
func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-c:
		return v, true
	default:
		return time.Time{}, false
	}
}

// A ticker fires when the clock reaches its next tick, with the clock's
// time; one Advance past several ticks delivers one; a stopped ticker
// never fires again.
func TestTickerFiresOnAdvance(t *testing.T) {
	c := testclock.New(t0)
	ticks, stop := c.NewTicker(time.Second)
	c.Advance(999 * time.Millisecond)
	if v, ok := received(ticks); ok {
		t.Fatalf("fail/before-the-tick: fired at %v", v)
	}
	c.Advance(time.Millisecond)
	if v, ok := received(ticks); !ok || !v.Equal(t0.Add(time.Second)) {
		t.Fatalf("ok/at-the-tick: %v, %v; want %v", v, ok, t0.Add(time.Second))
	}
	c.Advance(3500 * time.Millisecond) // past ticks at 2 s, 3 s and 4 s
	if v, ok := received(ticks); !ok || !v.Equal(t0.Add(4500*time.Millisecond)) {
		t.Fatalf("ok/past-several: %v, %v", v, ok)
	}
	if v, ok := received(ticks); ok {
		t.Fatalf("fail/ticks-collapse: a second tick %v", v)
	}
	c.Advance(499 * time.Millisecond) // the next tick is at 5 s
	if _, ok := received(ticks); ok {
		t.Fatal("fail/next-tick-on-the-grid: fired before 5 s")
	}
	c.Advance(time.Millisecond)
	if _, ok := received(ticks); !ok {
		t.Fatal("ok/next-tick-on-the-grid: no tick at 5 s")
	}
	stop()
	c.Advance(time.Hour)
	if v, ok := received(ticks); ok {
		t.Fatalf("fail/stopped: fired at %v", v)
	}
}

// WaitForTicker returns once a ticker of the interval runs, and not for
// another interval.
func TestWaitForTicker(t *testing.T) {
	c := testclock.New(t0)
	_, stopOther := c.NewTicker(time.Minute)
	defer stopOther()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := c.WaitForTicker(ctx, time.Second); err == nil {
		t.Fatal("fail/other-interval: returned with only a one-minute ticker")
	}
	started := make(chan struct{})
	go func() {
		<-started
		_, stop := c.NewTicker(time.Second)
		t.Cleanup(stop)
	}()
	close(started)
	if err := c.WaitForTicker(t.Context(), time.Second); err != nil {
		t.Fatalf("ok/started: %v", err)
	}
}
