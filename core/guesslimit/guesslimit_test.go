package guesslimit_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/core/guesslimit"
)

// counts is a Store in memory: the failures per (scope, window) and fixed
// pending counts.
type counts struct {
	n                map[string]int64
	pending, atBrand int64
}

func (c *counts) AddUserCodeFailure(_ context.Context, scope string, w time.Time) (int64, error) {
	c.n[scope+"@"+w.String()]++
	return c.n[scope+"@"+w.String()], nil
}

func (c *counts) RemoveUserCodeFailure(_ context.Context, scope string, w time.Time) error {
	c.n[scope+"@"+w.String()]--
	return nil
}

func (c *counts) CountPendingDeviceAuthorizations(context.Context, string, string, time.Time) (int64, int64, error) {
	return c.pending, c.atBrand, nil
}

// A source is stopped at its own limit; a released reservation gives its
// place back; a fresh source goes on past the Brand's limit.
func TestReserve(t *testing.T) {
	ctx := context.Background()
	st := &counts{n: map[string]int64{}}
	g := guesslimit.New(st, nil, guesslimit.Limits{Brand: 3, Source: 2})
	now := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	for i := range 2 {
		if _, err := g.Reserve(ctx, "op", "acme", "s1", now); err != nil {
			t.Fatalf("guess %d of s1: %v", i+1, err)
		}
	}
	if _, err := g.Reserve(ctx, "op", "acme", "s1", now); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("third guess of s1: %v, want ResourceExhausted", err)
	}
	r, err := g.Reserve(ctx, "op", "acme", "s2", now)
	if err != nil {
		t.Fatalf("first guess of s2: %v", err)
	}
	g.Release(ctx, r)
	if got := st.n["source:acme s2@"+now.Truncate(time.Minute).String()]; got != 0 {
		t.Fatalf("released reservation left %d counted", got)
	}
	// The Brand is at 2 of 3; s3 and s4 have not failed: they go on.
	for _, src := range []string{"s3", "s4"} {
		if _, err := g.Reserve(ctx, "op", "acme", src, now); err != nil {
			t.Fatalf("fresh source %s: %v", src, err)
		}
	}
	// No source: the Brand's limit applies.
	if _, err := g.Reserve(ctx, "op", "acme", "", now); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("sourceless guess over the Brand's limit: %v, want ResourceExhausted", err)
	}
}

func TestPendingOver(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		pending, atBrand int64
		want             bool
	}{{0, 0, false}, {999, 99, false}, {1000, 0, true}, {0, 100, true}} {
		st := &counts{n: map[string]int64{}, pending: c.pending, atBrand: c.atBrand}
		got, err := guesslimit.New(st, nil, guesslimit.Limits{}).PendingOver(ctx, "pa", "acme", time.Now())
		if err != nil || got != c.want {
			t.Errorf("pending %d, at Brand %d: %v, %v; want %v", c.pending, c.atBrand, got, err, c.want)
		}
	}
}
