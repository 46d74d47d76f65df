package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/db"
)

// DumpTables returns every cell of every table of the store at dbURL ("" for
// the SQLite file in dataDir, as Open uses them), as raw bytes: BLOB and
// BYTEA cells as they are stored, text as its bytes, anything else as its
// Go formatting, for tests that look for what must never be stored (a key,
// a token) in any column of any row.
func DumpTables(t testing.TB, dbURL, dataDir string) []byte {
	t.Helper()
	ctx := context.Background()
	var out []byte
	add := func(v any) {
		switch x := v.(type) {
		case nil:
		case []byte:
			out = append(out, x...)
		case string:
			out = append(out, x...)
		default:
			out = append(out, fmt.Sprint(x)...)
		}
		out = append(out, 0)
	}
	if dbURL == "" {
		sdb, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, db.SQLiteFileName))
		if err != nil {
			t.Fatal(err)
		}
		defer sdb.Close()
		tables := names(t, func() (*sql.Rows, error) {
			return sdb.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
		})
		for _, tbl := range tables {
			rows, err := sdb.QueryContext(ctx, "SELECT * FROM "+quoteIdent(tbl))
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for _, v := range vals {
					add(v)
				}
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tables []string
	rows, err := conn.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	for _, tbl := range tables {
		rows, err := conn.Query(ctx, "SELECT * FROM "+quoteIdent(tbl))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				add(v)
			}
		}
		rows.Close()
	}
	if len(tables) < 5 {
		t.Fatalf("dumped %d tables; the schema has more", len(tables))
	}
	return out
}

func names(t testing.TB, query func() (*sql.Rows, error)) []string {
	t.Helper()
	rows, err := query()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if len(out) < 5 {
		t.Fatalf("dumped %d tables; the schema has more", len(out))
	}
	return out
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
