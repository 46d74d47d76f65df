// Package brandcache keeps Brands in memory for the request paths that read
// one on every call (verification, introspection, the token endpoint), so
// they do not pay a database round trip for a row that rarely changes.
//
// Freshness: a change through this replica's BrandService is applied at
// once (Forget); other replicas' changes arrive through the change feed
// (Forget again), within its revocation bound. An entry is used while it is
// younger than the TTL and, when the feed is stale, only while it is
// younger than the bound (Feed.MaxAge), so the bound holds either way.
package brandcache

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/ttlcache"
)

// Store is what the cache reads.
type Store interface {
	GetBrand(ctx context.Context, id string) (db.Brand, error)
}

// Feed says how old cached state may be right now (*changefeed.Feed).
type Feed interface {
	MaxAge(now time.Time) time.Duration
}

// Cache is a read-through cache of Brands by id; unknown ids are cached
// too, so a flood of made-up ids does not reach the store.
type Cache struct {
	store Store
	c     *ttlcache.Cache[string, entry]
	grace time.Duration
	// gen counts changes; a read stores what it got only if no change
	// happened meanwhile, so a slow read cannot undo a change.
	gen    atomic.Uint64
	maxAge func(time.Time) time.Duration
}

type entry struct {
	brand db.Brand
	found bool
}

// New returns a cache over the store whose entries live for ttl, and answer
// for outageGrace more while the store cannot be read; feed, when not nil,
// limits how old an entry may be while it is stale.
func New(s Store, ttl, outageGrace time.Duration, feed Feed, now func() time.Time) *Cache {
	c := &Cache{store: s, grace: outageGrace, c: ttlcache.New[string, entry](ttl, 100_000, now)}
	if feed != nil {
		c.maxAge = feed.MaxAge
	}
	return c
}

// GetBrand returns the Brand, or db.ErrNotFound.
func (c *Cache) GetBrand(ctx context.Context, id string) (db.Brand, error) {
	if e, ok := c.c.GetWithin(id, c.maxAge); ok {
		if !e.found {
			return db.Brand{}, db.ErrNotFound
		}
		return e.brand, nil
	}
	gen, start := c.gen.Load(), c.c.Now()
	b, err := c.store.GetBrand(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		c.put(id, gen, start, entry{})
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
	c.put(id, gen, start, entry{brand: b, found: true})
	return b, nil
}

// put caches what a read that began at start got, unless a change happened
// since it began.
func (c *Cache) put(id string, gen uint64, start time.Time, e entry) {
	if c.gen.Load() == gen {
		c.c.PutAt(id, e, start)
	}
}

// Forget drops a Brand after it changed.
func (c *Cache) Forget(id string) { c.gen.Add(1); c.c.Delete(id) }

// ForgetAll drops every Brand (after missed changes).
func (c *Cache) ForgetAll() { c.gen.Add(1); c.c.Clear() }
