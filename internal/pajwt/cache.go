package pajwt

import (
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

type cacheNode struct {
	key        [32]byte
	val        *cachedToken
	prev, next *cacheNode
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
	v := n.val
	s.mu.Unlock()
	return v, true
}

// put inserts or replaces the entry for key, evicting the least recently
// used entry of the shard when it is full (its node is reused).
func (c *tokenCache) put(key *[32]byte, v *cachedToken) {
	if v.size() > maxCachedBytes {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.m[*key]; n != nil {
		n.val = v
		s.moveToFront(n)
		return
	}
	var n *cacheNode
	if len(s.m) >= s.cap && s.tail != nil {
		n = s.tail
		s.unlink(n)
		delete(s.m, n.key)
	} else {
		n = &cacheNode{}
	}
	n.key, n.val = *key, v
	s.m[*key] = n
	s.pushFront(n)
}

// remove drops the entry for key if it still holds v.
func (c *tokenCache) remove(key *[32]byte, v *cachedToken) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.m[*key]; n != nil && n.val == v {
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
