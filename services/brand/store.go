package brand

import (
	"context"
	"time"

	"pactd.dev/pactd/db"
)

// Store is the storage the Brand service needs.
type Store interface {
	CreateBrand(ctx context.Context, b db.Brand) (db.Brand, error)
	GetBrand(ctx context.Context, id string) (db.Brand, error)
	ListBrands(ctx context.Context, afterID string, limit int) ([]db.Brand, error)
	UpdateBrand(ctx context.Context, b db.Brand) (db.Brand, error)

	SetBrandAgentPolicy(ctx context.Context, brandID string, p db.AgentPolicy, now time.Time) (db.Brand, error)
	AddBrandAgent(ctx context.Context, brandID, agentID string, now time.Time) (bool, error)
	RemoveBrandAgent(ctx context.Context, brandID, agentID string) error
	ListBrandAgents(ctx context.Context, brandID, afterID string, limit int) ([]db.BrandAgent, error)
}
