package server_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// Two replicas behind PgBouncer in transaction pooling mode, as operators
// run pactd at scale, where LISTEN/NOTIFY cannot work (PgBouncer accepts
// LISTEN and never delivers): pactd is told it is behind the pooler
// (PACT_DATABASE_POOLER=transaction), so it prepares no statement on the
// server and opens no LISTEN connection, and learns changes by polling the
// change feed alone. A grant revoked, a credential revoked and an agent
// disabled on replica A are refused on replica B within the revocation
// bound (1 s): every call B starts later than that is refused, with the
// exact reason.
func TestReplicasBehindPgBouncer(t *testing.T) {
	dbURL := dbtest.PgBouncerURL(t, dbtest.PostgresURL(t))
	// An hour of cache lifetime: only the feed can tell B in time.
	env := []string{"PACT_DATABASE_POOLER=transaction", "PACT_CACHE_TTL=1h"}
	a := start(t, testConfig(t, dbURL, t.TempDir(), env...))
	b := start(t, testConfig(t, dbURL, t.TempDir(), env...))
	for name, inst := range map[string]*instance{"A": a, "B": b} {
		if m := samples(t, inst); m["pactd_change_feed_listening"] != 0 {
			t.Fatalf("replica %s listens for notifications through the pooler: %v", name, m["pactd_change_feed_listening"])
		}
	}
	ctx := t.Context()
	d := newDelegatedPA(t, a)
	fe, err := credentials(a, adminToken).CreateCredential(ctx, &pactv1.CreateCredentialRequest{Role: pactv1.CallerRole_CALLER_ROLE_FRONTEND, Name: "fe"})
	if err != nil {
		t.Fatal(err)
	}
	// Positive controls on B, which now holds the grant, the agent, the
	// Brand and the new credential in its caches.
	if r := d.verify(t, b); !r.GetAllowed() || r.GetDelegation().GetGrantId() != d.grantID {
		t.Fatalf("ok/delegated-on-b: %v", r)
	}
	cardOnB := func() error {
		_, err := brands(b, fe.GetToken()).GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "acme"})
		return err
	}
	if err := cardOnB(); err != nil {
		t.Fatalf("ok/credential-on-b: %v", err)
	}

	t.Run("grant-revoked", func(t *testing.T) {
		if _, err := pactv1connect.NewDelegationServiceClient(h2c(), a.url, withToken(frontendToken)).RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: d.grantID}); err != nil {
			t.Fatal(err)
		}
		took := refusedWithin(t, time.Now(), bound, pactv1.DenyReason_DENY_REASON_DELEGATION_INVALID, d.decide(t, b))
		t.Logf("grant revoked on A: refused on B after %v", took.Round(time.Millisecond))
	})
	t.Run("credential-revoked", func(t *testing.T) {
		if _, err := credentials(a, adminToken).RevokeCredential(ctx, &pactv1.RevokeCredentialRequest{Id: fe.GetCredential().GetId()}); err != nil {
			t.Fatal(err)
		}
		took := refusedWithin(t, time.Now(), bound, connect.CodeUnauthenticated, func() (bool, connect.Code) {
			err := cardOnB()
			return err == nil, connect.CodeOf(err)
		})
		t.Logf("credential revoked on A: refused on B after %v", took.Round(time.Millisecond))
	})
	t.Run("agent-disabled", func(t *testing.T) {
		if ok, reason := d.identity(t, b)(); !ok {
			t.Fatalf("ok/identity-on-b: %v", reason)
		}
		if _, err := agents(a, adminToken).UpdateAgent(ctx, &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: d.agentID},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled"}}}); err != nil {
			t.Fatal(err)
		}
		took := refusedWithin(t, time.Now(), bound, pactv1.DenyReason_DENY_REASON_AGENT_DISABLED, d.identity(t, b))
		t.Logf("agent disabled on A: refused on B after %v", took.Round(time.Millisecond))
	})
}
