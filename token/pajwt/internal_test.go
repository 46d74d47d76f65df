package pajwt

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/jws"
)

// TestVerifyWithVectors checks the ES256 path on published vectors: RFC 7515
// A.3, and a signature whose R has a leading zero byte (a correctly padded
// one passes, the 63-byte unpadded form fails).
func TestVerifyWithVectors(t *testing.T) {
	t.Parallel()
	key := func(x, y string) *jose.Key {
		set, err := jose.ParseJWKS([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"`+x+`","y":"`+y+`"}]}`), 0)
		if err != nil {
			t.Fatal(err)
		}
		return set.At(0)
	}
	check := func(k *jose.Key, token string) bool {
		i := strings.LastIndexByte(token, '.')
		sig, err := base64.RawURLEncoding.DecodeString(token[i+1:])
		if err != nil {
			t.Fatal(err)
		}
		d := sha256.Sum256([]byte(token[:i]))
		return verifyWith(k, algES256, &d, sig)
	}
	rfc := key("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
	if !check(rfc, "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q") {
		t.Fatal("RFC 7515 A.3 vector does not verify")
	}
	padded := key("Anf1p2lRrcXgZKpVRRC1xLxPiw_45PbOlygfbxvD8Es", "d0HiZq-aurVVLLtK-xqXPpzpWloZJNwKNve7akBDuvg")
	if !check(padded, "eyJhbGciOiJFUzI1NiJ9.TG9yZW0gSXBzdW0.ALFru4CRZDiAlVKyyHtlLGtXIAWxC3lXIlZuYO8G8a5ePzCwyw6c2FzWBZwrLaoLFZb_TcYs3TcZ8mhONPaavQ") {
		t.Fatal("R with a leading zero does not verify")
	}
	if check(padded, "eyJhbGciOiJFUzI1NiJ9.TG9yZW0gSXBzdW0.sWu7gJFkOICVUrLIe2Usa1cgBbELeVciVm5g7wbxrl4_MLDLDpzYXNYFnCstqgsVlv9NxizdNxnyaE409pq9") {
		t.Fatal("63-byte unpadded signature accepted")
	}
	// Wrong key type for the algorithm never verifies.
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k, _ := jose.NewECKey("", &ec.PublicKey)
	var d [32]byte
	if verifyWith(&k, algRS256, &d, make([]byte, 256)) || verifyWith(&k, algNone, &d, make([]byte, 64)) {
		t.Fatal("verified with the wrong algorithm")
	}
}

func TestConstantTimeEqual(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		eq   bool
	}{{"", "", true}, {"abc", "abc", true}, {"abc", "abd", false}, {"abc", "ab", false}, {"xbc", "abc", false}} {
		if got := constantTimeEqualBytes([]byte(tt.a), tt.b); got != tt.eq {
			t.Errorf("constantTimeEqualBytes(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

func TestErrorFormatting(t *testing.T) {
	t.Parallel()
	e := &Error{Reason: ReasonSignature, Err: io.EOF}
	if e.Error() != "pajwt: refused: signature: EOF" || !errors.Is(e, io.EOF) || ReasonOf(e) != ReasonSignature {
		t.Fatalf("%v", e)
	}
	if (&Error{Reason: ReasonExpired}).Error() != "pajwt: refused: expired" {
		t.Fatal("no-cause form")
	}
}

// cacheEntry is a distinct entry for key i whose strings take about
// extra more bytes than the base ones.
func cacheEntry(i, extra int) *cachedToken {
	e := &cachedToken{
		sig: fmt.Sprintf("sig-%d", i), kid: "kid", keyKID: fmt.Sprintf("key-%d", i), alg: algES256, thumb: [32]byte{byte(i), 7},
		claims: claimSet{iss: "https://pa.example", sub: fmt.Sprintf("user-%d", i) + strings.Repeat("x", extra), aud: "https://provider.example/a2a", jti: fmt.Sprintf("jti-%d", i)},
	}
	e.claims.exp, e.claims.expK, e.claims.subBad = float64(i), jws.KindNumber, i%2 == 1
	return e
}

func cacheKey(i int) *[32]byte { k := [32]byte{byte(i), byte(i >> 8), byte(i >> 16), 1}; return &k }

// A cached entry gives back every value it was put with; the copy a caller
// holds stays intact when the cache evicts or replaces the entry (its slot
// and arena bytes are reused), and a stale generation removes nothing.
func TestTokenCacheCopiesAndGenerations(t *testing.T) {
	c := newTokenCache(1) // one shard of one entry
	k1, k2 := cacheKey(1), cacheKey(2)
	c.put(k1, cacheEntry(1, 0))
	got, _, ok := c.get(k1, "sig-1")
	if !ok {
		t.Fatal("entry not found")
	}
	if want := cacheEntry(1, 0); got != *want {
		t.Fatalf("cached %+v, want %+v", got, *want)
	}
	if _, _, ok := c.get(k1, "sig-2"); ok {
		t.Fatal("served for another signature")
	}
	c.put(k2, cacheEntry(2, 0)) // evicts k1, reusing its slot and bytes
	if _, _, ok := c.get(k1, "sig-1"); ok {
		t.Fatal("evicted entry still served")
	}
	if got != *cacheEntry(1, 0) {
		t.Fatalf("a held copy changed after eviction: %+v", got)
	}
	held, gen, _ := c.get(k2, "sig-2")
	c.put(k2, cacheEntry(3, 0)) // replaces k2
	c.remove(k2, gen)           // the stale generation must not remove its replacement
	now, gen3, ok := c.get(k2, "sig-3")
	if !ok || now != *cacheEntry(3, 0) || held != *cacheEntry(2, 0) {
		t.Fatalf("replacement: ok=%v now=%+v held=%+v", ok, now, held)
	}
	c.remove(k2, gen3)
	if _, _, ok := c.get(k2, "sig-3"); ok || c.len() != 0 {
		t.Fatalf("removed entry still served (len %d)", c.len())
	}
	// An entry over maxCachedBytes is not cached at all.
	c.put(k1, cacheEntry(1, maxCachedBytes))
	if c.len() != 0 {
		t.Fatal("oversized entry cached")
	}
}

// The cache is LRU by count and bounded by its arena: entries larger than
// arenaBytesPerEntry on average evict the least recently used ones to make
// room, holes left by evictions are compacted away, and every entry still
// in the cache reads back exactly as it was put.
func TestTokenCacheArena(t *testing.T) {
	const size = 64 // one shard
	c := newTokenCache(size)
	s := &c.shards[0]
	// By count: size+16 small entries leave the last size, the first 16 gone.
	for i := range size + 16 {
		c.put(cacheKey(i), cacheEntry(i, 0))
	}
	if c.len() != size {
		t.Fatalf("len = %d, want %d", c.len(), size)
	}
	for i := range size + 16 {
		got, _, ok := c.get(cacheKey(i), fmt.Sprintf("sig-%d", i))
		if want := i >= 16; ok != want || ok && got != *cacheEntry(i, 0) {
			t.Fatalf("entry %d: served %v (%+v), want %v", i, ok, got, want)
		}
	}
	// Recency, not age: touch entry 16, and it outlives the next eviction.
	c.get(cacheKey(16), "sig-16")
	c.put(cacheKey(1000), cacheEntry(1000, 0))
	if _, _, ok := c.get(cacheKey(16), "sig-16"); !ok {
		t.Fatal("recently used entry evicted")
	}
	if _, _, ok := c.get(cacheKey(17), "sig-17"); ok {
		t.Fatal("least recently used entry kept")
	}
	// By bytes: entries near maxCachedBytes fill the arena before the count.
	big := maxCachedBytes - cacheEntry(2000, 0).size()
	for i := 2000; i < 2000+size; i++ {
		c.put(cacheKey(i), cacheEntry(i, big))
		if s.live > len(s.data) || s.used > len(s.data) {
			t.Fatalf("arena overflow: live %d used %d of %d", s.live, s.used, len(s.data))
		}
	}
	n := c.len()
	if want := len(s.data) / cacheEntry(2000, big).size(); n != want || n >= size {
		t.Fatalf("len with large entries = %d, want %d (what the arena holds)", n, want)
	}
	for i := 2000 + size - n; i < 2000+size; i++ {
		if got, _, ok := c.get(cacheKey(i), fmt.Sprintf("sig-%d", i)); !ok || got != *cacheEntry(i, big) {
			t.Fatalf("large entry %d: served %v, %+v", i, ok, got)
		}
	}
	// live counts exactly the bytes of the entries in the cache.
	want := 0
	for k, i := range s.index {
		want += s.slots[i].size()
		if s.slots[i].key != k {
			t.Fatalf("slot %d holds key %x, indexed as %x", i, s.slots[i].key, k)
		}
	}
	if s.live != want || len(s.slots)-len(s.free) != len(s.index) {
		t.Fatalf("live = %d, want %d; %d slots, %d free, %d indexed", s.live, want, len(s.slots), len(s.free), len(s.index))
	}
}

// A slot must hold no pointer: slots live outside the Go heap, where the
// collector would not see a pointer and would free what it points to.
// Adding a string or slice field to claimFacts or slot fails here.
func TestCacheSlotHasNoPointers(t *testing.T) {
	var check func(reflect.Type, string)
	check = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				check(ty.Field(i).Type, path+"."+ty.Field(i).Name)
			}
		case reflect.Array:
			check(ty.Elem(), path+"[]")
		case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int,
			reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Float32, reflect.Float64:
		default:
			t.Errorf("%s is a %s: a pointer the collector must scan", path, ty.Kind())
		}
	}
	check(reflect.TypeFor[slot](), "slot")
	check(reflect.TypeFor[[32]byte](), "key")
}

// A full default-size cache keeps its slots and strings outside the Go
// heap: filling 65,536 entries of about 300 bytes grows the collector's
// heap by its index maps only (a few MB), not by the ≈ 50 MB of entries,
// so it neither raises the heap goal nor adds spans to sweep.
func TestFullCacheStaysOffTheGoHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the mapping is checked on Linux")
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	const n = 65536
	c := newTokenCache(n)
	v := cachedToken{sig: strings.Repeat("s", 86), kid: "k1", keyKID: "k1"}
	v.claims.iss, v.claims.sub, v.claims.aud = "https://pa.example", strings.Repeat("u", 40), "https://brand.example"
	for i := range n {
		v.claims.jti = fmt.Sprintf("%0100d", i)
		key := sha256.Sum256([]byte(v.claims.jti))
		c.put(&key, &v)
	}
	if got := c.len(); got < n*9/10 {
		t.Fatalf("cache holds %d entries, want about %d", got, n)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if grew := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grew > 16<<20 {
		t.Fatalf("a full cache grew the Go heap by %d MB; want its index only (< 16 MB)", grew>>20)
	}
	runtime.KeepAlive(c)
}

// Concurrent puts, gets and removes on few shards keep the shard's books
// straight (run under -race by the test command).
func TestTokenCacheConcurrent(t *testing.T) {
	c := newTokenCache(300)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3000 {
				i := (j*7 + w) % 900
				if got, gen, ok := c.get(cacheKey(i), fmt.Sprintf("sig-%d", i)); ok {
					if got != *cacheEntry(i, i%5*200) {
						t.Errorf("entry %d read back as %+v", i, got)
						return
					}
					if j%11 == 0 {
						c.remove(cacheKey(i), gen)
					}
					continue
				}
				c.put(cacheKey(i), cacheEntry(i, i%5*200))
			}
		}()
	}
	wg.Wait()
	if c.len() > 16*((300+15)/16) {
		t.Fatalf("len %d over the bound", c.len())
	}
}
