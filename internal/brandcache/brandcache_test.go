package brandcache

import (
	"context"
	"errors"
	"testing"
	"time"

	"pactd/db"
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
	c := New(s, time.Minute, 0, func() time.Time { return now })
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
	c := New(s, time.Second, time.Minute, func() time.Time { return now })
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
