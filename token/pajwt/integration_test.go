package pajwt_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/pajwt"
)

// jwksEndpoint is an httptest JWKS server (the network edge) whose document,
// status and responsiveness tests change.
type jwksEndpoint struct {
	*httptest.Server
	hits atomic.Int64

	mu     sync.Mutex
	body   []byte
	status int
	hang   chan struct{}
}

func newJWKSEndpoint(t *testing.T, set *jose.KeySet) *jwksEndpoint {
	t.Helper()
	e := &jwksEndpoint{status: http.StatusOK}
	e.publish(t, set)
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hits.Add(1)
		e.mu.Lock()
		body, status, hang := e.body, e.status, e.hang
		e.mu.Unlock()
		if hang != nil {
			select {
			case <-hang:
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(func() {
		e.mu.Lock()
		if e.hang != nil {
			close(e.hang)
			e.hang = nil
		}
		e.mu.Unlock()
		e.Close()
	})
	return e
}

func (e *jwksEndpoint) publish(t *testing.T, set *jose.KeySet) {
	t.Helper()
	body, err := set.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.body = body
}

func (e *jwksEndpoint) setRaw(body []byte, status int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.body, e.status = body, status
}

// integration wires a Verifier to a real jose.JWKSClient (development
// allowance on, loopback only) and an httptest JWKS.
type integration struct {
	clock *testclock.Clock
	jwks  *jwksEndpoint
	book  *agentBook
	v     *pajwt.Verifier
}

func newIntegration(t *testing.T, set *jose.KeySet, timeout time.Duration) *integration {
	t.Helper()
	in := &integration{clock: testclock.New(time.Unix(1_780_000_000, 0)), jwks: newJWKSEndpoint(t, set)}
	client, err := jose.NewJWKSClient(jose.Config{AllowLoopbackHTTP: true, Now: in.clock.Now, HTTPTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	agent := testAgent()
	agent.JWKSURI = in.jwks.URL + "/.well-known/jwks.json"
	in.book = newAgentBook(agent)
	in.v, err = pajwt.New(pajwt.Config{Keys: client, Now: in.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func (in *integration) token(t *testing.T, s *signer, cmod func(map[string]any)) string {
	now := in.clock.Now().Unix()
	c := map[string]any{"iss": testIssuer, "sub": testSubject, "aud": testAudience, "iat": now, "exp": now + 120}
	if cmod != nil {
		cmod(c)
	}
	return bearer(s.sign(t, map[string]any{"alg": s.alg, "typ": "JWT", "kid": s.kid}, c))
}

func (in *integration) verify(t *testing.T, auth string) (pajwt.Result, error) {
	return in.v.Verify(t.Context(), auth, in.book.lookup)
}

func TestIntegrationWithJWKSClient(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	rotated := newESSigner(t, "es-2")

	t.Run("ok/es256-and-rs256-one-fetch", func(t *testing.T) {
		t.Parallel()
		in := newIntegration(t, mustKeySet(t, s.es.key(t), s.rs.key(t)), 0)
		for _, sg := range []*signer{s.es, s.rs, s.es} {
			if _, err := in.verify(t, in.token(t, sg, nil)); err != nil {
				t.Fatal(err)
			}
		}
		if got := in.jwks.hits.Load(); got != 1 {
			t.Fatalf("JWKS fetched %d times, want 1", got)
		}
	})

	t.Run("ok/rotation-unknown-kid-with-cooldown", func(t *testing.T) {
		t.Parallel()
		in := newIntegration(t, mustKeySet(t, s.es.key(t)), 0)
		if _, err := in.verify(t, in.token(t, s.es, nil)); err != nil {
			t.Fatal(err)
		}
		in.jwks.publish(t, mustKeySet(t, s.es.key(t), rotated.key(t)))
		// Inside the 30 s cooldown the unknown kid is refused without a fetch.
		in.clock.Advance(10 * time.Second)
		_, err := in.verify(t, in.token(t, rotated, nil))
		wantReason(t, err, pajwt.ReasonUnknownKey)
		if got := in.jwks.hits.Load(); got != 1 {
			t.Fatalf("fetched inside cooldown (hits %d)", got)
		}
		// After it, the unknown kid triggers one refetch and passes.
		in.clock.Advance(21 * time.Second)
		res, err := in.verify(t, in.token(t, rotated, nil))
		if err != nil || res.KeyID != "es-2" {
			t.Fatalf("after cooldown: %v", err)
		}
		if got := in.jwks.hits.Load(); got != 2 {
			t.Fatalf("hits %d, want 2", got)
		}
		// A kid that stays unknown does not refetch again inside the cooldown.
		_, err = in.verify(t, in.token(t, newESSigner(t, "es-3"), nil))
		wantReason(t, err, pajwt.ReasonUnknownKey)
		if got := in.jwks.hits.Load(); got != 2 {
			t.Fatalf("hits %d, want 2", got)
		}
	})

	t.Run("fail/jwks-500", func(t *testing.T) {
		t.Parallel()
		in := newIntegration(t, mustKeySet(t, s.es.key(t)), 0)
		in.jwks.setRaw([]byte("down"), http.StatusInternalServerError)
		_, err := in.verify(t, in.token(t, s.es, nil))
		wantReason(t, err, pajwt.ReasonJWKSUnavailable)
		var se *jose.StatusError
		if !errors.As(err, &se) || se.Code != http.StatusInternalServerError {
			t.Fatalf("cause: %v", err)
		}
	})

	t.Run("fail/jwks-timeout-does-not-hang", func(t *testing.T) {
		t.Parallel()
		in := newIntegration(t, mustKeySet(t, s.es.key(t)), 200*time.Millisecond)
		in.jwks.mu.Lock()
		in.jwks.hang = make(chan struct{})
		in.jwks.mu.Unlock()
		start := time.Now()
		_, err := in.verify(t, in.token(t, s.es, nil))
		wantReason(t, err, pajwt.ReasonJWKSUnavailable)
		if !errors.Is(err, jose.ErrTimeout) {
			t.Fatalf("cause: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("verification took %v with a 200ms JWKS timeout", d)
		}
	})

	t.Run("fail/jwks-with-p384-key", func(t *testing.T) {
		t.Parallel()
		in := newIntegration(t, mustKeySet(t, s.es.key(t)), 0)
		p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := p384.PublicKey.Bytes()
		doc := `{"keys":[{"kty":"EC","crv":"P-384","kid":"es-1","x":"` + b64.EncodeToString(raw[1:49]) + `","y":"` + b64.EncodeToString(raw[49:]) + `"}]}`
		in.jwks.setRaw([]byte(doc), http.StatusOK)
		_, err = in.verify(t, in.token(t, s.es, nil))
		wantReason(t, err, pajwt.ReasonJWKSUnavailable)
		if !errors.Is(err, jose.ErrUnsupportedCurve) {
			t.Fatalf("cause: %v", err)
		}
	})

	t.Run("fail/jwks-uri-refused-by-policy", func(t *testing.T) {
		t.Parallel()
		in := newIntegration(t, mustKeySet(t, s.es.key(t)), 0)
		in.book.update(testIssuer, func(a *pajwt.Agent) { a.JWKSURI = "http://10.0.0.1/jwks" })
		_, err := in.verify(t, in.token(t, s.es, nil))
		wantReason(t, err, pajwt.ReasonJWKSUnavailable)
		if !errors.Is(err, jose.ErrInvalidURI) {
			t.Fatalf("cause: %v", err)
		}
	})
}
