package changefeed_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pactd.dev/pactd/core/changefeed"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/internal/cpumeter"
	"pactd.dev/pactd/internal/testkit/testclock"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// flakyStore is a real store whose feed reads can be made to fail or to
// report another token at one position (what a failover that lost the row
// looks like).
type flakyStore struct {
	db.Store
	mu        sync.Mutex
	fail      error
	swapToken int64 // position whose token is reported changed
}

func (f *flakyStore) ChangesFrom(ctx context.Context, from int64, limit int) ([]db.Change, error) {
	f.mu.Lock()
	fail, swap := f.fail, f.swapToken
	f.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	cs, err := f.Store.ChangesFrom(ctx, from, limit)
	for i := range cs {
		if cs[i].Pos == swap {
			cs[i].Token++
		}
	}
	return cs, err
}

// recorder is the caches' side: what was applied and how often everything
// was dropped.
type recorder struct {
	mu      sync.Mutex
	applied []string
	resyncs int
}

func (r *recorder) apply(cs []db.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cs {
		r.applied = append(r.applied, fmt.Sprintf("%d %s:%s", c.Pos, c.Kind, c.Key))
	}
}

func (r *recorder) resync() { r.mu.Lock(); r.resyncs++; r.mu.Unlock() }

func (r *recorder) take() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, n := r.applied, r.resyncs
	r.applied, r.resyncs = nil, 0
	return a, n
}

type world struct {
	store *flakyStore
	feed  *changefeed.Feed
	rec   *recorder
	reg   *prometheus.Registry
	now   time.Time
}

func newWorld(t *testing.T) *world {
	t.Helper()
	s := dbtest.Open(t, "", t.TempDir())
	w := &world{store: &flakyStore{Store: s}, rec: &recorder{}, reg: prometheus.NewRegistry(), now: time.Unix(1_800_000_000, 0)}
	w.feed = changefeed.New(changefeed.Config{Store: w.store, Interval: 500 * time.Millisecond, Apply: w.rec.apply, Resync: w.rec.resync,
		Now: func() time.Time { return w.now }, Registerer: w.reg})
	return w
}

