package jose_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/token/jose"
)

// newDevClient builds a client with the loopback allowance on and a fake
// clock. StaleWait is long so refetches of expired sets finish inside the
// call even on a loaded machine; TestStaleWhileRefetching covers short waits.
func newDevClient(t testing.TB, clock *testclock.Clock, mod func(*jose.Config)) *jose.JWKSClient {
	t.Helper()
	cfg := jose.Config{AllowLoopbackHTTP: true, Now: clock.Now, StaleWait: 10 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := jose.NewJWKSClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustKeys(t testing.TB, c *jose.JWKSClient, uri string) *jose.KeySet {
	t.Helper()
	set, err := c.Keys(t.Context(), uri)
	if err != nil {
		t.Fatalf("Keys: %v", err)
	}
	return set
}

func hasKID(set *jose.KeySet, kid string) bool {
	_, ok := set.Lookup(kid)
	return ok
}

func TestKeysCachesAndRotates(t *testing.T) {
	t.Parallel()
	a, b := newECKey(t), newECKey(t)
	srv := newJWKSServer(t, jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil)))
	clock := newFakeClock()
	c := newDevClient(t, clock, nil)
	uri := srv.URL + "/jwks"

	set := mustKeys(t, c, uri)
	if !hasKID(set, "a") || srv.hits.Load() != 1 {
		t.Fatalf("first fetch: kid a %v, hits %d", hasKID(set, "a"), srv.hits.Load())
	}
	// ok/cached: no second fetch within the default TTL.
	clock.Advance(9 * time.Minute)
	if set2 := mustKeys(t, c, uri); set2 != set || srv.hits.Load() != 1 {
		t.Fatalf("cached call fetched again (hits %d)", srv.hits.Load())
	}
	// Rotation: the PA publishes b only; after the TTL the new set is used.
	srv.set(jwksDoc(t, ecJWK(t, &b.PublicKey, "b", nil)), http.StatusOK, nil)
	clock.Advance(2 * time.Minute)
	set = mustKeys(t, c, uri)
	if !hasKID(set, "b") || hasKID(set, "a") || srv.hits.Load() != 2 {
		t.Fatalf("after rotation: a %v b %v hits %d", hasKID(set, "a"), hasKID(set, "b"), srv.hits.Load())
	}
}

