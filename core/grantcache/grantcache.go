// Package grantcache answers, from memory, whether a grant is live for a
// Brand, a client (the PA's issuer) and a Brand user, and with which
// authorization_details: the question every delegated VerifyAgentRequest,
// IntrospectToken and SignReceipt asks. Without it each of them reads the
// grant from the database.
//
// A grant's row is cached by id as the store returned it, and liveness is
// decided from it at each call: the Brand, client and Brand user must be
// the grant's, it must not be revoked, and it must not have expired (the
// expiry is checked against the caller's clock every time, so it is exact).
// What a cached row cannot know is a revocation made since it was read, on
// this replica or another: the change feed delivers those (Forget), and an
// entry older than the feed's revocation bound is used only while the feed
// is fresh (Feed.MaxAge). So a revoked grant is refused on every replica
// within the bound of its revocation, while a replica whose feed is stale
// reads the grant again instead. A grant the store does not have is not
// cached (its id came in a token signed by pactd, so it existed; its agent
// was deleted, which the feed also reports: ForgetClient).
package grantcache

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/ttlcache"
)

// TTL bounds how long a grant's row is kept (read again after it even
// while the feed is fresh). DefaultSize is how many rows a cache holds by
// default (PACT_GRANT_CACHE_SIZE): when full it is emptied, so a replica
// serving more distinct live grants than its size within the TTL reads
// some of them again. A cached grant holds about 460 bytes
// (BenchmarkLiveGrantDetailsHit), so the default tops out near 46 MB.
const (
	TTL         = 10 * time.Minute
	DefaultSize = 100_000
)

// Store reads grants.
type Store interface {
	GetGrant(ctx context.Context, id string) (db.Grant, error)
}

// Feed says how old cached state may be right now (*changefeed.Feed).
type Feed interface {
	MaxAge(now time.Time) time.Duration
}

// Cache is the grant cache of one replica.
type Cache struct {
	store  Store
	c      *ttlcache.Cache[string, db.Grant]
	maxAge func(time.Time) time.Duration
	// gen counts changes; a read stores its row only if no change happened
	// meanwhile, so a read that began before a revocation cannot cache
	// the grant as live after the revocation was applied.
	gen       atomic.Uint64
	hit, miss prometheus.Counter
}

// New returns a cache of at most size grants (DefaultSize when 0) over the
// store that follows feed (nil: rows are trusted for TTL, which only tests
// want); now is the cache's clock (time.Now when nil); its lookup counter
// goes to reg when not nil.
func New(s Store, size int, feed Feed, now func() time.Time, reg prometheus.Registerer) *Cache {
	if size <= 0 {
		size = DefaultSize
	}
	lookups := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_grant_cache_lookups_total",
		Help: "Grant liveness checks (delegated VerifyAgentRequest, IntrospectToken, SignReceipt, CheckGrant), by result: hit (answered from memory) or miss (read from the database)."},
		[]string{"result"})
	c := &Cache{store: s, c: ttlcache.New[string, db.Grant](TTL, size, now),
		hit: lookups.WithLabelValues("hit"), miss: lookups.WithLabelValues("miss")}
	if feed != nil {
		c.maxAge = feed.MaxAge
	}
	if reg != nil {
		reg.MustRegister(lookups)
	}
	return c
}

// LiveGrantDetails reports whether the grant exists for this Brand, client
// and Brand user and is neither revoked nor expired at now, and its
// authorization_details ("" for a scope-only grant) when it is: the
// store's method of the same name, answered from memory.
func (c *Cache) LiveGrantDetails(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (string, bool, error) {
	g, found, err := c.grant(ctx, grantID)
	if err != nil || !found || !liveFor(g, brandID, clientID, brandUser, now) {
		return "", false, err
	}
	return g.AuthorizationDetails, true, nil
}

// GrantLiveAt is LiveGrantDetails without the details.
func (c *Cache) GrantLiveAt(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (bool, error) {
	_, live, err := c.LiveGrantDetails(ctx, grantID, brandID, clientID, brandUser, now)
	return live, err
}

// Grant returns the grant's row as the store last returned it (revoked
// and expired rows included: the caller judges them at its own clock),
// found false when the store has no such grant; for CheckGrant, which
// needs the scopes and the reason as well as liveness. The row obeys the
// same revocation bound as LiveGrantDetails.
func (c *Cache) Grant(ctx context.Context, id string) (g db.Grant, found bool, err error) {
	return c.grant(ctx, id)
}

// liveFor is the store's liveness guard (db's CountLiveGrants): the same
// Brand, client and Brand user, not revoked, expire_time after now in
// whole seconds.
func liveFor(g db.Grant, brandID, clientID, brandUser string, now time.Time) bool {
	return g.BrandID == brandID && g.ClientID == clientID && g.BrandUser == brandUser &&
		g.RevokeTime.IsZero() && g.ExpireTime.Unix() > now.Unix()
}

func (c *Cache) grant(ctx context.Context, id string) (db.Grant, bool, error) {
	if g, ok := c.c.GetWithin(id, c.maxAge); ok {
		c.hit.Inc()
		return g, true, nil
	}
	c.miss.Inc()
	gen, start := c.gen.Load(), c.c.Now()
	g, err := c.store.GetGrant(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Grant{}, false, nil
	}
	if err != nil {
		return db.Grant{}, false, err
	}
	if c.gen.Load() == gen {
		c.c.PutAt(id, g, start)
	}
	return g, true, nil
}

// Forget drops a grant (it was revoked).
func (c *Cache) Forget(id string) { c.gen.Add(1); c.c.Delete(id) }

// ForgetClient drops every grant of a client (its agent changed or was
// deleted, which deletes its grants).
func (c *Cache) ForgetClient(clientID string) {
	c.gen.Add(1)
	c.c.DeleteFunc(func(_ string, g db.Grant) bool { return g.ClientID == clientID })
}

// ForgetAll drops every grant.
func (c *Cache) ForgetAll() { c.gen.Add(1); c.c.Clear() }
