package server_test

import (
	"testing"
	"time"

	"pactd.dev/pactd/core/changefeed"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/server"
)

// The server's loops tick on the clock it is given: on a test clock the
// replica heartbeat records the clock's time at start and again when the
// clock passes its interval, and the hourly purge deletes the change-feed
// rows past their retention when the clock passes the hour. The server
// uses the store it is given and leaves it open when it stops.
func TestLoopsRunOnTheInjectedClock(t *testing.T) {
	dir := t.TempDir()
	store := dbtest.Open(t, "", dir)
	t0 := time.Now().Truncate(time.Second)
	clk := testclock.New(t0)
	inst := startWith(t, testConfig(t, "", dir), server.Deps{Clock: clk, Store: store})

	seenAt := func(at time.Time) func() bool {
		return func() bool {
			list, err := store.ListReplicas(t.Context(), at, 10)
			if err != nil {
				t.Fatal(err)
			}
			return len(list) == 1 && list[0].SeenTime.Equal(at) && list[0].StartTime.Equal(t0)
		}
	}
	waitFor(t, 10*time.Second, "the heartbeat at start, at the clock's time", seenAt(t0))
	if err := clk.WaitForTicker(t.Context(), server.HeartbeatEvery); err != nil {
		t.Fatal(err)
	}
	clk.Advance(server.HeartbeatEvery)
	waitFor(t, 10*time.Second, "a heartbeat one interval of the clock later", seenAt(t0.Add(server.HeartbeatEvery)))

	// Building the server wrote change-feed rows (its signing keys); two
	// more, so that the purge has old rows to delete besides the newest.
	for _, id := range []string{"acme", "globex"} {
		if _, err := store.CreateBrand(t.Context(), db.Brand{ID: id, DisplayName: id}); err != nil {
			t.Fatal(err)
		}
	}
	rows := func() int {
		cs, err := store.ChangesFrom(t.Context(), 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return len(cs)
	}
	if n := rows(); n < 3 {
		t.Fatalf("change-feed rows before the purge: %d, want at least 3", n)
	}
	if err := clk.WaitForTicker(t.Context(), server.PurgeEvery); err != nil {
		t.Fatal(err)
	}
	// Past the hour and past the feed's retention: the rows written at the
	// start (on the database's clock) are old enough at the purge's time.
	clk.Advance(server.PurgeEvery + changefeed.Retention)
	waitFor(t, 10*time.Second, "the purge to keep only the newest change-feed row", func() bool { return rows() == 1 })

	inst.stop()
	if err := store.Ping(t.Context()); err != nil {
		t.Fatalf("the given store after the server stopped: %v, want it still open", err)
	}
}
