// Package ttlcache is a small, bounded, concurrency-safe map whose entries
// expire after a fixed time. It backs the lookups on pactd's hot path
// (agents by issuer, Brands by id) so a verification does not hit the store.
package ttlcache

import (
	"sync"
	"time"
)

// Cache maps keys to values for a bounded time. When full, it is cleared:
// simple, and under attack (many unknown keys) it degrades to store lookups
// rather than growing without bound.
type Cache[K comparable, V any] struct {
	mu      sync.RWMutex
	m       map[K]item[V]
	ttl     time.Duration
	maxSize int
	now     func() time.Time
}

type item[V any] struct {
	v V
	// stored is when the value was read from its source (not when it was
	// put: a value is as old as the read that produced it).
	stored time.Time
}

// New returns a cache whose entries live for ttl, holding at most maxSize.
func New[K comparable, V any](ttl time.Duration, maxSize int, now func() time.Time) *Cache[K, V] {
	if now == nil {
		now = time.Now
	}
	return &Cache[K, V]{m: make(map[K]item[V]), ttl: ttl, maxSize: maxSize, now: now}
}

// Get returns the live value for k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	it, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || c.now().Sub(it.stored) >= c.ttl {
		var zero V
		return zero, false
	}
	return it.v, true
}

// GetWithin is Get for a value younger than maxAge(now) too, where now is
// the cache's clock (the caller's freshness rule, e.g. a change feed's
// changefeed.Feed.MaxAge); nil maxAge is Get.
func (c *Cache[K, V]) GetWithin(k K, maxAge func(now time.Time) time.Duration) (V, bool) {
	c.mu.RLock()
	it, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		now := c.now()
		age := now.Sub(it.stored)
		if age < c.ttl && (maxAge == nil || age < maxAge(now)) {
			return it.v, true
		}
	}
	var zero V
	return zero, false
}

// GetStale returns the value for k if it is live or expired less than
// grace ago (and not deleted or cleared since): the last word, for a caller
// whose source of truth cannot be read right now.
func (c *Cache[K, V]) GetStale(k K, grace time.Duration) (V, bool) {
	c.mu.RLock()
	it, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || c.now().Sub(it.stored) >= c.ttl+grace {
		var zero V
		return zero, false
	}
	return it.v, true
}

// Put stores v under k for the cache's lifetime, from now.
func (c *Cache[K, V]) Put(k K, v V) { c.PutAt(k, v, c.now()) }

// PutAt stores v under k as read at t (the start of the read that produced
// it), so its age counts from then.
func (c *Cache[K, V]) PutAt(k K, v V, t time.Time) {
	c.mu.Lock()
	if len(c.m) >= c.maxSize {
		clear(c.m)
	}
	c.m[k] = item[V]{v: v, stored: t}
	c.mu.Unlock()
}

// Now is the cache's clock.
func (c *Cache[K, V]) Now() time.Time { return c.now() }

// DeleteFunc drops every entry for which drop returns true; it holds the
// lock for a walk of the whole map, so it is for rare events.
func (c *Cache[K, V]) DeleteFunc(drop func(K, V) bool) {
	c.mu.Lock()
	for k, it := range c.m {
		if drop(k, it.v) {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}

// Delete drops k.
func (c *Cache[K, V]) Delete(k K) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// Clear drops everything.
func (c *Cache[K, V]) Clear() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}
