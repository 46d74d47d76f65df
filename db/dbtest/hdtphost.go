package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// runHDTPHost is the HDTP host wire part of the contract (migration 0021).
func runHDTPHost(t *testing.T, newStore Factory) {
	t.Run("hdtphost/policy-and-tools", func(t *testing.T) { t.Parallel(); testHDTPPolicy(t, newStore(t)) })
	t.Run("hdtphost/contacts", func(t *testing.T) { t.Parallel(); testHDTPContacts(t, newStore(t)) })
	t.Run("hdtphost/former-pins", func(t *testing.T) { t.Parallel(); testHDTPFormerPins(t, newStore(t)) })
	t.Run("hdtphost/invites", func(t *testing.T) { t.Parallel(); testHDTPInvites(t, newStore(t)) })
	t.Run("hdtphost/concurrent-invite-use", func(t *testing.T) { t.Parallel(); testHDTPConcurrentInviteUse(t, newStore(t)) })
	t.Run("hdtphost/replays-and-calls", func(t *testing.T) { t.Parallel(); testHDTPReplaysAndCalls(t, newStore(t)) })
	t.Run("hdtphost/concurrent-claims", func(t *testing.T) { t.Parallel(); testHDTPConcurrentClaims(t, newStore(t)) })
	t.Run("hdtphost/buckets", func(t *testing.T) { t.Parallel(); testHDTPBuckets(t, newStore(t)) })
	t.Run("hdtphost/concurrent-buckets", func(t *testing.T) { t.Parallel(); testHDTPConcurrentBuckets(t, newStore(t)) })
	t.Run("hdtphost/rollback-and-purge", func(t *testing.T) { t.Parallel(); testHDTPRollbackAndPurge(t, newStore(t)) })
}

func hostTx(t *testing.T, s db.Store, id string, fn func(tx db.HDTPTx) error) {
	t.Helper()
	if err := s.InHDTPTx(t.Context(), id, fn); err != nil {
		t.Fatalf("InHDTPTx: %v", err)
	}
}

// Identity policy and content tools: stored, read back, ErrNotFound for
// an unknown identity; an identity found by its endpoint.
func testHDTPPolicy(t *testing.T, s db.Store) {
	ctx := t.Context()
	id := mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	if id.AcceptNewHosts != "auto" || id.ClientCert != "off" || id.ContentTools != "[]" {
		t.Fatalf("defaults = %q %q %q", id.AcceptNewHosts, id.ClientCert, id.ContentTools)
	}
	id.AcceptNewHosts, id.ClientCert, id.UpdateTime = "ask", "required", at.Add(time.Minute)
	if err := s.SetHDTPIdentityPolicy(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := s.SetHDTPContentTools(ctx, id.ID, `[{"name":"send_message"}]`, at); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetHDTPIdentityByEndpoint(ctx, "https://agent.alina.example/mcp")
	if err != nil || got.ID != "hid_1" || got.AcceptNewHosts != "ask" || got.ClientCert != "required" || got.ContentTools != `[{"name":"send_message"}]` {
		t.Fatalf("GetHDTPIdentityByEndpoint = %+v, %v", got, err)
	}
	if _, err := s.GetHDTPIdentityByEndpoint(ctx, "https://agent.alina.example/mcp/"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("another spelling: err = %v, want ErrNotFound (endpoints compare by bytes)", err)
	}
	if err := s.SetHDTPContentTools(ctx, "hid_none", "[]", at); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("unknown identity: err = %v, want ErrNotFound", err)
	}
	if err := s.InHDTPTx(ctx, "hid_none", func(db.HDTPTx) error { return nil }); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("InHDTPTx on an unknown identity: err = %v, want ErrNotFound", err)
	}
}

func contact(root, state string) db.HDTPContact {
	return db.HDTPContact{Root: root, Endpoint: "https://" + root + ".example/mcp", Leaf: []byte("leaf " + root), LeafKID: "kid-" + root,
		LeafNotBefore: at, State: db.HDTPContactState(state), Permissions: []string{"message.text", "status.view"}, Preset: "",
		TheirPermissions: []string{}, DisplayName: "FN " + root, Note: "hello", RequestTime: at, CreateTime: at, UpdateTime: at}
}

