package db

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// Refusals of [Store.SelfRegisterAgent]. Each leaves the store unchanged.
var (
	// ErrReplay: the registration token's (issuer, jti) was accepted before
	// and has not expired.
	ErrReplay = errors.New("db: registration token already used")
	// ErrNameTaken: another agent registered itself under the name.
	ErrNameTaken = errors.New("db: registration name taken")
	// ErrIssuerTaken: an agent with the issuer exists with other details
	// (another name or JWKS URI, or registered by an operator).
	ErrIssuerTaken = errors.New("db: issuer registered with other details")
)

// SelfRegistration is one verified self-service registration to record.
type SelfRegistration struct {
	// Name is the slug the agent registers under, unique per Provider.
	Name string
	// Agent is the agent to create (its Issuer and JWKSURI are compared
	// with an existing registration for idempotency).
	Agent Agent
	// JTI and JTIExpire are the registration token's jti and the time until
	// which it must not be accepted again.
	JTI       string
	JTIExpire time.Time
	// Now prunes jtis that expired before it.
	Now time.Time
}

// liteSelfRegister is SelfRegisterAgent's transaction body for SQLite.
func liteSelfRegister(ctx context.Context, q *liteq.Queries, r SelfRegistration) (Agent, bool, error) {
	if _, err := q.PruneRegistrationJTIs(ctx, unix(r.Now)); err != nil {
		return Agent{}, false, err
	}
	n, err := q.InsertRegistrationJTI(ctx, liteq.InsertRegistrationJTIParams{Issuer: r.Agent.Issuer, Jti: r.JTI, ExpireTime: unix(r.JTIExpire)})
	if err != nil {
		return Agent{}, false, err
	}
	if n == 0 {
		return Agent{}, false, ErrReplay
	}
	if ex, err := q.GetAgentByIssuer(ctx, r.Agent.Issuer); err == nil {
		reg, rerr := q.GetAgentRegistrationByAgent(ctx, ex.ID)
		if rerr == nil && reg.Name == r.Name && ex.JwksUri == r.Agent.JWKSURI {
			return agentFromRow(ex), false, nil
		}
		if rerr != nil && !errors.Is(rerr, sql.ErrNoRows) {
			return Agent{}, false, rerr
		}
		return Agent{}, false, ErrIssuerTaken
	} else if !errors.Is(err, sql.ErrNoRows) {
		return Agent{}, false, err
	}
	if _, err := q.GetAgentRegistrationByName(ctx, r.Name); err == nil {
		return Agent{}, false, ErrNameTaken
	} else if !errors.Is(err, sql.ErrNoRows) {
		return Agent{}, false, err
	}
	a, err := q.CreateAgent(ctx, createAgentParams(r.Agent))
	if err != nil {
		return Agent{}, false, err
	}
	if err := q.InsertAgentRegistration(ctx, liteq.InsertAgentRegistrationParams{Name: r.Name, AgentID: a.ID, CreateTime: unix(r.Now)}); err != nil {
		return Agent{}, false, err
	}
	return agentFromRow(a), true, nil
}

func (s *sqliteStore) SelfRegisterAgent(ctx context.Context, r SelfRegistration) (out Agent, created bool, err error) {
	err = s.delegationTx(ctx, func(q *liteq.Queries) error {
		out, created, err = liteSelfRegister(ctx, q, r)
		return err
	})
	if err != nil {
		return Agent{}, false, err
	}
	return out, created, nil
}

func (s *sqliteStore) CountRegistrationJTIs(ctx context.Context) (int64, error) {
	n, err := s.q.CountRegistrationJTIs(ctx)
	return n, liteErr(err)
}

func (s *sqliteStore) GetAgentRegistrationName(ctx context.Context, agentID string) (string, error) {
	r, err := s.q.GetAgentRegistrationByAgent(ctx, agentID)
	return r.Name, liteErr(err)
}

// pgSelfRegister is SelfRegisterAgent's transaction body for PostgreSQL.
func pgSelfRegister(ctx context.Context, q *pgq.Queries, r SelfRegistration) (Agent, bool, error) {
	if _, err := q.PruneRegistrationJTIs(ctx, unix(r.Now)); err != nil {
		return Agent{}, false, err
	}
	n, err := q.InsertRegistrationJTI(ctx, pgq.InsertRegistrationJTIParams{Issuer: r.Agent.Issuer, Jti: r.JTI, ExpireTime: unix(r.JTIExpire)})
	if err != nil {
		return Agent{}, false, err
	}
	if n == 0 {
		return Agent{}, false, ErrReplay
	}
	if ex, err := q.GetAgentByIssuer(ctx, r.Agent.Issuer); err == nil {
		reg, rerr := q.GetAgentRegistrationByAgent(ctx, ex.ID)
		if rerr == nil && reg.Name == r.Name && ex.JwksUri == r.Agent.JWKSURI {
			return agentFromPG(ex), false, nil
		}
		if rerr != nil && !errors.Is(rerr, pgx.ErrNoRows) {
			return Agent{}, false, rerr
		}
		return Agent{}, false, ErrIssuerTaken
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return Agent{}, false, err
	}
	if _, err := q.GetAgentRegistrationByName(ctx, r.Name); err == nil {
		return Agent{}, false, ErrNameTaken
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return Agent{}, false, err
	}
	a, err := q.CreateAgent(ctx, pgq.CreateAgentParams(createAgentParams(r.Agent)))
	if err != nil {
		return Agent{}, false, err
	}
	if err := q.InsertAgentRegistration(ctx, pgq.InsertAgentRegistrationParams{Name: r.Name, AgentID: a.ID, CreateTime: unix(r.Now)}); err != nil {
		return Agent{}, false, err
	}
	return agentFromPG(a), true, nil
}

func (s *pgStore) SelfRegisterAgent(ctx context.Context, r SelfRegistration) (out Agent, created bool, err error) {
	err = s.delegationTx(ctx, func(q *pgq.Queries) error {
		out, created, err = pgSelfRegister(ctx, q, r)
		return err
	})
	if err != nil {
		return Agent{}, false, err
	}
	return out, created, nil
}

func (s *pgStore) CountRegistrationJTIs(ctx context.Context) (int64, error) {
	n, err := s.q.CountRegistrationJTIs(ctx)
	return n, pgErr(err)
}

func (s *pgStore) GetAgentRegistrationName(ctx context.Context, agentID string) (string, error) {
	r, err := s.q.GetAgentRegistrationByAgent(ctx, agentID)
	return r.Name, pgErr(err)
}