func TestRefreshCooldown(t *testing.T) {
	t.Parallel()
	a, b := newECKey(t), newECKey(t)
	srv := newJWKSServer(t, jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil)))
	clock := newFakeClock()
	c := newDevClient(t, clock, nil)
	uri := srv.URL + "/jwks"
	mustKeys(t, c, uri)
	srv.set(jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil), ecJWK(t, &b.PublicKey, "b", nil)), http.StatusOK, nil)

	steps := []struct {
		name     string
		advance  time.Duration
		wantHits int64
		wantB    bool
	}{
		{"inside-cooldown-no-fetch", 10 * time.Second, 1, false},
		{"after-cooldown-fetches", 21 * time.Second, 2, true},
		{"inside-new-cooldown-no-fetch", 9 * time.Second, 2, true},
		{"after-second-cooldown", 22 * time.Second, 3, true},
	}
	for _, s := range steps {
		clock.Advance(s.advance)
		set, err := c.Refresh(t.Context(), uri)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := srv.hits.Load(); got != s.wantHits || hasKID(set, "b") != s.wantB {
			t.Fatalf("%s: hits %d want %d, has b %v want %v", s.name, got, s.wantHits, hasKID(set, "b"), s.wantB)
		}
	}
	// Refresh on a cold URI fetches.
	srv2 := newJWKSServer(t, jwksDoc(t, ecJWK(t, &b.PublicKey, "b", nil)))
	if set, err := c.Refresh(t.Context(), srv2.URL); err != nil || !hasKID(set, "b") || srv2.hits.Load() != 1 {
		t.Fatalf("cold Refresh: %v, hits %d", err, srv2.hits.Load())
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, jwksDoc(t))
	srv.hold()
	clock := newFakeClock()
	c := newDevClient(t, clock, func(cfg *jose.Config) { cfg.HTTPTimeout = 200 * time.Millisecond })
	start := time.Now()
	_, err := c.Keys(t.Context(), srv.URL)
	elapsed := time.Since(start)
	if !errors.Is(err, jose.ErrTimeout) || !errors.Is(err, jose.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if elapsed > 3*time.Second {
		t.Fatalf("timeout took %v with a 200ms bound", elapsed)
	}
	// The failure is cached: no new request inside the negative TTL.
	hits := srv.hits.Load()
	if _, err := c.Keys(t.Context(), srv.URL); !errors.Is(err, jose.ErrTimeout) || srv.hits.Load() != hits {
		t.Fatalf("negative cache: err %v, hits %d -> %d", err, hits, srv.hits.Load())
	}
	// Positive control: after the negative TTL and with the server answering, keys come back.
	srv.release()
	clock.Advance(31 * time.Second)
	if _, err := c.Keys(t.Context(), srv.URL); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

func TestBodySizeCap(t *testing.T) {
	t.Parallel()
	k := newECKey(t)
	doc := jwksDoc(t, ecJWK(t, &k.PublicKey, "k", nil))
	pad := func(n int) []byte { return append(append([]byte{}, doc...), strings.Repeat(" ", n-len(doc))...) }
	const limit = 64 << 10
	tests := []struct {
		name    string
		body    []byte
		chunked bool
		length  bool
		wantErr error
	}{
		{name: "ok/exactly-cap", body: pad(limit)},
		{name: "ok/exactly-cap-chunked", body: pad(limit), chunked: true},
		{name: "fail/cap-plus-one-chunked", body: pad(limit + 1), chunked: true, wantErr: jose.ErrDocumentTooLarge},
		{name: "fail/cap-plus-one-content-length", body: pad(limit + 1), length: true, wantErr: jose.ErrDocumentTooLarge},
		{name: "fail/huge-chunked", body: pad(4 << 20), chunked: true, wantErr: jose.ErrDocumentTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.length {
					w.Header().Set("Content-Length", strconv.Itoa(len(tt.body)))
				}
				if tt.chunked {
					half := len(tt.body) / 2
					_, _ = w.Write(tt.body[:half])
					w.(http.Flusher).Flush()
					_, _ = w.Write(tt.body[half:])
					return
				}
				_, _ = w.Write(tt.body)
			}))
			t.Cleanup(srv.Close)
			c := newDevClient(t, newFakeClock(), nil)
			set, err := c.Keys(t.Context(), srv.URL)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(err, jose.ErrBadDocument) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || set.Len() != 1 {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestRedirects(t *testing.T) {
	t.Parallel()
	k := newECKey(t)
	doc := jwksDoc(t, ecJWK(t, &k.PublicKey, "k", nil))
	other := newJWKSServer(t, doc)

	// recordingDial records every address and connects to loopback only, so
	// even a broken guard cannot send a packet elsewhere.
	var dialed sync.Map
	recordingDial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed.Store(addr, true)
		ap, err := netip.ParseAddrPort(addr)
		if err != nil || !ap.Addr().IsLoopback() {
			return nil, errRecorderNoConnect
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	mux := http.NewServeMux()
	var self string
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(doc) })
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/jwks", http.StatusFound) })
	mux.HandleFunc("/chain/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			_, _ = w.Write(doc)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/off-origin", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/jwks", http.StatusFound)
	})
	mux.HandleFunc("/other-host-same-port", func(w http.ResponseWriter, r *http.Request) {
		u, _ := url.Parse(self)
		http.Redirect(w, r, "http://localhost:"+u.Port()+"/jwks", http.StatusFound)
	})
	mux.HandleFunc("/internal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/latest/meta-data", http.StatusFound)
	})
	mux.HandleFunc("/metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	self = srv.URL

	tests := []struct {
		name    string
		path    string
		wantErr error
	}{
		{name: "ok/same-origin", path: "/same"},
		{name: "ok/three-redirects", path: "/chain/3"},
		{name: "fail/four-redirects", path: "/chain/4", wantErr: jose.ErrRedirect},
		{name: "fail/off-origin-port", path: "/off-origin", wantErr: jose.ErrRedirect},
		{name: "fail/off-origin-host", path: "/other-host-same-port", wantErr: jose.ErrRedirect},
		{name: "fail/to-private-address", path: "/internal", wantErr: jose.ErrRedirect},
		{name: "fail/to-metadata-address", path: "/metadata", wantErr: jose.ErrRedirect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newDevClient(t, newFakeClock(), func(cfg *jose.Config) { cfg.DialContext = recordingDial })
			set, err := c.Keys(t.Context(), srv.URL+tt.path)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(err, jose.ErrUnavailable) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || set.Len() != 1 {
				t.Fatalf("err = %v", err)
			}
		})
	}
	if n := other.hits.Load(); n != 0 {
		t.Fatalf("off-origin server received %d requests", n)
	}
	dialed.Range(func(k, _ any) bool {
		ap, err := netip.ParseAddrPort(k.(string))
		if err != nil || !ap.Addr().IsLoopback() {
			t.Errorf("dialed non-loopback address %v", k)
		}
		return true
	})
}

