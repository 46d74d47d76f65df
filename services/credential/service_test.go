package credential_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/services/credential"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var start = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

const (
	admin    = pactv1.CallerRole_CALLER_ROLE_ADMIN
	frontend = pactv1.CallerRole_CALLER_ROLE_FRONTEND
)

// env is the service on a fresh store of one engine.
type env struct {
	svc     *credential.Service
	store   db.Store
	clk     *testclock.Clock
	revokes int
}

func newEnv(t *testing.T, dbURL string) *env {
	t.Helper()
	e := &env{store: dbtest.Open(t, dbURL, t.TempDir()), clk: testclock.New(start)}
	e.svc = credential.New(credential.Deps{Store: e.store, Now: e.clk.Now, OnRevoke: func() { e.revokes++ }})
	return e
}

// roleOf is what the token authenticates as, read fresh from the store.
func (e *env) roleOf(t *testing.T, token string) (db.Role, error) {
	t.Helper()
	return auth.NewAuthenticator(e.store, auth.DefaultOutageGrace, e.clk.Now).Authenticate(t.Context(), "Bearer "+token)
}

func (e *env) create(t *testing.T, role pactv1.CallerRole, name string) *pactv1.CreateCredentialResponse {
	t.Helper()
	r, err := e.svc.CreateCredential(t.Context(), &pactv1.CreateCredentialRequest{Role: role, Name: name})
	if err != nil {
		t.Fatalf("CreateCredential(%s, %q): %v", role, name, err)
	}
	return r
}

func (e *env) list(t *testing.T) []*pactv1.Credential {
	t.Helper()
	r, err := e.svc.ListCredentials(t.Context(), &pactv1.ListCredentialsRequest{})
	if err != nil {
		t.Fatalf("ListCredentials: %v", err)
	}
	return r.GetCredentials()
}

// wantRefusal checks err is code with the ErrorInfo reason and, for an
// InvalidArgument, that its BadRequest names exactly fields (in any order).
func wantRefusal(t *testing.T, name string, err error, code connect.Code, reason pactv1.ErrorReason, fields ...string) {
	t.Helper()
	if connect.CodeOf(err) != code || rpcerr.Reason(err) != reason.String() {
		t.Fatalf("%s: err = %v (reason %q); want %s with reason %s", name, err, rpcerr.Reason(err), code, reason)
	}
	got := slices.Sorted(slices.Values(rpcerr.FieldViolations(err)))
	if !slices.Equal(got, slices.Sorted(slices.Values(fields))) {
		t.Fatalf("%s: field violations %q; want %q", name, got, fields)
	}
}

// TestCreateCredential: a credential of each role, its token shown once with
// the role's prefix and authenticating as that role; an optional expiry.
func TestCreateCredential(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := newEnv(t, dbURL)
		for _, tc := range []struct {
			role   pactv1.CallerRole
			prefix string
			want   db.Role
		}{{admin, "pact_adm_", db.RoleAdmin}, {frontend, "pact_fro_", db.RoleFrontend}} {
			r := e.create(t, tc.role, "ops "+tc.prefix)
			c := r.GetCredential()
			if !strings.HasPrefix(c.GetId(), "cred_") || c.GetRole() != tc.role || c.GetName() != "ops "+tc.prefix ||
				!c.GetCreateTime().AsTime().Equal(start) || c.GetExpireTime() != nil || c.GetLastUseTime() != nil || c.GetRevokeTime() != nil {
				t.Fatalf("created %v", c)
			}
			if !strings.HasPrefix(r.GetToken(), tc.prefix) || len(r.GetToken()) <= len(tc.prefix)+16 {
				t.Fatalf("token %q; want a random token starting %q", r.GetToken(), tc.prefix)
			}
			if role, err := e.roleOf(t, r.GetToken()); err != nil || role != tc.want {
				t.Fatalf("the new token authenticates as %q, %v; want %q", role, err, tc.want)
			}
		}
		expires := start.Add(24 * time.Hour)
		r, err := e.svc.CreateCredential(t.Context(), &pactv1.CreateCredentialRequest{Role: frontend, Name: "a day", ExpireTime: timestamppb.New(expires)})
		if err != nil || !r.GetCredential().GetExpireTime().AsTime().Equal(expires) {
			t.Fatalf("with expiry: %v, %v", r, err)
		}
		// At most 10 years ahead: exactly 10 years is accepted.
		if _, err := e.svc.CreateCredential(t.Context(), &pactv1.CreateCredentialRequest{Role: frontend, Name: "ten years",
			ExpireTime: timestamppb.New(start.Add(credential.MaxLifetime))}); err != nil {
			t.Fatalf("expiry 10 years ahead: %v", err)
		}
		if n := len(e.list(t)); n != 4 {
			t.Fatalf("%d credentials listed; want the 4 created", n)
		}
	})
}

