package jose

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"

	"pactd.dev/pactd/internal/es256"
)

// Defaults for [Config].
const (
	// DefaultHTTPTimeout bounds one fetch end to end.
	DefaultHTTPTimeout = 5 * time.Second
	// DefaultMaxBodyBytes caps a JWKS response body.
	DefaultMaxBodyBytes = 64 << 10
	// DefaultMinTTL is the shortest cache lifetime.
	DefaultMinTTL = time.Minute
	// DefaultMaxTTL is the longest cache lifetime.
	DefaultMaxTTL = 24 * time.Hour
	// DefaultTTL is the cache lifetime without Cache-Control max-age.
	DefaultTTL = 10 * time.Minute
	// DefaultRefreshCooldown is the least time between unknown-kid refetches.
	DefaultRefreshCooldown = 30 * time.Second
	// DefaultNegativeTTL is how long a failed fetch is remembered.
	DefaultNegativeTTL = 30 * time.Second
	// DefaultMaxStale is how long past expiry last-good keys are served
	// while fetches fail (not after a 404 or 410: see fetchAndStore).
	DefaultMaxStale = time.Hour
	// DefaultMaxRedirects bounds same-origin redirects.
	DefaultMaxRedirects = 3
	// DefaultStaleWait is how long a caller waits for a refetch before
	// being served last-good keys.
	DefaultStaleWait = 250 * time.Millisecond

	maxDialAddrs = 4 // addresses tried per dial
)

// Config configures a [JWKSClient]. Zero fields take the documented defaults.
type Config struct {
	// HTTPTimeout bounds one fetch end to end: dial, TLS, redirects, headers
	// and body. Default 5 s.
	HTTPTimeout time.Duration
	// MaxBodyBytes caps the response body. Default 64 KiB.
	MaxBodyBytes int64
	// MaxKeys bounds the keys in one set. Default [DefaultMaxKeys].
	MaxKeys int
	// MinTTL and MaxTTL bound the cache lifetime taken from
	// Cache-Control max-age; DefaultTTL applies without max-age. Defaults
	// 1 min, 24 h and 10 min. "no-cache" and "no-store" mean MinTTL.
	MinTTL, MaxTTL, DefaultTTL time.Duration
	// RefreshCooldown is the least time between two fetches of one URI
	// triggered by [JWKSClient.Refresh] (unknown kid). Default 30 s.
	RefreshCooldown time.Duration
	// NegativeTTL is how long a failed fetch is remembered before the next
	// attempt. Default 30 s.
	NegativeTTL time.Duration
	// MaxStale is how long past its expiry a last-good key set is still
	// served while fetches fail. Default 24 h. A negative value disables
	// serving stale keys.
	MaxStale time.Duration
	// StaleWait is how long [JWKSClient.Keys] waits for a refetch of an
	// expired set when a last-good set could be served instead; after it,
	// the last-good set is returned and the fetch completes in the
	// background. Default 250 ms; negative means never wait.
	StaleWait time.Duration
	// MaxRedirects bounds same-origin redirects. Default 3; negative means
	// none.
	MaxRedirects int
	// AllowLoopbackHTTP is the development allowance: plain http to
	// "localhost" or a loopback literal, and loopback addresses at dial
	// time. Never set it in production.
	AllowLoopbackHTTP bool
	// Now is the clock for cache lifetimes. Default time.Now.
	Now func() time.Time
	// Resolver resolves a host name to addresses. Default
	// net.DefaultResolver.LookupNetIP(ctx, "ip", host). Tests inject fakes.
	Resolver func(ctx context.Context, host string) ([]netip.Addr, error)
	// DialContext opens a connection to an "ip:port" address the guard has
	// already checked. Default a net.Dialer whose Control hook re-checks the
	// address. Tests inject a recorder.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)
	// RootCAs replaces the system roots for TLS. Default nil: the system's.
	// pactd passes the system roots plus PACT_JWKS_CA_FILE.
	RootCAs *x509.CertPool
	// AllowHosts names hosts (lower-case names or IP literals, exact match)
	// exempt from the address rules: their https URIs may be loopback,
	// private or internal names and addresses, for PAs an operator runs
	// inside the network (PACT_JWKS_ALLOW_HOSTS). https is still required;
	// every other host keeps the full policy.
	AllowHosts []string
	// OnFetch, when set, is told the outcome of every fetch (nil on
	// success), for metrics. It must not block.
	OnFetch func(err error)
	// Tables, when set, holds precomputed ES256 tables for the P-256 keys
	// this client fetched (package es256): a key earns one after verifying
	// enough tokens, keeps it across refetches that still publish it, and
	// loses it when a refetch no longer does (or answers 404 or 410). Nil
	// verifies every ES256 signature through crypto/ecdsa.
	Tables *es256.Cache
}

