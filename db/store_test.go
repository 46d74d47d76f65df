package db_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite"

	"pactd/db"
	"pactd/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestContractSQLite(t *testing.T) {
	dbtest.Run(t, func(t *testing.T) db.Store {
		s, err := db.Open(t.Context(), "", t.TempDir())
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestContractPostgres(t *testing.T) {
	dbtest.Run(t, func(t *testing.T) db.Store {
		s, err := db.Open(t.Context(), dbtest.PostgresURL(t), "")
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestMigrationsDownUpWithData moves each engine's schema down to zero and
// back up with rows present, and checks the bookkeeping both ways.
func TestMigrationsDownUpWithData(t *testing.T) {
	ctx := t.Context()
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.db")
		s, err := db.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		seed(t, s)
		_ = s.Close()
		sdb, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer sdb.Close()
		checkRoundTrip(t, ctx, func(v int64) error { return db.MigrateSQLiteTo(ctx, sdb, v) },
			func() (int64, error) {
				return countTables(ctx, sdb.QueryRowContext, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='agents'")
			})
	})
	t.Run("postgres", func(t *testing.T) {
		u := dbtest.PostgresURL(t)
		s, err := db.Open(ctx, u, "")
		if err != nil {
			t.Fatal(err)
		}
		seed(t, s)
		_ = s.Close()
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		checkRoundTrip(t, ctx, func(v int64) error { return db.MigratePostgresTo(ctx, pool, v) },
			func() (int64, error) {
				var n int64
				err := pool.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name='agents'").Scan(&n)
				return n, err
			})
	})
}

func seed(t *testing.T, s db.Store) {
	t.Helper()
	if _, err := s.CreateAgent(t.Context(), db.Agent{ID: "agt_1", Issuer: "https://pa.example", JWKSURI: "https://pa.example/j", DisplayName: "PA", Enabled: true}); err != nil {
		t.Fatal(err)
	}
}

func countTables(ctx context.Context, q func(context.Context, string, ...any) *sql.Row, query string) (int64, error) {
	var n int64
	err := q(ctx, query).Scan(&n)
	return n, err
}

func checkRoundTrip(t *testing.T, ctx context.Context, migrateTo func(int64) error, agentsTables func() (int64, error)) {
	t.Helper()
	if err := migrateTo(0); err != nil {
		t.Fatalf("migrate down to 0: %v", err)
	}
	if n, err := agentsTables(); err != nil || n != 0 {
		t.Fatalf("after down: agents tables = %d, %v; want 0", n, err)
	}
	if err := migrateTo(-1); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	if n, err := agentsTables(); err != nil || n != 1 {
		t.Fatalf("after up: agents tables = %d, %v; want 1", n, err)
	}
	_ = ctx
}
