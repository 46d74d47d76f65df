package grantcache_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/core/grantcache"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
)

// countingStore is a real SQLite store that counts grant reads and can
// hold one read after it read (so a change can land while it is in flight).
type countingStore struct {
	db.Store
	reads   atomic.Int64
	entered chan struct{}
	gate    chan struct{}
}

func (s *countingStore) GetGrant(ctx context.Context, id string) (db.Grant, error) {
	s.reads.Add(1)
	g, err := s.Store.GetGrant(ctx, id)
	if s.gate != nil {
		s.entered <- struct{}{}
		<-s.gate
	}
	return g, err
}

// feedState is a change feed whose freshness the test sets.
type feedState struct{ stale atomic.Bool }

func (f *feedState) MaxAge(time.Time) time.Duration {
	if f.stale.Load() {
		return time.Second
	}
	return time.Duration(1<<63 - 1)
}

const (
	pa   = "https://pa.example"
	pa2  = "https://other-pa.example"
	user = "user-7"
)

// newStore makes a SQLite store with two Brands, two agents and grants:
// g1 (acme, pa, user-7, details, expiring at exp), g2 (acme, pa2).
func newStore(t *testing.T, at, exp time.Time) *countingStore {
	t.Helper()
	ctx := t.Context()
	s := dbtest.Open(t, "", t.TempDir())
	for _, b := range []string{"acme", "beta"} {
		if _, err := s.CreateBrand(ctx, db.Brand{ID: b, DisplayName: b, CreateTime: at, UpdateTime: at}); err != nil {
			t.Fatal(err)
		}
	}
	grants := []struct {
		id, agent, issuer, details string
		detailScopes               []string // one per entry (the store's rule)
	}{{"g1", "agt_1", pa, `[{"type":"t"}]`, []string{"orders:read"}}, {"g2", "agt_2", pa2, "", nil}}
	for _, g := range grants {
		if _, err := s.CreateAgent(ctx, db.Agent{ID: g.agent, Issuer: g.issuer, JWKSURI: g.issuer + "/j", DisplayName: g.agent, Enabled: true, CreateTime: at, UpdateTime: at}); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256([]byte(g.id))
		if _, err := s.CreateDeviceAuthorization(ctx, db.DeviceAuthorization{ID: "da_" + g.id, BrandID: "acme", AgentID: g.agent, ClientID: g.issuer,
			DeviceCodeHash: h[:], UserCodeHash: h[1:], Scopes: []string{"orders:read"}, Interval: time.Second, ExpiresAt: at.Add(time.Hour), CreateTime: at}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_"+g.id, db.Grant{ID: g.id, BrandID: "acme", AgentID: g.agent, ClientID: g.issuer, BrandUser: user,
			Scopes: []string{"orders:read"}, CreateTime: at, ExpireTime: exp, AuthorizationDetails: g.details,
			AuthorizationDetailsScopes: g.detailScopes}, at); err != nil {
			t.Fatal(err)
		}
	}
	return &countingStore{Store: s}
}

