package jose_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/internal/testkit/testclock"
)

var b64 = base64.RawURLEncoding

func newECKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newRSAKey(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// ecJWK returns the public JWK of an EC key, with extra members merged in.
func ecJWK(t testing.TB, pub *ecdsa.PublicKey, kid string, extra map[string]any) map[string]any {
	t.Helper()
	raw, err := pub.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	size := (len(raw) - 1) / 2
	m := map[string]any{
		"kty": "EC",
		"crv": pub.Curve.Params().Name,
		"x":   b64.EncodeToString(raw[1 : 1+size]),
		"y":   b64.EncodeToString(raw[1+size:]),
	}
	if kid != "" {
		m["kid"] = kid
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// rsaJWK returns the public JWK of an RSA key, with extra members merged in.
func rsaJWK(pub *rsa.PublicKey, kid string, extra map[string]any) map[string]any {
	m := map[string]any{
		"kty": "RSA",
		"n":   b64.EncodeToString(pub.N.Bytes()),
		"e":   b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}
	if kid != "" {
		m["kid"] = kid
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func jwksDoc(t testing.TB, keys ...map[string]any) []byte {
	t.Helper()
	if keys == nil {
		keys = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newFakeClock is the tests' clock, at their fixed start.
func newFakeClock() *testclock.Clock {
	return testclock.New(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
}

// jwksServer is an httptest JWKS endpoint whose answer tests can change.
type jwksServer struct {
	*httptest.Server
	hits atomic.Int64

	mu      sync.Mutex
	body    []byte
	status  int
	headers map[string]string
	gate    chan struct{} // when set, requests wait for it (or their own end)
}

func newJWKSServer(t testing.TB, body []byte) *jwksServer {
	t.Helper()
	s := &jwksServer{body: body, status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.release()
		s.Close()
	})
	return s
}

func (s *jwksServer) serve(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	s.mu.Lock()
	body, status, gate := s.body, s.status, s.gate
	headers := make(map[string]string, len(s.headers))
	for k, v := range s.headers {
		headers[k] = v
	}
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *jwksServer) set(body []byte, status int, headers map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body, s.status, s.headers = body, status, headers
}

// hold makes requests wait until release.
func (s *jwksServer) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = make(chan struct{})
}

func (s *jwksServer) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