// Contacts: upsert and read back every field, lookups by leaf, listing by
// state and page, counts per state, delete, and the identity's erasure.
func testHDTPContacts(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	mustHDTPIdentity(t, s, "hid_2", "https://agent.bharat.example/mcp")
	a := contact("sha256:a", "active")
	a.PendingEndpoint, a.PendingLeaf, a.PendingLeafKID, a.PendingSeenTime, a.PendingBorrowedFrom = "https://new.example/mcp", []byte("new"), "kid-new", at, "sha256:x"
	hostTx(t, s, "hid_1", func(tx db.HDTPTx) error {
		for _, c := range []db.HDTPContact{a, contact("sha256:b", "pending_in"), contact("sha256:c", "active"), contact("sha256:d", "blocked")} {
			if err := tx.PutContact(c); err != nil {
				return err
			}
		}
		if n, err := tx.CountContacts(db.HDTPContactActive); err != nil || n != 2 {
			return fmt.Errorf("CountContacts(active) = %d, %v; want 2", n, err)
		}
		return nil
	})
	got, err := s.GetHDTPContact(ctx, "hid_1", "sha256:a")
	if err != nil || got.IdentityID != "hid_1" || got.Endpoint != a.Endpoint || !bytes.Equal(got.Leaf, a.Leaf) || got.State != db.HDTPContactActive ||
		len(got.Permissions) != 2 || got.Permissions[1] != "status.view" || len(got.TheirPermissions) != 0 || got.PendingEndpoint != a.PendingEndpoint ||
		got.PendingLeafKID != "kid-new" || got.PendingBorrowedFrom != "sha256:x" || !got.PendingSeenTime.Equal(at.Truncate(time.Second)) ||
		got.Note != "hello" || got.DisplayName != "FN sha256:a" {
		t.Fatalf("GetHDTPContact = %+v, %v", got, err)
	}
	if _, err := s.GetHDTPContact(ctx, "hid_2", "sha256:a"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("another identity's contact: err = %v, want ErrNotFound", err)
	}
	if got, err := s.GetHDTPContactByLeaf(ctx, "hid_1", "kid-sha256:c"); err != nil || got.Root != "sha256:c" {
		t.Fatalf("GetHDTPContactByLeaf = %+v, %v", got, err)
	}
	if _, err := s.GetHDTPContactByLeaf(ctx, "hid_2", "kid-sha256:c"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a leaf of another identity's contact: err = %v, want ErrNotFound", err)
	}
	page, err := s.ListHDTPContacts(ctx, "hid_1", "", "", 2)
	if err != nil || len(page) != 2 || page[0].Root != "sha256:a" || page[1].Root != "sha256:b" {
		t.Fatalf("first page = %v, %v", page, err)
	}
	page, err = s.ListHDTPContacts(ctx, "hid_1", "", "sha256:b", 10)
	if err != nil || len(page) != 2 || page[0].Root != "sha256:c" {
		t.Fatalf("second page = %v, %v", page, err)
	}
	if blocked, err := s.ListHDTPContacts(ctx, "hid_1", db.HDTPContactBlocked, "", 10); err != nil || len(blocked) != 1 || blocked[0].Root != "sha256:d" {
		t.Fatalf("blocked = %v, %v", blocked, err)
	}
	if pa, err := s.ListHDTPPendingAddresses(ctx, "hid_1"); err != nil || len(pa) != 1 || pa[0].Root != "sha256:a" {
		t.Fatalf("pending addresses = %v, %v", pa, err)
	}
	// An upsert replaces every field but the creation time.
	b := contact("sha256:b", "active")
	b.CreateTime, b.UpdateTime, b.Permissions = at.Add(time.Hour), at.Add(time.Hour), []string{}
	hostTx(t, s, "hid_1", func(tx db.HDTPTx) error {
		if err := tx.PutContact(b); err != nil {
			return err
		}
		c, err := tx.Contact("sha256:b")
		if err != nil || c.State != db.HDTPContactActive || len(c.Permissions) != 0 || !c.CreateTime.Equal(at.Truncate(time.Second)) {
			return fmt.Errorf("after upsert: %+v, %v", c, err)
		}
		if ok, err := tx.DeleteContact("sha256:c"); err != nil || !ok {
			return fmt.Errorf("DeleteContact = %v, %v", ok, err)
		}
		if ok, err := tx.DeleteContact("sha256:c"); err != nil || ok {
			return fmt.Errorf("DeleteContact again = %v, %v; want false", ok, err)
		}
		if _, err := tx.Contact("sha256:c"); !errors.Is(err, db.ErrNotFound) {
			return fmt.Errorf("deleted contact: err = %v, want ErrNotFound", err)
		}
		return nil
	})
	if err := s.DeleteHDTPIdentity(ctx, "hid_1"); err != nil {
		t.Fatal(err)
	}
	if left, err := s.ListHDTPContacts(ctx, "hid_1", "", "", 10); err != nil || len(left) != 0 {
		t.Fatalf("contacts after the identity's erasure = %v, %v", left, err)
	}
}

