// Package brandcache keeps Brands in memory for the request paths that read
// one on every call (verification, introspection, the token endpoint), so
// they do not pay a database round trip for a row that rarely changes.
//
// Freshness: a change through this replica's BrandService is applied at
// once (Forget); other replicas' changes arrive through PostgreSQL
// LISTEN/NOTIFY, and the TTL bounds what a missed notification can cost.
package brandcache

import (
	"context"
	"errors"
	"time"

	"pactd/db"
	"pactd/internal/ttlcache"
)

// Store is what the cache reads.
type Store interface {
	GetBrand(ctx context.Context, id string) (db.Brand, error)
}

// Cache is a read-through cache of Brands by id; unknown ids are cached
// too, so a flood of made-up ids does not reach the store.
type Cache struct {
	store Store
	c     *ttlcache.Cache[string, entry]
	grace time.Duration
}

type entry struct {
	brand db.Brand
	found bool
}

// New returns a cache over the store whose entries live for ttl, and answer
// for outageGrace more while the store cannot be read.
func New(s Store, ttl, outageGrace time.Duration, now func() time.Time) *Cache {
	return &Cache{store: s, grace: outageGrace, c: ttlcache.New[string, entry](ttl, 100_000, now)}
}

// GetBrand returns the Brand, or db.ErrNotFound.
func (c *Cache) GetBrand(ctx context.Context, id string) (db.Brand, error) {
	if e, ok := c.c.Get(id); ok {
		if !e.found {
			return db.Brand{}, db.ErrNotFound
		}
		return e.brand, nil
	}
	b, err := c.store.GetBrand(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		c.c.Put(id, entry{})
		return db.Brand{}, err
	}
	if err != nil {
		if e, ok := c.c.GetStale(id, c.grace); ok && ctx.Err() == nil {
			if !e.found {
				return db.Brand{}, db.ErrNotFound
			}
			return e.brand, nil
		}
		return db.Brand{}, err
	}
	c.c.Put(id, entry{brand: b, found: true})
	return b, nil
}

// Forget drops a Brand after it changed.
func (c *Cache) Forget(id string) { c.c.Delete(id) }

// ForgetAll drops every Brand (after missed change notifications).
func (c *Cache) ForgetAll() { c.c.Clear() }
