// Package agentdir is the directory of registered agents as the verifier
// sees it: lookups by exact issuer, cached briefly (found and not found) so
// the hot path and unauthenticated floods of made-up issuers do not reach the
// store on every request.
//
// Freshness: a change made through this replica's AgentService (register,
// update, delete) is applied to the cache at once, so disabling an agent
// takes effect on the very next call here. Other replicas' changes arrive
// through the change feed (Forget), so every replica applies them within
// the feed's revocation bound (1 s by default): an entry is used while it
// is younger than the TTL (default 2 s) and, when the feed is stale, only
// while it is younger than the bound (Feed.MaxAge).
//
// Outages: while the store cannot be read, an issuer whose state was read
// less than the outage grace ago is answered from that state, so PA JWTs
// keep verifying through a database outage; past it the lookup fails
// (closed).
package agentdir

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/ttlcache"
	"pactd.dev/pactd/token/pajwt"
)

// DefaultTTL bounds how long a replica may act on an agent's old state.
const DefaultTTL = 2 * time.Second

// Feed says how old cached state may be right now (*changefeed.Feed).
type Feed interface {
	MaxAge(now time.Time) time.Duration
}

// Store is what the directory reads.
type Store interface {
	GetAgentByIssuer(ctx context.Context, issuer string) (db.Agent, error)
}

// Directory looks agents up by issuer.
type Directory struct {
	store    Store
	audience string
	// cache is keyed by the SHA-256 of the issuer, so that made-up issuers
	// (unauthenticated input, up to pajwt.MaxIssuerBytes) cost 32 bytes a key.
	cache *ttlcache.Cache[[32]byte, entry]
	// gen counts changes; a lookup stores what it read only if no change
	// happened meanwhile, so a slow read cannot undo a disable.
	gen atomic.Uint64
	// grace is how long past its TTL an entry answers while the store
	// cannot be read.
	grace time.Duration
	// maxAge is the feed's freshness rule; nil without a feed.
	maxAge func(time.Time) time.Duration
}

type entry struct {
	agent pajwt.Agent
	found bool
}

// New returns a directory. audience is the Provider-wide audience given to
// agents without an override; outageGrace is how long past its TTL a cached
// state still answers while the store cannot be read (0: never); feed, when
// not nil, limits how old a cached state may be while it is stale.
func New(s Store, audience string, ttl, outageGrace time.Duration, feed Feed, now func() time.Time) *Directory {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	d := &Directory{store: s, audience: audience, grace: outageGrace, cache: ttlcache.New[[32]byte, entry](ttl, 100_000, now)}
	if feed != nil {
		d.maxAge = feed.MaxAge
	}
	return d
}

// Lookup implements pajwt.AgentLookup.
func (d *Directory) Lookup(ctx context.Context, issuer string) (pajwt.Agent, error) {
	key := sha256.Sum256([]byte(issuer))
	if e, ok := d.cache.GetWithin(key, d.maxAge); ok {
		if !e.found {
			return pajwt.Agent{}, pajwt.ErrUnknownAgent
		}
		return e.agent, nil
	}
	gen, start := d.gen.Load(), d.cache.Now()
	a, err := d.store.GetAgentByIssuer(ctx, issuer)
	if errors.Is(err, db.ErrNotFound) {
		d.put(key, gen, start, entry{})
		return pajwt.Agent{}, pajwt.ErrUnknownAgent
	}
	if err != nil {
		if e, ok := d.cache.GetStale(key, d.grace); ok && ctx.Err() == nil {
			if !e.found {
				return pajwt.Agent{}, pajwt.ErrUnknownAgent
			}
			return e.agent, nil
		}
		return pajwt.Agent{}, fmt.Errorf("look up agent: %w", err)
	}
	pa := d.toAgent(a)
	d.put(key, gen, start, entry{agent: pa, found: true})
	return pa, nil
}

// put caches what a lookup that began at start read, unless a change
// happened since it began (the read may predate it).
func (d *Directory) put(key [32]byte, gen uint64, start time.Time, e entry) {
	if d.gen.Load() == gen {
		d.cache.PutAt(key, e, start)
	}
}

// Changed applies an agent's new state (after register, update or delete;
// a deleted agent is passed with Enabled false and is forgotten).
func (d *Directory) Changed(a db.Agent, deleted bool) {
	d.gen.Add(1)
	key := sha256.Sum256([]byte(a.Issuer))
	if deleted {
		d.cache.Delete(key)
		return
	}
	d.cache.Put(key, entry{agent: d.toAgent(a), found: true})
}

// Forget drops what the directory holds for an issuer (a change announced
// by another replica).
func (d *Directory) Forget(issuer string) {
	d.gen.Add(1)
	d.cache.Delete(sha256.Sum256([]byte(issuer)))
}

// ForgetAll drops every cached agent (after missed announcements).
func (d *Directory) ForgetAll() {
	d.gen.Add(1)
	d.cache.Clear()
}

func (d *Directory) toAgent(a db.Agent) pajwt.Agent {
	aud := a.Audience
	if aud == "" {
		aud = d.audience
	}
	return pajwt.Agent{ID: a.ID, Issuer: a.Issuer, JWKSURI: a.JWKSURI, Audience: aud, DisplayName: a.DisplayName, Enabled: a.Enabled}
}

// PAVerifier checks a PA JWT against the directory: what the OAuth endpoints
// use to authenticate the PA as a client.
type PAVerifier struct {
	Verifier  *pajwt.Verifier
	Directory *Directory
}

// VerifyPA verifies the raw Authorization header value. A refused token is
// a *pajwt.Error; any other error is an infrastructure fault.
func (p PAVerifier) VerifyPA(ctx context.Context, authorization string) (pajwt.Result, error) {
	return p.Verifier.Verify(ctx, authorization, p.Directory.Lookup)
}