func (c *Config) setDefaults() error {
	dur := func(p *time.Duration, def time.Duration) {
		if *p == 0 {
			*p = def
		}
	}
	dur(&c.HTTPTimeout, DefaultHTTPTimeout)
	dur(&c.MinTTL, DefaultMinTTL)
	dur(&c.MaxTTL, DefaultMaxTTL)
	dur(&c.DefaultTTL, DefaultTTL)
	dur(&c.RefreshCooldown, DefaultRefreshCooldown)
	dur(&c.NegativeTTL, DefaultNegativeTTL)
	dur(&c.MaxStale, DefaultMaxStale)
	dur(&c.StaleWait, DefaultStaleWait)
	if c.MaxStale < 0 {
		c.MaxStale = 0
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxKeys == 0 {
		c.MaxKeys = DefaultMaxKeys
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.MaxRedirects < 0 {
		c.MaxRedirects = 0
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.HTTPTimeout < 0, c.MinTTL < 0, c.RefreshCooldown < 0, c.NegativeTTL < 0:
		return errors.New("jose: negative duration in Config")
	case c.MaxBodyBytes < 0, c.MaxKeys < 0:
		return errors.New("jose: negative bound in Config")
	case c.MinTTL > c.DefaultTTL || c.DefaultTTL > c.MaxTTL:
		return errors.New("jose: Config needs MinTTL <= DefaultTTL <= MaxTTL")
	}
	return nil
}

// JWKSClient fetches and caches JWKS documents per URI under the transport
// policy described in the package documentation. It is safe for concurrent
// use; no lock is held across network I/O.
type JWKSClient struct {
	cfg   Config
	http  *http.Client
	group singleflight.Group

	mu      sync.Mutex
	entries map[string]*entry
}

// entry is the cache state of one URI.
type entry struct {
	u *url.URL

	mu          sync.Mutex
	set         *KeySet   // last good set, nil before the first success
	expires     time.Time // set is fresh until then
	staleUntil  time.Time // set may be served through failures until then
	err         error     // last failure
	errUntil    time.Time // negative cache: no new attempt before then
	lastAttempt time.Time // start of the last fetch attempt (cooldown)
}

// NewJWKSClient builds a client from cfg.
func NewJWKSClient(cfg Config) (*JWKSClient, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	c := &JWKSClient{cfg: cfg, entries: make(map[string]*entry)}
	tr := &http.Transport{
		Proxy:                  nil, // never from the environment
		DialContext:            c.dialGuarded,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: cfg.RootCAs},
		TLSHandshakeTimeout:    cfg.HTTPTimeout,
		ResponseHeaderTimeout:  cfg.HTTPTimeout,
		MaxResponseHeaderBytes: 16 << 10,
		DisableCompression:     true,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
	}
	c.http = &http.Client{
		Transport:     tr,
		Timeout:       cfg.HTTPTimeout,
		CheckRedirect: c.checkRedirect,
	}
	return c, nil
}

// Keys returns the key set published at uri: the cached set while it is
// fresh, else a fetched one. Once a set has expired, callers wait at most
// StaleWait for its refetch and are otherwise served the last-good set while
// the fetch completes in the background. While fetches fail, the last-good
// set is served up to MaxStale past its expiry, and after that the (briefly
// cached) failure is returned. Concurrent callers for one URI share one
// fetch; a caller whose ctx ends stops waiting (with ctx's error if there is
// nothing to serve) while the fetch continues for the others.
func (c *JWKSClient) Keys(ctx context.Context, uri string) (*KeySet, error) {
	e, err := c.entry(uri)
	if err != nil {
		return nil, err
	}
	now := c.cfg.Now()
	e.mu.Lock()
	switch {
	case e.set != nil && now.Before(e.expires):
		set := e.set
		e.mu.Unlock()
		return set, nil
	case now.Before(e.errUntil):
		set, err := e.usable(now)
		e.mu.Unlock()
		return set, err
	}
	stale, _ := e.usable(now)
	e.mu.Unlock()
	if stale == nil {
		return c.load(ctx, uri, e)
	}
	return c.loadOrStale(ctx, uri, e, stale)
}

// Refresh is for a kid the caller did not find in the set [JWKSClient.Keys]
// returned: it fetches the set again unless a fetch of uri started less than
// RefreshCooldown ago, in which case it returns the cached set without any
// network traffic.
func (c *JWKSClient) Refresh(ctx context.Context, uri string) (*KeySet, error) {
	e, err := c.entry(uri)
	if err != nil {
		return nil, err
	}
	now := c.cfg.Now()
	e.mu.Lock()
	if !e.lastAttempt.IsZero() && now.Sub(e.lastAttempt) < c.cfg.RefreshCooldown {
		set, err := e.usable(now)
		e.mu.Unlock()
		if set != nil || err != nil {
			return set, err
		}
		// A first fetch is still in flight: join it below.
	} else {
		e.mu.Unlock()
	}
	return c.load(ctx, uri, e)
}

// usable returns the set if it may still be served, else the last error.
// e.mu must be held.
func (e *entry) usable(now time.Time) (*KeySet, error) {
	if e.set != nil && now.Before(e.staleUntil) {
		return e.set, nil
	}
	return nil, e.err
}

// entry returns the cache entry of uri, creating it after the URI passed the
// policy. Refused URIs create nothing.
func (c *JWKSClient) entry(uri string) (*entry, error) {
	c.mu.Lock()
	e, ok := c.entries[uri]
	c.mu.Unlock()
	if ok {
		return e, nil
	}
	u, err := checkURI(uri, c.cfg.AllowLoopbackHTTP, c.allowed)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[uri]; ok {
		return e, nil
	}
	e = &entry{u: u}
	c.entries[uri] = e
	return e, nil
}

type loadResult struct {
	set *KeySet
}

// start runs (or joins) the single fetch of uri. The fetch outlives the
// caller that started it, since others may wait on it: it keeps ctx's values
// but not its cancellation, and gets its own deadline. The returned channel
// is buffered, so nobody has to receive from it.
func (c *JWKSClient) start(ctx context.Context, uri string, e *entry) <-chan singleflight.Result {
	fctx := context.WithoutCancel(ctx)
	return c.group.DoChan(uri, func() (any, error) {
		set, err := c.fetchAndStore(fctx, e)
		return loadResult{set}, err
	})
}

// load runs (or joins) the fetch of uri and waits for it or for ctx. On
// failure it still returns a last-good set if one may be served.
func (c *JWKSClient) load(ctx context.Context, uri string, e *entry) (*KeySet, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.start(ctx, uri, e):
		return c.result(e, r)
	}
}

