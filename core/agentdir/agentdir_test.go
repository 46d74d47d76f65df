package agentdir

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/core/changefeed"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/token/pajwt"
)

// slowStore answers from a fixed row; when gate is set it waits on it
// before answering, so a change can land while a read is in flight.
type slowStore struct {
	row     db.Agent
	calls   int
	entered chan struct{}
	gate    chan struct{}
}

func (s *slowStore) GetAgentByIssuer(_ context.Context, issuer string) (db.Agent, error) {
	s.calls++
	if s.gate != nil {
		s.entered <- struct{}{}
		<-s.gate
	}
	if issuer != s.row.Issuer {
		return db.Agent{}, db.ErrNotFound
	}
	return s.row, nil
}

func TestLookupCachesFoundAndUnknown(t *testing.T) {
	s := &slowStore{row: db.Agent{ID: "agt_1", Issuer: "https://pa.example", Enabled: true}}
	d := New(s, "https://provider.example/a2a", time.Minute, 0, nil, nil)
	for range 3 {
		a, err := d.Lookup(t.Context(), "https://pa.example")
		if err != nil || a.ID != "agt_1" || a.Audience != "https://provider.example/a2a" {
			t.Fatalf("Lookup = %+v, %v", a, err)
		}
		if _, err := d.Lookup(t.Context(), strings.Repeat("x", 2000)); !errors.Is(err, pajwt.ErrUnknownAgent) {
			t.Fatalf("Lookup(unknown) err = %v", err)
		}
	}
	if s.calls != 2 {
		t.Fatalf("store read %d times, want 2", s.calls)
	}
}

// TestSlowReadCannotUndoAChange: a lookup that read the enabled row before
// the agent was disabled must not cache that stale row.
func TestSlowReadCannotUndoAChange(t *testing.T) {
	s := &slowStore{row: db.Agent{ID: "agt_1", Issuer: "https://pa.example", Enabled: true}, entered: make(chan struct{}), gate: make(chan struct{})}
	d := New(s, "aud", time.Minute, 0, nil, nil)
	done := make(chan pajwt.Agent)
	go func() {
		a, _ := d.Lookup(context.Background(), "https://pa.example")
		done <- a
	}()
	<-s.entered // the read is in flight (blocked on the gate); disable the agent
	disabled := s.row
	disabled.Enabled = false
	d.Changed(disabled, false)
	close(s.gate)
	if a := <-done; !a.Enabled {
		t.Fatal("the in-flight read should have returned what it read (enabled)")
	}
	a, err := d.Lookup(t.Context(), "https://pa.example")
	if err != nil || a.Enabled {
		t.Fatalf("after the disable, Lookup = %+v, %v; want the disabled agent", a, err)
	}
}

// staleFeed is a change feed that is stale: cached state may be at most
// bound old.
type staleFeed struct{ bound time.Duration }

func (f staleFeed) MaxAge(time.Time) time.Duration { return f.bound }

// With a stale feed, an agent read longer than the bound ago is read again
// (within the TTL), so a disable another replica made is seen within the
// bound even when its feed row was not applied.
func TestStaleFeedLimitsAge(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &slowStore{row: db.Agent{ID: "agt_1", Issuer: "https://pa.example", Enabled: true}}
	d := New(s, "aud", time.Hour, 0, staleFeed{bound: time.Second}, func() time.Time { return now })
	if a, err := d.Lookup(t.Context(), "https://pa.example"); err != nil || !a.Enabled {
		t.Fatalf("Lookup = %+v, %v", a, err)
	}
	s.row.Enabled = false // changed elsewhere; no Forget reaches this replica
	now = now.Add(999 * time.Millisecond)
	if a, _ := d.Lookup(t.Context(), "https://pa.example"); !a.Enabled || s.calls != 1 {
		t.Fatalf("within the bound: %+v after %d reads; want the cached state, 1 read", a, s.calls)
	}
	now = now.Add(time.Millisecond)
	if a, _ := d.Lookup(t.Context(), "https://pa.example"); a.Enabled || s.calls != 2 {
		t.Fatalf("at the bound: %+v after %d reads; want the store's state (disabled), 2 reads", a, s.calls)
	}
}

// emptyFeed is a change feed store with nothing in it.
type emptyFeed struct{}

func (emptyFeed) LatestChange(context.Context) (db.Change, error) { return db.Change{}, db.ErrNotFound }
func (emptyFeed) ChangesFrom(context.Context, int64, int) ([]db.Change, error) {
	return nil, nil
}

// BenchmarkLookupHit is a cached agent's lookup, the work each
// verification does for its PA, without a change feed and with a fresh
// one (pactd's wiring): the feed's freshness check must cost nothing
// measurable on the hot path.
func BenchmarkLookupHit(b *testing.B) {
	s := &slowStore{row: db.Agent{ID: "agt_1", Issuer: "https://pa.example", Enabled: true}}
	feed := changefeed.New(changefeed.Config{Store: emptyFeed{}, Interval: time.Hour, Apply: func([]db.Change) {}, Resync: func() {}})
	if err := feed.Poll(b.Context()); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		feed Feed
	}{{"no-feed", nil}, {"fresh-feed", feed}} {
		b.Run(tc.name, func(b *testing.B) {
			d := New(s, "aud", time.Hour, 0, tc.feed, nil)
			if _, err := d.Lookup(b.Context(), "https://pa.example"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Lookup(b.Context(), "https://pa.example"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
