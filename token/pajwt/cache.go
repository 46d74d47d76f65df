package pajwt

import (
	"cmp"
	"slices"
	"sync"
	"unsafe"

	"pactd.dev/pactd/token/offheap"
)

// maxCachedBytes bounds the strings one cache entry may hold (signature,
// kid and claims); larger tokens are verified in full every time.
const maxCachedBytes = 1024

// arenaBytesPerEntry is the string space a shard reserves per entry it may
// hold: a typical ES256 token's strings take 250–350 bytes, an RS256
// token's 500–600. A shard whose entries are larger on average holds fewer
// of them (it evicts to make room), so the cache's memory is at most about
// CacheSize × (arenaBytesPerEntry + a 144-byte slot + its index entry),
// however large the tokens.
const arenaBytesPerEntry = 640

// cachedToken is what the repeat-token cache remembers about a token that
// passed every check once. get hands out a copy: the cache's own storage
// is reused.
type cachedToken struct {
	sig    string // the signature segment, compared on every hit
	claims claimSet
	alg    alg
	kid    string   // the header kid ("" when absent)
	keyKID string   // kid of the key that verified it
	thumb  [32]byte // RFC 7638 thumbprint of that key
}

// tokenCache is a sharded LRU keyed by SHA-256 of the JWS signing input.
//
// It holds no pointer per entry. A shard keeps its entries in one slice of
// pointer-free slots, their strings in one byte arena (both outside the Go
// heap), and its index in a map from key to slot number, so a full cache is
// a handful of objects per shard that the garbage collector marks without
// scanning them. With one object (or
// two) per entry, a full cache was hundreds of thousands of objects to
// mark each cycle: tens of milliseconds of mark work on the process's one
// core, during which requests queued (docs/benchmarks.md, "The collector and memory").
type tokenCache struct {
	shards []cacheShard
	mask   uint8
}

type cacheShard struct {
	// mem holds slots and data outside the Go heap (token/offheap): the
	// collector neither counts a full cache toward its heap goal, which
	// would let as many bytes of garbage pile up before each collection,
	// nor sweeps it. Every shard refers to it, so the mapping lives as long
	// as any shard is in use.
	mem     *offheap.Region
	mu      sync.Mutex
	index   map[[32]byte]int32 // key → slot number
	slots   []slot             // grows to cap; dropped slots are reused
	free    []int32            // dropped slots
	scratch []int32            // compact's list of live slots
	data    []byte             // the arena: entries' strings, back to back
	used    int                // arena bytes written (live or not) from the start
	live    int                // arena bytes of entries in the cache
	head    int32              // most recently used slot, or -1
	tail    int32              // least recently used slot, or -1
	gen     uint32             // last generation handed to an entry
	cap     int
	_       [32]byte // keep hot shard mutexes on separate cache lines
}

// field numbers of a slot's strings, in arena order.
const (
	fieldSig = iota
	fieldKID
	fieldKeyKID
	fieldIss
	fieldSub
	fieldAud
	fieldJTI
	numFields
)

// slot is one entry, with no pointer in it (TestCacheSlotHasNoPointers).
type slot struct {
	key        [32]byte
	thumb      [32]byte
	facts      claimFacts
	off        uint32            // where its strings start in the arena
	lens       [numFields]uint16 // each string's length, in field order
	gen        uint32            // tells a replaced entry from its replacement
	prev, next int32             // LRU list; -1 ends it
	alg        alg
}

func (s *slot) size() int {
	n := 0
	for _, l := range s.lens {
		n += int(l)
	}
	return n
}

// newTokenCache returns a cache holding about size entries (one shard below
// 256 entries, 16 shards above, each with size/shards entries). Its memory
// is reserved here but touched only as entries arrive.
func newTokenCache(size int) *tokenCache {
	n := 1
	if size >= 256 {
		n = 16
	}
	per := (size + n - 1) / n
	arena := max(per*arenaBytesPerEntry, 2*maxCachedBytes)
	slotAlign := int(unsafe.Alignof(slot{}))
	perShard := per*int(unsafe.Sizeof(slot{})) + arena + slotAlign
	mem := offheap.New(n * perShard)
	c := &tokenCache{shards: make([]cacheShard, n), mask: uint8(n - 1)}
	for i := range c.shards {
		s := &c.shards[i]
		s.mem = mem
		s.index = make(map[[32]byte]int32)
		s.slots = offheap.Slice[slot](mem, per)
		s.data = offheap.Bytes(mem, arena)
		s.head, s.tail, s.cap = -1, -1, per
	}
	return c
}

func (c *tokenCache) shard(key *[32]byte) *cacheShard {
	return &c.shards[key[0]&c.mask]
}

// size returns the bytes of strings the entry holds.
func (t *cachedToken) size() int {
	n := 0
	for _, f := range t.fields() {
		n += len(f)
	}
	return n
}

// fields returns the entry's strings in arena order.
func (t *cachedToken) fields() [numFields]string {
	c := &t.claims
	return [numFields]string{t.sig, t.kid, t.keyKID, c.iss, c.sub, c.aud, c.jti}
}