// The cache's answer is the store's, case by case (the store's query is
// the definition of live), and the details are the grant's.
func TestLivenessIsTheStores(t *testing.T) {
	at := time.Now().UTC().Truncate(time.Second)
	exp := at.Add(time.Hour)
	s := newStore(t, at, exp)
	c := grantcache.New(s, 0, nil, nil, nil)
	ctx := t.Context()
	cases := []struct {
		name                   string
		grant, brand, cl, user string
		now                    time.Time
		live                   bool
	}{
		{"ok/live", "g1", "acme", pa, user, at, true},
		{"ok/a-second-before-expiry", "g1", "acme", pa, user, exp.Add(-time.Second), true},
		{"ok/other-grant", "g2", "acme", pa2, user, at, true},
		{"fail/at-expiry", "g1", "acme", pa, user, exp, false},
		{"fail/within-the-expiry-second", "g1", "acme", pa, user, exp.Add(999 * time.Millisecond), false},
		{"fail/other-brand", "g1", "beta", pa, user, at, false},
		{"fail/other-client", "g1", "acme", pa2, user, at, false},
		{"fail/other-user", "g1", "acme", pa, "user-8", at, false},
		{"fail/unknown-grant", "g9", "acme", pa, user, at, false},
	}
	for _, tc := range cases {
		wantD, wantLive, err := s.Store.LiveGrantDetails(ctx, tc.grant, tc.brand, tc.cl, tc.user, tc.now)
		if err != nil || wantLive != tc.live {
			t.Fatalf("%s: the store says %v, %v; the case says %v", tc.name, wantLive, err, tc.live)
		}
		d, live, err := c.LiveGrantDetails(ctx, tc.grant, tc.brand, tc.cl, tc.user, tc.now)
		if err != nil || live != wantLive || d != wantD {
			t.Errorf("%s: cache = %q, %v, %v; store = %q, %v", tc.name, d, live, err, wantD, wantLive)
		}
		if ok, err := c.GrantLiveAt(ctx, tc.grant, tc.brand, tc.cl, tc.user, tc.now); err != nil || ok != wantLive {
			t.Errorf("%s: GrantLiveAt = %v, %v; want %v", tc.name, ok, err, wantLive)
		}
	}
	// Revoked (and the feed's Forget applied): the store and the cache agree.
	if _, err := s.RevokeGrant(ctx, "g1", at); err != nil {
		t.Fatal(err)
	}
	c.Forget("g1")
	if _, live, err := c.LiveGrantDetails(ctx, "g1", "acme", pa, user, at); err != nil || live {
		t.Fatalf("fail/revoked: live %v, %v", live, err)
	}
}

// Repeated checks read the store once; Forget, ForgetClient and ForgetAll
// make the next check read again; an unknown grant is never cached.
func TestReadsOnceUntilForgotten(t *testing.T) {
	at := time.Now().UTC().Truncate(time.Second)
	s := newStore(t, at, at.Add(time.Hour))
	c := grantcache.New(s, 0, &feedState{}, nil, nil)
	ctx := t.Context()
	check := func(grant, client string) {
		t.Helper()
		if _, live, err := c.LiveGrantDetails(ctx, grant, "acme", client, user, at); err != nil || !live {
			t.Fatalf("%s: live %v, %v", grant, live, err)
		}
	}
	reads := func() int64 { return s.reads.Swap(0) }
	for range 50 {
		check("g1", pa)
		check("g2", pa2)
	}
	if n := reads(); n != 2 {
		t.Fatalf("100 checks of two grants read the store %d times, want 2", n)
	}
	c.Forget("g1")
	check("g1", pa)
	check("g2", pa2)
	if n := reads(); n != 1 {
		t.Fatalf("after Forget(g1): %d reads, want 1", n)
	}
	c.ForgetClient(pa2)
	check("g1", pa)
	check("g2", pa2)
	if n := reads(); n != 1 {
		t.Fatalf("after ForgetClient(pa2): %d reads, want 1 (g2's)", n)
	}
	c.ForgetAll()
	check("g1", pa)
	check("g2", pa2)
	if n := reads(); n != 2 {
		t.Fatalf("after ForgetAll: %d reads, want 2", n)
	}
	for range 3 {
		if _, live, _ := c.LiveGrantDetails(ctx, "g9", "acme", pa, user, at); live {
			t.Fatal("an unknown grant is live")
		}
	}
	if n := reads(); n != 3 {
		t.Fatalf("three checks of an unknown grant: %d reads, want 3 (not cached)", n)
	}
}

