package pajwt

import (
	"strings"
	"sync"
)

// maxCachedBytes bounds the strings one cache entry may hold (signature,
// kid and claims); larger tokens are verified in full every time. With it
// the cache holds at most about CacheSize x 1.2 KiB.
const maxCachedBytes = 1024

// cachedToken is what the repeat-token cache remembers about a token that
// passed every check once. It is immutable after insertion.
type cachedToken struct {
	sig    string // the signature segment, compared on every hit
	claims claimSet
	alg    alg
	kid    string   // the header kid ("" when absent)
	keyKID string   // kid of the key that verified it
	thumb  [32]byte // RFC 7638 thumbprint of that key
}

// tokenCache is a sharded LRU keyed by SHA-256 of the JWS signing input.
// Each shard is a map plus an intrusive doubly linked list under one mutex.
type tokenCache struct {
	shards []cacheShard
	mask   uint8
}

type cacheShard struct {
	mu         sync.Mutex
	m          map[[32]byte]*cacheNode
	head, tail *cacheNode // head is the most recently used
	cap        int
	_          [32]byte // keep hot shard mutexes on separate cache lines
}

// cacheNode holds its entry inline, and every string of the entry points
// into one shared allocation (packed): two objects per entry for the
// collector to mark rather than eight, which kept a full cache's mark phase
// (tens of MB of small objects) long enough to show in tail latency
// (docs/benchmarks.md). A node is never reused: a caller may still hold its
// entry.
type cacheNode struct {
	key        [32]byte
	val        cachedToken
	prev, next *cacheNode
}

// packed returns a copy of t whose strings share one allocation.
func (t *cachedToken) packed() cachedToken {
	c := &t.claims
	var b strings.Builder
	b.Grow(t.size())
	for _, s := range [...]string{t.sig, t.kid, t.keyKID, c.iss, c.sub, c.aud, c.jti} {
		b.WriteString(s)
	}
	blob := b.String()
	cut := func(n int) string {
		s := blob[:n]
		blob = blob[n:]
		return s
	}
	out := *t
	out.sig, out.kid, out.keyKID = cut(len(t.sig)), cut(len(t.kid)), cut(len(t.keyKID))
	out.claims.iss, out.claims.sub = cut(len(c.iss)), cut(len(c.sub))
	out.claims.aud, out.claims.jti = cut(len(c.aud)), cut(len(c.jti))
	return out
}

// newTokenCache returns a cache holding about size entries (one shard below
// 256 entries, 16 shards above, each with size/shards entries).
func newTokenCache(size int) *tokenCache {
	n := 1
	if size >= 256 {
		n = 16
	}
	per := (size + n - 1) / n
	c := &tokenCache{shards: make([]cacheShard, n), mask: uint8(n - 1)}
	for i := range c.shards {
		c.shards[i].m = make(map[[32]byte]*cacheNode)
		c.shards[i].cap = per
	}
	return c
}

func (c *tokenCache) shard(key *[32]byte) *cacheShard {
	return &c.shards[key[0]&c.mask]
}

// size returns the bytes of strings the entry holds.
func (t *cachedToken) size() int {
	c := &t.claims
	return len(t.sig) + len(t.kid) + len(t.keyKID) + len(c.iss) + len(c.sub) + len(c.aud) + len(c.jti)
}

// get returns the entry for key if its signature segment equals sig
// (compared in constant time), and marks it most recently used.
func (c *tokenCache) get(key *[32]byte, sig string) (*cachedToken, bool) {
	s := c.shard(key)
	s.mu.Lock()
	n := s.m[*key]
	if n == nil || !constantTimeEqual(n.val.sig, sig) {
		s.mu.Unlock()
		return nil, false
	}
	s.moveToFront(n)
	s.mu.Unlock()
	return &n.val, true
}

// put inserts or replaces the entry for key with a packed copy of v,
// evicting the least recently used entry of the shard when it is full.
func (c *tokenCache) put(key *[32]byte, v *cachedToken) {
	if v.size() > maxCachedBytes {
		return
	}
	n := &cacheNode{key: *key, val: v.packed()} // outside the lock
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.m[*key]; old != nil {
		s.unlink(old)
	} else if len(s.m) >= s.cap && s.tail != nil {
		lru := s.tail
		s.unlink(lru)
		delete(s.m, lru.key)
	}
	s.m[*key] = n
	s.pushFront(n)
}

// remove drops the entry for key if it is still the one get returned as v.
func (c *tokenCache) remove(key *[32]byte, v *cachedToken) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.m[*key]; n != nil && &n.val == v {
		s.unlink(n)
		delete(s.m, *key)
	}
}

// len returns the number of entries (tests).
func (c *tokenCache) len() int {
	total := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		total += len(s.m)
		s.mu.Unlock()
	}
	return total
}

func (s *cacheShard) pushFront(n *cacheNode) {
	n.prev, n.next = nil, s.head
	if s.head != nil {
		s.head.prev = n
	}
	s.head = n
	if s.tail == nil {
		s.tail = n
	}
}

func (s *cacheShard) unlink(n *cacheNode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		s.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		s.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

func (s *cacheShard) moveToFront(n *cacheNode) {
	if s.head == n {
		return
	}
	s.unlink(n)
	s.pushFront(n)
}

// constantTimeEqual compares two strings in time that depends only on their
// lengths (like crypto/subtle.ConstantTimeCompare, without converting the
// strings to byte slices).
func constantTimeEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var v byte
	for i := 0; i < len(a); i++ {
		v |= a[i] ^ b[i]
	}
	return v == 0
}
