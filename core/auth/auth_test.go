package auth

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/testkit/testclock"
)

// fakeStore holds credentials in memory and can fail or count lookups.
type fakeStore struct {
	mu      sync.Mutex
	creds   map[string]db.Credential // by string(hash)
	down    bool
	lookups atomic.Int64
	block   chan struct{} // when set, lookups wait for it
	// touchBlock, when set, holds each last-use write until it is closed;
	// touched counts the writes done.
	touchBlock chan struct{}
	touched    atomic.Int64
}

func (f *fakeStore) CreateCredential(_ context.Context, c db.Credential) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.creds[string(c.TokenHash)]; ok {
		return false, nil
	}
	f.creds[string(c.TokenHash)] = c
	return true, nil
}

func (f *fakeStore) GetCredentialByHash(_ context.Context, h []byte) (db.Credential, error) {
	f.lookups.Add(1)
	if f.block != nil {
		<-f.block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return db.Credential{}, errors.New("connection refused")
	}
	c, ok := f.creds[string(h)]
	if !ok {
		return db.Credential{}, db.ErrNotFound
	}
	return c, nil
}

func (f *fakeStore) CountLiveCredentials(context.Context, db.Role, time.Time) (int64, error) {
	return 0, nil
}

func (f *fakeStore) RevokeCredentialsByLabel(context.Context, string, []byte, time.Time) ([]string, error) {
	return nil, nil
}

func (f *fakeStore) TouchCredential(context.Context, string, time.Time) error {
	if f.touchBlock != nil {
		<-f.touchBlock
	}
	f.touched.Add(1)
	return nil
}

func (f *fakeStore) revoke(token string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.creds[string(Hash(token))]
	c.RevokeTime = at
	f.creds[string(Hash(token))] = c
}

const tok = "pact_fro_test-token-0123456789"

func setup(t *testing.T) (*fakeStore, *testclock.Clock, *Authenticator) {
	t.Helper()
	s := &fakeStore{creds: map[string]db.Credential{}}
	clk := testclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s.creds[string(Hash(tok))] = db.Credential{ID: "cred_1", Role: db.RoleFrontend, LastUseTime: clk.Now()}
	return s, clk, NewAuthenticator(s, DefaultOutageGrace, clk.Now)
}

func wantCode(t *testing.T, name string, err error, code connect.Code) {
	t.Helper()
	if connect.CodeOf(err) != code {
		t.Fatalf("%s: err = %v, want %v", name, err, code)
	}
}

// A revocation is seen once the cached state is RevocationBound old; until
// then the cached answer stands (that is the stated bound).
func TestRevocationIsSeenWithinTheBound(t *testing.T) {
	s, clk, a := setup(t)
	if role, err := a.Authenticate(t.Context(), "Bearer "+tok); err != nil || role != db.RoleFrontend {
		t.Fatalf("ok/live: %v, %v", role, err)
	}
	s.revoke(tok, clk.Now())
	clk.Advance(RevocationBound)
	_, err := a.Authenticate(t.Context(), "Bearer "+tok)
	wantCode(t, "revoked, bound elapsed", err, connect.CodeUnauthenticated)
}