// loadOrStale runs (or joins) the refetch of an expired set and waits for
// it at most StaleWait (and no longer than ctx); then it serves stale.
func (c *JWKSClient) loadOrStale(ctx context.Context, uri string, e *entry, stale *KeySet) (*KeySet, error) {
	ch := c.start(ctx, uri, e)
	if c.cfg.StaleWait <= 0 {
		return stale, nil
	}
	t := time.NewTimer(c.cfg.StaleWait)
	defer t.Stop()
	select {
	case r := <-ch:
		return c.result(e, r)
	case <-t.C:
		return stale, nil
	case <-ctx.Done():
		return stale, nil
	}
}

func (c *JWKSClient) result(e *entry, r singleflight.Result) (*KeySet, error) {
	if r.Err == nil {
		return r.Val.(loadResult).set, nil
	}
	now := c.cfg.Now()
	e.mu.Lock()
	set, _ := e.usable(now)
	e.mu.Unlock()
	if set != nil {
		return set, nil
	}
	return nil, r.Err
}

// fetchAndStore fetches e's document and records the outcome.
func (c *JWKSClient) fetchAndStore(ctx context.Context, e *entry) (*KeySet, error) {
	e.mu.Lock()
	e.lastAttempt = c.cfg.Now()
	e.mu.Unlock()

	set, ttl, err := c.fetch(ctx, e.u)
	if c.cfg.OnFetch != nil {
		c.cfg.OnFetch(err)
	}
	now := c.cfg.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		// 404 and 410 are the PA's word that the document is gone (a
		// withdrawn, perhaps stolen, key): drop the last-good keys rather
		// than keep accepting them through an "outage".
		var se *StatusError
		if errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusGone) {
			e.set.releaseTables(nil)
			e.set = nil
		}
		err = fmt.Errorf("jose: JWKS %s: %w", e.u.Redacted(), err)
		e.err = err
		e.errUntil = now.Add(c.cfg.NegativeTTL)
		return nil, err
	}
	if c.cfg.Tables != nil {
		set.bindTables(c.cfg.Tables, e.set)
	}
	e.set = set
	e.expires = now.Add(ttl)
	e.staleUntil = e.expires.Add(c.cfg.MaxStale)
	e.err = nil
	e.errUntil = time.Time{}
	return set, nil
}

// tracer makes a client span per JWKS fetch (a no-op without a tracer
// provider).
var tracer = otel.Tracer("pactd/jose")