func TestFailuresKeepLastGoodKeys(t *testing.T) {
	t.Parallel()
	a, b := newECKey(t), newECKey(t)
	docA := jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil))
	tests := []struct {
		name    string
		status  int
		body    []byte
		wantErr error
	}{
		{name: "http-500", status: http.StatusInternalServerError, body: []byte("oops"), wantErr: jose.ErrUnavailable},
		{name: "http-503", status: http.StatusServiceUnavailable, wantErr: jose.ErrUnavailable},
		{name: "bad-document", status: http.StatusOK, body: []byte(`{"keys":[{"kty":"oct","k":"AAAA"}]}`), wantErr: jose.ErrSymmetricKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newJWKSServer(t, docA)
			clock := newFakeClock()
			c := newDevClient(t, clock, nil)
			mustKeys(t, c, srv.URL)
			srv.set(tt.body, tt.status, nil)

			clock.Advance(11 * time.Minute) // past the 10-minute TTL
			if set := mustKeys(t, c, srv.URL); !hasKID(set, "a") || srv.hits.Load() != 2 {
				t.Fatalf("expired fetch failure: want last-good a, hits %d", srv.hits.Load())
			}
			clock.Advance(10 * time.Second) // inside the negative cache
			if set := mustKeys(t, c, srv.URL); !hasKID(set, "a") || srv.hits.Load() != 2 {
				t.Fatalf("negative cache: hits %d", srv.hits.Load())
			}
			clock.Advance(21 * time.Second) // negative cache over: tries again
			if set := mustKeys(t, c, srv.URL); !hasKID(set, "a") || srv.hits.Load() != 3 {
				t.Fatalf("retry: hits %d", srv.hits.Load())
			}
			clock.Advance(24 * time.Hour) // past expiry + MaxStale: the failure shows
			_, err := c.Keys(t.Context(), srv.URL)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			var se *jose.StatusError
			if tt.status != http.StatusOK && (!errors.As(err, &se) || se.Code != tt.status) {
				t.Fatalf("err = %v, want StatusError %d", err, tt.status)
			}
			// Recovery: a good document replaces the old set.
			srv.set(jwksDoc(t, ecJWK(t, &b.PublicKey, "b", nil)), http.StatusOK, nil)
			clock.Advance(31 * time.Second)
			if set := mustKeys(t, c, srv.URL); !hasKID(set, "b") {
				t.Fatal("recovered set not used")
			}
		})
	}
}

// TestWithdrawnJWKSDropsKeys: a 404 or 410 is the PA withdrawing its keys;
// the last-good set is not served through it.
func TestWithdrawnJWKSDropsKeys(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusNotFound, http.StatusGone} {
		a := newECKey(t)
		srv := newJWKSServer(t, jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil)))
		clock := newFakeClock()
		c := newDevClient(t, clock, nil)
		mustKeys(t, c, srv.URL) // positive control: the set is served
		srv.set(nil, status, nil)
		clock.Advance(11 * time.Minute) // past the TTL: refetch
		_, err := c.Keys(t.Context(), srv.URL)
		var se *jose.StatusError
		if !errors.Is(err, jose.ErrUnavailable) || !errors.As(err, &se) || se.Code != status {
			t.Fatalf("status %d: Keys err = %v, want the StatusError and no last-good keys", status, err)
		}
	}
}

