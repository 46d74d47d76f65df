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
func Open(ctx context.Context, databaseURL, dataDir string, opts ...Option) (Store, error) {
	switch {
	case databaseURL == "":
		return OpenSQLite(ctx, filepath.Join(dataDir, SQLiteFileName))
	case strings.HasPrefix(databaseURL, "sqlite:"):
		return OpenSQLite(ctx, strings.TrimPrefix(databaseURL, "sqlite:"))
	default:
		return OpenPostgres(ctx, databaseURL, opts...)
	}
}

// Option adjusts how a PostgreSQL store connects.
type Option func(*pgOptions)

type pgOptions struct {
	transactionPooler bool
}

// BehindTransactionPooler says the PostgreSQL URL reaches the server
// through a transaction pooler (PgBouncer with pool_mode=transaction):
// consecutive statements of one connection may then run on different
// server connections, so no statement may rely on a server-side prepared
// statement. pgx then describes each statement once with the unnamed
// statement and caches the description on its side (its cache_describe
// mode: one round trip per statement, binary formats), unless the URL's
// default_query_exec_mode chose a mode other than the statement cache.
func BehindTransactionPooler() Option {
	return func(o *pgOptions) { o.transactionPooler = true }
}