// Former pins: tombstones and moved endpoints, the other roots at an
// endpoint (pinned now or within the window), expiry.
func testHDTPFormerPins(t *testing.T, s db.Store) {
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	hostTx(t, s, "hid_1", func(tx db.HDTPTx) error {
		if err := tx.PutContact(contact("sha256:a", "active")); err != nil {
			return err
		}
		for _, p := range []db.HDTPFormerPin{
			{Root: "sha256:b", Endpoint: "https://sha256:a.example/mcp", LeafKID: "kid-b", LeafNotBefore: at, ExpireTime: at.Add(30 * 24 * time.Hour)},
			{Root: "sha256:c", Endpoint: "https://c.example/mcp", LeafKID: "kid-c", LeafNotBefore: at, Tombstone: true,
				Permissions: []string{"message.text"}, Preset: "basic", ExpireTime: at.Add(time.Hour)},
		} {
			if err := tx.PutFormerPin(p); err != nil {
				return err
			}
		}
		roots, err := tx.OtherRootsAt("https://sha256:a.example/mcp", "sha256:z", at)
		if err != nil || len(roots) != 2 || roots[0] != "sha256:a" || roots[1] != "sha256:b" {
			return fmt.Errorf("OtherRootsAt = %v, %v; want the pinned and the former root", roots, err)
		}
		if roots, _ := tx.OtherRootsAt("https://sha256:a.example/mcp", "sha256:a", at); len(roots) != 1 || roots[0] != "sha256:b" {
			return fmt.Errorf("OtherRootsAt excluding a = %v", roots)
		}
		if roots, _ := tx.OtherRootsAt("https://sha256:a.example/mcp", "sha256:a", at.Add(31*24*time.Hour)); len(roots) != 0 {
			return fmt.Errorf("OtherRootsAt past the window = %v", roots)
		}
		fp, err := tx.FormerPins("sha256:c", at)
		if err != nil || len(fp) != 1 || !fp[0].Tombstone || fp[0].Preset != "basic" || len(fp[0].Permissions) != 1 {
			return fmt.Errorf("FormerPins = %+v, %v", fp, err)
		}
		if fp, _ := tx.FormerPins("sha256:c", at.Add(time.Hour)); len(fp) != 0 {
			return fmt.Errorf("FormerPins at expiry = %+v", fp)
		}
		if err := tx.DeleteTombstones("sha256:c"); err != nil {
			return err
		}
		if fp, _ := tx.FormerPins("sha256:c", at); len(fp) != 0 {
			return fmt.Errorf("FormerPins after DeleteTombstones = %+v", fp)
		}
		return nil
	})
}