func (w *world) brand(t *testing.T, id string) {
	t.Helper()
	if _, err := w.store.CreateBrand(t.Context(), db.Brand{ID: id, DisplayName: id}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) poll(t *testing.T) {
	t.Helper()
	if err := w.feed.Poll(t.Context()); err != nil {
		t.Fatalf("Poll: %v", err)
	}
}

const forever = time.Duration(1<<63 - 1)

func TestFeedAppliesChangesInOrder(t *testing.T) {
	w := newWorld(t)
	w.brand(t, "before") // made before the replica started: not replayed
	if got := w.feed.MaxAge(w.now); got != w.feed.Bound() {
		t.Fatalf("MaxAge before the first poll = %v, want the bound %v", got, w.feed.Bound())
	}
	w.poll(t)
	if applied, resyncs := w.rec.take(); len(applied) != 0 || resyncs != 1 {
		t.Fatalf("first poll applied %v with %d resyncs; want nothing applied, caches dropped once", applied, resyncs)
	}
	w.brand(t, "a")
	w.brand(t, "b")
	if _, err := w.store.UpdateBrand(t.Context(), db.Brand{ID: "a", DisplayName: "A"}); err != nil {
		t.Fatal(err)
	}
	w.poll(t)
	applied, resyncs := w.rec.take()
	if want := []string{"2 brands:a", "3 brands:b", "4 brands:a"}; !slices.Equal(applied, want) || resyncs != 0 {
		t.Fatalf("applied %q with %d resyncs; want %q", applied, resyncs, want)
	}
	w.poll(t)
	if applied, _ := w.rec.take(); len(applied) != 0 {
		t.Fatalf("a poll with nothing new applied %q", applied)
	}
	if got := metric(t, w.reg, "pactd_change_feed_position"); got != 4 {
		t.Fatalf("pactd_change_feed_position = %v, want 4", got)
	}
	if got := w.feed.Position(); got != 4 {
		t.Fatalf("Position = %d, want 4", got)
	}
}

// metric is the value of a gauge or counter the registry holds.
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// The bound: cached state may be used at any age while the last complete
// poll started less than Bound ago, and only when younger than Bound after.
func TestFeedFreshness(t *testing.T) {
	w := newWorld(t)
	if w.feed.Bound() != time.Second {
		t.Fatalf("Bound = %v, want twice the 500 ms interval", w.feed.Bound())
	}
	w.poll(t)
	t0 := w.now
	for _, c := range []struct {
		after time.Duration
		want  time.Duration
	}{{0, forever}, {999 * time.Millisecond, forever}, {time.Second, time.Second}, {time.Hour, time.Second}} {
		if got := w.feed.MaxAge(t0.Add(c.after)); got != c.want {
			t.Errorf("MaxAge %v after a poll = %v, want %v", c.after, got, c.want)
		}
	}
	if !w.feed.Fresh(t0.Add(999*time.Millisecond)) || w.feed.Fresh(t0.Add(time.Second)) {
		t.Errorf("Fresh disagrees with MaxAge at the bound")
	}
	if n := metric(t, w.reg, "pactd_change_feed_stale_lookups_total"); n != 2 {
		t.Errorf("stale lookups counted %v, want the 2 made past the bound", n)
	}
	// A failed poll does not refresh it.
	w.now = t0.Add(900 * time.Millisecond)
	w.store.mu.Lock()
	w.store.fail = errors.New("connection refused")
	w.store.mu.Unlock()
	if err := w.feed.Poll(t.Context()); err == nil {
		t.Fatal("Poll with a failing store returned nil")
	}
	if got := w.feed.MaxAge(t0.Add(time.Second)); got != time.Second {
		t.Fatalf("MaxAge after a failed poll = %v; the failure must not refresh the feed", got)
	}
	var nilFeed *changefeed.Feed
	if got := nilFeed.MaxAge(t0); got != forever {
		t.Fatalf("a nil feed's MaxAge = %v, want no limit", got)
	}
}

// After a failed poll the replica cannot know what it missed (nor whether
// it now reads a promoted standby): it drops every cache and goes on from
// the newest change, without replaying.
func TestFeedResyncsAfterAFailedPoll(t *testing.T) {
	w := newWorld(t)
	w.poll(t)
	w.rec.take()
	w.store.mu.Lock()
	w.store.fail = errors.New("connection refused")
	w.store.mu.Unlock()
	if err := w.feed.Poll(t.Context()); err == nil {
		t.Fatal("Poll with a failing store returned nil")
	}
	w.brand(t, "during")
	w.store.mu.Lock()
	w.store.fail = nil
	w.store.mu.Unlock()
	w.poll(t)
	if applied, resyncs := w.rec.take(); len(applied) != 0 || resyncs != 1 {
		t.Fatalf("after the failure: applied %q, %d resyncs; want every cache dropped once", applied, resyncs)
	}
	if e, r := metric(t, w.reg, "pactd_change_feed_poll_errors_total"), metric(t, w.reg, "pactd_change_feed_resyncs_total"); e != 1 || r != 1 {
		t.Fatalf("poll errors %v, resyncs %v; want 1 and 1 (the first poll's start is not a resync)", e, r)
	}
	w.brand(t, "after")
	w.poll(t)
	if applied, resyncs := w.rec.take(); !slices.Equal(applied, []string{"2 brands:after"}) || resyncs != 0 {
		t.Fatalf("then: applied %q, %d resyncs; want the new change alone", applied, resyncs)
	}
}

// The position a replica applied must still be the row it applied: pruned
// (the replica lagged past the retention) or replaced (a failover lost it)
// means dropping every cache.
func TestFeedResyncsWhenItsPositionIsGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, w *world, pos int64)
	}{
		{"pruned", func(t *testing.T, w *world, _ int64) {
			w.brand(t, "x1")
			w.brand(t, "x2")
			if n, err := w.store.PruneChanges(t.Context(), time.Now().Add(time.Hour)); err != nil || n < 2 {
				t.Fatalf("PruneChanges = %d, %v", n, err)
			}
		}},
		{"replaced", func(t *testing.T, w *world, pos int64) {
			w.store.mu.Lock()
			w.store.swapToken = pos
			w.store.mu.Unlock()
			w.brand(t, "x1")
			w.brand(t, "x2")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.brand(t, "a")
			w.poll(t)
			w.brand(t, "b")
			w.poll(t)
			w.rec.take()
			tc.break_(t, w, 2)
			w.poll(t)
			if applied, resyncs := w.rec.take(); len(applied) != 0 || resyncs != 1 {
				t.Fatalf("applied %q, %d resyncs; want every cache dropped once", applied, resyncs)
			}
			if got := metric(t, w.reg, "pactd_change_feed_position"); got != 4 {
				t.Fatalf("position after the resync = %v, want the newest, 4", got)
			}
			w.brand(t, "c")
			w.poll(t)
			if applied, resyncs := w.rec.take(); !slices.Equal(applied, []string{"5 brands:c"}) || resyncs != 0 {
				t.Fatalf("then: applied %q, %d resyncs", applied, resyncs)
			}
		})
	}
}

