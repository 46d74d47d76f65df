package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// runHDTP is the HDTP identities and leaf ledger part of the contract
// (migration 0020).
func runHDTP(t *testing.T, newStore Factory) {
	t.Run("hdtp/identities", func(t *testing.T) { t.Parallel(); testHDTPIdentities(t, newStore(t)) })
	t.Run("hdtp/ledger", func(t *testing.T) { t.Parallel(); testHDTPLedger(t, newStore(t)) })
	t.Run("hdtp/install-refusals", func(t *testing.T) { t.Parallel(); testHDTPInstallRefusals(t, newStore(t)) })
	t.Run("hdtp/concurrent-installs", func(t *testing.T) { t.Parallel(); testHDTPConcurrentInstalls(t, newStore(t)) })
	t.Run("hdtp/sweep-and-erase", func(t *testing.T) { t.Parallel(); testHDTPSweep(t, newStore(t)) })
}

func mustHDTPIdentity(t *testing.T, s db.Store, id, endpoint string) db.HDTPIdentity {
	t.Helper()
	got, err := s.CreateHDTPIdentity(t.Context(), db.HDTPIdentity{ID: id, Generation: "HDTP1", Endpoint: endpoint, DisplayName: "Alina Rao",
		Seal: "required", KeyAlg: "ed25519", CreateTime: at, UpdateTime: at})
	if err != nil {
		t.Fatalf("CreateHDTPIdentity(%s): %v", id, err)
	}
	return got
}

// pending is a pending leaf of the identity with a distinct kid and state.
func pending(identity, kid string, now time.Time) db.HDTPLeaf {
	return db.HDTPLeaf{KID: kid, IdentityID: identity, KeyAlg: "ed25519", State: db.HDTPLeafPending,
		SealedKey: []byte("sealed " + kid), RequestStateHash: []byte("state " + kid), RequestExpireTime: now.Add(time.Hour), CreateTime: now}
}

func install(identity, kid, expect string, nb time.Time, now time.Time) db.HDTPInstall {
	return db.HDTPInstall{IdentityID: identity, KID: kid, StateHash: []byte("state " + kid), Certificate: []byte("leaf " + kid),
		NotBefore: nb, NotAfter: nb.Add(365 * 24 * time.Hour), RootDER: []byte("root"), RootFingerprint: "sha256:root", ExpectCurrentKID: expect, Now: now}
}

// Identities: create, read, list by id, update (never the endpoint or the
// root), unique ids and endpoints, ErrNotFound for unknown ones.
func testHDTPIdentities(t *testing.T, s db.Store) {
	ctx := t.Context()
	a := mustHDTPIdentity(t, s, "hid_1", "https://agent.alina.example/mcp")
	if want := at.Truncate(time.Second).UTC(); !a.CreateTime.Equal(want) || a.RootDER != nil || a.RootFingerprint != "" || a.Generation != "HDTP1" {
		t.Fatalf("created = %+v", a)
	}
	if got, err := s.GetHDTPIdentity(ctx, "hid_1"); err != nil || got.Endpoint != a.Endpoint || got.Seal != "required" || got.KeyAlg != "ed25519" {
		t.Fatalf("GetHDTPIdentity = %+v, %v", got, err)
	}
	if _, err := s.CreateHDTPIdentity(ctx, db.HDTPIdentity{ID: "hid_2", Generation: "HDTP1", Endpoint: a.Endpoint, DisplayName: "x", Seal: "none",
		KeyAlg: "p256", CreateTime: at, UpdateTime: at}); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("same endpoint: err = %v, want ErrConflict", err)
	}
	if _, err := s.CreateHDTPIdentity(ctx, db.HDTPIdentity{ID: "hid_1", Generation: "PACT2", Endpoint: "https://other.example/mcp", DisplayName: "x",
		Seal: "none", KeyAlg: "p256", CreateTime: at, UpdateTime: at}); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("same id: err = %v, want ErrConflict", err)
	}
	for i := 2; i <= 4; i++ {
		mustHDTPIdentity(t, s, fmt.Sprintf("hid_%d", i), fmt.Sprintf("https://agent%d.example/mcp", i))
	}
	page, err := s.ListHDTPIdentities(ctx, "hid_1", 2)
	if err != nil || len(page) != 2 || page[0].ID != "hid_2" || page[1].ID != "hid_3" {
		t.Fatalf("ListHDTPIdentities = %+v, %v", page, err)
	}
	upd := a
	upd.Generation, upd.DisplayName, upd.Seal, upd.KeyAlg, upd.UpdateTime = "PACT2", "Alina R.", "optional", "p256", at.Add(time.Hour)
	upd.Endpoint, upd.RootFingerprint = "https://ignored.example/mcp", "sha256:ignored"
	got, err := s.UpdateHDTPIdentity(ctx, upd)
	if err != nil || got.Generation != "PACT2" || got.DisplayName != "Alina R." || got.Seal != "optional" || got.KeyAlg != "p256" ||
		got.Endpoint != a.Endpoint || got.RootFingerprint != "" || !got.UpdateTime.Equal(at.Add(time.Hour).Truncate(time.Second)) {
		t.Fatalf("UpdateHDTPIdentity = %+v, %v", got, err)
	}
	upd.ID = "hid_missing"
	if _, err := s.UpdateHDTPIdentity(ctx, upd); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("UpdateHDTPIdentity(missing) err = %v", err)
	}
	if _, err := s.GetHDTPIdentity(ctx, "hid_missing"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("GetHDTPIdentity(missing) err = %v", err)
	}
	if err := s.DeleteHDTPIdentity(ctx, "hid_missing"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("DeleteHDTPIdentity(missing) err = %v", err)
	}
}