// fetch performs one bounded GET and parses the document.
func (c *JWKSClient) fetch(ctx context.Context, u *url.URL) (set *KeySet, ttl time.Duration, err error) {
	ctx, span := tracer.Start(ctx, "jwks fetch", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("url.full", u.Redacted())))
	defer func() {
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.HTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrInvalidURI, err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, classifyFetchError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, &StatusError{Code: resp.StatusCode}
	}
	if resp.ContentLength > c.cfg.MaxBodyBytes {
		return nil, 0, fmt.Errorf("Content-Length %d: %w", resp.ContentLength, ErrDocumentTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, 0, classifyFetchError(ctx, err)
	}
	if int64(len(body)) > c.cfg.MaxBodyBytes {
		return nil, 0, fmt.Errorf("more than %d bytes: %w", c.cfg.MaxBodyBytes, ErrDocumentTooLarge)
	}
	set, err = ParseJWKS(body, c.cfg.MaxKeys)
	if err != nil {
		return nil, 0, err
	}
	return set, c.ttl(resp.Header), nil
}

func classifyFetchError(ctx context.Context, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, ErrUnavailable), errors.Is(err, ErrInvalidURI):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	default:
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
}

// ttl derives the cache lifetime from Cache-Control (max-age minus Age),
// clamped to [MinTTL, MaxTTL]; DefaultTTL without max-age.
func (c *JWKSClient) ttl(h http.Header) time.Duration {
	ttl := c.cfg.DefaultTTL
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			d = strings.ToLower(strings.TrimSpace(d))
			switch {
			case d == "no-store" || d == "no-cache":
				return c.cfg.MinTTL
			case strings.HasPrefix(d, "max-age="):
				n, err := strconv.ParseInt(strings.Trim(d[len("max-age="):], `"`), 10, 64)
				if err != nil || n < 0 {
					continue
				}
				if age, err := strconv.ParseInt(h.Get("Age"), 10, 64); err == nil && age > 0 {
					n -= min(age, n)
				}
				if n > int64(c.cfg.MaxTTL/time.Second) {
					ttl = c.cfg.MaxTTL
				} else {
					ttl = time.Duration(n) * time.Second
				}
			}
		}
	}
	return min(max(ttl, c.cfg.MinTTL), c.cfg.MaxTTL)
}

// checkRedirect allows at most MaxRedirects redirects, all on the origin of
// the first request.
func (c *JWKSClient) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.cfg.MaxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirect, c.cfg.MaxRedirects)
	}
	if !sameOrigin(req.URL, via[0].URL) {
		return fmt.Errorf("%w: off-origin redirect", ErrRedirect)
	}
	return nil
}

func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "http") {
			return "80"
		}
		return "443"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(strings.TrimSuffix(a.Hostname(), "."), strings.TrimSuffix(b.Hostname(), ".")) &&
		port(a) == port(b)
}

// dialGuarded resolves the host, refuses the dial if any resolved address is
// forbidden, then dials the checked IP literals (never the name again, so a
// second resolution cannot rebind).
func (c *JWKSClient) dialGuarded(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: bad port", ErrUnavailable)
	}
	var addrs []netip.Addr
	if a, ok := parseHostIP(host); ok {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = c.resolve(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("%w: resolve %s: %w", ErrUnavailable, host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%w: %s has no addresses", ErrUnavailable, host)
		}
	}
	exempt := c.allowed(host)
	for _, a := range addrs {
		if exempt {
			break // the operator named this host: any address it resolves to
		}
		if err := CheckAddress(a, c.cfg.AllowLoopbackHTTP); err != nil {
			return nil, fmt.Errorf("dial %s: %w", host, err)
		}
	}
	dial := c.cfg.DialContext
	if dial == nil {
		d := &net.Dialer{Timeout: c.cfg.HTTPTimeout, Control: c.controlGuard}
		if exempt {
			d.Control = nil
		}
		dial = d.DialContext
	}
	var firstErr error
	for i, a := range addrs {
		if i == maxDialAddrs {
			break
		}
		conn, err := dial(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

func (c *JWKSClient) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if c.cfg.Resolver != nil {
		return c.cfg.Resolver(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// allowed reports whether host is one of Config.AllowHosts.
func (c *JWKSClient) allowed(host string) bool {
	return hostListed(c.cfg.AllowHosts, host)
}

// controlGuard re-checks the address the socket is about to connect to.
func (c *JWKSClient) controlGuard(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable dial address", ErrForbiddenAddress)
	}
	return CheckAddress(ap.Addr(), c.cfg.AllowLoopbackHTTP)
}
