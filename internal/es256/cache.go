package es256

import (
	"crypto/ecdsa"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for [Config].
const (
	// DefaultMaxBytes is the default budget of a Cache: 64 MiB, 295 tables.
	DefaultMaxBytes = 64 << 20
	// DefaultBuildAfter is the default number of successful stock
	// verifications of a key before its table is built. A table costs
	// about 15 stock verifications to build and saves almost 60 % of each
	// later one, so it pays for itself after about 27; building at 32 (the
	// rent-or-buy rule, a little past the break-even point) costs a key
	// that stops verifying soon after at most about 1.7 times what the best
	// choice, made knowing the future, would have, and makes an attacker
	// present that many valid signatures per key before pactd spends table
	// CPU on it (docs/es256-tables.md).
	DefaultBuildAfter = 32
	// DefaultBuildsPerSecond bounds table builds (about 1 ms of CPU each):
	// at most about 2 % of a core, whatever keys are presented.
	DefaultBuildsPerSecond = 16
)

// Config configures a [Cache]. Zero fields take the defaults.
type Config struct {
	// MaxBytes bounds the memory all tables hold together (TableBytes
	// each). Default DefaultMaxBytes. A budget smaller than one table
	// builds none.
	MaxBytes int64
	// BuildAfter is the number of successful stock verifications a key
	// makes before its table is built (and again after its table was
	// evicted). Default DefaultBuildAfter; 1 builds on the first success.
	BuildAfter int
	// BuildsPerSecond bounds table builds, with a burst of as many.
	// Default DefaultBuildsPerSecond.
	BuildsPerSecond float64
	// Now is the clock of the build rate. Default time.Now.
	Now func() time.Time
}

// Cache holds the tables of many keys within a byte budget. It is safe for
// concurrent use.
type Cache struct {
	max        int64
	buildAfter uint32
	rate       float64
	now        func() time.Time

	mu     sync.Mutex
	held   []*Key // keys whose table is published
	hand   int    // the eviction clock's position in held
	bytes  int64  // published tables and builds in progress
	tokens float64
	last   time.Time

	builds, evicted, released, refusedRate, refusedBudget atomic.Uint64
	viaTable, viaStock                                    atomic.Uint64
}

// NewCache builds a Cache from cfg.
func NewCache(cfg Config) *Cache {
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.BuildAfter <= 0 {
		cfg.BuildAfter = DefaultBuildAfter
	}
	if cfg.BuildsPerSecond <= 0 {
		cfg.BuildsPerSecond = DefaultBuildsPerSecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cache{max: cfg.MaxBytes, buildAfter: uint32(min(cfg.BuildAfter, 1<<30)), rate: cfg.BuildsPerSecond, now: cfg.Now}
	c.tokens = c.burst()
	c.last = c.now()
	return c
}

func (c *Cache) burst() float64 { return max(1, c.rate) }

// Stats are a Cache's counters, for metrics.
type Stats struct {
	// Tables and Bytes are the tables held now and their bytes (builds in
	// progress included); MaxBytes is the budget.
	Tables          int
	Bytes, MaxBytes int64
	// Builds counts tables built; Evicted, tables dropped to make room;
	// Released, tables dropped because their key left its key set.
	Builds, Evicted, Released uint64
	// RefusedRate and RefusedBudget count builds not started because of
	// the build rate or because no room could be made.
	RefusedRate, RefusedBudget uint64
	// ViaTable and ViaStock count verifications by the path they took.
	ViaTable, ViaStock uint64
}

// Stats returns the counters now.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	tables, bytes := len(c.held), c.bytes
	c.mu.Unlock()
	return Stats{
		Tables: tables, Bytes: bytes, MaxBytes: c.max,
		Builds: c.builds.Load(), Evicted: c.evicted.Load(), Released: c.released.Load(),
		RefusedRate: c.refusedRate.Load(), RefusedBudget: c.refusedBudget.Load(),
		ViaTable: c.viaTable.Load(), ViaStock: c.viaStock.Load(),
	}
}

// Key is one public key as a verifier: stock until its Cache builds it a
// table. Build keys with [Cache.NewKey] (a nil Cache gives a key that
// always verifies with crypto/ecdsa). It is safe for concurrent use.
type Key struct {
	pub   *ecdsa.PublicKey
	cache *Cache

	table atomic.Pointer[Table]
	wins  atomic.Uint32 // successful stock verifications since the last build attempt
	used  atomic.Bool   // verified through the table since the clock last passed

	// Guarded by cache.mu.
	idx      int // position in cache.held, or -1
	building bool
	gone     bool // released: never build again
}

// NewKey returns pub as a verifier whose table, once earned, lives in c.
// c may be nil: the key then always verifies with VerifyStock.
func (c *Cache) NewKey(pub *ecdsa.PublicKey) *Key {
	return &Key{pub: pub, cache: c, idx: -1}
}

// Public returns the key.
func (k *Key) Public() *ecdsa.PublicKey { return k.pub }

// HasTable reports whether the key verifies through a table now.
func (k *Key) HasTable() bool { return k.table.Load() != nil }

// Verify checks a raw 64-byte R||S signature over digest, as VerifyStock
// does, through the key's table when it has one. A successful stock
// verification counts toward the key's table.
func (k *Key) Verify(digest *[32]byte, sig []byte) bool {
	if k == nil {
		return false
	}
	c := k.cache
	if c == nil {
		return VerifyStock(k.pub, digest, sig)
	}
	if t := k.table.Load(); t != nil {
		if !k.used.Load() {
			k.used.Store(true)
		}
		c.viaTable.Add(1)
		return t.Verify(digest, sig)
	}
	c.viaStock.Add(1)
	ok := VerifyStock(k.pub, digest, sig)
	if ok && k.wins.Add(1) >= c.buildAfter {
		c.build(k)
	}
	return ok
}

// Release drops the key's table and keeps it from building another: its
// key has left its key set. Verifications still running with it finish
// through the table they hold, or stock.
func (k *Key) Release() {
	c := k.cache
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k.gone = true
	if k.idx >= 0 {
		c.drop(k)
		c.released.Add(1)
	}
}

// build makes k's table if the rate and the budget allow, on the calling
// goroutine; a refused key starts counting again. The table is computed
// outside the lock, its bytes reserved first so that concurrent builds
// cannot overrun the budget.
func (c *Cache) build(k *Key) {
	c.mu.Lock()
	if k.gone || k.building || k.idx >= 0 {
		c.mu.Unlock()
		return
	}
	k.wins.Store(0)
	if !c.takeToken() {
		c.refusedRate.Add(1)
		c.mu.Unlock()
		return
	}
	if !c.makeRoom(TableBytes) {
		c.refusedBudget.Add(1)
		c.mu.Unlock()
		return
	}
	c.bytes += TableBytes
	k.building = true
	c.mu.Unlock()

	t, err := NewTable(k.pub)

	c.mu.Lock()
	defer c.mu.Unlock()
	k.building = false
	if err != nil || k.gone {
		c.bytes -= TableBytes
		return
	}
	c.builds.Add(1)
	k.used.Store(true) // a new table gets one pass of the clock
	k.idx = len(c.held)
	c.held = append(c.held, k)
	k.table.Store(t)
}

// takeToken takes one build from the rate's bucket. c.mu is held.
func (c *Cache) takeToken() bool {
	now := c.now()
	if el := now.Sub(c.last); el > 0 {
		c.tokens = min(c.burst(), c.tokens+el.Seconds()*c.rate)
	}
	c.last = now
	if c.tokens < 1 {
		return false
	}
	c.tokens--
	return true
}

// makeRoom evicts tables, least recently used first by the second-chance
// clock, until need more bytes fit the budget. c.mu is held.
func (c *Cache) makeRoom(need int64) bool {
	for c.bytes+need > c.max {
		if len(c.held) == 0 {
			return false
		}
		// One pass clears every used bit, so two passes find a victim.
		for range 2 * len(c.held) {
			if c.hand >= len(c.held) {
				c.hand = 0
			}
			k := c.held[c.hand]
			if k.used.Swap(false) {
				c.hand++
				continue
			}
			c.drop(k)
			c.evicted.Add(1)
			break
		}
	}
	return true
}

// drop unpublishes k's table and returns its bytes. c.mu is held.
func (c *Cache) drop(k *Key) {
	last := len(c.held) - 1
	moved := c.held[last]
	c.held[k.idx] = moved
	moved.idx = k.idx
	c.held[last] = nil
	c.held = c.held[:last]
	k.idx = -1
	k.table.Store(nil)
	k.wins.Store(0)
	c.bytes -= TableBytes
}