// The ledger: a pending leaf replaces the previous pending one; installing
// makes it current and sets the root; a renewal supersedes the current
// leaf, keeping its sealed key; kids are unique across identities.
func testHDTPLedger(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_a", "https://agent.alina.example/mcp")
	mustHDTPIdentity(t, s, "hid_b", "https://agent.bharat.example/mcp")
	if err := s.PutHDTPPendingLeaf(ctx, pending("hid_a", "kid_0", at)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutHDTPPendingLeaf(ctx, pending("hid_a", "kid_1", at.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetHDTPLeaf(ctx, "kid_0"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a second request left the first pending leaf: %v", err)
	}
	if err := s.PutHDTPPendingLeaf(ctx, pending("hid_b", "kid_1", at)); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("another identity's kid: err = %v, want ErrConflict", err)
	}
	if err := s.PutHDTPPendingLeaf(ctx, pending("hid_missing", "kid_9", at)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("unknown identity: err = %v, want ErrNotFound", err)
	}
	l, err := s.InstallHDTPLeaf(ctx, install("hid_a", "kid_1", "", at, at.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	if l.State != db.HDTPLeafCurrent || !bytes.Equal(l.Certificate, []byte("leaf kid_1")) || !bytes.Equal(l.SealedKey, []byte("sealed kid_1")) ||
		l.RequestStateHash != nil || !l.NotBefore.Equal(at.Truncate(time.Second)) || !l.InstallTime.Equal(at.Add(time.Minute).Truncate(time.Second)) {
		t.Fatalf("installed = %+v", l)
	}
	id, _ := s.GetHDTPIdentity(ctx, "hid_a")
	if !bytes.Equal(id.RootDER, []byte("root")) || id.RootFingerprint != "sha256:root" {
		t.Fatalf("root not set: %+v", id)
	}
	// A renewal.
	if err := s.PutHDTPPendingLeaf(ctx, pending("hid_a", "kid_2", at.Add(2*time.Second))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InstallHDTPLeaf(ctx, install("hid_a", "kid_2", "kid_1", at.Add(24*time.Hour), at.Add(2*time.Minute))); err != nil {
		t.Fatal(err)
	}
	leaves, err := s.ListHDTPLeaves(ctx, "hid_a")
	if err != nil || len(leaves) != 2 || leaves[0].KID != "kid_1" || leaves[0].State != db.HDTPLeafSuperseded || leaves[0].SealedKey == nil ||
		leaves[1].KID != "kid_2" || leaves[1].State != db.HDTPLeafCurrent {
		t.Fatalf("ledger = %+v, %v", leaves, err)
	}
	if got, err := s.GetHDTPLeaf(ctx, "kid_1"); err != nil || got.IdentityID != "hid_a" || got.State != db.HDTPLeafSuperseded {
		t.Fatalf("GetHDTPLeaf = %+v, %v", got, err)
	}
}

// Refusals change nothing: a wrong state, an unknown or expired request,
// another root, a current leaf other than the one expected.
func testHDTPInstallRefusals(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_a", "https://agent.alina.example/mcp")
	if err := s.PutHDTPPendingLeaf(ctx, pending("hid_a", "kid_1", at)); err != nil {
		t.Fatal(err)
	}
	bad := install("hid_a", "kid_1", "", at, at)
	bad.StateHash = []byte("another state")
	if _, err := s.InstallHDTPLeaf(ctx, bad); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("wrong state: err = %v, want ErrNotFound", err)
	}
	if _, err := s.InstallHDTPLeaf(ctx, install("hid_a", "kid_1", "", at, at.Add(time.Hour))); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("expired request: err = %v, want ErrNotFound", err)
	}
	if _, err := s.InstallHDTPLeaf(ctx, install("hid_a", "kid_1", "kid_0", at, at)); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("expected a current leaf that is not there: err = %v, want ErrConflict", err)
	}
	if _, err := s.InstallHDTPLeaf(ctx, install("hid_missing", "kid_1", "", at, at)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("unknown identity: err = %v, want ErrNotFound", err)
	}
	if l, _ := s.GetHDTPLeaf(ctx, "kid_1"); l.State != db.HDTPLeafPending {
		t.Fatalf("a refusal changed the leaf: %+v", l)
	}
	// Control, then another root is refused for the next leaf.
	if _, err := s.InstallHDTPLeaf(ctx, install("hid_a", "kid_1", "", at, at)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutHDTPPendingLeaf(ctx, pending("hid_a", "kid_2", at)); err != nil {
		t.Fatal(err)
	}
	other := install("hid_a", "kid_2", "kid_1", at.Add(time.Hour), at)
	other.RootFingerprint = "sha256:another"
	if _, err := s.InstallHDTPLeaf(ctx, other); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("another root: err = %v, want ErrConflict", err)
	}
	if leaves, _ := s.ListHDTPLeaves(ctx, "hid_a"); len(leaves) != 2 || leaves[0].State != db.HDTPLeafCurrent || leaves[1].State != db.HDTPLeafPending {
		t.Fatalf("a refused install changed the ledger: %+v", leaves)
	}
}

// Two installs for one identity at once, each expecting the current leaf
// it saw: exactly one wins, the other gets ErrConflict or ErrNotFound, and
// the identity ends with one current leaf.
func testHDTPConcurrentInstalls(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_a", "https://agent.alina.example/mcp")
	for round := range 5 {
		kid := fmt.Sprintf("kid_%d", round)
		if err := s.PutHDTPPendingLeaf(ctx, pending("hid_a", kid, at)); err != nil {
			t.Fatal(err)
		}
		expect := ""
		if round > 0 {
			expect = fmt.Sprintf("kid_%d", round-1)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.InstallHDTPLeaf(ctx, install("hid_a", kid, expect, at.Add(time.Duration(round)*time.Hour), at))
				switch {
				case err == nil:
					mu.Lock()
					wins++
					mu.Unlock()
				case errors.Is(err, db.ErrConflict), errors.Is(err, db.ErrNotFound):
				default:
					t.Errorf("InstallHDTPLeaf: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("round %d: %d installs won", round, wins)
		}
	}
	leaves, _ := s.ListHDTPLeaves(ctx, "hid_a")
	current := 0
	for _, l := range leaves {
		if l.State == db.HDTPLeafCurrent {
			current++
		}
	}
	if current != 1 || len(leaves) != 5 {
		t.Fatalf("ledger = %+v", leaves)
	}
}

// The sweep destroys keys past their leaf's notAfter (the kid stays, as
// former) and deletes expired requests; deleting the identity erases every
// leaf, former kids included.
func testHDTPSweep(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustHDTPIdentity(t, s, "hid_a", "https://agent.alina.example/mcp")
	mustHDTPIdentity(t, s, "hid_b", "https://agent.bharat.example/mcp")
	_ = s.PutHDTPPendingLeaf(ctx, pending("hid_a", "kid_1", at))
	if _, err := s.InstallHDTPLeaf(ctx, install("hid_a", "kid_1", "", at, at)); err != nil {
		t.Fatal(err)
	}
	_ = s.PutHDTPPendingLeaf(ctx, pending("hid_a", "kid_2", at))
	if _, err := s.InstallHDTPLeaf(ctx, install("hid_a", "kid_2", "kid_1", at.Add(30*24*time.Hour), at)); err != nil {
		t.Fatal(err)
	}
	_ = s.PutHDTPPendingLeaf(ctx, pending("hid_b", "kid_b", at))
	// kid_1 ends at+365d; kid_2 at+395d; kid_b's request at+1h.
	if n, err := s.SweepHDTPLeaves(ctx, at.Add(24*time.Hour)); err != nil || n != 1 {
		t.Fatalf("first sweep: %d, %v; want the expired request only", n, err)
	}
	if _, err := s.GetHDTPLeaf(ctx, "kid_b"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("expired request kept: %v", err)
	}
	if n, err := s.SweepHDTPLeaves(ctx, at.Add(366*24*time.Hour)); err != nil || n != 1 {
		t.Fatalf("second sweep: %d, %v", n, err)
	}
	l, _ := s.GetHDTPLeaf(ctx, "kid_1")
	if l.State != db.HDTPLeafFormer || l.SealedKey != nil || l.Certificate == nil {
		t.Fatalf("past notAfter: %+v; want former, key gone, kid and certificate kept", l)
	}
	if l, _ := s.GetHDTPLeaf(ctx, "kid_2"); l.State != db.HDTPLeafCurrent || l.SealedKey == nil {
		t.Fatalf("the current leaf was touched: %+v", l)
	}
	if err := s.DeleteHDTPIdentity(ctx, "hid_a"); err != nil {
		t.Fatal(err)
	}
	for _, kid := range []string{"kid_1", "kid_2"} {
		if _, err := s.GetHDTPLeaf(ctx, kid); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("%s survived its identity: %v", kid, err)
		}
	}
}
