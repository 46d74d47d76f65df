package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/server"
)

// cutProxy forwards TCP to a PostgreSQL server until it is cut: then it
// closes every connection and refuses new ones, as a database that went
// away would, until it is restored.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { _ = ln.Close(); p.setCut(true) })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
		go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
	}
}

func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
		clear(p.conns)
	}
}

// countingHandler counts log records at warn level and above, and per
// request id.
type countingHandler struct {
	n     *atomic.Int64
	mu    *sync.Mutex
	perID map[string]int
}

func (h countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h countingHandler) WithGroup(string) slog.Handler                { return h }

func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.n.Add(1)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "request_id" {
			h.mu.Lock()
			h.perID[a.Value.String()]++
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

// outageWorld is pactd on PostgreSQL through a cutProxy, running on a
// test clock, with a PA, a Brand, a verify function (a new PA JWT each
// call, issued at pactd's time), a Brand client and a health check. On the
// test clock the change feed polls only when the test moves the clock, so
// a poll slowed by a busy machine cannot drop the caches the outage falls
// back on.
type outageWorld struct {
	clock    *testclock.Clock
	proxy    *cutProxy
	warnings *atomic.Int64
	logs     countingHandler
	verify   func() (*pactv1.VerifyAgentRequestResponse, error)
	brands   pactv1connect.BrandServiceClient
	check    func(service string) healthpb.HealthCheckResponse_ServingStatus
}

func newOutageWorld(t *testing.T, env ...string) outageWorld {
	direct := dbtest.PostgresURL(t)
	pgURL, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, pgURL.Host)
	viaProxy := *pgURL
	viaProxy.Host = proxy.ln.Addr().String()
	q := viaProxy.Query()
	q.Set("connect_timeout", "1")
	viaProxy.RawQuery = q.Encode()

	warnings := new(atomic.Int64)
	logs := countingHandler{n: warnings, mu: new(sync.Mutex), perID: map[string]int{}}
	cfg := testConfig(t, viaProxy.String(), t.TempDir(), env...)
	clk := testclock.New(time.Now())
	inst := startWith(t, cfg, server.Deps{Logger: slog.New(logs), Clock: clk})

	pa := newTestPA(t)
	if _, err := agents(inst, adminToken).RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "PA"}); err != nil {
		t.Fatal(err)
	}
	bc := brands(inst, adminToken)
	if _, err := bc.CreateBrand(t.Context(), &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
		t.Fatal(err)
	}
	// The feed drops the cached agent and Brand when it applies their
	// creation: let it, so the positive control's reads are what the
	// outage falls back on.
	feedAppliedAll(t, inst, clk, cfg.ChangePollInterval, dbtest.Open(t, direct, ""))
	vc := pactv1connect.NewVerificationServiceClient(h2c(), inst.url, withToken(frontendToken))
	verify := func() (*pactv1.VerifyAgentRequestResponse, error) {
		cctx, ccancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer ccancel()
		tok := pa.token(t, map[string]any{"alg": "ES256", "kid": pa.kid}, pa.claims("https://provider.example/a2a", clk.Now()))
		return vc.VerifyAgentRequest(cctx, &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer " + tok})
	}
	conn, err := grpc.NewClient(inst.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	check := func(service string) healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		cctx, ccancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer ccancel()
		r, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatalf("health %q: %v", service, err)
		}
		return r.GetStatus()
	}
	return outageWorld{clock: clk, proxy: proxy, warnings: warnings, logs: logs, verify: verify, brands: bc, check: check}
}

