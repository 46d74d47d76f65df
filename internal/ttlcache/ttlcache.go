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
	v       V
	expires time.Time
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
	if !ok || !c.now().Before(it.expires) {
		var zero V
		return zero, false
	}
	return it.v, true
}

// GetStale returns the value for k if it is live or expired less than
// grace ago (and not deleted or cleared since): the last word, for a caller
// whose source of truth cannot be read right now.
func (c *Cache[K, V]) GetStale(k K, grace time.Duration) (V, bool) {
	c.mu.RLock()
	it, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || !c.now().Before(it.expires.Add(grace)) {
		var zero V
		return zero, false
	}
	return it.v, true
}

// Put stores v under k for the cache's lifetime.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	if len(c.m) >= c.maxSize {
		clear(c.m)
	}
	c.m[k] = item[V]{v: v, expires: c.now().Add(c.ttl)}
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
