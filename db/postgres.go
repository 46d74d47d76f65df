package db

import (
	"time"

	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"pactd.dev/pactd/db/internal/pgq"
)

// pgStore is the PostgreSQL engine: a pgx pool shared by any number of
// stateless pactd replicas.
type pgStore struct {
	pool  *pgxpool.Pool
	q     *pgq.Queries
	stats *stmtStats
	// hostStore is the HDTP host wire (hdtp_host.go), over the same
	// queries.
	hostStore
}

// OpenPostgres connects to PostgreSQL and applies pending migrations under
// an advisory lock, so replicas starting together migrate once.
func OpenPostgres(ctx context.Context, databaseURL string, opts ...Option) (Store, error) {
	var o pgOptions
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if o.transactionPooler && cfg.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		// pgx's default prepares named statements on the server, which a
		// transaction pooler hands to other clients' sessions (SQLSTATE
		// 42P05 "prepared statement already exists", or 26000).
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
	stats := &stmtStats{}
	cfg.ConnConfig.Tracer = pgTracer{stats: stats} // a span and a count per statement (db/trace.go)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	if err := migratePostgres(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	s := &pgStore{pool: pool, q: pgq.New(pool), stats: stats}
	s.hostStore = hostStore{q: hostPG{s.q}, tx: func(ctx context.Context, fn func(hostQueries) error) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(hostPG{s.q.WithTx(tx)}) })
	}}
	return s, nil
}

// pgErr turns driver errors into the package's sentinels.
func pgErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return err
}

func (s *pgStore) Engine() string { return "postgres" }

func (s *pgStore) Close() error { s.pool.Close(); return nil }

func (s *pgStore) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

func (s *pgStore) Statements() []StatementCount { return s.stats.counts() }

func (s *pgStore) CreateAgent(ctx context.Context, a Agent) (Agent, error) {
	r, err := s.q.CreateAgent(ctx, pgq.CreateAgentParams(createAgentParams(a)))
	return agentFromPG(r), pgErr(err)
}

func (s *pgStore) GetAgent(ctx context.Context, id string) (Agent, error) {
	r, err := s.q.GetAgentByID(ctx, id)
	return agentFromPG(r), pgErr(err)
}

func (s *pgStore) GetAgentByIssuer(ctx context.Context, issuer string) (Agent, error) {
	r, err := s.q.GetAgentByIssuer(ctx, issuer)
	return agentFromPG(r), pgErr(err)
}

func (s *pgStore) ListAgents(ctx context.Context, afterID string, limit int) ([]Agent, error) {
	rows, err := s.q.ListAgents(ctx, pgq.ListAgentsParams{AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	return agentsFromRows(rows, agentFromPG), nil
}

func (s *pgStore) UpdateAgent(ctx context.Context, a Agent) (Agent, error) {
	r, err := s.q.UpdateAgent(ctx, pgq.UpdateAgentParams(updateAgentParams(a)))
	return agentFromPG(r), pgErr(err)
}

func (s *pgStore) DeleteAgent(ctx context.Context, id string) error {
	n, err := s.q.DeleteAgent(ctx, id)
	if err != nil {
		return pgErr(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *pgStore) CreateBrand(ctx context.Context, b Brand) (Brand, error) {
	p, err := createBrandParams(b)
	if err != nil {
		return Brand{}, err
	}
	r, err := s.q.CreateBrand(ctx, pgq.CreateBrandParams(p))
	if err != nil {
		return Brand{}, pgErr(err)
	}
	return brandFromPG(r)
}

func (s *pgStore) GetBrand(ctx context.Context, id string) (Brand, error) {
	r, err := s.q.GetBrand(ctx, id)
	if err != nil {
		return Brand{}, pgErr(err)
	}
	b, err := brandFromPG(r)
	if err != nil || b.AgentPolicy != AgentPolicyListed {
		return b, err
	}
	// The list, read after the row: a change of either between the two
	// reads is a change of the Brand the feed reports, so a cache drops
	// what this read got within the bound.
	if b.Agents, err = s.q.ListBrandAgentIDs(ctx, id); err != nil {
		return Brand{}, pgErr(err)
	}
	if b.Agents == nil {
		b.Agents = []string{}
	}
	return b, nil
}

func (s *pgStore) ListBrands(ctx context.Context, afterID string, limit int) ([]Brand, error) {
	rows, err := s.q.ListBrands(ctx, pgq.ListBrandsParams{AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	return brandsFromRows(rows, brandFromPG)
}

func (s *pgStore) UpdateBrand(ctx context.Context, b Brand) (Brand, error) {
	p, err := updateBrandParams(b)
	if err != nil {
		return Brand{}, err
	}
	r, err := s.q.UpdateBrand(ctx, pgq.UpdateBrandParams(p))
	if err != nil {
		return Brand{}, pgErr(err)
	}
	return brandFromPG(r)
}

func (s *pgStore) CreateCredential(ctx context.Context, c Credential) (bool, error) {
	_, err := s.q.CreateCredential(ctx, pgq.CreateCredentialParams(createCredentialParams(c)))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, pgErr(err)
}

func (s *pgStore) GetCredentialByHash(ctx context.Context, hash []byte) (Credential, error) {
	r, err := s.q.GetCredentialByHash(ctx, hash)
	return credentialFromPG(r), pgErr(err)
}

func (s *pgStore) CountCredentials(ctx context.Context, role Role) (int64, error) {
	n, err := s.q.CountCredentialsByRole(ctx, string(role))
	return n, pgErr(err)
}

func (s *pgStore) CountLiveCredentials(ctx context.Context, role Role, now time.Time) (int64, error) {
	n, err := s.q.CountLiveCredentialsByRole(ctx, pgq.CountLiveCredentialsByRoleParams{Role: string(role), Now: unix(now)})
	return n, pgErr(err)
}

func (s *pgStore) GetCredential(ctx context.Context, id string) (Credential, error) {
	r, err := s.q.GetCredential(ctx, id)
	return credentialFromPG(r), pgErr(err)
}

func (s *pgStore) ListCredentials(ctx context.Context, afterID string, limit int) ([]Credential, error) {
	rows, err := s.q.ListCredentials(ctx, pgq.ListCredentialsParams{AfterID: afterID, PageLimit: int32(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]Credential, 0, len(rows))
	for _, r := range rows {
		out = append(out, credentialFromPG(r))
	}
	return out, nil
}

func (s *pgStore) RevokeCredential(ctx context.Context, id string, now time.Time) (Credential, error) {
	r, err := s.q.RevokeCredential(ctx, pgq.RevokeCredentialParams{ID: id, Now: unix(now)})
	return credentialFromPG(r), pgErr(err)
}

func (s *pgStore) RevokeCredentialsByLabel(ctx context.Context, label string, keepHash []byte, now time.Time) ([]string, error) {
	ids, err := s.q.RevokeCredentialsByLabel(ctx, pgq.RevokeCredentialsByLabelParams{Label: label, KeepHash: keepHash, Now: unix(now)})
	return ids, pgErr(err)
}

func (s *pgStore) TouchCredential(ctx context.Context, id string, now time.Time) error {
	return pgErr(s.q.TouchCredential(ctx, pgq.TouchCredentialParams{ID: id, Now: unix(now), OlderThan: unix(now) - 60}))
}
