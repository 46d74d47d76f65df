package brandcache

import (
	"context"
	"errors"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

type countingStore struct {
	calls  int
	brands map[string]db.Brand
	down   bool
}

func (s *countingStore) GetBrand(_ context.Context, id string) (db.Brand, error) {
	s.calls++
	if s.down {
		return db.Brand{}, errors.New("connection refused")
	}
	b, ok := s.brands[id]
	if !ok {
		return db.Brand{}, db.ErrNotFound
	}
	return b, nil
}

func TestCacheReadsThroughAndForgets(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &countingStore{brands: map[string]db.Brand{"acme": {ID: "acme", DisplayName: "Acme"}}}
	c := New(s, time.Minute, 0, nil, func() time.Time { return now })
	ctx := t.Context()
	for range 3 {
		if b, err := c.GetBrand(ctx, "acme"); err != nil || b.DisplayName != "Acme" {
			t.Fatalf("GetBrand = %+v, %v", b, err)
		}
		if _, err := c.GetBrand(ctx, "nope"); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("GetBrand(nope) err = %v", err)
		}
	}
	if s.calls != 2 {
		t.Fatalf("store read %d times, want 2 (one per id)", s.calls)
	}
	s.brands["acme"] = db.Brand{ID: "acme", DisplayName: "Renamed"}
	c.Forget("acme")
	if b, _ := c.GetBrand(ctx, "acme"); b.DisplayName != "Renamed" {
		t.Fatalf("after Forget: %+v", b)
	}
	s.brands["nope"] = db.Brand{ID: "nope"}
	now = now.Add(time.Minute)
	if _, err := c.GetBrand(ctx, "nope"); err != nil {
		t.Fatalf("negative entry outlived its ttl: %v", err)
	}
	c.ForgetAll()
	before := s.calls
	_, _ = c.GetBrand(ctx, "acme")
	if s.calls != before+1 {
		t.Fatal("ForgetAll kept entries")
	}
}

// While the store is down, a Brand (or an unknown id) read less than the
// grace past its TTL still answers; after the grace, or after Forget, the
// store's error stands.
func TestOutageGrace(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &countingStore{brands: map[string]db.Brand{"acme": {ID: "acme", DisplayName: "Acme"}}}
	c := New(s, time.Second, time.Minute, nil, func() time.Time { return now })
	ctx := t.Context()
	if _, err := c.GetBrand(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBrand(ctx, "nope"); !errors.Is(err, db.ErrNotFound) {
		t.Fatal(err)
	}
	s.down = true
	now = now.Add(time.Second + time.Minute - time.Millisecond)
	if b, err := c.GetBrand(ctx, "acme"); err != nil || b.DisplayName != "Acme" {
		t.Fatalf("ok/within-grace: %+v, %v", b, err)
	}
	if _, err := c.GetBrand(ctx, "nope"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("unknown id within grace: %v, want ErrNotFound", err)
	}
	if _, err := c.GetBrand(ctx, "never-read"); err == nil || errors.Is(err, db.ErrNotFound) {
		t.Fatalf("never-read id with the store down: %v, want the store's error", err)
	}
	now = now.Add(time.Millisecond)
	if _, err := c.GetBrand(ctx, "acme"); err == nil {
		t.Fatal("grace over: the stale Brand still answers")
	}
	now = now.Add(-time.Second)
	c.Forget("acme")
	if _, err := c.GetBrand(ctx, "acme"); err == nil {
		t.Fatal("a forgotten Brand answered from the stale cache")
	}
}

// staleAfter is a change feed whose freshness the test sets: MaxAge is the
// bound while stale, no limit while fresh.
type staleAfter struct {
	stale bool
	bound time.Duration
}

func (f *staleAfter) MaxAge(time.Time) time.Duration {
	if f.stale {
		return f.bound
	}
	return time.Duration(1<<63 - 1)
}

// With a stale feed an entry older than the bound is read again, however
// long its TTL; with a fresh feed the TTL alone applies.
func TestStaleFeedLimitsAge(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &countingStore{brands: map[string]db.Brand{"acme": {ID: "acme", DisplayName: "Acme"}}}
	feed := &staleAfter{bound: time.Second}
	c := New(s, time.Hour, 0, feed, func() time.Time { return now })
	ctx := t.Context()
	read := func() int {
		t.Helper()
		before := s.calls
		if b, err := c.GetBrand(ctx, "acme"); err != nil || b.DisplayName != "Acme" {
			t.Fatalf("GetBrand = %+v, %v", b, err)
		}
		return s.calls - before
	}
	if n := read(); n != 1 {
		t.Fatalf("first read: %d store reads, want 1", n)
	}
	now = now.Add(1500 * time.Millisecond)
	if n := read(); n != 0 {
		t.Fatalf("fresh feed, entry 1.5 s old: %d store reads, want 0 (the TTL is an hour)", n)
	}
	feed.stale = true
	if n := read(); n != 1 {
		t.Fatalf("stale feed, entry 1.5 s old: %d store reads, want 1 (the bound is 1 s)", n)
	}
	now = now.Add(900 * time.Millisecond)
	if n := read(); n != 0 {
		t.Fatalf("stale feed, entry 0.9 s old: %d store reads, want 0", n)
	}
}

// A read in flight when the Brand changes must not cache what it read.
func TestSlowReadCannotUndoAChange(t *testing.T) {
	gate, entered := make(chan struct{}), make(chan struct{})
	s := &gatedStore{countingStore: countingStore{brands: map[string]db.Brand{"acme": {ID: "acme", DisplayName: "Old"}}}, gate: gate, entered: entered}
	c := New(s, time.Hour, 0, nil, nil)
	done := make(chan db.Brand)
	go func() { b, _ := c.GetBrand(context.Background(), "acme"); done <- b }()
	<-entered
	s.brands["acme"] = db.Brand{ID: "acme", DisplayName: "New"}
	c.Forget("acme")
	close(gate)
	if b := <-done; b.DisplayName != "Old" {
		t.Fatalf("the in-flight read returned %+v; want what it read", b)
	}
	s.gate = nil
	if b, err := c.GetBrand(t.Context(), "acme"); err != nil || b.DisplayName != "New" {
		t.Fatalf("after the change: %+v, %v; want New", b, err)
	}
}

type gatedStore struct {
	countingStore
	entered, gate chan struct{}
}

// GetBrand reads, then (when gated) waits before answering: the row it
// answers with predates whatever happens meanwhile.
func (s *gatedStore) GetBrand(ctx context.Context, id string) (db.Brand, error) {
	b, err := s.countingStore.GetBrand(ctx, id)
	if s.gate != nil {
		s.entered <- struct{}{}
		<-s.gate
	}
	return b, err
}
