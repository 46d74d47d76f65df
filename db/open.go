package db

import (
	"context"
	"path/filepath"
	"strings"
)

// SQLiteFileName is the embedded database's file name in the data directory.
const SQLiteFileName = "pactd.db"

// Open picks the engine from the database URL: empty for SQLite in dataDir,
// "sqlite:PATH" for SQLite at PATH, postgres:// or postgresql:// for
// PostgreSQL. Pending migrations are applied before it returns.
func Open(ctx context.Context, databaseURL, dataDir string) (Store, error) {
	switch {
	case databaseURL == "":
		return OpenSQLite(ctx, filepath.Join(dataDir, SQLiteFileName))
	case strings.HasPrefix(databaseURL, "sqlite:"):
		return OpenSQLite(ctx, strings.TrimPrefix(databaseURL, "sqlite:"))
	default:
		return OpenPostgres(ctx, databaseURL)
	}
}