// With the feed stale, a row read more than the bound ago is read again,
// so a revocation whose feed row this replica has not applied is still
// refused within the bound.
func TestStaleFeedRereads(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	clock := now
	s := newStore(t, now, now.Add(time.Hour))
	feed := &feedState{}
	c := grantcache.New(s, 0, feed, func() time.Time { return clock }, nil)
	ctx := t.Context()
	live := func() bool {
		_, ok, err := c.LiveGrantDetails(ctx, "g1", "acme", pa, user, now)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !live() {
		t.Fatal("ok/live-first")
	}
	if _, err := s.RevokeGrant(ctx, "g1", now); err != nil { // no Forget: the feed row is not applied
		t.Fatal(err)
	}
	clock = clock.Add(1500 * time.Millisecond)
	if !live() {
		t.Fatal("fresh feed: the cached row (1.5 s old) should answer; the feed would have delivered the revocation")
	}
	feed.stale.Store(true)
	if live() {
		t.Fatal("stale feed: a row 1.5 s old answered past the 1 s bound; the revoked grant was allowed")
	}
}

// A read in flight when the grant is revoked (and the revocation applied)
// must not cache the live row it read.
func TestSlowReadCannotUndoARevocation(t *testing.T) {
	at := time.Now().UTC().Truncate(time.Second)
	s := newStore(t, at, at.Add(time.Hour))
	s.entered, s.gate = make(chan struct{}), make(chan struct{})
	c := grantcache.New(s, 0, &feedState{}, nil, nil)
	done := make(chan bool)
	go func() {
		_, live, _ := c.LiveGrantDetails(context.Background(), "g1", "acme", pa, user, at)
		done <- live
	}()
	<-s.entered // it read the live row; now the revocation lands and is applied
	if _, err := s.RevokeGrant(t.Context(), "g1", at); err != nil {
		t.Fatal(err)
	}
	c.Forget("g1")
	close(s.gate)
	if !<-done {
		t.Fatal("the in-flight check should answer what it read (live)")
	}
	s.gate = nil
	if _, live, err := c.LiveGrantDetails(t.Context(), "g1", "acme", pa, user, at); err != nil || live {
		t.Fatalf("after the revocation: live %v, %v; the in-flight read cached a stale row", live, err)
	}
}

// BenchmarkLiveGrantDetailsHit is a liveness check answered from memory
// (a fresh feed), the cost every delegated call pays for its grant; it
// also reports the heap each cached grant holds (bytes/grant), from
// filling a cache with 50,000 grants of the shape pactd stores.
func BenchmarkLiveGrantDetailsHit(b *testing.B) {
	at := time.Now().UTC().Truncate(time.Second)
	ctx := b.Context()
	mem := &memStore{grants: map[string]db.Grant{}}
	for i := range 50_000 {
		id := fmt.Sprintf("a2agrant_01JBENCH%017d", i)
		mem.grants[id] = db.Grant{ID: id, BrandID: "acme", AgentID: "agt_01JBENCHAGENT000000000000", ClientID: "https://pa.example",
			BrandUser: fmt.Sprintf("user-%08d", i), Scopes: []string{"orders:read", "orders:cancel"}, CreateTime: at, ExpireTime: at.Add(30 * 24 * time.Hour)}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := grantcache.New(mem, 0, &feedState{}, nil, nil)
	for id, g := range mem.grants {
		if _, live, err := c.LiveGrantDetails(ctx, id, g.BrandID, g.ClientID, g.BrandUser, at); err != nil || !live {
			b.Fatal(live, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perGrant := float64(after.HeapAlloc-before.HeapAlloc) / 50_000
	const id = "a2agrant_01JBENCH00000000000000042"
	g := mem.grants[id]
	b.ReportAllocs()
	for b.Loop() {
		if _, live, err := c.LiveGrantDetails(ctx, id, g.BrandID, g.ClientID, g.BrandUser, at); err != nil || !live {
			b.Fatal(live, err)
		}
	}
	b.ReportMetric(perGrant, "bytes/grant")
	runtime.KeepAlive(c)
}

// memStore hands out copies of the grants the benchmark made, each string
// and slice allocated anew as a row read from a database is, so that
// bytes/grant counts what a cached grant really holds.
type memStore struct{ grants map[string]db.Grant }

func (m *memStore) GetGrant(_ context.Context, id string) (db.Grant, error) {
	g, ok := m.grants[id]
	if !ok {
		return db.Grant{}, db.ErrNotFound
	}
	g.ID, g.BrandID, g.AgentID, g.ClientID, g.BrandUser = strings.Clone(g.ID), strings.Clone(g.BrandID), strings.Clone(g.AgentID), strings.Clone(g.ClientID), strings.Clone(g.BrandUser)
	scopes := make([]string, len(g.Scopes))
	for i, sc := range g.Scopes {
		scopes[i] = strings.Clone(sc)
	}
	g.Scopes = scopes
	return g, nil
}