// More changes than one read takes: a poll reads on until the head.
func TestFeedReadsUntilTheHead(t *testing.T) {
	w := newWorld(t)
	w.poll(t)
	w.rec.take()
	const n = 1234
	for i := range n {
		w.brand(t, fmt.Sprintf("b%04d", i))
	}
	w.poll(t)
	applied, resyncs := w.rec.take()
	if len(applied) != n || resyncs != 0 || applied[0] != "1 brands:b0000" || applied[n-1] != fmt.Sprintf("%d brands:b%04d", n, n-1) {
		t.Fatalf("applied %d changes (first %q), %d resyncs; want all %d in order", len(applied), applied[:min(1, len(applied))], resyncs, n)
	}
}

// Run polls on its interval and at once when woken.
func TestFeedRunWakes(t *testing.T) {
	s := dbtest.Open(t, "", t.TempDir())
	rec := &recorder{}
	f := changefeed.New(changefeed.Config{Store: s, Interval: changefeed.MaxInterval, Apply: rec.apply, Resync: rec.resync})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, func() bool { _, n := rec.take(); return n == 1 }, "the first poll")
	if _, err := s.CreateBrand(t.Context(), db.Brand{ID: "woken", DisplayName: "W"}); err != nil {
		t.Fatal(err)
	}
	f.Wake()
	var got []string
	waitFor(t, func() bool { a, _ := rec.take(); got = append(got, a...); return len(got) > 0 }, "a poll after Wake (the interval is 10 s)")
	if !slices.Equal(got, []string{"1 brands:woken"}) {
		t.Fatalf("applied %q after Wake", got)
	}
}

// Run polls again each time its clock reaches the next interval: the
// ticker is the clock's, so a test clock's Advance is a poll.
func TestFeedRunPollsOnItsClock(t *testing.T) {
	s := dbtest.Open(t, "", t.TempDir())
	rec := &recorder{}
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	f := changefeed.New(changefeed.Config{Store: s, Interval: time.Second, Apply: rec.apply, Resync: rec.resync,
		Now: clk.Now, NewTicker: clk.NewTicker})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, func() bool { _, n := rec.take(); return n == 1 }, "the first poll")
	if _, err := s.CreateBrand(t.Context(), db.Brand{ID: "ticked", DisplayName: "T"}); err != nil {
		t.Fatal(err)
	}
	if err := clk.WaitForTicker(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	var got []string
	waitFor(t, func() bool { a, _ := rec.take(); got = append(got, a...); return len(got) > 0 }, "a poll after one interval of the test clock")
	if !slices.Equal(got, []string{"1 brands:ticked"}) {
		t.Fatalf("applied %q after one interval", got)
	}
	if !f.Fresh(clk.Now()) {
		t.Fatal("the feed is not fresh at the clock's time after a poll on its tick")
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkPollNothingNew is one poll of a feed with nothing new on
// PostgreSQL, what every replica pays twice a second however idle:
// go-cpu-ns/op for pactd, pg-cpu-ns/op for the database.
func BenchmarkPollNothingNew(b *testing.B) {
	u := dbtest.PostgresURL(b)
	s := dbtest.Open(b, u, "")
	if _, err := s.CreateBrand(b.Context(), db.Brand{ID: "acme", DisplayName: "Acme"}); err != nil {
		b.Fatal(err)
	}
	f := changefeed.New(changefeed.Config{Store: s, Apply: func([]db.Change) {}, Resync: func() {}})
	if err := f.Poll(b.Context()); err != nil {
		b.Fatal(err)
	}
	m := cpumeter.Start(strings.TrimPrefix(mustPath(b, u), "/"))
	for b.Loop() {
		if err := f.Poll(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	m.Report(b.N, b.ReportMetric)
}

func mustPath(b *testing.B, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	return u.Path
}
