package dbtest

import (
	"bytes"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// SeedEveryTable writes at least one row into every table of the schema
// through the store (Brands, agents, a self-registration and its jti, a
// Brand's allowed agent, a credential, a signing key, a device
// authorization approved with a Brand assertion and redeemed, so a grant,
// its refresh token and audit events, a guessing failure, a conversation
// with a turn, an HDTP identity with a pending leaf, a contact, a former
// pin, an invite, a replay record, a dispatched call, a thread and a bucket,
// a console session, a replica's heartbeat; the change feed fills itself),
// for tests that need data in all of them: the migration round trip checks
// that every table's rows survive.
func SeedEveryTable(t *testing.T, s db.Store) {
	t.Helper()
	ctx := t.Context()
	now := at.Add(time.Minute)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed: %s: %v", what, err)
		}
	}
	delegFixture(t, s) // Brands acme and beta, agents agt_1 and agt_2
	_, _, err := s.SelfRegisterAgent(ctx, selfReg("agt_r1", "pa-one", "https://one.example", "j1", now.Truncate(time.Second).UTC()))
	must("SelfRegisterAgent", err)
	_, err = s.AddBrandAgent(ctx, "acme", "agt_1", now)
	must("AddBrandAgent", err)
	_, err = s.CreateCredential(ctx, db.Credential{ID: "cred_seed", Role: db.RoleFrontend, TokenHash: bytes.Repeat([]byte{7}, 32),
		Label: "seed", CreateTime: at.Truncate(time.Second)})
	must("CreateCredential", err)
	must("AddSigningKey", s.AddSigningKey(ctx, signingKey(1, at), at.Add(time.Hour)))

	_, err = s.CreateWebhookDestination(ctx, webhookDest("wh_seed", at))
	must("CreateWebhookDestination", err) // the grant events below queue its deliveries

	mustDelegDevice(t, s, delegDevice("da_seed", "acme", "agt_1", "https://pa.example"))
	g := delegGrant("a2agrant_seed", "acme", "agt_1", "https://pa.example", "user-7", now)
	created := db.WithAudit(ctx, db.AuditEvent{Kind: db.AuditGrantCreated, Actor: db.ActorFrontend, Scopes: g.Scopes})
	_, _, err = s.ApproveDeviceAuthorizationWithAssertion(created, "da_seed", g, delegAssertion("acme", "jti-seed", now.Add(time.Hour)), now)
	must("ApproveDeviceAuthorizationWithAssertion", err)
	redeemed := db.WithAudit(ctx, db.AuditEvent{Kind: db.AuditGrantRedeemed, Actor: db.ActorPA})
	_, err = s.RedeemDeviceAuthorization(redeemed, "da_seed", now, delegRefresh("rt-seed", g.ExpireTime))
	must("RedeemDeviceAuthorization", err)
	_, err = s.AddUserCodeFailure(ctx, "acme|agt_1", now.Truncate(time.Minute))
	must("AddUserCodeFailure", err)

	_, err = s.CreateConversation(ctx, db.Conversation{ID: "0b7f8e3c-2d6a-4c1e-9f0a-1b2c3d4e5f61", BrandID: "acme", AgentID: "agt_1", Subject: "user-1", CreateTime: at, UpdateTime: at})
	must("CreateConversation", err)
	_, _, err = s.ClaimTurn(ctx, "0b7f8e3c-2d6a-4c1e-9f0a-1b2c3d4e5f61", "msg-seed", "claim-seed", now, now.Add(-time.Hour))
	must("ClaimTurn", err)

	mustHDTPIdentity(t, s, "hid_seed", "https://agent.seed.example/mcp")
	must("PutHDTPPendingLeaf", s.PutHDTPPendingLeaf(ctx, pending("hid_seed", "kid_seed", at)))
	must("CreateConsoleSession", s.CreateConsoleSession(ctx, db.ConsoleSession{IDHash: bytes.Repeat([]byte{9}, 32), CredentialID: "cred_seed",
		CreateTime: now, LastSeenTime: now, ExpireTime: now.Add(8 * time.Hour)}))
	must("BeatReplica", s.BeatReplica(ctx, db.Replica{ID: "rep_seed", Host: "seed", Version: "dev", StartTime: now, SeenTime: now, FeedPosition: 1}))
	must("CreateHDTPInvite", s.CreateHDTPInvite(ctx, db.HDTPInvite{ID: "hiv_seed", IdentityID: "hid_seed", TokenHash: []byte("seed"),
		ExpireTime: now.Add(time.Hour), MaxUses: 1, Preset: "basic", CreateTime: at}))
	must("InHDTPTx", s.InHDTPTx(ctx, "hid_seed", func(tx db.HDTPTx) error {
		if err := tx.PutContact(contact("sha256:seed", "active")); err != nil {
			return err
		}
		if err := tx.PutFormerPin(db.HDTPFormerPin{Root: "sha256:old", Endpoint: "https://old.example/mcp", LeafKID: "kid-old", LeafNotBefore: at,
			Tombstone: true, ExpireTime: now.Add(time.Hour)}); err != nil {
			return err
		}
		if _, _, err := tx.ClaimReplay(db.HDTPReplayKey{SenderRoot: "sha256:seed", MsgID: "m-seed"}, now.Add(time.Hour)); err != nil {
			return err
		}
		if _, _, err := tx.ClaimCall(db.HDTPCall{ID: "hcl_seed", CallerRoot: "sha256:seed", MsgID: "inner-seed", Tool: "send_message", RPCID: "1",
			CreateTime: now}); err != nil {
			return err
		}
		if err := tx.AddThread("thread-seed", "sha256:seed", now); err != nil {
			return err
		}
		_, _, err := tx.Take(now, db.HDTPBucket{Scope: "c:hid_seed:sha256:seed", Interval: time.Second, Burst: 10})
		return err
	}))
}
