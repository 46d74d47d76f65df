package dbtest

import (
	"testing"

	"pactd.dev/pactd/db"
)

// engines are the store engines every store-using test runs on: the
// subtest's name and a fresh database URL for db.Open ("" is SQLite in the
// data directory; PostgresURL skips or, under CI=true, fails without a
// server).
var engines = []struct {
	name string
	url  func(t testing.TB) string
}{
	{"sqlite", func(testing.TB) string { return "" }},
	{"postgres", PostgresURL},
}

// Engines runs f once per store engine, as parallel subtests named
// "sqlite" and "postgres". dbURL is the engine's fresh database for
// db.Open (or a server's database URL): "" for SQLite, whose file lives in
// the data directory the test gives, or an empty PostgreSQL database
// dropped when the subtest ends.
func Engines(t *testing.T, f func(t *testing.T, dbURL string)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			f(t, e.url(t))
		})
	}
}

// Stores runs f once per store engine, like Engines, for a test that opens
// its stores itself: each call of newStore opens a fresh, empty store on
// the engine (its own SQLite file or PostgreSQL database), closed when the
// calling test ends.
func Stores(t *testing.T, f func(t *testing.T, newStore func(t *testing.T) db.Store)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			f(t, func(t *testing.T) db.Store { return Open(t, e.url(t), t.TempDir()) })
		})
	}
}

// Open opens the store at dbURL (dataDir holds the SQLite file when dbURL
// is "") and closes it when the test ends.
func Open(t testing.TB, dbURL, dataDir string) db.Store {
	t.Helper()
	s, err := db.Open(t.Context(), dbURL, dataDir)
	if err != nil {
		t.Fatalf("open store %q: %v", dbURL, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
