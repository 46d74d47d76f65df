package pajwt_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/pajwt"
)

// TestRepeatTokenCache: a repeated token skips only the signature; every
// other check runs again against the current agent, keys and clock.
func TestRepeatTokenCache(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	sameKid := newESSigner(t, "es-1")
	tests := []struct {
		name   string
		claims func(map[string]any)
		change func(t *testing.T, f *fixture)
		want   pajwt.Reason
	}{
		{name: "ok/repeat-is-cached"},
		{name: "ok/no-jti-accepted-again", claims: func(m map[string]any) { delete(m, "jti") }},
		{name: "ok/clock-at-exp-plus-skew", change: func(t *testing.T, f *fixture) { f.clock.Advance(150 * time.Second) }},
		{name: "fail/clock-past-exp-plus-skew", change: func(t *testing.T, f *fixture) { f.clock.Advance(151 * time.Second) }, want: pajwt.ReasonExpired},
		{name: "fail/clock-moved-back-before-iat", change: func(t *testing.T, f *fixture) { f.clock.Advance(-31 * time.Second) }, want: pajwt.ReasonNotYetValid},
		{name: "fail/agent-disabled", change: func(t *testing.T, f *fixture) { f.book.update(testIssuer, func(a *pajwt.Agent) { a.Enabled = false }) }, want: pajwt.ReasonAgentDisabled},
		{name: "fail/agent-deleted", change: func(t *testing.T, f *fixture) {
			f.book.mu.Lock()
			delete(f.book.agents, testIssuer)
			f.book.mu.Unlock()
		}, want: pajwt.ReasonUnknownIssuer},
		{name: "fail/audience-changed", change: func(t *testing.T, f *fixture) {
			f.book.update(testIssuer, func(a *pajwt.Agent) { a.Audience = "https://new.example/a2a" })
		}, want: pajwt.ReasonAudience},
		{name: "fail/key-withdrawn", change: func(t *testing.T, f *fixture) { f.keys.put(mustKeySet(t, s.rs.key(t)), nil) }, want: pajwt.ReasonUnknownKey},
		{name: "fail/kid-reused-for-other-key", change: func(t *testing.T, f *fixture) { f.keys.put(mustKeySet(t, sameKid.key(t), s.rs.key(t)), nil) }, want: pajwt.ReasonUnknownKey},
		{name: "ok/key-still-published-after-rotation", change: func(t *testing.T, f *fixture) {
			f.keys.put(mustKeySet(t, newESSigner(t, "es-9").key(t), s.es.key(t)), nil)
		}},
		{name: "fail/jwks-unavailable", change: func(t *testing.T, f *fixture) { f.keys.put(nil, jose.ErrUnavailable) }, want: pajwt.ReasonJWKSUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, s, nil)
			auth := bearer(f.token(t, s.es, nil, tt.claims))
			first, err := f.verify(t, auth)
			if err != nil || first.Cached {
				t.Fatalf("first: %v, cached %v", err, first.Cached)
			}
			second, err := f.verify(t, auth)
			if err != nil || !second.Cached {
				t.Fatalf("second: %v, cached %v", err, second.Cached)
			}
			second.Cached = false
			if second != first {
				t.Fatalf("cached result differs:\n%+v\n%+v", second, first)
			}
			if tt.change != nil {
				tt.change(t, f)
			}
			calls := f.book.calls.Load()
			third, err := f.verify(t, auth)
			if f.book.calls.Load() != calls+1 {
				t.Fatal("the agent lookup was skipped for a cached token")
			}
			if tt.want == pajwt.ReasonUnspecified {
				if err != nil || !third.Cached {
					t.Fatalf("third: %v, cached %v", err, third.Cached)
				}
				return
			}
			wantReason(t, err, tt.want)
		})
	}
}

func TestRepeatTokenCacheNeverServesAnotherSignature(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	f := newFixture(t, s, nil)
	tok := f.token(t, s.es, nil, nil)
	for range 2 {
		if _, err := f.verify(t, bearer(tok)); err != nil {
			t.Fatal(err)
		}
	}
	h, p, sg := segments(tok)
	raw, _ := b64.DecodeString(sg)
	raw[10] ^= 1
	_, err := f.verify(t, bearer(h+"."+p+"."+b64.EncodeToString(raw)))
	wantReason(t, err, pajwt.ReasonSignature)
	// Another valid signature over the same input (ECDSA is randomized) is a
	// different token: it is verified, not served from the cache.
	other := h + "." + p + "." + b64.EncodeToString(s.es.signInput(t, h+"."+p))
	res, err := f.verify(t, bearer(other))
	if err != nil || res.Cached {
		t.Fatalf("re-signed token: %v cached %v", err, res.Cached)
	}
}

