package agent

import (
	"context"

	"pactd.dev/pactd/db"
)

// Store is the storage the agent service needs.
type Store interface {
	CreateAgent(ctx context.Context, a db.Agent) (db.Agent, error)
	GetAgent(ctx context.Context, id string) (db.Agent, error)
	GetAgentByIssuer(ctx context.Context, issuer string) (db.Agent, error)
	ListAgents(ctx context.Context, afterID string, limit int) ([]db.Agent, error)
	UpdateAgent(ctx context.Context, a db.Agent) (db.Agent, error)
	DeleteAgent(ctx context.Context, id string) error
	SelfRegisterAgent(ctx context.Context, r db.SelfRegistration) (db.Agent, bool, error)
}
