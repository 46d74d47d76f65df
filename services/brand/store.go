package brand

import (
	"context"

	"pactd/db"
)

// Store is the storage the Brand service needs.
type Store interface {
	CreateBrand(ctx context.Context, b db.Brand) (db.Brand, error)
	GetBrand(ctx context.Context, id string) (db.Brand, error)
	ListBrands(ctx context.Context, afterID string, limit int) ([]db.Brand, error)
	UpdateBrand(ctx context.Context, b db.Brand) (db.Brand, error)
}
