package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// runFeed is the change-feed part of the contract (db.FeedStore), and the
// statement counts that show what replicas ask of the database.
func runFeed(t *testing.T, newStore Factory) {
	t.Run("feed/records-each-change", func(t *testing.T) { t.Parallel(); testFeedRecords(t, newStore(t)) })
	t.Run("feed/latest-and-prune", func(t *testing.T) { t.Parallel(); testFeedPrune(t, newStore(t)) })
	t.Run("feed/concurrent-writers-dense-in-order", func(t *testing.T) { t.Parallel(); testFeedConcurrent(t, newStore(t)) })
	t.Run("statements/counted", func(t *testing.T) { t.Parallel(); testStatementsCounted(t, newStore(t)) })
}

// feedReader reads the feed as a replica does and checks what each change
// method appended.
type feedReader struct {
	t    *testing.T
	s    db.Store
	last int64 // position read up to
}

// expect reads the changes since the last call and checks they are exactly
// want ("kind:key", in order when ordered, else as a set), at the next
// positions without a gap.
func (r *feedReader) expect(step string, ordered bool, want ...string) {
	r.t.Helper()
	got, err := r.s.ChangesFrom(r.t.Context(), r.last+1, 100)
	if err != nil {
		r.t.Fatalf("%s: ChangesFrom: %v", step, err)
	}
	var kk []string
	for i, c := range got {
		if c.Pos != r.last+1+int64(i) {
			r.t.Fatalf("%s: change %d at position %d, want %d (positions are dense)", step, i, c.Pos, r.last+1+int64(i))
		}
		if d := time.Since(c.Time); d < -time.Minute || d > time.Minute {
			r.t.Fatalf("%s: change time %v is not the database's now", step, c.Time)
		}
		kk = append(kk, string(c.Kind)+":"+c.Key)
	}
	if !ordered {
		slices.Sort(kk)
		want = slices.Clone(want)
		slices.Sort(want)
	}
	if !slices.Equal(kk, want) {
		r.t.Fatalf("%s appended %q to the feed; want %q", step, kk, want)
	}
	r.last += int64(len(got))
}

