package db_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
)

// feedRace is one way of numbering changes: write makes change n inside
// tx; read lists the positions a poller at after would see now.
type feedRace struct {
	write func(ctx context.Context, tx pgx.Tx, n int) error
	read  func(ctx context.Context, after int64) ([]int64, error)
}

// interleave forces the order that defeats a feed numbered by a sequence:
// transaction A writes first (and so takes the lower position) but commits
// last; B writes second and is given every chance to commit first. A
// poller reads between the steps, each time from the last position it saw,
// as pactd's replicas do. It returns the positions the poller saw and
// those that committed.
func interleave(t *testing.T, pool *pgxpool.Pool, r feedRace, from int64) (seen, committed []int64) {
	t.Helper()
	ctx := t.Context()
	last := from
	poll := func() {
		t.Helper()
		got, err := r.read(ctx, last)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		for _, p := range got {
			seen = append(seen, p)
			last = max(last, p)
		}
	}
	txA, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = txA.Rollback(context.Background()) }()
	if err := r.write(ctx, txA, 1); err != nil {
		t.Fatalf("write A: %v", err)
	}
	bDone := make(chan error, 1)
	go func() {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return r.write(ctx, tx, 2) })
		bDone <- err
	}()
	// B commits now if nothing holds it back.
	select {
	case err := <-bDone:
		if err != nil {
			t.Fatalf("write B: %v", err)
		}
		bDone <- nil
	case <-time.After(500 * time.Millisecond):
	}
	poll()
	if err := txA.Commit(ctx); err != nil {
		t.Fatalf("commit A: %v", err)
	}
	if err := <-bDone; err != nil {
		t.Fatalf("write B: %v", err)
	}
	poll()
	all, err := r.read(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	return seen, all
}

// TestFeedPositionsVisibleInCommitOrder races two change transactions on
// PostgreSQL: the feed's positions (migration 0010) must reach a poller in
// order, so it sees both changes. The control runs the same race against
// positions from a sequence, which is the pitfall the feed is built to
// avoid: there the poller skips A's change for good, so the check can fail.
func TestFeedPositionsVisibleInCommitOrder(t *testing.T) {
	ctx := t.Context()
	u := dbtest.PostgresURL(t)
	s, err := db.Open(ctx, u, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range []string{"agt_a", "agt_b"} {
		if _, err := s.CreateAgent(ctx, db.Agent{ID: id, Issuer: "https://" + id + ".example", JWKSURI: "https://" + id + ".example/j", DisplayName: id, Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	t.Run("ok/feed", func(t *testing.T) {
		start, err := s.LatestChange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		feed := feedRace{
			write: func(ctx context.Context, tx pgx.Tx, n int) error {
				_, err := tx.Exec(ctx, `UPDATE agents SET display_name = 'changed' WHERE id = $1`, []string{"", "agt_a", "agt_b"}[n])
				return err
			},
			read: func(ctx context.Context, after int64) ([]int64, error) {
				cs, err := s.ChangesFrom(ctx, after+1, 100)
				var ps []int64
				for _, c := range cs {
					ps = append(ps, c.Pos)
				}
				return ps, err
			},
		}
		seen, committed := interleave(t, pool, feed, start.Pos)
		if want := []int64{start.Pos + 1, start.Pos + 2}; !slices.Equal(committed, want) || !slices.Equal(seen, want) {
			t.Fatalf("the poller saw positions %v of %v committed; want %v in order", seen, committed, want)
		}
		// A's change took the lower position, B's the next.
		cs, _ := s.ChangesFrom(ctx, start.Pos+1, 2)
		if len(cs) != 2 || cs[0].Key != "https://agt_a.example" || cs[1].Key != "https://agt_b.example" {
			t.Fatalf("changes = %+v; want agt_a's then agt_b's", cs)
		}
	})

	t.Run("control/sequence-skips", func(t *testing.T) {
		if _, err := pool.Exec(ctx, `CREATE TABLE naive_feed (pos BIGSERIAL PRIMARY KEY, n INT NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		naive := feedRace{
			write: func(ctx context.Context, tx pgx.Tx, n int) error {
				_, err := tx.Exec(ctx, `INSERT INTO naive_feed (n) VALUES ($1)`, n)
				return err
			},
			read: func(ctx context.Context, after int64) ([]int64, error) {
				rows, err := pool.Query(ctx, `SELECT pos FROM naive_feed WHERE pos > $1 ORDER BY pos`, after)
				if err != nil {
					return nil, err
				}
				return pgx.CollectRows(rows, pgx.RowTo[int64])
			},
		}
		seen, committed := interleave(t, pool, naive, 0)
		if !slices.Equal(committed, []int64{1, 2}) || !slices.Equal(seen, []int64{2}) {
			t.Fatalf("with sequence positions the poller saw %v of %v; the race should have made it skip 1", seen, committed)
		}
	})
}

// BenchmarkConcurrentChanges is how many feed-recording changes per second
// PostgreSQL commits when they come from many connections at once
// (UpdateBrand on distinct Brands, 8 per core): each takes the feed's
// counter row until it commits, so this is the ceiling the feed puts on
// changes (revocations, admin changes) — not on grants or refreshes,
// which record nothing.
func BenchmarkConcurrentChanges(b *testing.B) {
	ctx := b.Context()
	s, err := db.Open(ctx, dbtest.PostgresURL(b), "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	var n atomic.Int64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprintf("b%d", n.Add(1))
		if _, err := s.CreateBrand(ctx, db.Brand{ID: id, DisplayName: id}); err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			if _, err := s.UpdateBrand(ctx, db.Brand{ID: id, DisplayName: id}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}