// TestCreateCredentialRefusals: each bad field is InvalidArgument naming it,
// and a refused request stores nothing.
func TestCreateCredentialRefusals(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := newEnv(t, dbURL)
		ts := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(start.Add(d)) }
		for _, tc := range []struct {
			name   string
			req    *pactv1.CreateCredentialRequest
			fields []string
		}{
			{"no role", &pactv1.CreateCredentialRequest{Name: "x"}, []string{"role"}},
			{"unknown role", &pactv1.CreateCredentialRequest{Role: 9, Name: "x"}, []string{"role"}},
			{"no name", &pactv1.CreateCredentialRequest{Role: admin}, []string{"name"}},
			{"name of 201 characters", &pactv1.CreateCredentialRequest{Role: admin, Name: strings.Repeat("n", 201)}, []string{"name"}},
			{"unprintable name", &pactv1.CreateCredentialRequest{Role: admin, Name: "a\nb"}, []string{"name"}},
			{"reserved bootstrap name", &pactv1.CreateCredentialRequest{Role: admin, Name: "bootstrap admin"}, []string{"name"}},
			{"reserved generated name", &pactv1.CreateCredentialRequest{Role: admin, Name: "generated admin"}, []string{"name"}},
			{"expiry now", &pactv1.CreateCredentialRequest{Role: admin, Name: "x", ExpireTime: ts(0)}, []string{"expire_time"}},
			{"expiry past", &pactv1.CreateCredentialRequest{Role: admin, Name: "x", ExpireTime: ts(-time.Hour)}, []string{"expire_time"}},
			{"expiry over 10 years", &pactv1.CreateCredentialRequest{Role: admin, Name: "x", ExpireTime: ts(credential.MaxLifetime + 24*time.Hour)}, []string{"expire_time"}},
			{"every field", &pactv1.CreateCredentialRequest{Name: "", ExpireTime: ts(-time.Hour)}, []string{"role", "name", "expire_time"}},
		} {
			_, err := e.svc.CreateCredential(t.Context(), tc.req)
			wantRefusal(t, tc.name, err, connect.CodeInvalidArgument, pactv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, tc.fields...)
		}
		if n := len(e.list(t)); n != 0 {
			t.Fatalf("%d credentials stored by refused requests; want 0", n)
		}
		// Positive control: a name of exactly 200 characters is accepted.
		e.create(t, admin, strings.Repeat("n", 200))
	})
}