// Every change other replicas must learn appends one row, in its own
// transaction; reads, creations that no cache can hold stale, and refused
// changes append nothing.
func testFeedRecords(t *testing.T, s db.Store) {
	ctx := t.Context()
	if _, err := s.LatestChange(ctx); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("LatestChange of a new store err = %v, want ErrNotFound", err)
	}
	r := &feedReader{t: t, s: s}
	a := mustAgent(t, s, "agt_1", "https://pa.example")
	r.expect("CreateAgent", true, "agents:https://pa.example")
	a.Enabled = false
	if _, err := s.UpdateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	r.expect("UpdateAgent", true, "agents:https://pa.example")
	if _, err := s.GetAgentByIssuer(ctx, a.Issuer); err != nil {
		t.Fatal(err)
	}
	r.expect("GetAgentByIssuer", true)

	if _, err := s.CreateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Acme", CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	r.expect("CreateBrand", true, "brands:acme")
	if _, err := s.UpdateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Acme 2", UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	r.expect("UpdateBrand", true, "brands:acme")
	if _, err := s.UpdateBrand(ctx, db.Brand{ID: "nope", DisplayName: "x", UpdateTime: at}); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("UpdateBrand(missing) err = %v", err)
	}
	r.expect("UpdateBrand(missing)", true)

	for i, label := range []string{"ops", "bootstrap admin", "bootstrap admin"} {
		c := db.Credential{ID: fmt.Sprintf("cred_%d", i), Role: db.RoleAdmin, TokenHash: bytes.Repeat([]byte{byte(i + 1)}, 32), Label: label, CreateTime: at}
		if _, err := s.CreateCredential(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.TouchCredential(ctx, "cred_0", at); err != nil {
		t.Fatal(err)
	}
	r.expect("CreateCredential, TouchCredential", true)
	if _, err := s.RevokeCredential(ctx, "cred_0", at); err != nil {
		t.Fatal(err)
	}
	r.expect("RevokeCredential", true, "credentials:cred_0")
	if _, err := s.RevokeCredential(ctx, "cred_0", at.Add(time.Second)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("RevokeCredential twice err = %v", err)
	}
	r.expect("RevokeCredential(revoked)", true)
	if ids, err := s.RevokeCredentialsByLabel(ctx, "bootstrap admin", bytes.Repeat([]byte{9}, 32), at); err != nil || len(ids) != 2 {
		t.Fatalf("RevokeCredentialsByLabel = %v, %v", ids, err)
	}
	r.expect("RevokeCredentialsByLabel", false, "credentials:cred_1", "credentials:cred_2")

	// A grant's life: made, redeemed and refreshed without a feed row (no
	// replica can hold a grant before it exists), revoked with one.
	a.Enabled = true
	if _, err := s.UpdateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	r.expect("UpdateAgent(enable)", true, "agents:https://pa.example")
	mustDelegDevice(t, s, delegDevice("da_1", "acme", "agt_1", a.Issuer))
	g := delegGrant("a2agrant_1", "acme", "agt_1", a.Issuer, "user-7", at)
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_1", g, at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RedeemDeviceAuthorization(ctx, "da_1", at, delegRefresh("rt-0", g.ExpireTime)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateRefreshToken(ctx, delegHash("rt-0"), "acme", a.Issuer, at, delegRefresh("rt-1", g.ExpireTime)); err != nil {
		t.Fatal(err)
	}
	r.expect("approve, redeem, rotate", true)
	if revoked, err := s.RevokeGrant(ctx, g.ID, at); err != nil || !revoked {
		t.Fatalf("RevokeGrant = %v, %v", revoked, err)
	}
	r.expect("RevokeGrant", true, "grants:a2agrant_1")
	if revoked, err := s.RevokeGrant(ctx, g.ID, at.Add(time.Second)); err != nil || revoked {
		t.Fatalf("RevokeGrant twice = %v, %v", revoked, err)
	}
	r.expect("RevokeGrant(revoked)", true)

	// Signing keys: the new key, then the key it retires; the purge of an
	// expired key.
	if err := s.AddSigningKey(ctx, signingKey(1, at), at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	r.expect("AddSigningKey(1)", true, "signing_keys:kid-1")
	if err := s.AddSigningKey(ctx, signingKey(2, at.Add(time.Minute)), at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	r.expect("AddSigningKey(2)", true, "signing_keys:kid-2", "signing_keys:kid-1")
	if err := s.AddSigningKey(ctx, signingKey(2, at.Add(time.Minute)), at.Add(time.Hour)); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("AddSigningKey(2) again err = %v", err)
	}
	r.expect("AddSigningKey(conflict)", true)
	if n, err := s.DeleteExpiredSigningKeys(ctx, at.Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("DeleteExpiredSigningKeys = %d, %v", n, err)
	}
	r.expect("DeleteExpiredSigningKeys", true, "signing_keys:kid-1")

	// Deleting the agent is one row: its grants go by cascade, and
	// replicas drop the grants they cached for its issuer on that row.
	if err := s.DeleteAgent(ctx, "agt_1"); err != nil {
		t.Fatal(err)
	}
	r.expect("DeleteAgent", true, "agents:https://pa.example")

	latest, err := s.LatestChange(ctx)
	if err != nil || latest.Pos != r.last || latest.Kind != db.ChangeAgent {
		t.Fatalf("LatestChange = %+v, %v; want position %d", latest, err, r.last)
	}
	all, err := s.ChangesFrom(ctx, 0, 1000)
	if err != nil || int64(len(all)) != r.last {
		t.Fatalf("ChangesFrom(0) = %d changes, %v; want %d", len(all), err, r.last)
	}
	tokens := map[int64]bool{}
	for _, c := range all {
		tokens[c.Token] = true
	}
	if len(tokens) != len(all) {
		t.Fatalf("%d changes carry only %d distinct tokens", len(all), len(tokens))
	}
	if page, err := s.ChangesFrom(ctx, 3, 2); err != nil || len(page) != 2 || page[0].Pos != 3 || page[1].Pos != 4 {
		t.Fatalf("ChangesFrom(3, limit 2) = %+v, %v", page, err)
	}
}

// PruneChanges deletes rows by age but always keeps the newest, which
// every poller checks its position against.
func testFeedPrune(t *testing.T, s db.Store) {
	ctx := t.Context()
	for i := range 5 {
		if _, err := s.CreateBrand(ctx, db.Brand{ID: fmt.Sprintf("b%d", i), DisplayName: "B", CreateTime: at, UpdateTime: at}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.PruneChanges(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneChanges(an hour ago) = %d, %v; want 0: every row is younger", n, err)
	}
	if n, err := s.PruneChanges(ctx, time.Now().Add(time.Hour)); err != nil || n != 4 {
		t.Fatalf("PruneChanges(in an hour) = %d, %v; want 4: all but the newest", n, err)
	}
	rest, err := s.ChangesFrom(ctx, 0, 100)
	if err != nil || len(rest) != 1 || rest[0].Pos != 5 || rest[0].Key != "b4" {
		t.Fatalf("after pruning: %+v, %v; want only position 5", rest, err)
	}
	if latest, err := s.LatestChange(ctx); err != nil || latest != rest[0] {
		t.Fatalf("LatestChange = %+v, %v; want %+v", latest, err, rest[0])
	}
	if n, err := s.PruneChanges(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneChanges again = %d, %v; the newest row stays", n, err)
	}
	// Positions go on after pruning: nothing is handed out twice.
	if _, err := s.CreateBrand(ctx, db.Brand{ID: "b5", DisplayName: "B", CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	if latest, err := s.LatestChange(ctx); err != nil || latest.Pos != 6 {
		t.Fatalf("LatestChange after pruning and a change = %+v, %v; want position 6", latest, err)
	}
}

// Many writers at once, and a reader polling as a replica does: every
// batch it reads continues exactly where the previous one ended, so no
// change can be skipped by a reader that asks for positions after the last
// it saw, and in the end it has seen every change once.
func testFeedConcurrent(t *testing.T, s db.Store) {
	ctx := t.Context()
	const writers, each = 6, 15
	for w := range writers {
		if _, err := s.CreateBrand(ctx, db.Brand{ID: fmt.Sprintf("w%d", w), DisplayName: "W", CreateTime: at, UpdateTime: at}); err != nil {
			t.Fatal(err)
		}
	}
	start, err := s.LatestChange(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.UpdateBrand(ctx, db.Brand{ID: fmt.Sprintf("w%d", w), DisplayName: fmt.Sprintf("W %d", i), UpdateTime: at}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	last, seen := start.Pos, 0
	read := func() {
		got, err := s.ChangesFrom(ctx, last+1, 1000)
		if err != nil {
			t.Fatalf("ChangesFrom: %v", err)
		}
		for _, c := range got {
			if c.Pos != last+1 {
				t.Fatalf("the reader at position %d next saw %d: a change was skipped or seen out of order", last, c.Pos)
			}
			last = c.Pos
			seen++
		}
	}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		read()
	}
	read()
	close(errs)
	for err := range errs {
		t.Fatalf("UpdateBrand: %v", err)
	}
	if seen != writers*each {
		t.Fatalf("the reader saw %d changes; %d were made", seen, writers*each)
	}
}

// Statements counts what the store ran, by sqlc name.
func testStatementsCounted(t *testing.T, s db.Store) {
	count := func(name string) uint64 {
		for _, c := range s.Statements() {
			if c.Name == name {
				return c.N
			}
		}
		return 0
	}
	before, other := count("GetAgentByID"), count("GetBrand")
	for range 3 {
		if _, err := s.GetAgent(t.Context(), "agt_missing"); !errors.Is(err, db.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if got := count("GetAgentByID") - before; got != 3 {
		t.Fatalf("GetAgentByID counted %d times after 3 calls", got)
	}
	if count("GetBrand") != other {
		t.Fatal("GetBrand was counted without being run")
	}
}