// Invites: stored with their hash, read by hash, listed newest first, a
// use consumed only while left and unexpired, deleted by id within the
// identity.
func testHDTPInvites(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	mustHDTPIdentity(t, s, "hid_2", "https://agent.bharat.example/mcp")
	for i, inv := range []db.HDTPInvite{
		{ID: "hiv_1", IdentityID: "hid_1", TokenHash: []byte("h1"), ExpireTime: at.Add(time.Hour), MaxUses: 2, Preset: "basic", Label: "party", CreateTime: at},
		{ID: "hiv_2", IdentityID: "hid_1", TokenHash: []byte("h2"), ExpireTime: at.Add(time.Hour), MaxUses: 1, AutoAccept: true, Preset: "work",
			CreateTime: at.Add(time.Second)},
	} {
		if err := s.CreateHDTPInvite(ctx, inv); err != nil {
			t.Fatalf("invite %d: %v", i, err)
		}
	}
	if err := s.CreateHDTPInvite(ctx, db.HDTPInvite{ID: "hiv_3", IdentityID: "hid_1", TokenHash: []byte("h1"), ExpireTime: at, MaxUses: 1,
		Preset: "basic", CreateTime: at}); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("same token hash: err = %v, want ErrConflict", err)
	}
	got, err := s.GetHDTPInviteByHash(ctx, []byte("h2"))
	if err != nil || got.ID != "hiv_2" || !got.AutoAccept || got.Preset != "work" || got.MaxUses != 1 || got.Uses != 0 {
		t.Fatalf("GetHDTPInviteByHash = %+v, %v", got, err)
	}
	list, err := s.ListHDTPInvites(ctx, "hid_1")
	if err != nil || len(list) != 2 || list[0].ID != "hiv_2" || list[1].Label != "party" {
		t.Fatalf("ListHDTPInvites = %+v, %v", list, err)
	}
	hostTx(t, s, "hid_1", func(tx db.HDTPTx) error {
		for i, want := range []bool{true, true, false} {
			if ok, err := tx.UseInvite("hiv_1", at); err != nil || ok != want {
				return fmt.Errorf("use %d of a two-use invite = %v, %v", i+1, ok, err)
			}
		}
		if ok, err := tx.UseInvite("hiv_2", at.Add(time.Hour)); err != nil || ok {
			return fmt.Errorf("use at its expiry = %v, %v; want false", ok, err)
		}
		return nil
	})
	if got, _ := s.GetHDTPInviteByHash(ctx, []byte("h1")); got.Uses != 2 {
		t.Fatalf("uses = %d, want 2", got.Uses)
	}
	if err := s.DeleteHDTPInvite(ctx, "hid_2", "hiv_1"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("another identity's invite: err = %v, want ErrNotFound", err)
	}
	if err := s.DeleteHDTPInvite(ctx, "hid_1", "hiv_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetHDTPInviteByHash(ctx, []byte("h1")); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("revoked invite: err = %v, want ErrNotFound", err)
	}
}