// TestListCredentials: creation order, revoked ones included, no tokens
// (the message has no such field), and paging.
func TestListCredentials(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := newEnv(t, dbURL)
		var ids []string
		for _, n := range []string{"first", "second", "third"} {
			ids = append(ids, e.create(t, frontend, n).GetCredential().GetId())
			e.clk.Advance(time.Second)
		}
		if _, err := e.svc.RevokeCredential(t.Context(), &pactv1.RevokeCredentialRequest{Id: ids[1]}); err != nil {
			t.Fatal(err)
		}
		all := e.list(t)
		if len(all) != 3 || all[0].GetName() != "first" || all[1].GetName() != "second" || all[2].GetName() != "third" || all[1].GetRevokeTime() == nil {
			t.Fatalf("listed %v; want first, second (revoked), third", all)
		}
		p1, err := e.svc.ListCredentials(t.Context(), &pactv1.ListCredentialsRequest{Page: &pactv1.PageRequest{PageSize: 2}})
		if err != nil || len(p1.GetCredentials()) != 2 || p1.GetCredentials()[0].GetId() != ids[0] || p1.GetNextPageToken() == "" {
			t.Fatalf("page 1: %v, %v", p1, err)
		}
		p2, err := e.svc.ListCredentials(t.Context(), &pactv1.ListCredentialsRequest{Page: &pactv1.PageRequest{PageSize: 2, PageToken: p1.GetNextPageToken()}})
		if err != nil || len(p2.GetCredentials()) != 1 || p2.GetCredentials()[0].GetId() != ids[2] || p2.GetNextPageToken() != "" {
			t.Fatalf("page 2: %v, %v", p2, err)
		}
		_, err = e.svc.ListCredentials(t.Context(), &pactv1.ListCredentialsRequest{Page: &pactv1.PageRequest{PageSize: 501}})
		wantRefusal(t, "page_size 501", err, connect.CodeInvalidArgument, pactv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "page.page_size")
		_, err = e.svc.ListCredentials(t.Context(), &pactv1.ListCredentialsRequest{Page: &pactv1.PageRequest{PageToken: "not-a-token"}})
		wantRefusal(t, "foreign page_token", err, connect.CodeInvalidArgument, pactv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "page.page_token")
	})
}

// TestRevokeCredential: a revocation is for good (the token stops
// authenticating), NotFound for an unknown id, FailedPrecondition when
// revoked already.
func TestRevokeCredential(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := newEnv(t, dbURL)
		keep := e.create(t, frontend, "kept")
		gone := e.create(t, frontend, "revoked")
		e.clk.Advance(time.Minute)
		r, err := e.svc.RevokeCredential(t.Context(), &pactv1.RevokeCredentialRequest{Id: gone.GetCredential().GetId()})
		if err != nil || r.GetCredential().GetId() != gone.GetCredential().GetId() || !r.GetCredential().GetRevokeTime().AsTime().Equal(start.Add(time.Minute)) {
			t.Fatalf("revoke: %v, %v", r, err)
		}
		if e.revokes != 1 {
			t.Fatalf("OnRevoke ran %d times; want 1", e.revokes)
		}
		_, err = e.roleOf(t, gone.GetToken())
		if connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("the revoked token: %v; want Unauthenticated", err)
		}
		// Positive control: the other credential still works.
		if role, err := e.roleOf(t, keep.GetToken()); err != nil || role != db.RoleFrontend {
			t.Fatalf("the kept token: %q, %v", role, err)
		}

		_, err = e.svc.RevokeCredential(t.Context(), &pactv1.RevokeCredentialRequest{Id: gone.GetCredential().GetId()})
		wantRefusal(t, "revoked again", err, connect.CodeFailedPrecondition, pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION)
		_, err = e.svc.RevokeCredential(t.Context(), &pactv1.RevokeCredentialRequest{Id: "cred_01JZZZZZZZZZZZZZZZZZZZZZZZ"})
		wantRefusal(t, "unknown id", err, connect.CodeNotFound, pactv1.ErrorReason_ERROR_REASON_NOT_FOUND)
		_, err = e.svc.RevokeCredential(t.Context(), &pactv1.RevokeCredentialRequest{})
		wantRefusal(t, "no id", err, connect.CodeInvalidArgument, pactv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "id")
		if e.revokes != 1 {
			t.Fatalf("OnRevoke ran %d times after refused revocations; want still 1", e.revokes)
		}
	})
}
