package pajwt_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/pajwt"
)

const (
	testIssuer   = "https://pa.example.com"
	testAudience = "https://provider.example.com/a2a"
	testJWKSURI  = "https://pa.example.com/.well-known/jwks.json"
	testSubject  = "user-7f3a"
)

var b64 = base64.RawURLEncoding

// signer signs compact JWS with one key.
type signer struct {
	kid string
	alg string
	ec  *ecdsa.PrivateKey
	rsa *rsa.PrivateKey
}

func newESSigner(t testing.TB, kid string) *signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{kid: kid, alg: "ES256", ec: k}
}

func newRSSigner(t testing.TB, kid string) *signer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{kid: kid, alg: "RS256", rsa: k}
}

// key returns the signer's public key as a jose.Key.
func (s *signer) key(t testing.TB) jose.Key {
	t.Helper()
	var k jose.Key
	var err error
	if s.ec != nil {
		k, err = jose.NewECKey(s.kid, &s.ec.PublicKey)
	} else {
		k, err = jose.NewRSAKey(s.kid, &s.rsa.PublicKey)
	}
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signInput signs the ASCII signing input and returns the raw JWS signature.
func (s *signer) signInput(t testing.TB, input string) []byte {
	t.Helper()
	d := sha256.Sum256([]byte(input))
	if s.ec != nil {
		r, ss, err := ecdsa.Sign(rand.Reader, s.ec, d[:])
		if err != nil {
			t.Fatal(err)
		}
		sig := make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
		return sig
	}
	sig, err := rsa.SignPKCS1v15(nil, s.rsa, crypto.SHA256, d[:])
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// signJSON builds a compact JWS from raw header and claims JSON texts.
func (s *signer) signJSON(t testing.TB, header, claims string) string {
	t.Helper()
	input := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
	return input + "." + b64.EncodeToString(s.signInput(t, input))
}

// sign builds a compact JWS from header and claims maps.
func (s *signer) sign(t testing.TB, header, claims map[string]any) string {
	t.Helper()
	return s.signJSON(t, mustJSON(t, header), mustJSON(t, claims))
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeKeys is an in-memory KeySource with function fields and call counts.
type fakeKeys struct {
	keys         func(ctx context.Context, uri string) (*jose.KeySet, error)
	refresh      func(ctx context.Context, uri string) (*jose.KeySet, error)
	keysCalls    atomic.Int64
	refreshCalls atomic.Int64
}

func (f *fakeKeys) Keys(ctx context.Context, uri string) (*jose.KeySet, error) {
	f.keysCalls.Add(1)
	return f.keys(ctx, uri)
}

func (f *fakeKeys) Refresh(ctx context.Context, uri string) (*jose.KeySet, error) {
	f.refreshCalls.Add(1)
	if f.refresh == nil {
		return f.keys(ctx, uri)
	}
	return f.refresh(ctx, uri)
}

// switchableKeys serves one key set for one URI; tests swap the set.
type switchableKeys struct {
	mu  sync.Mutex
	set *jose.KeySet
	err error
}

func (s *switchableKeys) get(_ context.Context, uri string) (*jose.KeySet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uri != testJWKSURI {
		return nil, errors.New("unknown JWKS URI")
	}
	return s.set, s.err
}

func (s *switchableKeys) put(set *jose.KeySet, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set, s.err = set, err
}

func mustKeySet(t testing.TB, keys ...jose.Key) *jose.KeySet {
	t.Helper()
	set, err := jose.NewKeySet(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// agentBook is an in-memory agent registry with exact-issuer lookup.
type agentBook struct {
	mu     sync.Mutex
	agents map[string]pajwt.Agent
	calls  atomic.Int64
}

func newAgentBook(agents ...pajwt.Agent) *agentBook {
	b := &agentBook{agents: map[string]pajwt.Agent{}}
	for _, a := range agents {
		b.agents[a.Issuer] = a
	}
	return b
}

func (b *agentBook) lookup(_ context.Context, iss string) (pajwt.Agent, error) {
	b.calls.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.agents[iss]
	if !ok {
		return pajwt.Agent{}, pajwt.ErrUnknownAgent
	}
	return a, nil
}

func (b *agentBook) update(iss string, f func(*pajwt.Agent)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.agents[iss]
	f(&a)
	b.agents[iss] = a
}

func testAgent() pajwt.Agent {
	return pajwt.Agent{
		ID:          "agent-1",
		Issuer:      testIssuer,
		JWKSURI:     testJWKSURI,
		Audience:    testAudience,
		DisplayName: "Test PA",
		Enabled:     true,
	}
}

// fixture is a verifier wired to in-memory keys, agents and a fake clock.
type fixture struct {
	clock  *testclock.Clock
	es, rs *signer
	keys   *switchableKeys
	source *fakeKeys
	book   *agentBook
	v      *pajwt.Verifier
}

// sharedSigners generates the fixture's keys once per top-level test.
type sharedSigners struct{ es, rs *signer }

func newSigners(t testing.TB) sharedSigners {
	t.Helper()
	return sharedSigners{es: newESSigner(t, "es-1"), rs: newRSSigner(t, "rs-1")}
}

func newFixture(t testing.TB, s sharedSigners, mod func(*pajwt.Config)) *fixture {
	t.Helper()
	f := &fixture{
		clock: testclock.New(time.Unix(1_780_000_000, 0)),
		es:    s.es,
		rs:    s.rs,
		keys:  &switchableKeys{},
		book:  newAgentBook(testAgent()),
	}
	f.keys.put(mustKeySet(t, s.es.key(t), s.rs.key(t)), nil)
	f.source = &fakeKeys{keys: f.keys.get}
	cfg := pajwt.Config{Keys: f.source, Now: f.clock.Now}
	if mod != nil {
		mod(&cfg)
	}
	v, err := pajwt.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.v = v
	return f
}

func (f *fixture) now() int64 { return f.clock.Now().Unix() }

// claims returns a valid claims set for the fixture's clock.
func (f *fixture) claims() map[string]any {
	now := f.now()
	return map[string]any{
		"iss": testIssuer,
		"sub": testSubject,
		"aud": testAudience,
		"iat": now,
		"exp": now + 120,
		"jti": "jti-1",
	}
}

// token signs claims (after mod) with s and a header (after hmod).
func (f *fixture) token(t testing.TB, s *signer, hmod func(map[string]any), cmod func(map[string]any)) string {
	t.Helper()
	h := map[string]any{"alg": s.alg, "typ": "JWT", "kid": s.kid}
	if hmod != nil {
		hmod(h)
	}
	c := f.claims()
	if cmod != nil {
		cmod(c)
	}
	return s.sign(t, h, c)
}

func (f *fixture) verify(t testing.TB, auth string) (pajwt.Result, error) {
	t.Helper()
	return f.v.Verify(t.Context(), auth, f.book.lookup)
}

// wantReason asserts that err is a refusal with the given reason.
func wantReason(t testing.TB, err error, want pajwt.Reason) {
	t.Helper()
	var e *pajwt.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want refusal %v", err, err, want)
	}
	if e.Reason != want {
		t.Fatalf("reason = %v (%v), want %v", e.Reason, err, want)
	}
}

func bearer(tok string) string { return "Bearer " + tok }
