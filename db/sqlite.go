package db

import (
	"time"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"pactd.dev/pactd/db/internal/liteq"
)

// sqliteStore is the embedded engine: one database file in WAL mode, every
// transaction BEGIN IMMEDIATE so read-then-write never deadlocks on upgrade.
type sqliteStore struct {
	db    *sql.DB
	q     *liteq.Queries
	stats *stmtStats
	// hostStore is the HDTP host wire (hdtp_host.go), over the same
	// queries.
	hostStore
}

// OpenSQLite opens (creating if needed) the SQLite database at path and
// applies pending migrations.
func OpenSQLite(ctx context.Context, path string) (Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	sdb, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	sdb.SetMaxOpenConns(8)
	if err := sdb.PingContext(ctx); err != nil {
		_ = sdb.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := migrateSQLite(ctx, sdb); err != nil {
		_ = sdb.Close()
		return nil, err
	}
	stats := &stmtStats{}
	s := &sqliteStore{db: sdb, q: liteq.New(tracedDB{db: sdb, stats: stats}), stats: stats}
	s.hostStore = hostStore{q: s.q, tx: func(ctx context.Context, fn func(hostQueries) error) error {
		return s.delegationTx(ctx, func(q *liteq.Queries) error { return fn(q) })
	}}
	return s, nil
}

// liteErr turns driver errors into the package's sentinels.
func liteErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", ErrConflict, err)
		}
	}
	return err
}

func (s *sqliteStore) Engine() string { return "sqlite" }

func (s *sqliteStore) Close() error { return s.db.Close() }

func (s *sqliteStore) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

func (s *sqliteStore) Statements() []StatementCount { return s.stats.counts() }

func (s *sqliteStore) CreateAgent(ctx context.Context, a Agent) (Agent, error) {
	r, err := s.q.CreateAgent(ctx, createAgentParams(a))
	return agentFromRow(r), liteErr(err)
}

func (s *sqliteStore) GetAgent(ctx context.Context, id string) (Agent, error) {
	r, err := s.q.GetAgentByID(ctx, id)
	return agentFromRow(r), liteErr(err)
}

func (s *sqliteStore) GetAgentByIssuer(ctx context.Context, issuer string) (Agent, error) {
	r, err := s.q.GetAgentByIssuer(ctx, issuer)
	return agentFromRow(r), liteErr(err)
}

func (s *sqliteStore) ListAgents(ctx context.Context, afterID string, limit int) ([]Agent, error) {
	rows, err := s.q.ListAgents(ctx, liteq.ListAgentsParams{AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	return agentsFromRows(rows, agentFromRow), nil
}

func (s *sqliteStore) UpdateAgent(ctx context.Context, a Agent) (Agent, error) {
	r, err := s.q.UpdateAgent(ctx, updateAgentParams(a))
	return agentFromRow(r), liteErr(err)
}

func (s *sqliteStore) DeleteAgent(ctx context.Context, id string) error {
	n, err := s.q.DeleteAgent(ctx, id)
	if err != nil {
		return liteErr(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqliteStore) CreateBrand(ctx context.Context, b Brand) (Brand, error) {
	p, err := createBrandParams(b)
	if err != nil {
		return Brand{}, err
	}
	r, err := s.q.CreateBrand(ctx, p)
	if err != nil {
		return Brand{}, liteErr(err)
	}
	return brandFromRow(r)
}

func (s *sqliteStore) GetBrand(ctx context.Context, id string) (Brand, error) {
	r, err := s.q.GetBrand(ctx, id)
	if err != nil {
		return Brand{}, liteErr(err)
	}
	b, err := brandFromRow(r)
	if err != nil || b.AgentPolicy != AgentPolicyListed {
		return b, err
	}
	// The list, read after the row: a change of either between the two
	// reads is a change of the Brand the feed reports, so a cache drops
	// what this read got within the bound.
	if b.Agents, err = s.q.ListBrandAgentIDs(ctx, id); err != nil {
		return Brand{}, liteErr(err)
	}
	if b.Agents == nil {
		b.Agents = []string{}
	}
	return b, nil
}

func (s *sqliteStore) ListBrands(ctx context.Context, afterID string, limit int) ([]Brand, error) {
	rows, err := s.q.ListBrands(ctx, liteq.ListBrandsParams{AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	return brandsFromRows(rows, brandFromRow)
}

func (s *sqliteStore) UpdateBrand(ctx context.Context, b Brand) (Brand, error) {
	p, err := updateBrandParams(b)
	if err != nil {
		return Brand{}, err
	}
	r, err := s.q.UpdateBrand(ctx, p)
	if err != nil {
		return Brand{}, liteErr(err)
	}
	return brandFromRow(r)
}

func (s *sqliteStore) CreateCredential(ctx context.Context, c Credential) (bool, error) {
	_, err := s.q.CreateCredential(ctx, createCredentialParams(c))
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, liteErr(err)
}

func (s *sqliteStore) GetCredentialByHash(ctx context.Context, hash []byte) (Credential, error) {
	r, err := s.q.GetCredentialByHash(ctx, hash)
	return credentialFromRow(r), liteErr(err)
}

func (s *sqliteStore) CountCredentials(ctx context.Context, role Role) (int64, error) {
	n, err := s.q.CountCredentialsByRole(ctx, string(role))
	return n, liteErr(err)
}

func (s *sqliteStore) CountLiveCredentials(ctx context.Context, role Role, now time.Time) (int64, error) {
	n, err := s.q.CountLiveCredentialsByRole(ctx, liteq.CountLiveCredentialsByRoleParams{Role: string(role), Now: unix(now)})
	return n, liteErr(err)
}

func (s *sqliteStore) GetCredential(ctx context.Context, id string) (Credential, error) {
	r, err := s.q.GetCredential(ctx, id)
	return credentialFromRow(r), liteErr(err)
}

func (s *sqliteStore) ListCredentials(ctx context.Context, afterID string, limit int) ([]Credential, error) {
	rows, err := s.q.ListCredentials(ctx, liteq.ListCredentialsParams{AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]Credential, 0, len(rows))
	for _, r := range rows {
		out = append(out, credentialFromRow(r))
	}
	return out, nil
}

func (s *sqliteStore) RevokeCredential(ctx context.Context, id string, now time.Time) (Credential, error) {
	r, err := s.q.RevokeCredential(ctx, liteq.RevokeCredentialParams{ID: id, Now: unix(now)})
	return credentialFromRow(r), liteErr(err)
}

func (s *sqliteStore) RevokeCredentialsByLabel(ctx context.Context, label string, keepHash []byte, now time.Time) ([]string, error) {
	ids, err := s.q.RevokeCredentialsByLabel(ctx, liteq.RevokeCredentialsByLabelParams{Label: label, KeepHash: keepHash, Now: unix(now)})
	return ids, liteErr(err)
}

func (s *sqliteStore) TouchCredential(ctx context.Context, id string, now time.Time) error {
	return liteErr(s.q.TouchCredential(ctx, liteq.TouchCredentialParams{ID: id, Now: unix(now), OlderThan: unix(now) - 60}))
}
