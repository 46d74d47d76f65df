package token_test

// Benchmarks of IntrospectToken, the design's "≥ 3,000 per second per core
// on PostgreSQL" path. Run them on one core and compare with benchstat:
//
//	go test -run '^$' -bench . -benchtime 3s -count 3 -cpu 1 ./services/token/ ./services/delegation/ | tee new.txt
//	go tool -modfile=tools/go.mod benchstat new.txt
//
// Besides ns/op (wall time, what 1e9/ns_per_op turns into ops/s) each
// benchmark reports, on Linux:
//
//   - go-cpu-ns/op: CPU time of this process (user + system, all threads);
//   - pg-cpu-ns/op: CPU time of the PostgreSQL backends serving the
//     benchmark's own database (found by their process title), which run on
//     the same machine but are not in the Go process's core;
//   - ops/cpu-s: operations per second of CPU time, Go and PostgreSQL
//     together: the honest "per core" figure when PostgreSQL shares the box.
//
// The PostgreSQL server's shared processes (walwriter, checkpointer) are not
// counted; docs/benchmarks.md ("How the figures are measured") says how large they were.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/core/brandcache"
	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/apidesc"
	"pactd.dev/pactd/internal/cpumeter"
	"pactd.dev/pactd/services/token"
	"pactd.dev/pactd/token/delegtoken"
)

const (
	benchPA    = "https://pa.example"
	benchBrand = "acme"
	benchUser  = "user-42"
	// benchPublicURL is the Provider's public base URL.
	benchPublicURL = "https://provider.example"
	// benchMaxRequestBytes is pactd's per-request read limit, applied to
	// the RPC benchmark's handler.
	benchMaxRequestBytes = apidesc.MaxRequestBytes
)

// introspectEnv is a TokenService on a real store, a live grant in that
// store, and a delegation token of that grant signed by the store's key.
type introspectEnv struct {
	svc    *token.Service
	req    *pactv1.IntrospectTokenRequest
	dbName string // PostgreSQL database; "" for SQLite
}

// newIntrospectEnv builds the service as server does: the store
// is both BrandStore and GrantChecker (every call checks the grant in the
// store), and the Verifier reads keys from a provkeys.Ring on that store.
// Wall time is the clock: the store's GrantLive uses it too.
func newIntrospectEnv(b *testing.B, engine string) *introspectEnv {
	b.Helper()
	ctx := b.Context()
	var dbURL, dbName string
	if engine == "postgres" {
		dbURL = dbtest.PostgresURL(b)
		u, err := url.Parse(dbURL)
		if err != nil {
			b.Fatal(err)
		}
		dbName = strings.TrimPrefix(u.Path, "/")
	}
	s := dbtest.Open(b, dbURL, b.TempDir())
	ring, err := provkeys.Open(ctx, provkeys.Config{Store: s, KEK: bytes.Repeat([]byte{9}, 32)})
	if err != nil {
		b.Fatalf("provkeys.Open: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	if _, err := s.CreateAgent(ctx, db.Agent{ID: "agt_1", Issuer: benchPA, JWKSURI: benchPA + "/jwks.json",
		DisplayName: "PA", Enabled: true, CreateTime: now, UpdateTime: now}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.CreateBrand(ctx, db.Brand{ID: benchBrand, DisplayName: "Acme", CreateTime: now, UpdateTime: now,
		Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{
			{ID: "orders:read", Description: "See orders"}, {ID: "orders:write", Description: "Change orders"}}}}); err != nil {
		b.Fatal(err)
	}
	// A grant made the way the delegation service makes one: a device
	// authorization approved by the User.
	hash := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	if _, err := s.CreateDeviceAuthorization(ctx, db.DeviceAuthorization{
		ID: "da_bench", BrandID: benchBrand, AgentID: "agt_1", ClientID: benchPA,
		DeviceCodeHash: hash("dc"), UserCodeHash: hash("uc"), Scopes: []string{"orders:read", "orders:write"},
		Interval: 3 * time.Second, ExpiresAt: now.Add(10 * time.Minute), CreateTime: now,
	}); err != nil {
		b.Fatal(err)
	}
	const grantID = "a2agrant_01JBENCH0000000000000000000"
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_bench", db.Grant{
		ID: grantID, BrandID: benchBrand, AgentID: "agt_1", ClientID: benchPA, BrandUser: benchUser,
		Scopes: []string{"orders:read", "orders:write"}, CreateTime: now, ExpireTime: now.Add(30 * 24 * time.Hour),
	}, now); err != nil {
		b.Fatal(err)
	}
	aud := benchPublicURL + "/a2a/" + benchBrand
	tok, err := delegtoken.NewSigner(ring, nil).Mint(ctx, delegtoken.Claims{
		Issuer: aud + delegtoken.IssuerSuffix, Audience: aud, Subject: benchUser, ClientID: benchPA,
		GrantID: grantID, Scopes: []string{"orders:read", "orders:write"},
	})
	if err != nil {
		b.Fatal(err)
	}
	// Brands come from the cache, as server wires them.
	svc := token.New(token.Deps{Brands: brandcache.New(s, time.Minute, 0, nil, nil), Grants: s, Keys: ring, Verifier: delegtoken.NewVerifier(ring, nil),
		Signer: delegtoken.NewSigner(ring, nil), Audit: s, PublicURL: benchPublicURL,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}) // Info, as pactd logs
	e := &introspectEnv{svc: svc, dbName: dbName,
		req: &pactv1.IntrospectTokenRequest{Token: tok, BrandId: benchBrand, ClientId: benchPA}}
	// Positive control: the token is active, so the loop measures the
	// whole path (verify, Brand, grant) and not an early refusal.
	resp, err := svc.IntrospectToken(ctx, e.req)
	if err != nil || !resp.GetActive() || resp.GetGrantId() != grantID {
		b.Fatalf("control introspection = %v, %v; want active with grant %s", resp, err, grantID)
	}
	return e
}