// TestStaleWhileRefetching: when an expired set's refetch hangs, callers get
// the last-good set after StaleWait instead of waiting for the HTTP timeout,
// and the fetch completes in the background.
func TestStaleWhileRefetching(t *testing.T) {
	t.Parallel()
	a, b := newECKey(t), newECKey(t)
	srv := newJWKSServer(t, jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil)))
	clock := newFakeClock()
	c := newDevClient(t, clock, func(cfg *jose.Config) { cfg.StaleWait = 50 * time.Millisecond })
	mustKeys(t, c, srv.URL)

	srv.hold()
	srv.set(jwksDoc(t, ecJWK(t, &b.PublicKey, "b", nil)), http.StatusOK, nil)
	clock.Advance(11 * time.Minute)
	start := time.Now()
	set := mustKeys(t, c, srv.URL)
	if !hasKID(set, "a") {
		t.Fatal("last-good set not served while the refetch hangs")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("stale answer took %v (StaleWait 50ms, HTTP timeout 5s)", d)
	}
	waitFor(t, "the background refetch to start", func() bool { return srv.hits.Load() == 2 })
	srv.release()
	waitFor(t, "the refetched set", func() bool { return hasKID(mustKeys(t, c, srv.URL), "b") })
	if got := srv.hits.Load(); got != 2 {
		t.Fatalf("hits %d, want 2 (one background refetch)", got)
	}
}

func TestConcurrentColdKeysFetchOnce(t *testing.T) {
	t.Parallel()
	k := newECKey(t)
	srv := newJWKSServer(t, jwksDoc(t, ecJWK(t, &k.PublicKey, "k", nil)))
	srv.hold()
	c := newDevClient(t, newFakeClock(), nil)
	const n = 32
	var started sync.WaitGroup
	started.Add(n)
	errs := make(chan error, n)
	for range n {
		go func() {
			started.Done()
			_, err := c.Keys(context.Background(), srv.URL)
			errs <- err
		}()
	}
	started.Wait()
	waitFor(t, "the first request", func() bool { return srv.hits.Load() >= 1 })
	srv.release()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.hits.Load(); got != 1 {
		t.Fatalf("%d concurrent cold calls made %d fetches, want 1", n, got)
	}
}

func TestCacheControl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		headers    map[string]string
		stillFresh time.Duration
		refetch    time.Duration
	}{
		{name: "ok/max-age-within-bounds", headers: map[string]string{"Cache-Control": "public, max-age=120"}, stillFresh: 119 * time.Second, refetch: 121 * time.Second},
		{name: "ok/max-age-minus-age", headers: map[string]string{"Cache-Control": "max-age=300", "Age": "100"}, stillFresh: 199 * time.Second, refetch: 201 * time.Second},
		{name: "ok/max-age-below-min-clamped", headers: map[string]string{"Cache-Control": "max-age=5"}, stillFresh: 59 * time.Second, refetch: 61 * time.Second},
		{name: "ok/max-age-above-max-clamped", headers: map[string]string{"Cache-Control": "max-age=999999999"}, stillFresh: 24*time.Hour - time.Second, refetch: 24*time.Hour + time.Second},
		{name: "ok/no-store-means-min", headers: map[string]string{"Cache-Control": "no-store"}, stillFresh: 59 * time.Second, refetch: 61 * time.Second},
		{name: "ok/absent-means-default", headers: nil, stillFresh: 599 * time.Second, refetch: 601 * time.Second},
		{name: "ok/garbage-means-default", headers: map[string]string{"Cache-Control": "max-age=soon"}, stillFresh: 599 * time.Second, refetch: 601 * time.Second},
	}
	k := newECKey(t)
	doc := jwksDoc(t, ecJWK(t, &k.PublicKey, "k", nil))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newJWKSServer(t, doc)
			srv.set(doc, http.StatusOK, tt.headers)
			clock := newFakeClock()
			c := newDevClient(t, clock, nil)
			mustKeys(t, c, srv.URL)
			clock.Advance(tt.stillFresh)
			mustKeys(t, c, srv.URL)
			if got := srv.hits.Load(); got != 1 {
				t.Fatalf("refetched before %v (hits %d)", tt.stillFresh, got)
			}
			clock.Advance(tt.refetch - tt.stillFresh)
			mustKeys(t, c, srv.URL)
			if got := srv.hits.Load(); got != 2 {
				t.Fatalf("no refetch after %v (hits %d)", tt.refetch, got)
			}
		})
	}
}

func TestSlowURIDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	k := newECKey(t)
	doc := jwksDoc(t, ecJWK(t, &k.PublicKey, "k", nil))
	slow := newJWKSServer(t, doc)
	slow.hold()
	fast := newJWKSServer(t, doc)
	c := newDevClient(t, newFakeClock(), nil) // 5 s timeout

	slowDone := make(chan error, 1)
	go func() {
		_, err := c.Keys(context.Background(), slow.URL)
		slowDone <- err
	}()
	waitFor(t, "the slow request", func() bool { return slow.hits.Load() >= 1 })

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := c.Keys(ctx, fast.URL); err != nil {
		t.Fatalf("fast URI blocked behind slow one: %v", err)
	}
	// A caller of the slow URI can give up on its own context; the fetch
	// carries on for the others.
	ctx2, cancel2 := context.WithCancel(t.Context())
	waiter := make(chan error, 1)
	go func() {
		_, err := c.Keys(ctx2, slow.URL)
		waiter <- err
	}()
	cancel2()
	if err := <-waiter; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled caller got %v", err)
	}
	slow.release()
	if err := <-slowDone; err != nil {
		t.Fatalf("slow fetch: %v", err)
	}
	if got := slow.hits.Load(); got != 1 {
		t.Fatalf("slow hits %d, want 1", got)
	}
}

// TestHTTPSWithResolverAndNoProxy fetches over TLS through the injected
// resolver and proves the environment's proxy is not used.
func TestHTTPSWithResolverAndNoProxy(t *testing.T) {
	var proxyHits atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxyHits.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("https_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")

	k := newECKey(t)
	doc := jwksDoc(t, ecJWK(t, &k.PublicKey, "k", nil))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(doc) }))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	var resolved atomic.Int64
	c := newDevClient(t, newFakeClock(), func(cfg *jose.Config) {
		cfg.RootCAs = pool
		cfg.Resolver = func(ctx context.Context, host string) ([]netip.Addr, error) {
			resolved.Add(1)
			if host != "example.com" {
				return nil, fmt.Errorf("unexpected host %q", host)
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
	})
	set, err := c.Keys(t.Context(), fmt.Sprintf("https://example.com:%d/jwks", port))
	if err != nil || !hasKID(set, "k") {
		t.Fatalf("https fetch: %v", err)
	}
	if proxyHits.Load() != 0 {
		t.Fatal("the environment proxy was used")
	}
	if resolved.Load() == 0 {
		t.Fatal("the injected resolver was not used")
	}
}

// dialRecorder records dial attempts and never connects.
type dialRecorder struct {
	mu    sync.Mutex
	addrs []string
}

var errRecorderNoConnect = errors.New("recorder: not connecting")

func (r *dialRecorder) dial(_ context.Context, _, addr string) (net.Conn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addrs = append(r.addrs, addr)
	return nil, errRecorderNoConnect
}

func (r *dialRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.addrs...)
}

