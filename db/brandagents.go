package db

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// Per-Brand agent policy (migration 0011). Adding takes the Brand's row
// lock (FOR UPDATE on PostgreSQL; SQLite's BEGIN IMMEDIATE serializes
// writers), so concurrent adds cannot push a list past MaxBrandAgents.

func (s *pgStore) SetBrandAgentPolicy(ctx context.Context, brandID string, p AgentPolicy, now time.Time) (Brand, error) {
	r, err := s.q.SetBrandAgentPolicy(ctx, pgq.SetBrandAgentPolicyParams{ID: brandID, AgentPolicy: string(p), UpdateTime: unix(now)})
	if err != nil {
		return Brand{}, pgErr(err)
	}
	return brandFromPG(r)
}

func (s *pgStore) AddBrandAgent(ctx context.Context, brandID, agentID string, now time.Time) (bool, error) {
	var added bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if _, err := q.LockBrand(ctx, brandID); err != nil {
			return err
		}
		if _, err := q.GetAgentByID(ctx, agentID); err != nil {
			return err
		}
		n, err := q.CountBrandAgents(ctx, brandID)
		if err != nil {
			return err
		}
		rows, err := q.AddBrandAgent(ctx, pgq.AddBrandAgentParams{BrandID: brandID, AgentID: agentID, CreateTime: unix(now)})
		if err != nil {
			return err
		}
		// Full, unless the agent was on the list already (then nothing
		// changed).
		if rows > 0 && n >= MaxBrandAgents {
			return ErrFull // rolls the insert back
		}
		added = rows > 0
		return nil
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" {
		return false, ErrNotFound // the agent was deleted meanwhile
	}
	return added, pgErr(err)
}

func (s *pgStore) RemoveBrandAgent(ctx context.Context, brandID, agentID string) error {
	n, err := s.q.RemoveBrandAgent(ctx, pgq.RemoveBrandAgentParams{BrandID: brandID, AgentID: agentID})
	if err != nil {
		return pgErr(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *pgStore) ListBrandAgents(ctx context.Context, brandID, afterID string, limit int) ([]BrandAgent, error) {
	rows, err := s.q.ListBrandAgents(ctx, pgq.ListBrandAgentsParams{BrandID: brandID, AfterID: afterID, PageLimit: int32(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]BrandAgent, 0, len(rows))
	for _, r := range rows {
		out = append(out, BrandAgent{AgentID: r.AgentID, DisplayName: r.DisplayName, AddTime: fromUnix(r.CreateTime)})
	}
	return out, nil
}

func (s *sqliteStore) SetBrandAgentPolicy(ctx context.Context, brandID string, p AgentPolicy, now time.Time) (Brand, error) {
	r, err := s.q.SetBrandAgentPolicy(ctx, liteq.SetBrandAgentPolicyParams{ID: brandID, AgentPolicy: string(p), UpdateTime: unix(now)})
	if err != nil {
		return Brand{}, liteErr(err)
	}
	return brandFromRow(r)
}

func (s *sqliteStore) AddBrandAgent(ctx context.Context, brandID, agentID string, now time.Time) (bool, error) {
	var added bool
	err := s.delegationTx(ctx, func(q *liteq.Queries) error {
		if _, err := q.LockBrand(ctx, brandID); err != nil {
			return err
		}
		if _, err := q.GetAgentByID(ctx, agentID); err != nil {
			return err
		}
		n, err := q.CountBrandAgents(ctx, brandID)
		if err != nil {
			return err
		}
		rows, err := q.AddBrandAgent(ctx, liteq.AddBrandAgentParams{BrandID: brandID, AgentID: agentID, CreateTime: unix(now)})
		if err != nil {
			return err
		}
		if rows > 0 && n >= MaxBrandAgents {
			return ErrFull // rolls the insert back
		}
		added = rows > 0
		return nil
	})
	return added, err
}

func (s *sqliteStore) RemoveBrandAgent(ctx context.Context, brandID, agentID string) error {
	n, err := s.q.RemoveBrandAgent(ctx, liteq.RemoveBrandAgentParams{BrandID: brandID, AgentID: agentID})
	if err != nil {
		return liteErr(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqliteStore) ListBrandAgents(ctx context.Context, brandID, afterID string, limit int) ([]BrandAgent, error) {
	rows, err := s.q.ListBrandAgents(ctx, liteq.ListBrandAgentsParams{BrandID: brandID, AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]BrandAgent, 0, len(rows))
	for _, r := range rows {
		out = append(out, BrandAgent{AgentID: r.AgentID, DisplayName: r.DisplayName, AddTime: fromUnix(r.CreateTime)})
	}
	return out, nil
}