func TestRepeatTokenCacheDisabledAndEviction(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	t.Run("ok/disabled", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, s, func(c *pajwt.Config) { c.CacheSize = -1 })
		auth := bearer(f.token(t, s.es, nil, nil))
		for range 3 {
			res, err := f.verify(t, auth)
			if err != nil || res.Cached {
				t.Fatalf("err %v cached %v", err, res.Cached)
			}
		}
	})
	t.Run("ok/lru-eviction", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, s, func(c *pajwt.Config) { c.CacheSize = 2 })
		toks := make([]string, 3)
		for i := range toks {
			toks[i] = bearer(f.token(t, s.es, nil, set1("jti", fmt.Sprint(i))))
		}
		verify := func(i int) bool {
			res, err := f.verify(t, toks[i])
			if err != nil {
				t.Fatal(err)
			}
			return res.Cached
		}
		// Each step: token index and whether it must be a cache hit.
		steps := []struct {
			i   int
			hit bool
		}{
			{0, false}, // [0]
			{1, false}, // [1 0]
			{0, true},  // [0 1]
			{2, false}, // [2 0], 1 evicted
			{1, false}, // [1 2], 0 evicted
			{2, true},  // [2 1]
			{0, false}, // [0 2]
		}
		for n, st := range steps {
			if got := verify(st.i); got != st.hit {
				t.Fatalf("step %d (token %d): cached %v, want %v", n, st.i, got, st.hit)
			}
		}
	})
}

// TestRepeatTokenCacheSkipsHugeTokens: tokens whose strings exceed the
// per-entry bound are accepted but never cached.
func TestRepeatTokenCacheSkipsHugeTokens(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	f := newFixture(t, s, nil)
	huge := bearer(f.token(t, s.es, nil, set1("jti", strings.Repeat("j", 2000))))
	small := bearer(f.token(t, s.es, nil, set1("jti", strings.Repeat("j", 500))))
	for i := range 2 {
		if res, err := f.verify(t, huge); err != nil || res.Cached {
			t.Fatalf("huge #%d: %v cached %v", i, err, res.Cached)
		}
		if res, err := f.verify(t, small); err != nil || res.Cached != (i == 1) {
			t.Fatalf("small #%d: %v cached %v", i, err, res.Cached)
		}
	}
}

// TestConcurrentVerify exercises the verifier and its cache from many
// goroutines (run with -race).
func TestConcurrentVerify(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	f := newFixture(t, s, func(c *pajwt.Config) { c.CacheSize = 8 })
	good := make([]string, 24)
	for i := range good {
		sg := s.es
		if i%6 == 0 {
			sg = s.rs
		}
		good[i] = bearer(f.token(t, sg, nil, set1("sub", fmt.Sprintf("user-%d", i))))
	}
	bad := bearer(f.token(t, newESSigner(t, "es-1"), nil, nil))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 150 {
				k := (g*7 + i) % len(good)
				res, err := f.verify(t, good[k])
				if err != nil || res.Subject != fmt.Sprintf("user-%d", k) {
					errs <- fmt.Errorf("token %d: %v %q", k, err, res.Subject)
					return
				}
				if i%10 == 0 {
					if _, err := f.verify(t, bad); pajwt.ReasonOf(err) != pajwt.ReasonSignature {
						errs <- fmt.Errorf("bad token: %v", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestRepeatTokenCacheStaysWithinCacheSize verifies twice CacheSize
// distinct tokens: CacheEntries never exceeds the bound (CacheSize below
// 256 entries; above, 16 shards of ceil(CacheSize/16)), the cache does
// fill up to it, and a disabled cache holds nothing.
func TestRepeatTokenCacheStaysWithinCacheSize(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	for _, tc := range []struct{ size, bound int }{{5, 5}, {260, 16 * 17}, {-1, 0}} {
		t.Run(fmt.Sprint("size-", tc.size), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, s, func(c *pajwt.Config) { c.CacheSize = tc.size })
			n := max(2*tc.size, 10)
			for i := range n {
				res, err := f.verify(t, bearer(f.token(t, s.es, nil, set1("jti", fmt.Sprint("t-", i)))))
				if err != nil || res.Cached {
					t.Fatalf("token %d: %v cached %v; want a fresh accept", i, err, res.Cached)
				}
				if got := f.v.CacheEntries(); got > tc.bound {
					t.Fatalf("after %d tokens the cache holds %d entries, above its bound %d", i+1, got, tc.bound)
				}
			}
			// Positive control: the bound was reached (for 16 shards,
			// nearly: a shard may see fewer than its share of keys).
			if got := f.v.CacheEntries(); got < tc.bound*9/10 {
				t.Errorf("after %d tokens the cache holds %d entries; want about %d", n, got, tc.bound)
			}
		})
	}
}
