package db

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations
var migrationFS embed.FS

// migration is one numbered schema change with its up and down SQL.
type migration struct {
	version  int64
	name     string
	up, down string
}

// loadMigrations reads the goose-annotated files of one engine, in order.
func loadMigrations(engine string) ([]migration, error) {
	dir := path.Join("migrations", engine)
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", e.Name())
		}
		body, err := fs.ReadFile(migrationFS, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		up, down, err := splitMigration(string(body))
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		out = append(out, migration{version: v, name: e.Name(), up: up, down: down})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share a number", out[i-1].name, out[i].name)
		}
	}
	return out, nil
}

func splitMigration(body string) (up, down string, err error) {
	const upMark, downMark = "-- +goose Up", "-- +goose Down"
	ui := strings.Index(body, upMark)
	di := strings.Index(body, downMark)
	if ui < 0 || di < ui {
		return "", "", fmt.Errorf("needs %q followed by %q", upMark, downMark)
	}
	return body[ui+len(upMark) : di], body[di+len(downMark):], nil
}

// LatestVersion is the schema version this build migrates to.
func LatestVersion(engine string) (int64, error) {
	ms, err := loadMigrations(engine)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	return ms[len(ms)-1].version, nil
}

const migrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT NOT NULL PRIMARY KEY, applied_time BIGINT NOT NULL)`

func migrateSQLite(ctx context.Context, sdb *sql.DB) error {
	return MigrateSQLiteTo(ctx, sdb, -1)
}

// MigrateSQLiteTo moves an SQLite database to the given schema version (-1
// for the latest), up or down, one transaction per migration.
func MigrateSQLiteTo(ctx context.Context, sdb *sql.DB, target int64) error {
	ms, err := loadMigrations("sqlite")
	if err != nil {
		return err
	}
	if _, err := sdb.ExecContext(ctx, migrationsTable); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	if target < 0 && len(ms) > 0 {
		target = ms[len(ms)-1].version
	}
	for _, step := range planSteps(ms, target) {
		if err := func() error {
			tx, err := sdb.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback() }()
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, step.m.version).Scan(&n); err != nil {
				return err
			}
			if (n == 1) == step.up { // already in the wanted state
				return nil
			}
			sqlText, record, args := step.statements("?")
			if _, err := tx.ExecContext(ctx, sqlText); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, record, args...); err != nil {
				return err
			}
			return tx.Commit()
		}(); err != nil {
			return fmt.Errorf("migrate sqlite %s: %w", step.m.name, err)
		}
	}
	return nil
}

func migratePostgres(ctx context.Context, pool *pgxpool.Pool) error {
	return MigratePostgresTo(ctx, pool, -1)
}

// migrationLockKey is the advisory lock that serializes migrations across
// replicas.
const migrationLockKey = 0x70616374 // "pact"

// MigratePostgresTo moves a PostgreSQL database to the given schema version
// (-1 for the latest), each step in a transaction holding an advisory lock.
func MigratePostgresTo(ctx context.Context, pool *pgxpool.Pool, target int64) error {
	ms, err := loadMigrations("postgres")
	if err != nil {
		return err
	}
	if target < 0 && len(ms) > 0 {
		target = ms[len(ms)-1].version
	}
	for _, step := range planSteps(ms, target) {
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockKey); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, migrationsTable); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, step.m.version).Scan(&n); err != nil {
				return err
			}
			if (n == 1) == step.up {
				return nil
			}
			sqlText, record, args := step.statements("$")
			if _, err := tx.Exec(ctx, sqlText); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, record, args...)
			return err
		}); err != nil {
			return fmt.Errorf("migrate postgres %s: %w", step.m.name, err)
		}
	}
	return nil
}

// step is one migration applied up or down.
type step struct {
	m  migration
	up bool
}

// planSteps lists the steps that lead to target: every migration up to it
// upward, then every later one downward, newest first. Each step is skipped
// at run time when the database already has it in the wanted state.
func planSteps(ms []migration, target int64) []step {
	var out []step
	for _, m := range ms {
		if m.version <= target {
			out = append(out, step{m: m, up: true})
		}
	}
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].version > target {
			out = append(out, step{m: ms[i], up: false})
		}
	}
	return out
}

// statements returns the SQL of the step and the bookkeeping statement with
// its arguments; ph is the engine's placeholder style ("?" or "$").
func (s step) statements(ph string) (string, string, []any) {
	p := func(i int) string {
		if ph == "?" {
			return "?"
		}
		return "$" + strconv.Itoa(i)
	}
	if s.up {
		return s.m.up, "INSERT INTO schema_migrations (version, applied_time) VALUES (" + p(1) + ", " + p(2) + ")",
			[]any{s.m.version, time.Now().Unix()}
	}
	return s.m.down, "DELETE FROM schema_migrations WHERE version = " + p(1), []any{s.m.version}
}