// Through a store outage a credential confirmed live within the grace is
// still admitted; past it, or never seen, the answer is Unavailable; an
// unknown token is Unauthenticated, never admitted.
func TestOutageGrace(t *testing.T) {
	s, clk, a := setup(t)
	if _, err := a.Authenticate(t.Context(), "Bearer "+tok); err != nil {
		t.Fatalf("ok/live: %v", err)
	}
	s.mu.Lock()
	s.down = true
	s.mu.Unlock()
	clk.Advance(DefaultOutageGrace - time.Second)
	if role, err := a.Authenticate(t.Context(), "Bearer "+tok); err != nil || role != db.RoleFrontend {
		t.Fatalf("ok/within-grace: %v, %v", role, err)
	}
	_, err := a.Authenticate(t.Context(), "Bearer pact_fro_never-seen-token-0123456789")
	wantCode(t, "never seen, store down", err, connect.CodeUnavailable)
	clk.Advance(time.Second)
	_, err = a.Authenticate(t.Context(), "Bearer "+tok)
	wantCode(t, "grace over", err, connect.CodeUnavailable)
	s.mu.Lock()
	s.down = false
	s.mu.Unlock()
	if _, err := a.Authenticate(t.Context(), "Bearer "+tok); err != nil {
		t.Fatalf("ok/store-back: %v", err)
	}
	_, err = a.Authenticate(t.Context(), "Bearer pact_fro_never-seen-token-0123456789")
	wantCode(t, "unknown", err, connect.CodeUnauthenticated)
}

// Callers that arrive while a credential is being read share one read.
func TestConcurrentLookupsShareOneRead(t *testing.T) {
	s, _, a := setup(t)
	s.block = make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := a.Authenticate(context.Background(), "Bearer "+tok)
			errs <- err
		}()
	}
	time.Sleep(100 * time.Millisecond) // let them queue on the one read
	close(s.block)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.lookups.Load(); n > 5 {
		t.Fatalf("%d store reads for 50 concurrent calls; want them shared", n)
	}
}

// Malformed headers are Unauthenticated before any store read.
func TestMalformedHeaders(t *testing.T) {
	s, _, a := setup(t)
	for _, h := range []string{"", "Bearer", "Bearer ", "Basic " + tok, "Bearer " + tok + " x", "Bearer \t" + tok} {
		_, err := a.Authenticate(t.Context(), h)
		wantCode(t, "header "+h, err, connect.CodeUnauthenticated)
	}
	if n := s.lookups.Load(); n != 0 {
		t.Fatalf("malformed headers read the store %d times", n)
	}
}

// TestFrontendMayListBrands: the frontend role may list Brands (the
// frontend's root page; a Brand holds no secret) and read cards, but may
// not create or change one; GetBrand stays admin-only as it was; no role
// is no access.
func TestFrontendMayListBrands(t *testing.T) {
	for _, c := range []struct {
		role db.Role
		proc string
		want bool
	}{
		{db.RoleFrontend, pactv1connect.BrandServiceListBrandsProcedure, true},
		{db.RoleFrontend, pactv1connect.BrandServiceGetAgentCardProcedure, true},
		{db.RoleFrontend, pactv1connect.BrandServiceCreateBrandProcedure, false},
		{db.RoleFrontend, pactv1connect.BrandServiceUpdateBrandProcedure, false},
		{db.RoleFrontend, pactv1connect.BrandServiceGetBrandProcedure, false},
		{db.RoleAdmin, pactv1connect.BrandServiceListBrandsProcedure, true},
		{"", pactv1connect.BrandServiceListBrandsProcedure, false},
	} {
		if got := Allowed(c.role, c.proc); got != c.want {
			t.Errorf("Allowed(%q, %s) = %v, want %v", c.role, c.proc, got, c.want)
		}
	}
}

// Wait returns only once the background write of a last use is done, so
// the store it writes to can be closed after it.
func TestWaitWaitsForLastUseWrites(t *testing.T) {
	s, clk, a := setup(t)
	s.touchBlock = make(chan struct{})
	clk.Advance(time.Minute) // the stored last use is a minute old: the next read writes a new one
	if _, err := a.Authenticate(t.Context(), "Bearer "+tok); err != nil {
		t.Fatalf("ok/live: %v", err)
	}
	waited := make(chan struct{})
	go func() { a.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("fail/write-in-flight: Wait returned while the write was held")
	case <-time.After(50 * time.Millisecond):
	}
	close(s.touchBlock)
	<-waited
	if n := s.touched.Load(); n != 1 {
		t.Fatalf("last-use writes done when Wait returned: %d, want 1", n)
	}
}