// get returns a copy of the entry for key if its signature segment equals
// sig (compared in constant time), with its generation for remove, and
// marks it most recently used.
func (c *tokenCache) get(key *[32]byte, sig string) (cachedToken, uint32, bool) {
	s := c.shard(key)
	s.mu.Lock()
	i, ok := s.index[*key]
	if !ok {
		s.mu.Unlock()
		return cachedToken{}, 0, false
	}
	e := &s.slots[i]
	if !constantTimeEqualBytes(s.data[e.off:e.off+uint32(e.lens[fieldSig])], sig) {
		s.mu.Unlock()
		return cachedToken{}, 0, false
	}
	// One allocation holds every string of the copy.
	blob := string(s.data[e.off : e.off+uint32(e.size())])
	out := cachedToken{alg: e.alg, thumb: e.thumb}
	out.claims.claimFacts = e.facts
	gen, lens := e.gen, e.lens
	s.moveToFront(i)
	s.mu.Unlock()
	var f [numFields]string
	for j, l := range lens {
		f[j], blob = blob[:l], blob[l:]
	}
	out.sig, out.kid, out.keyKID = f[fieldSig], f[fieldKID], f[fieldKeyKID]
	out.claims.iss, out.claims.sub, out.claims.aud, out.claims.jti = f[fieldIss], f[fieldSub], f[fieldAud], f[fieldJTI]
	return out, gen, true
}

// put inserts or replaces the entry for key with a copy of v, evicting the
// least recently used entries of the shard when it has no slot or no arena
// space left.
func (c *tokenCache) put(key *[32]byte, v *cachedToken) {
	n := v.size()
	if n > maxCachedBytes {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[*key]; ok {
		s.drop(i) // replaced: its strings become a hole
	}
	for len(s.index) >= s.cap {
		s.drop(s.tail)
	}
	// Room in the arena: compact when the holes suffice, else evict first.
	// n ≤ len(s.data)/2, so while live+n does not fit there is an entry.
	for s.used+n > len(s.data) {
		if s.live+n > len(s.data) {
			s.drop(s.tail)
			continue
		}
		s.compact()
	}
	var i int32
	if k := len(s.free); k > 0 {
		i, s.free = s.free[k-1], s.free[:k-1]
	} else {
		s.slots = append(s.slots, slot{})
		i = int32(len(s.slots) - 1)
	}
	e := &s.slots[i]
	s.gen++
	*e = slot{key: *key, thumb: v.thumb, facts: v.claims.claimFacts, off: uint32(s.used), gen: s.gen, alg: v.alg}
	for j, f := range v.fields() {
		e.lens[j] = uint16(len(f))
		s.used += copy(s.data[s.used:], f)
	}
	s.live += n
	s.index[*key] = i
	s.pushFront(i)
}

// drop takes slot i's entry out of the cache; the slot goes to the free
// list and its strings become a hole in the arena.
func (s *cacheShard) drop(i int32) {
	s.unlink(i)
	delete(s.index, s.slots[i].key)
	s.live -= s.slots[i].size()
	s.free = append(s.free, i)
}

// compact slides the live entries' strings down to the start of the
// arena, in arena order (so each moves toward the start and none is
// overwritten before it is copied); afterwards used == live. It allocates
// nothing once the shard's scratch list has grown.
func (s *cacheShard) compact() {
	order := s.scratch[:0]
	for i := s.head; i >= 0; i = s.slots[i].next {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(s.slots[a].off, s.slots[b].off) })
	off := 0
	for _, i := range order {
		e := &s.slots[i]
		n := e.size()
		copy(s.data[off:], s.data[e.off:int(e.off)+n])
		e.off = uint32(off)
		off += n
	}
	s.scratch = order
	s.used, s.live = off, off
}

// remove drops the entry for key if it is still the one get returned with
// generation gen.
func (c *tokenCache) remove(key *[32]byte, gen uint32) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[*key]; ok && s.slots[i].gen == gen {
		s.drop(i)
	}
}

// len returns the number of entries (tests).
func (c *tokenCache) len() int {
	total := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		total += len(s.index)
		s.mu.Unlock()
	}
	return total
}

func (s *cacheShard) pushFront(i int32) {
	e := &s.slots[i]
	e.prev, e.next = -1, s.head
	if s.head >= 0 {
		s.slots[s.head].prev = i
	}
	s.head = i
	if s.tail < 0 {
		s.tail = i
	}
}

func (s *cacheShard) unlink(i int32) {
	e := &s.slots[i]
	if e.prev >= 0 {
		s.slots[e.prev].next = e.next
	} else {
		s.head = e.next
	}
	if e.next >= 0 {
		s.slots[e.next].prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

func (s *cacheShard) moveToFront(i int32) {
	if s.head == i {
		return
	}
	s.unlink(i)
	s.pushFront(i)
}

// constantTimeEqualBytes compares b and s in time that depends only on
// their lengths (like crypto/subtle.ConstantTimeCompare, without
// converting).
func constantTimeEqualBytes(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	var v byte
	for i := 0; i < len(b); i++ {
		v |= b[i] ^ s[i]
	}
	return v == 0
}
