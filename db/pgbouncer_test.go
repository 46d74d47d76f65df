package db_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
)

// The whole store contract through PgBouncer in transaction pooling mode,
// with the store told so (db.BehindTransactionPooler): every query, the
// transactions, the guarded updates, the concurrency cases and the change
// feed's ordering hold there too.
func TestContractPostgresThroughPgBouncer(t *testing.T) {
	dbtest.Run(t, func(t *testing.T) db.Store {
		s, err := db.Open(t.Context(), dbtest.PgBouncerURL(t, dbtest.PostgresURL(t)), "", db.BehindTransactionPooler())
		if err != nil {
			t.Fatalf("open postgres through pgbouncer: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// Why the option exists: pgx's default mode prepares named statements on
// the server, and behind a transaction pooler another client's session
// finds them already there. With one more client connection than the
// pooler has server connections, two of them must share one, so the same
// statement run on each of them fails with SQLSTATE 42P05; in the mode
// db.BehindTransactionPooler picks, it runs on all of them.
func TestTransactionPoolerNeedsNoServerSidePreparedStatements(t *testing.T) {
	ctx := t.Context()
	u := dbtest.PgBouncerURL(t, dbtest.PostgresURL(t))
	run := func(mode pgx.QueryExecMode) error {
		cfg, err := pgx.ParseConfig(u)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = mode
		var errs []error
		for range dbtest.PgBouncerPoolSize + 1 {
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			var n int
			errs = append(errs, c.QueryRow(ctx, "SELECT $1::int + 1", 41).Scan(&n))
		}
		return errors.Join(errs...)
	}
	err := run(pgx.QueryExecModeCacheStatement)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42P05" {
		t.Fatalf("control/default-mode: err = %v; want SQLSTATE 42P05 (prepared statement already exists)", err)
	}
	if err := run(pgx.QueryExecModeCacheDescribe); err != nil {
		t.Fatalf("ok/cache-describe: %v", err)
	}
}
