package dbtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPairPromotesTheStandby: the pair the failover lab (bench/) runs on
// works as its doc says. Through URL a row is written on the primary and
// reaches the standby; with the WAL sender held, a second row is
// acknowledged but never sent; after StopPrimary and Promote the same URL
// reaches the promoted standby, which accepts writes and has the first row
// and not the second: what asynchronous replication loses in a failover.
func TestPairPromotesTheStandby(t *testing.T) {
	if _, err := lookPG("initdb"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL's server binaries (initdb, pg_ctl, pg_basebackup) are required in CI: %v", err)
		}
		t.Skipf("PostgreSQL's server binaries are not installed: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	p, err := StartPair(ctx, PairOptions{Database: "pairtest"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	exec := func(stmt string, args ...any) error {
		c, err := pgx.Connect(ctx, p.URL("pairtest"))
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, stmt, args...)
		return err
	}
	if err := exec(`CREATE TABLE t (id INT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if err := exec(`INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	// The standby has row 1 before the sender is held.
	standby, err := pgx.Connect(ctx, p.nodeURL(p.standby, "pairtest"))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		err := standby.QueryRow(ctx, `SELECT count(*) FROM t WHERE id = 1`).Scan(&n)
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("row 1 did not reach the standby in 30 s (%v)", err)
		}
	}
	standby.Close(ctx)

	if err := p.HoldWALSender(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exec(`INSERT INTO t VALUES (2)`); err != nil {
		t.Fatalf("an asynchronous primary acknowledges a commit while its standby receives nothing: %v", err)
	}
	if err := p.StopPrimary(); err != nil {
		t.Fatal(err)
	}
	if err := p.Promote(); err != nil {
		t.Fatal(err)
	}
	if err := exec(`INSERT INTO t VALUES (3)`); err != nil {
		t.Fatalf("the promoted standby does not accept writes through URL: %v", err)
	}
	c, err := pgx.Connect(ctx, p.URL("pairtest"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT id FROM t ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 3 {
		t.Fatalf("rows on the promoted standby: %v, want [1 3] (row 2 was acknowledged while the sender was held, so it is lost)", ids)
	}
}
