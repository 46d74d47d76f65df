package db_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestContractSQLite(t *testing.T) {
	dbtest.Run(t, func(t *testing.T) db.Store { return dbtest.Open(t, "", t.TempDir()) })
}

func TestContractPostgres(t *testing.T) {
	dbtest.Run(t, func(t *testing.T) db.Store { return dbtest.Open(t, dbtest.PostgresURL(t), "") })
}

// TestMigrationsDownUpWithData moves each engine's schema down to zero and
// back up with a row in every table, and checks the bookkeeping both ways
// and that the rows survive: from the latest version, each step further
// down keeps the rows of every table it does not drop, and going back up to
// the latest from there keeps them too, with every table back.
func TestMigrationsDownUpWithData(t *testing.T) {
	ctx := t.Context()
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.db")
		s, err := db.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		dbtest.SeedEveryTable(t, s)
		_ = s.Close()
		sdb, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer sdb.Close()
		checkRoundTrip(t, migrationVersions(t, "sqlite"), func(v int64) error { return db.MigrateSQLiteTo(ctx, sdb, v) },
			func() (map[string]int64, error) {
				return tableRows(func(q string) (rowScanner, error) { return sdb.QueryContext(ctx, q) },
					"SELECT name FROM sqlite_master WHERE type='table' AND name NOT IN ('schema_migrations', 'sqlite_sequence')")
			})
	})
	t.Run("postgres", func(t *testing.T) {
		u := dbtest.PostgresURL(t)
		s, err := db.Open(ctx, u, "")
		if err != nil {
			t.Fatal(err)
		}
		dbtest.SeedEveryTable(t, s)
		_ = s.Close()
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		checkRoundTrip(t, migrationVersions(t, "postgres"), func(v int64) error { return db.MigratePostgresTo(ctx, pool, v) },
			func() (map[string]int64, error) {
				return tableRows(func(q string) (rowScanner, error) { r, err := pool.Query(ctx, q); return pgRows{r}, err },
					"SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'")
			})
	})
}

// migrationVersions are the versions of an engine's migrations, in order.
func migrationVersions(t *testing.T, engine string) []int64 {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("migrations", engine))
	if err != nil {
		t.Fatal(err)
	}
	var vs []int64
	for _, e := range entries {
		n, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", e.Name(), err)
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	if len(vs) < 2 {
		t.Fatalf("found %d %s migrations; the walk is broken", len(vs), engine)
	}
	return vs
}

// rowScanner is what tableRows reads: database/sql's and pgx's rows.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Close() error
	Err() error
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Close() error { r.Rows.Close(); return nil }

// tableRows is the row count of every table the listing query names.
func tableRows(query func(string) (rowScanner, error), listTables string) (map[string]int64, error) {
	rs, err := query(listTables)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rs.Next() {
		var name string
		if err := rs.Scan(&name); err != nil {
			return nil, err
		}
		tables = append(tables, name)
	}
	if err := errors.Join(rs.Err(), rs.Close()); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, table := range tables {
		rs, err := query("SELECT count(*) FROM " + table)
		if err != nil {
			return nil, err
		}
		var n int64
		if !rs.Next() {
			return nil, fmt.Errorf("count %s: no row", table)
		}
		if err := rs.Scan(&n); err != nil {
			return nil, err
		}
		if err := errors.Join(rs.Err(), rs.Close()); err != nil {
			return nil, err
		}
		out[table] = n
	}
	return out, nil
}

func checkRoundTrip(t *testing.T, versions []int64, migrateTo func(int64) error, rows func() (map[string]int64, error)) {
	t.Helper()
	before, err := rows()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := before["agents"]; !ok {
		t.Fatalf("tables at the latest version: %v; no agents table, so the listing is broken", before)
	}
	for table, n := range before {
		if n == 0 {
			t.Fatalf("table %s is empty after dbtest.SeedEveryTable: seed it, so its rows are checked", table)
		}
	}
	// Every version below the latest, 0 included: down to it, then up again.
	for i := len(versions) - 2; i >= -1; i-- {
		v := int64(0)
		if i >= 0 {
			v = versions[i]
		}
		if err := migrateTo(v); err != nil {
			t.Fatalf("migrate down to %d: %v", v, err)
		}
		down, err := rows()
		if err != nil {
			t.Fatal(err)
		}
		if v == 0 && len(down) != 0 {
			t.Fatalf("after down to 0: tables %v remain; want none", down)
		}
		for table, n := range down {
			if want, ok := before[table]; ok && n != want {
				t.Errorf("down to %d: %s has %d rows; want the %d it had", v, table, n, want)
			}
		}
		if err := migrateTo(-1); err != nil {
			t.Fatalf("migrate up again from %d: %v", v, err)
		}
		up, err := rows()
		if err != nil {
			t.Fatal(err)
		}
		for table, want := range before {
			n, ok := up[table]
			switch _, kept := down[table]; {
			case !ok:
				t.Errorf("up from %d: table %s is missing", v, table)
			case kept && n != want:
				t.Errorf("up from %d: %s has %d rows; want the %d it kept", v, table, n, want)
			}
		}
		if len(up) != len(before) {
			t.Errorf("up from %d: tables %v; want those of the start, %v", v, up, before)
		}
	}
}
