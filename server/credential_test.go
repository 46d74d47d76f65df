package server_test

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/rpcerr"
)

func credentials(inst *instance, token string) pactv1connect.CredentialServiceClient {
	return pactv1connect.NewCredentialServiceClient(h2c(), inst.url, withToken(token))
}

// The credential lifecycle through the wire: create (the token once),
// use, list (no tokens), revoke; the revoked token is Unauthenticated on
// the very next call; refusals name their field and store nothing.
func TestCredentialLifecycle(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir()))
		ctx := t.Context()
		cc := credentials(inst, adminToken)
		created, err := cc.CreateCredential(ctx, &pactv1.CreateCredentialRequest{Role: pactv1.CallerRole_CALLER_ROLE_FRONTEND, Name: "checkout frontend"})
		if err != nil {
			t.Fatal(err)
		}
		tok, c := created.GetToken(), created.GetCredential()
		if !strings.HasPrefix(tok, "pact_fro_") || !strings.HasPrefix(c.GetId(), "cred_") || c.GetName() != "checkout frontend" ||
			c.GetRole() != pactv1.CallerRole_CALLER_ROLE_FRONTEND || c.GetRevokeTime() != nil || c.GetExpireTime() != nil {
			t.Fatalf("created = %v", created)
		}
		// Positive control: the new frontend credential works, and only as a frontend.
		if _, err := brands(inst, tok).GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "nope"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("ok/new-credential-authenticates: %v", err)
		}
		if _, err := credentials(inst, tok).ListCredentials(ctx, &pactv1.ListCredentialsRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Fatalf("frontend credential on CredentialService: %v, want PermissionDenied", err)
		}
		list, err := cc.ListCredentials(ctx, &pactv1.ListCredentialsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range list.GetCredentials() {
			names = append(names, l.GetName())
			if strings.Contains(l.String(), tok) {
				t.Fatalf("ListCredentials shows a token: %v", l)
			}
		}
		if strings.Join(names, ",") != "bootstrap admin,bootstrap frontend,checkout frontend" {
			t.Fatalf("ListCredentials names = %v", names)
		}

		// Refusals, each naming its field; nothing is stored.
		for field, req := range map[string]*pactv1.CreateCredentialRequest{
			"role":        {Name: "x"},
			"name":        {Role: pactv1.CallerRole_CALLER_ROLE_ADMIN, Name: " padded"},
			"expire_time": {Role: pactv1.CallerRole_CALLER_ROLE_ADMIN, Name: "old", ExpireTime: timestamppb.New(time.Now().Add(-time.Minute))},
		} {
			if _, err := cc.CreateCredential(ctx, req); connect.CodeOf(err) != connect.CodeInvalidArgument || !sliceIs(rpcerr.FieldViolations(err), field) {
				t.Fatalf("CreateCredential(bad %s) = %v (%v)", field, err, rpcerr.FieldViolations(err))
			}
		}
		if _, err := cc.CreateCredential(ctx, &pactv1.CreateCredentialRequest{Role: pactv1.CallerRole_CALLER_ROLE_ADMIN, Name: "bootstrap admin"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Fatalf("CreateCredential(reserved name) = %v", err)
		}
		if l, _ := cc.ListCredentials(ctx, &pactv1.ListCredentialsRequest{}); len(l.GetCredentials()) != 3 {
			t.Fatalf("refused creations stored credentials: %v", l)
		}

		// Revoke: the next call with it is Unauthenticated; revoking again
		// is FailedPrecondition, an unknown id NotFound.
		rev, err := cc.RevokeCredential(ctx, &pactv1.RevokeCredentialRequest{Id: c.GetId()})
		if err != nil || rev.GetCredential().GetRevokeTime() == nil {
			t.Fatalf("RevokeCredential = %v, %v", rev, err)
		}
		if _, err := brands(inst, tok).GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "nope"}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("revoked credential: %v, want Unauthenticated", err)
		}
		if _, err := cc.RevokeCredential(ctx, &pactv1.RevokeCredentialRequest{Id: c.GetId()}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("revoke twice: %v", err)
		}
		if _, err := cc.RevokeCredential(ctx, &pactv1.RevokeCredentialRequest{Id: "cred_unknown"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("revoke unknown: %v", err)
		}
		// The bootstrap frontend credential is untouched.
		if _, err := brands(inst, frontendToken).GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "nope"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("bootstrap frontend after another revocation: %v", err)
		}

		// An expiring credential works until its expiry.
		exp, err := cc.CreateCredential(ctx, &pactv1.CreateCredentialRequest{Role: pactv1.CallerRole_CALLER_ROLE_ADMIN, Name: "short",
			ExpireTime: timestamppb.New(time.Now().Add(2 * time.Second))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := credentials(inst, exp.GetToken()).ListCredentials(ctx, &pactv1.ListCredentialsRequest{}); err != nil {
			t.Fatalf("ok/before-expiry: %v", err)
		}
		waitFor(t, 5*time.Second, "the expired credential to be refused", func() bool {
			_, err := credentials(inst, exp.GetToken()).ListCredentials(ctx, &pactv1.ListCredentialsRequest{})
			return connect.CodeOf(err) == connect.CodeUnauthenticated
		})
	})
}