// Through a 6-second PostgreSQL outage (on pactd's clock), PA-JWT
// verification keeps succeeding from last-known agent, Brand and
// credential state (new tokens each time, so the signature is checked
// every time); writes fail closed with Unavailable; health reports
// VerificationService SERVING and the others NOT_SERVING; nothing
// acknowledged before is lost, and writes work again within 2 s of the
// database's return.
func TestVerificationThroughADatabaseOutage(t *testing.T) {
	w := newOutageWorld(t)
	verify, bc, check, proxy, warnings := w.verify, w.brands, w.check, w.proxy, w.warnings
	// Positive controls before the outage.
	if r, err := verify(); err != nil || !r.GetAllowed() {
		t.Fatalf("ok/before: %v, %v", r, err)
	}
	if s := check(pactv1connect.AgentServiceName); s != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before the outage: %v", s)
	}
	before := warnings.Load()

	proxy.setCut(true)
	// A verification every 50 ms of pactd's time, through the cached
	// state's TTL (2 s), the credential's re-check (1 s) and the change
	// feed's failing polls, to 6 s.
	const step, outage = 50 * time.Millisecond, 6 * time.Second
	verified := 0
	for into := time.Duration(0); into <= outage; into += step {
		r, err := verify()
		if err != nil || !r.GetAllowed() {
			t.Fatalf("verification %v into the outage: %v, %v", into, r, err)
		}
		verified++
		w.clock.Advance(step)
	}
	cctx, ccancel := context.WithTimeout(t.Context(), 5*time.Second)
	cctx, call := connect.NewClientContext(cctx)
	call.RequestHeader().Set("X-Request-Id", "outage-write-1")
	_, werr := bc.CreateBrand(cctx, &pactv1.CreateBrandRequest{BrandId: "during", DisplayName: "During"})
	ccancel()
	if connect.CodeOf(werr) != connect.CodeUnavailable {
		t.Fatalf("a write during the outage: %v, want Unavailable", werr)
	}
	// The fault is logged once, with the caller's request id, which comes
	// back in the response.
	if got := call.ResponseHeader().Get("X-Request-Id"); got != "outage-write-1" {
		t.Fatalf("response X-Request-Id = %q", got)
	}
	w.logs.mu.Lock()
	n := w.logs.perID["outage-write-1"]
	w.logs.mu.Unlock()
	if n != 1 {
		t.Fatalf("the failed write logged %d warning/error lines; want exactly 1", n)
	}
	if s := check(pactv1connect.VerificationServiceName); s != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("VerificationService health during the outage: %v, want SERVING", s)
	}
	if s := check(pactv1connect.BrandServiceName); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("BrandService health during the outage: %v, want NOT_SERVING", s)
	}
	// One failed write and a few health pings: a bounded number of lines,
	// not one per verification.
	if logged := warnings.Load() - before; logged > 10 {
		t.Fatalf("%d warning/error log lines during the outage", logged)
	}

	proxy.setCut(false)
	back := time.Now()
	for {
		cctx, ccancel := context.WithTimeout(t.Context(), time.Second)
		_, err := bc.CreateBrand(cctx, &pactv1.CreateBrandRequest{BrandId: "after", DisplayName: "After"})
		ccancel()
		if err == nil {
			break
		}
		if time.Since(back) > 2*time.Second {
			t.Fatalf("writes still fail %v after the database returned: %v", time.Since(back), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Nothing acknowledged is lost; nothing refused was stored.
	list, err := bc.ListBrands(t.Context(), &pactv1.ListBrandsRequest{})
	var ids []string
	for _, b := range list.GetBrands() {
		ids = append(ids, b.GetBrandId())
	}
	if err != nil || strings.Join(ids, ",") != "acme,after" {
		t.Fatalf("Brands after the outage = %v, %v; want acme,after", ids, err)
	}
	t.Logf("%d verifications during a 6 s outage; %d warning/error log lines in all; writes back after %v",
		verified, warnings.Load()-before, time.Since(back).Round(time.Millisecond))
}

// With PACT_OUTAGE_GRACE=0 verification fails closed once the cached state
// is older than its TTL (2 s): Unavailable, never an allow. pactd runs on
// a test clock, moved past the TTL while the database is away.
func TestVerificationFailsClosedWithoutOutageGrace(t *testing.T) {
	w := newOutageWorld(t, "PACT_OUTAGE_GRACE=0s")
	if r, err := w.verify(); err != nil || !r.GetAllowed() {
		t.Fatalf("ok/before: %v, %v", r, err)
	}
	w.proxy.setCut(true)
	w.clock.Advance(2500 * time.Millisecond)
	r, err := w.verify()
	if connect.CodeOf(err) != connect.CodeUnavailable || r.GetAllowed() {
		t.Fatalf("verification with no grace during an outage: %v, %v; want Unavailable", r, err)
	}
	if s := w.check(pactv1connect.VerificationServiceName); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("VerificationService health with no grace: %v, want NOT_SERVING", s)
	}
	w.proxy.setCut(false)
}