// TestSSRFGuard runs with the development allowance OFF: names resolve
// through a fake resolver and dials are recorded, never made.
func TestSSRFGuard(t *testing.T) {
	t.Parallel()
	zone := map[string][]string{
		"public.example.com":     {"93.184.216.34"},
		"private.example.com":    {"10.0.0.1"},
		"rfc1918b.example.com":   {"172.16.5.4"},
		"rfc1918c.example.com":   {"192.168.1.1"},
		"metadata.example.com":   {"169.254.169.254"},
		"cgnat.example.com":      {"100.64.0.1"},
		"loopback.example.com":   {"127.0.0.1"},
		"loop6.example.com":      {"::1"},
		"zero.example.com":       {"0.0.0.0"},
		"zero8.example.com":      {"0.1.2.3"},
		"mapped.example.com":     {"::ffff:10.0.0.1"},
		"mappedmd.example.com":   {"::ffff:169.254.169.254"},
		"ula.example.com":        {"fd00::1"},
		"linklocal6.example.com": {"fe80::1"},
		"multicast.example.com":  {"224.0.0.1"},
		"nat64.example.com":      {"64:ff9b::a00:1"},
		"sixtofour.example.com":  {"2002:a00:1::1"},
		"mixed.example.com":      {"93.184.216.34", "10.0.0.1"},
		"bench.example.com":      {"198.18.0.1"},
		"bench2.example.com":     {"198.19.255.254"},
		"reserved.example.com":   {"240.0.0.1"},
		"nearbench.example.com":  {"198.20.0.1"},
		"empty.example.com":      {},
	}
	resolver := func(ctx context.Context, host string) ([]netip.Addr, error) {
		ips, ok := zone[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		out := make([]netip.Addr, 0, len(ips))
		for _, s := range ips {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}
	tests := []struct {
		name     string
		uri      string
		wantErr  error
		wantDial string
	}{
		{name: "ok/public-address-is-dialed", uri: "https://public.example.com/jwks", wantErr: errRecorderNoConnect, wantDial: "93.184.216.34:443"},
		{name: "ok/public-address-custom-port", uri: "https://public.example.com:8443/jwks", wantErr: errRecorderNoConnect, wantDial: "93.184.216.34:8443"},
		{name: "fail/rfc1918-10", uri: "https://private.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/rfc1918-172", uri: "https://rfc1918b.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/rfc1918-192", uri: "https://rfc1918c.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/link-local-metadata", uri: "https://metadata.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/cgnat", uri: "https://cgnat.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/loopback-without-allowance", uri: "https://loopback.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/loopback6-without-allowance", uri: "https://loop6.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/unspecified", uri: "https://zero.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/this-network", uri: "https://zero8.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/ipv4-mapped-private", uri: "https://mapped.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/ipv4-mapped-metadata", uri: "https://mappedmd.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/ula", uri: "https://ula.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/link-local-v6", uri: "https://linklocal6.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/multicast", uri: "https://multicast.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/nat64-private", uri: "https://nat64.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/6to4-private", uri: "https://sixtofour.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/any-forbidden-address-refuses", uri: "https://mixed.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		// The benchmarking (198.18.0.0/15) and reserved (240.0.0.0/4) ranges:
		// refused here as by onboarding (internal/urlrule), one public-address rule.
		{name: "fail/benchmarking-198.18", uri: "https://bench.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/benchmarking-198.19", uri: "https://bench2.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/reserved-240", uri: "https://reserved.example.com/jwks", wantErr: jose.ErrForbiddenAddress},
		{name: "fail/ip-literal-benchmarking", uri: "https://198.18.0.1/jwks", wantErr: jose.ErrInvalidURI},
		{name: "fail/ip-literal-reserved", uri: "https://240.0.0.1/jwks", wantErr: jose.ErrInvalidURI},
		{name: "ok/next-to-benchmarking-is-dialed", uri: "https://nearbench.example.com/jwks", wantErr: errRecorderNoConnect, wantDial: "198.20.0.1:443"},
		{name: "ok/ip-literal-public-is-dialed", uri: "https://93.184.216.34/jwks", wantErr: errRecorderNoConnect, wantDial: "93.184.216.34:443"},
		{name: "fail/no-addresses", uri: "https://empty.example.com/jwks", wantErr: jose.ErrUnavailable},
		{name: "fail/nxdomain", uri: "https://nxdomain.example.com/jwks", wantErr: jose.ErrUnavailable},
		{name: "fail/ip-literal-private", uri: "https://10.0.0.1/jwks", wantErr: jose.ErrInvalidURI},
		{name: "fail/ip-literal-metadata", uri: "https://169.254.169.254/latest", wantErr: jose.ErrInvalidURI},
		{name: "fail/ip-literal-loopback", uri: "https://127.0.0.1/jwks", wantErr: jose.ErrInvalidURI},
		{name: "fail/http-scheme", uri: "http://public.example.com/jwks", wantErr: jose.ErrInvalidURI},
		{name: "fail/http-loopback-without-allowance", uri: "http://127.0.0.1:1/jwks", wantErr: jose.ErrInvalidURI},
		{name: "fail/localhost-without-allowance", uri: "https://localhost/jwks", wantErr: jose.ErrInvalidURI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &dialRecorder{}
			c, err := jose.NewJWKSClient(jose.Config{
				Now:         newFakeClock().Now,
				Resolver:    resolver,
				DialContext: rec.dial,
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Keys(t.Context(), tt.uri)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			got := rec.got()
			if tt.wantDial == "" {
				if len(got) != 0 {
					t.Fatalf("dialed %v for a refused destination", got)
				}
				return
			}
			if len(got) != 1 || got[0] != tt.wantDial {
				t.Fatalf("dialed %v, want [%s]", got, tt.wantDial)
			}
		})
	}
}

// TestDNSRebindingCheckedPerDial: the address is checked on every dial, so a
// name that first resolves publicly and later privately is refused then.
func TestDNSRebindingCheckedPerDial(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	rec := &dialRecorder{}
	clock := newFakeClock()
	c, err := jose.NewJWKSClient(jose.Config{
		Now: clock.Now,
		Resolver: func(ctx context.Context, host string) ([]netip.Addr, error) {
			if calls.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
		},
		DialContext: rec.dial,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Keys(t.Context(), "https://rebind.example.com/jwks"); !errors.Is(err, errRecorderNoConnect) {
		t.Fatalf("first: %v", err)
	}
	clock.Advance(time.Minute)
	if _, err := c.Keys(t.Context(), "https://rebind.example.com/jwks"); !errors.Is(err, jose.ErrForbiddenAddress) {
		t.Fatalf("rebound: %v", err)
	}
	if got := rec.got(); len(got) != 1 || got[0] != "93.184.216.34:443" {
		t.Fatalf("dialed %v", got)
	}
}

func TestNewJWKSClientRefusesBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  jose.Config
		ok   bool
	}{
		{name: "ok/zero-config", cfg: jose.Config{}, ok: true},
		{name: "fail/min-above-default", cfg: jose.Config{MinTTL: time.Hour}},
		{name: "fail/default-above-max", cfg: jose.Config{MaxTTL: time.Minute, DefaultTTL: time.Hour}},
		{name: "fail/negative-timeout", cfg: jose.Config{HTTPTimeout: -time.Second}},
		{name: "fail/negative-body", cfg: jose.Config{MaxBodyBytes: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := jose.NewJWKSClient(tt.cfg)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestOnFetchReportsEveryFetch: the metrics hook hears nil for a good fetch
// and the fetch's error for a failed one, once per fetch (not per cached call).
func TestOnFetchReportsEveryFetch(t *testing.T) {
	t.Parallel()
	a := newECKey(t)
	srv := newJWKSServer(t, jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil)))
	clock := newFakeClock()
	var mu sync.Mutex
	var got []error
	c := newDevClient(t, clock, func(cfg *jose.Config) {
		cfg.OnFetch = func(err error) { mu.Lock(); got = append(got, err); mu.Unlock() }
	})
	mustKeys(t, c, srv.URL)
	mustKeys(t, c, srv.URL) // cached: no fetch
	srv.set(nil, http.StatusServiceUnavailable, nil)
	clock.Advance(11 * time.Minute)
	_, _ = c.Keys(t.Context(), srv.URL)
	mu.Lock()
	defer mu.Unlock()
	var se *jose.StatusError
	if len(got) != 2 || got[0] != nil || !errors.As(got[1], &se) || se.Code != http.StatusServiceUnavailable {
		t.Fatalf("OnFetch heard %v; want [nil, the 503 StatusError]", got)
	}
}

// TestAllowHostsExemptsOnlyTheNamedHosts runs with the development allowance
// off: a host named in AllowHosts is fetched over https on loopback (the
// positive control), while the same loopback server under another name,
// the named host over plain http, and a loopback literal not named are
// refused with the reasons the guard gives.
func TestAllowHostsExemptsOnlyTheNamedHosts(t *testing.T) {
	k := newECKey(t)
	doc := jwksDoc(t, ecJWK(t, &k.PublicKey, "k", nil))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(doc) }))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	c, err := jose.NewJWKSClient(jose.Config{
		AllowHosts: []string{"PA.Example.COM.", "127.0.0.1"}, RootCAs: pool,
		Resolver: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{
		fmt.Sprintf("https://pa.example.com:%d/jwks", port),
		fmt.Sprintf("https://127.0.0.1:%d/jwks", port),
	} {
		set, err := c.Keys(t.Context(), uri)
		if err != nil || !hasKID(set, "k") {
			t.Fatalf("%s (allowed host): %v", uri, err)
		}
	}
	for uri, want := range map[string]error{
		fmt.Sprintf("https://other.example.com:%d/jwks", port): jose.ErrForbiddenAddress,
		fmt.Sprintf("https://127.0.0.2:%d/jwks", port):         jose.ErrInvalidURI,
		fmt.Sprintf("https://localhost:%d/jwks", port):         jose.ErrInvalidURI,
		fmt.Sprintf("http://pa.example.com:%d/jwks", port):     jose.ErrInvalidURI,
	} {
		if _, err := c.Keys(t.Context(), uri); !errors.Is(err, want) {
			t.Errorf("%s: err %v, want %v", uri, err, want)
		}
	}
	if _, err := jose.CheckURI(fmt.Sprintf("https://127.0.0.1:%d/jwks", port), false); !errors.Is(err, jose.ErrInvalidURI) {
		t.Errorf("CheckURI without the exemption: %v", err)
	}
}
