package verification_test

// Benchmarks of VerifyAgentRequest in process, wired as server
// wires it: the real PA-JWT verifier on a warm JWKS client, the agent
// directory and Brand cache over a real store, delegation tokens signed by
// the store's key ring. Run on one core and compare runs with benchstat:
//
//	go test -run '^$' -bench VerifyAgentRequest -benchtime 3s -count 3 -cpu 1 ./services/verification/
//
// go-cpu-ns/op is this process's CPU per call and pg-cpu-ns/op that of the
// PostgreSQL backends serving the benchmark's database (internal/cpumeter).

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/core/agentdir"
	"pactd.dev/pactd/core/brandcache"
	"pactd.dev/pactd/core/changefeed"
	"pactd.dev/pactd/core/grantcache"
	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/cpumeter"
	"pactd.dev/pactd/services/verification"
	"pactd.dev/pactd/token/delegtoken"
	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/pajwt"
)

const (
	benchAudience = publicURL + "/a2a"
	benchUser     = "user-42"
	benchGrant    = "a2agrant_01JBENCH0000000000000000000"
)

// benchEnv is the service on a store with one PA (its JWKS on loopback),
// the Brand acme with delegation on, a live grant and its delegation token.
type benchEnv struct {
	svc        *verification.Service
	sign       func(sub string) string // a PA JWT ("Bearer ...") for sub
	delegation string                  // "Bearer " + a delegation token of the grant
	dbName     string                  // PostgreSQL database; "" for SQLite
}