// A revocation on one replica is honoured by another within
// auth.RevocationBound (1 s; the test allows 2 s), with no restart.
func TestCredentialRevocationReachesOtherReplicas(t *testing.T) {
	dbURL := dbtest.PostgresURL(t)
	a := start(t, testConfig(t, dbURL, t.TempDir(), "PACT_CACHE_TTL=1h"))
	b := start(t, testConfig(t, dbURL, t.TempDir(), "PACT_CACHE_TTL=1h"))
	ctx := t.Context()
	created, err := credentials(a, adminToken).CreateCredential(ctx, &pactv1.CreateCredentialRequest{Role: pactv1.CallerRole_CALLER_ROLE_FRONTEND, Name: "fe"})
	if err != nil {
		t.Fatal(err)
	}
	onB := func() error {
		_, err := brands(b, created.GetToken()).GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "nope"})
		return err
	}
	// Positive control, and B now has the credential cached.
	if err := onB(); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("ok/replica-b-admits: %v", err)
	}
	if _, err := credentials(a, adminToken).RevokeCredential(ctx, &pactv1.RevokeCredentialRequest{Id: created.GetCredential().GetId()}); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for connect.CodeOf(onB()) != connect.CodeUnauthenticated {
		if time.Since(revoked) > 2*time.Second {
			t.Fatalf("replica B still admits the credential %v after its revocation", time.Since(revoked))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// PACT_ADMIN_TOKEN is a bootstrap: restarting with a new value revokes the
// credential of the old one, which is then Unauthenticated; setting the
// old, revoked value again starts pactd but the value stays refused.
func TestChangedBootstrapTokenRevokesTheOldOne(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		dir := t.TempDir() // the SQLite store lives here; PostgreSQL ignores it
		first := start(t, testConfig(t, dbURL, dir))
		first.stop()
		const newAdmin = "pact_adm_rotated-admin-token-0123456789"
		second := start(t, testConfig(t, dbURL, dir, "PACT_ADMIN_TOKEN="+newAdmin))
		if !strings.Contains(second.stdout.String(), "PACT_ADMIN_TOKEN has a new value: revoked the credential of its previous value") {
			t.Fatalf("restart output = %q", second.stdout.String())
		}
		if _, err := credentials(second, adminToken).ListCredentials(t.Context(), &pactv1.ListCredentialsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("old admin token after rotation: %v, want Unauthenticated", err)
		}
		if _, err := credentials(second, newAdmin).ListCredentials(t.Context(), &pactv1.ListCredentialsRequest{}); err != nil {
			t.Fatalf("ok/new-admin-token: %v", err)
		}
		second.stop()
		// Back to the old, revoked value: pactd starts (a revoked bootstrap
		// must not take replicas down), says so, and still refuses it.
		third := start(t, testConfig(t, dbURL, dir))
		if !strings.Contains(third.stdout.String(), "PACT_ADMIN_TOKEN is a revoked or expired credential") {
			t.Fatalf("start with the revoked admin token printed %q", third.stdout.String())
		}
		if _, err := credentials(third, adminToken).ListCredentials(t.Context(), &pactv1.ListCredentialsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("revoked admin token after a restart: %v, want Unauthenticated", err)
		}
		if _, err := brands(third, frontendToken).GetAgentCard(t.Context(), &pactv1.GetAgentCardRequest{BrandId: "nope"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("ok/frontend-still-served: %v", err)
		}
	})
}

func brands(inst *instance, token string) pactv1connect.BrandServiceClient {
	return pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(token))
}

func sliceIs(got []string, want ...string) bool {
	return strings.Join(got, ",") == strings.Join(want, ",")
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