// BenchmarkIntrospectToken is IntrospectToken called in-process on a valid
// delegation token with a live grant: ES256 verification, the Brand load and
// the grant check, a store query on every call: the worst case, what the
// grant cache pactd puts in front of the store costs on a miss (a repeated
// introspection is a hit and reads nothing; services/verification's
// BenchmarkVerifyAgentRequest/delegated measures that path).
func BenchmarkIntrospectToken(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			e := newIntrospectEnv(b, engine)
			ctx := b.Context()
			m := cpumeter.Start(e.dbName)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := e.svc.IntrospectToken(ctx, e.req)
				if err != nil || !resp.GetActive() {
					b.Fatalf("IntrospectToken = %v, %v", resp, err)
				}
			}
			m.Report(b.N, b.ReportMetric)
		})
	}
}

// BenchmarkIntrospectTokenParallel is BenchmarkIntrospectToken with 8
// callers per GOMAXPROCS at once, so the Go core is not idle while
// PostgreSQL answers: throughput of one Go core, not latency. pgxpool's
// default pool size (max(4, NumCPU)) applies.
func BenchmarkIntrospectTokenParallel(b *testing.B) {
	b.Run("postgres", func(b *testing.B) {
		e := newIntrospectEnv(b, "postgres")
		ctx := b.Context()
		m := cpumeter.Start(e.dbName)
		b.ReportAllocs()
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := e.svc.IntrospectToken(ctx, e.req)
				if err != nil || !resp.GetActive() {
					b.Errorf("IntrospectToken = %v, %v", resp, err)
					return
				}
			}
		})
		m.Report(b.N, b.ReportMetric)
	})
}

// BenchmarkIntrospectTokenRPC is the same call through a connect-go client
// (gRPC protocol) to an h2c server on loopback configured as pactd's
// (HTTP/1, h2c and HTTP/2; the same read limit): protobuf, HTTP/2 framing
// and the loopback socket are included, and client and server share the
// benchmark's cores. pactd's logging/metrics and caller-authentication
// interceptors are not mounted.
func BenchmarkIntrospectTokenRPC(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			e := newIntrospectEnv(b, engine)
			mux := http.NewServeMux()
			mux.Handle(pactv1connect.NewTokenServiceHandler(e.svc, connect.WithReadMaxBytes(benchMaxRequestBytes)))
			base, client := serveH2C(b, mux)
			c := pactv1connect.NewTokenServiceClient(client, base, connect.WithGRPC())
			ctx := b.Context()
			if resp, err := c.IntrospectToken(ctx, e.req); err != nil || !resp.GetActive() {
				b.Fatalf("control RPC = %v, %v", resp, err)
			}
			m := cpumeter.Start(e.dbName)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.IntrospectToken(ctx, e.req)
				if err != nil || !resp.GetActive() {
					b.Fatalf("IntrospectToken RPC = %v, %v", resp, err)
				}
			}
			m.Report(b.N, b.ReportMetric)
		})
	}
}

// BenchmarkRawES256Verify is crypto/ecdsa P-256 verification alone, the
// design's reference limit, measured in the same run as the paths above.
func BenchmarkRawES256Verify(b *testing.B) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	d := sha256.Sum256([]byte("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0"))
	r, s, err := ecdsa.Sign(rand.Reader, k, d[:])
	if err != nil {
		b.Fatal(err)
	}
	m := cpumeter.Start("")
	b.ReportAllocs()
	for b.Loop() {
		if !ecdsa.Verify(&k.PublicKey, d[:], r, s) {
			b.Fatal("bad signature")
		}
	}
	m.Report(b.N, b.ReportMetric)
}

// serveH2C serves h on a loopback port with unencrypted HTTP/2 as pactd's
// server does, and returns its base URL and an h2c client.
func serveH2C(b *testing.B, h http.Handler) (string, *http.Client) {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	p.SetHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: p, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	cp := new(http.Protocols)
	cp.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: cp}}
	b.Cleanup(client.CloseIdleConnections)
	return "http://" + ln.Addr().String(), client
}