func newBenchEnv(b *testing.B, engine string, tokenCache int) *benchEnv {
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

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		coord := func(c []byte) string { return base64.RawURLEncoding.EncodeToString(c) }
		raw, _ := key.PublicKey.Bytes() // 0x04 || X || Y
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"keys":[{"kty":"EC","crv":"P-256","x":%q,"y":%q,"kid":"k1","alg":"ES256","use":"sig"}]}`,
			coord(raw[1:33]), coord(raw[33:]))
	}))
	b.Cleanup(jwks.Close)
	issuer := jwks.URL
	now := time.Now().UTC().Truncate(time.Second)
	if _, err := s.CreateAgent(ctx, db.Agent{ID: "agt_1", Issuer: issuer, JWKSURI: jwks.URL + "/jwks.json",
		DisplayName: "PA", Enabled: true, CreateTime: now, UpdateTime: now}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.CreateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Acme", CreateTime: now, UpdateTime: now,
		Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See orders"}}}}); err != nil {
		b.Fatal(err)
	}
	hash := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	if _, err := s.CreateDeviceAuthorization(ctx, db.DeviceAuthorization{
		ID: "da_bench", BrandID: "acme", AgentID: "agt_1", ClientID: issuer,
		DeviceCodeHash: hash("dc"), UserCodeHash: hash("uc"), Scopes: []string{"orders:read"},
		Interval: 3 * time.Second, ExpiresAt: now.Add(10 * time.Minute), CreateTime: now,
	}); err != nil {
		b.Fatal(err)
	}
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_bench", db.Grant{
		ID: benchGrant, BrandID: "acme", AgentID: "agt_1", ClientID: issuer, BrandUser: benchUser,
		Scopes: []string{"orders:read"}, CreateTime: now, ExpireTime: now.Add(30 * 24 * time.Hour),
	}, now); err != nil {
		b.Fatal(err)
	}
	ring, err := provkeys.Open(ctx, provkeys.Config{Store: s, KEK: bytes.Repeat([]byte{9}, 32)})
	if err != nil {
		b.Fatal(err)
	}
	aud := publicURL + "/a2a/acme"
	deleg, err := delegtoken.NewSigner(ring, nil).Mint(ctx, delegtoken.Claims{
		Issuer: aud + delegtoken.IssuerSuffix, Audience: aud, Subject: benchUser, ClientID: issuer,
		GrantID: benchGrant, Scopes: []string{"orders:read"},
	})
	if err != nil {
		b.Fatal(err)
	}

	keys, err := jose.NewJWKSClient(jose.Config{AllowLoopbackHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	pv, err := pajwt.New(pajwt.Config{Keys: keys, CacheSize: tokenCache})
	if err != nil {
		b.Fatal(err)
	}
	// The change feed the caches follow, polled as pactd polls it.
	feed := changefeed.New(changefeed.Config{Store: s, Apply: func([]db.Change) {}, Resync: func() {}})
	go feed.Run(ctx)
	agents := agentdir.New(s, benchAudience, agentdir.DefaultTTL, 0, feed, nil)
	svc := verification.New(verification.Deps{
		PA:     agentdir.PAVerifier{Verifier: pv, Directory: agents},
		Brands: brandcache.New(s, agentdir.DefaultTTL, 0, feed, nil),
		Delegation: verification.DelegationTokens{Tokens: delegtoken.NewVerifier(ring, nil), Grants: grantcache.New(s, 0, feed, nil, nil),
			PublicURL: publicURL, Now: time.Now},
	})
	sign := func(sub string) string {
		h, _ := json.Marshal(map[string]any{"alg": "ES256", "typ": "JWT", "kid": "k1"})
		t := time.Now().Unix()
		c, _ := json.Marshal(map[string]any{"iss": issuer, "sub": sub, "aud": benchAudience, "iat": t, "exp": t + 120})
		input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
		d := sha256.Sum256([]byte(input))
		r, sg, err := ecdsa.Sign(rand.Reader, key, d[:])
		if err != nil {
			b.Fatal(err)
		}
		return "Bearer " + input + "." + base64.RawURLEncoding.EncodeToString(append(r.FillBytes(make([]byte, 32)), sg.FillBytes(make([]byte, 32))...))
	}
	e := &benchEnv{svc: svc, sign: sign, delegation: "Bearer " + deleg, dbName: dbName}
	// Positive control: a delegated call is allowed with the grant, so the
	// loops measure the whole path and not an early refusal.
	resp, err := svc.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: sign("pa-user"), UserDelegation: e.delegation})
	if err != nil || !resp.GetAllowed() || resp.GetDelegation().GetGrantId() != benchGrant {
		b.Fatalf("control: %v, %v; want allowed with grant %s", resp, err, benchGrant)
	}
	return e
}

// run calls VerifyAgentRequest with req(i) for every iteration and checks
// each answer allows (and carries the grant when delegated).
func (e *benchEnv) run(b *testing.B, req func(i int) *pactv1.VerifyAgentRequestRequest) {
	b.Helper()
	ctx := b.Context()
	m := cpumeter.Start(e.dbName)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := req(i)
		resp, err := e.svc.VerifyAgentRequest(ctx, r)
		if err != nil || !resp.GetAllowed() || (r.UserDelegation != "") != (resp.GetDelegation() != nil) {
			b.Fatalf("call %d: %v, %v", i, resp, err)
		}
		i++
	}
	m.Report(b.N, b.ReportMetric)
}

// BenchmarkVerifyAgentRequest covers the identity-only hot path with a
// repeated token (the signature skipped; agent and Brand from their
// caches) and with a new token every call (a pool four times the repeat
// cache), and the delegated path (a repeated PA JWT and delegation token:
// the delegation token's signature every call, the grant's liveness from
// the grant cache) on both stores.
func BenchmarkVerifyAgentRequest(b *testing.B) {
	b.Run("identity/repeat", func(b *testing.B) {
		e := newBenchEnv(b, "sqlite", 0)
		req := &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: e.sign("pa-user")}
		e.run(b, func(int) *pactv1.VerifyAgentRequestRequest { return req })
	})
	b.Run("identity/new", func(b *testing.B) {
		e := newBenchEnv(b, "sqlite", 1024)
		pool := make([]*pactv1.VerifyAgentRequestRequest, 4096)
		for i := range pool {
			pool[i] = &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: e.sign(fmt.Sprintf("pa-user-%05d", i))}
		}
		e.run(b, func(i int) *pactv1.VerifyAgentRequestRequest { return pool[i%len(pool)] })
	})
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run("delegated/"+engine, func(b *testing.B) {
			e := newBenchEnv(b, engine, 0)
			req := &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: e.sign("pa-user"), UserDelegation: e.delegation}
			e.run(b, func(int) *pactv1.VerifyAgentRequestRequest { return req })
		})
	}
}
