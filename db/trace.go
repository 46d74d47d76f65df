package db

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracer makes one client span per SQL statement, a child of the caller's
// span (the RPC's), named after the sqlc query ("-- name: GetAgent :one").
// Without a configured tracer provider it is a no-op.
var tracer = otel.Tracer("pactd.dev/pactd/db")

// queryName is the sqlc name of a statement, or "query".
func queryName(sql string) string {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(sql), "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok && len(name) <= 64 {
			return name
		}
	}
	return "query"
}

func startSQLSpan(ctx context.Context, system, sql string) (context.Context, trace.Span) {
	// The statement text is the query's (parameters are never recorded).
	return tracer.Start(ctx, "sql "+queryName(sql), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", system), attribute.String("db.query.summary", queryName(sql))))
}

func endSQLSpan(span trace.Span, err error) {
	if err != nil && err != sql.ErrNoRows && err != pgx.ErrNoRows {
		span.SetStatus(codes.Error, "query failed")
	}
	span.End()
}

// StatementCount is how many times one statement ran.
type StatementCount struct {
	// Name is the sqlc query name ("GetGrant"), or "query" for statements
	// that have none (migrations, LISTEN, pings).
	Name string
	// N counts its executions since the store was opened.
	N uint64
}

// stmtStats counts statements by name: the number of names is bounded by
// the queries the binary holds.
type stmtStats struct{ m sync.Map } // name -> *atomic.Uint64

func (s *stmtStats) add(sql string) {
	name := queryName(sql)
	c, ok := s.m.Load(name)
	if !ok {
		c, _ = s.m.LoadOrStore(name, new(atomic.Uint64))
	}
	c.(*atomic.Uint64).Add(1)
}

func (s *stmtStats) counts() []StatementCount {
	var out []StatementCount
	s.m.Range(func(k, v any) bool {
		out = append(out, StatementCount{Name: k.(string), N: v.(*atomic.Uint64).Load()})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// pgTracer is pgx's hook for PostgreSQL: every query, in a transaction or
// not, gets a span and is counted.
type pgTracer struct{ stats *stmtStats }

type pgSpanKey struct{}

// TraceQueryStart implements pgx.QueryTracer.
func (t pgTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	t.stats.add(data.SQL)
	ctx, span := startSQLSpan(ctx, "postgresql", data.SQL)
	return context.WithValue(ctx, pgSpanKey{}, span)
}

// TraceQueryEnd implements pgx.QueryTracer.
func (pgTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	if span, ok := ctx.Value(pgSpanKey{}).(trace.Span); ok {
		endSQLSpan(span, data.Err)
	}
}

// tracedDB wraps SQLite's *sql.DB for sqlc's queries outside
// transactions: a span each, and a count.
type tracedDB struct {
	db    *sql.DB
	stats *stmtStats
}

func (t tracedDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	t.stats.add(q)
	ctx, span := startSQLSpan(ctx, "sqlite", q)
	r, err := t.db.ExecContext(ctx, q, args...)
	endSQLSpan(span, err)
	return r, err
}

func (t tracedDB) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return t.db.PrepareContext(ctx, q)
}

func (t tracedDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	t.stats.add(q)
	ctx, span := startSQLSpan(ctx, "sqlite", q)
	r, err := t.db.QueryContext(ctx, q, args...)
	endSQLSpan(span, err)
	return r, err
}

func (t tracedDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	t.stats.add(q)
	ctx, span := startSQLSpan(ctx, "sqlite", q)
	r := t.db.QueryRowContext(ctx, q, args...)
	endSQLSpan(span, r.Err())
	return r
}