// Eight concurrent redeems of a one-use invite: exactly one use.
func testHDTPConcurrentInviteUse(t *testing.T, s db.Store) {
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	if err := s.CreateHDTPInvite(t.Context(), db.HDTPInvite{ID: "hiv_1", IdentityID: "hid_1", TokenHash: []byte("h"), ExpireTime: at.Add(time.Hour),
		MaxUses: 1, Preset: "basic", CreateTime: at}); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := s.InHDTPTx(t.Context(), "hid_1", func(tx db.HDTPTx) error {
				ok, err := tx.UseInvite("hiv_1", at)
				if ok {
					won.Add(1)
				}
				return err
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d redeems won, want 1", won.Load())
	}
}

// Replay records and calls: claim once, the stored record for a second
// claim, the first answer stored wins, calls unique by (root, msg_id), a
// failed call frees its msg_id, a finished call cannot finish again,
// threads keep their first owner.
func testHDTPReplaysAndCalls(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	mustHDTPIdentity(t, s, "hid_2", "https://agent.bharat.example/mcp")
	key := db.HDTPReplayKey{SenderRoot: "sha256:a", MsgID: "m1"}
	hostTx(t, s, "hid_1", func(tx db.HDTPTx) error {
		if _, claimed, err := tx.ClaimReplay(key, at.Add(5*time.Minute)); err != nil || !claimed {
			return fmt.Errorf("first claim = %v, %v", claimed, err)
		}
		r, claimed, err := tx.ClaimReplay(key, at.Add(5*time.Minute))
		if err != nil || claimed || r.Answer != nil || r.CallID != "" {
			return fmt.Errorf("second claim = %+v, %v, %v", r, claimed, err)
		}
		if err := tx.SetReplayCall(key, "hcl_1"); err != nil {
			return err
		}
		if a, err := tx.SetReplayAnswer(key, []byte("first")); err != nil || string(a) != "first" {
			return fmt.Errorf("SetReplayAnswer = %q, %v", a, err)
		}
		if a, err := tx.SetReplayAnswer(key, []byte("second")); err != nil || string(a) != "first" {
			return fmt.Errorf("SetReplayAnswer again = %q, %v; want the first", a, err)
		}
		return nil
	})
	if r, err := s.GetHDTPReplay(ctx, "hid_1", key); err != nil || r.CallID != "hcl_1" || string(r.Answer) != "first" {
		t.Fatalf("GetHDTPReplay = %+v, %v", r, err)
	}
	// The same key at another identity is another record.
	hostTx(t, s, "hid_2", func(tx db.HDTPTx) error {
		if _, claimed, err := tx.ClaimReplay(key, at.Add(time.Minute)); err != nil || !claimed {
			return fmt.Errorf("claim at another identity = %v, %v", claimed, err)
		}
		return nil
	})
	call := db.HDTPCall{ID: "hcl_1", CallerRoot: "sha256:a", MsgID: "inner-1", Tool: "send_message", ReplyLeaf: []byte("leaf"), ReplyChain: true,
		EnvMsgID: "m1", RPCID: "7", CreateTime: at}
	hostTx(t, s, "hid_1", func(tx db.HDTPTx) error {
		if _, claimed, err := tx.ClaimCall(call); err != nil || !claimed {
			return fmt.Errorf("ClaimCall = %v, %v", claimed, err)
		}
		again := call
		again.ID = "hcl_2"
		got, claimed, err := tx.ClaimCall(again)
		if err != nil || claimed || got.ID != "hcl_1" || got.State != db.HDTPCallDispatched {
			return fmt.Errorf("ClaimCall of the same msg_id = %+v, %v, %v", got, claimed, err)
		}
		other := call
		other.ID, other.CallerRoot = "hcl_3", "sha256:b"
		if _, claimed, err := tx.ClaimCall(other); err != nil || !claimed {
			return fmt.Errorf("the same msg_id from another root = %v, %v; want claimed", claimed, err)
		}
		noID := db.HDTPCall{ID: "hcl_4", CallerRoot: "sha256:a", Tool: "get_status", RPCID: "1", CreateTime: at}
		if _, claimed, err := tx.ClaimCall(noID); err != nil || !claimed {
			return fmt.Errorf("a call without msg_id = %v, %v", claimed, err)
		}
		noID.ID = "hcl_5"
		if _, claimed, err := tx.ClaimCall(noID); err != nil || !claimed {
			return fmt.Errorf("a second call without msg_id = %v, %v", claimed, err)
		}
		if ok, err := tx.FinishCall("hcl_1", db.HDTPCallCompleted, []byte(`{"status":"delivered"}`), false, at); err != nil || !ok {
			return fmt.Errorf("FinishCall = %v, %v", ok, err)
		}
		if ok, err := tx.FinishCall("hcl_1", db.HDTPCallFailed, []byte(`{"code":"unavailable"}`), true, at); err != nil || ok {
			return fmt.Errorf("FinishCall again = %v, %v; want false", ok, err)
		}
		if ok, err := tx.FinishCall("hcl_3", db.HDTPCallFailed, []byte(`{"code":"unavailable"}`), true, at); err != nil || !ok {
			return fmt.Errorf("FinishCall failed = %v, %v", ok, err)
		}
		retry := other
		retry.ID = "hcl_6"
		if _, claimed, err := tx.ClaimCall(retry); err != nil || !claimed {
			return fmt.Errorf("the msg_id of a failed call = %v, %v; want claimed again", claimed, err)
		}
		if err := tx.AddThread("t1", "sha256:a", at); err != nil {
			return err
		}
		if err := tx.AddThread("t1", "sha256:b", at); err != nil {
			return err
		}
		if root, err := tx.ThreadOwner("t1"); err != nil || root != "sha256:a" {
			return fmt.Errorf("ThreadOwner = %q, %v", root, err)
		}
		if _, err := tx.ThreadOwner("t2"); !errors.Is(err, db.ErrNotFound) {
			return fmt.Errorf("unknown thread: err = %v", err)
		}
		return nil
	})
	got, err := s.GetHDTPCall(ctx, "hcl_1")
	if err != nil || got.State != db.HDTPCallCompleted || string(got.Result) != `{"status":"delivered"}` || got.IsError || !got.ReplyChain ||
		got.RPCID != "7" || got.EnvMsgID != "m1" || got.MsgID != "inner-1" || !bytes.Equal(got.ReplyLeaf, []byte("leaf")) {
		t.Fatalf("GetHDTPCall = %+v, %v", got, err)
	}
	if got, _ := s.GetHDTPCall(ctx, "hcl_3"); got.State != db.HDTPCallFailed || !got.IsError || got.MsgID != "" {
		t.Fatalf("failed call = %+v", got)
	}
	hostTx(t, s, "hid_2", func(tx db.HDTPTx) error {
		if _, err := tx.Call("hcl_1"); !errors.Is(err, db.ErrNotFound) {
			return fmt.Errorf("another identity's call: err = %v, want ErrNotFound", err)
		}
		return nil
	})
}

// Eight concurrent transactions claim the same replay key and inner
// msg_id: one claims each, the others see the claimed rows.
func testHDTPConcurrentClaims(t *testing.T, s db.Store) {
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	var replays, calls atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			err := s.InHDTPTx(t.Context(), "hid_1", func(tx db.HDTPTx) error {
				_, claimed, err := tx.ClaimReplay(db.HDTPReplayKey{SenderRoot: "sha256:a", MsgID: "m"}, at.Add(time.Minute))
				if err != nil || !claimed {
					return err
				}
				replays.Add(1)
				_, claimed, err = tx.ClaimCall(db.HDTPCall{ID: fmt.Sprintf("hcl_%d", i), CallerRoot: "sha256:a", MsgID: "inner", Tool: "send_message",
					RPCID: "1", CreateTime: at})
				if claimed {
					calls.Add(1)
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if replays.Load() != 1 || calls.Load() != 1 {
		t.Fatalf("claims: %d replays, %d calls; want 1 and 1", replays.Load(), calls.Load())
	}
}

// Buckets: a burst is taken whole, the next take waits for the rate
// (rounded up to whole seconds), a take is all or nothing, a peek takes
// nothing, a clock that goes back adds nothing.
func testHDTPBuckets(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	contactB := db.HDTPBucket{Scope: "c:hid_1:a", Interval: time.Second, Burst: 10}
	guestB := db.HDTPBucket{Scope: "g:hid_1:a", Interval: 360 * time.Second, Burst: 10}
	take := func(now time.Time, bs ...db.HDTPBucket) (ok bool, wait time.Duration) {
		t.Helper()
		hostTx(t, s, "hid_1", func(tx db.HDTPTx) error {
			var err error
			ok, wait, err = tx.Take(now, bs...)
			return err
		})
		return ok, wait
	}
	for i := range 10 {
		if ok, _ := take(at, contactB); !ok {
			t.Fatalf("take %d of a burst of 10 refused", i+1)
		}
	}
	if ok, wait := take(at, contactB); ok || wait != time.Second {
		t.Fatalf("11th take = %v, %v; want refused, 1s", ok, wait)
	}
	if ok, wait, err := s.PeekHDTPBucket(ctx, contactB, at); err != nil || ok || wait != time.Second {
		t.Fatalf("peek of the empty bucket = %v, %v, %v", ok, wait, err)
	}
	if ok, _ := take(at.Add(-time.Hour), contactB); ok {
		t.Fatal("a clock that went back refilled the bucket")
	}
	if ok, _ := take(at.Add(time.Second), contactB); !ok {
		t.Fatal("a second later a token should be there")
	}
	if ok, wait, _ := s.PeekHDTPBucket(ctx, guestB, at); !ok || wait != 0 {
		t.Fatalf("peek of an untouched bucket = %v, %v", ok, wait)
	}
	// All or nothing: the contact bucket is empty, so the guest bucket
	// keeps its tokens.
	if ok, _ := take(at.Add(time.Second), guestB, contactB); ok {
		t.Fatal("a take across an empty bucket passed")
	}
	for i := range 10 {
		if ok, _ := take(at, guestB); !ok {
			t.Fatalf("guest take %d refused: the refused take above spent tokens", i+1)
		}
	}
	if ok, wait := take(at, guestB); ok || wait != 360*time.Second {
		t.Fatalf("11th guest take = %v, %v; want refused, 360s", ok, wait)
	}
	if ok, _ := take(at.Add(359*time.Second), guestB); ok {
		t.Fatal("a guest token came before 360 s")
	}
	if ok, _ := take(at.Add(360*time.Second), guestB); !ok {
		t.Fatal("no guest token at 360 s")
	}
}

// Forty concurrent takes from a bucket of ten: exactly ten pass.
func testHDTPConcurrentBuckets(t *testing.T, s db.Store) {
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	b := db.HDTPBucket{Scope: "c:hid_1:a", Interval: time.Hour, Burst: 10}
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			err := s.InHDTPTx(t.Context(), "hid_1", func(tx db.HDTPTx) error {
				ok, _, err := tx.Take(at, b)
				if ok {
					passed.Add(1)
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if passed.Load() != 10 {
		t.Fatalf("%d takes passed, want 10", passed.Load())
	}
}

// A transaction whose function fails changes nothing; the purge deletes
// expired replays, former pins, full buckets, old invites and calls, and
// nothing else.
func testHDTPRollbackAndPurge(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	boom := errors.New("boom")
	if err := s.InHDTPTx(ctx, "hid_1", func(tx db.HDTPTx) error {
		if err := tx.PutContact(contact("sha256:a", "active")); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the function's", err)
	}
	if _, err := s.GetHDTPContact(ctx, "hid_1", "sha256:a"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a rolled-back contact: err = %v, want ErrNotFound", err)
	}
	hostTx(t, s, "hid_1", func(tx db.HDTPTx) error {
		for _, k := range []struct {
			msg string
			exp time.Time
		}{{"old", at.Add(time.Minute)}, {"new", at.Add(time.Hour)}} {
			if _, _, err := tx.ClaimReplay(db.HDTPReplayKey{SenderRoot: "r", MsgID: k.msg}, k.exp); err != nil {
				return err
			}
		}
		if _, _, err := tx.ClaimCall(db.HDTPCall{ID: "hcl_old", CallerRoot: "r", Tool: "get_status", RPCID: "1", CreateTime: at}); err != nil {
			return err
		}
		if _, _, err := tx.ClaimCall(db.HDTPCall{ID: "hcl_new", CallerRoot: "r", Tool: "get_status", RPCID: "1", CreateTime: at.Add(time.Hour)}); err != nil {
			return err
		}
		if _, _, err := tx.Take(at, db.HDTPBucket{Scope: "b", Interval: time.Second, Burst: 2}); err != nil {
			return err
		}
		return tx.PutFormerPin(db.HDTPFormerPin{Root: "r", Endpoint: "https://e.example/mcp", LeafKID: "k", LeafNotBefore: at, ExpireTime: at.Add(time.Minute)})
	})
	if err := s.CreateHDTPInvite(ctx, db.HDTPInvite{ID: "hiv_1", IdentityID: "hid_1", TokenHash: []byte("h"), ExpireTime: at.Add(time.Minute),
		MaxUses: 1, Preset: "basic", CreateTime: at}); err != nil {
		t.Fatal(err)
	}
	now := at.Add(30 * time.Minute)
	n, err := s.PurgeHDTP(ctx, now, now, at.Add(time.Minute))
	if err != nil || n != 5 {
		t.Fatalf("PurgeHDTP = %d, %v; want 5 (a replay, a former pin, a bucket, an invite, a call)", n, err)
	}
	if _, err := s.GetHDTPReplay(ctx, "hid_1", db.HDTPReplayKey{SenderRoot: "r", MsgID: "new"}); err != nil {
		t.Fatalf("the unexpired replay went: %v", err)
	}
	if _, err := s.GetHDTPCall(ctx, "hcl_new"); err != nil {
		t.Fatalf("the newer call went: %v", err)
	}
	if _, err := s.GetHDTPCall(ctx, "hcl_old"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("the old call stayed: %v", err)
	}
}
