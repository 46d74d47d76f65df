package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

func runConsole(t *testing.T, newStore Factory) {
	t.Run("console/sessions", func(t *testing.T) { t.Parallel(); testConsoleSessions(t, newStore(t)) })
	t.Run("console/replicas", func(t *testing.T) { t.Parallel(); testReplicas(t, newStore(t)) })
	t.Run("console/counts", func(t *testing.T) { t.Parallel(); testConsoleCounts(t, newStore(t)) })
	t.Run("grants/find", func(t *testing.T) { t.Parallel(); testFindGrants(t, newStore(t)) })
}

func testConsoleSessions(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Truncate(time.Second).UTC()
	h1, h2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	cs := db.ConsoleSession{IDHash: h1, CredentialID: "cred_1", CreateTime: now, LastSeenTime: now, ExpireTime: now.Add(8 * time.Hour)}
	if err := s.CreateConsoleSession(ctx, cs); err != nil {
		t.Fatalf("CreateConsoleSession: %v", err)
	}
	got, err := s.GetConsoleSession(ctx, h1)
	if err != nil || !bytes.Equal(got.IDHash, h1) || got.CredentialID != "cred_1" || !got.CreateTime.Equal(now) ||
		!got.LastSeenTime.Equal(now) || !got.ExpireTime.Equal(now.Add(8*time.Hour)) || got.ExpireTime.Location() != time.UTC {
		t.Fatalf("GetConsoleSession = %+v, %v; want %+v", got, err, cs)
	}
	if err := s.CreateConsoleSession(ctx, cs); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("CreateConsoleSession(same hash) = %v, want ErrConflict", err)
	}
	if _, err := s.GetConsoleSession(ctx, h2); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("GetConsoleSession(unknown) = %v, want ErrNotFound", err)
	}
	// A use within a minute of the last is not written; a later one is.
	for _, c := range []struct {
		at   time.Time
		want time.Time
	}{{now.Add(59 * time.Second), now}, {now.Add(2 * time.Minute), now.Add(2 * time.Minute)}} {
		if err := s.TouchConsoleSession(ctx, h1, c.at); err != nil {
			t.Fatalf("TouchConsoleSession: %v", err)
		}
		if got, err := s.GetConsoleSession(ctx, h1); err != nil || !got.LastSeenTime.Equal(c.want) {
			t.Fatalf("after a use at %v: last seen %v, %v; want %v", c.at, got.LastSeenTime, err, c.want)
		}
	}
	// Prune: one session past its absolute end, one idle, one live.
	h3 := bytes.Repeat([]byte{3}, 32)
	for _, x := range []db.ConsoleSession{
		{IDHash: h2, CredentialID: "cred_1", CreateTime: now.Add(-9 * time.Hour), LastSeenTime: now, ExpireTime: now},
		{IDHash: h3, CredentialID: "cred_1", CreateTime: now.Add(-time.Hour), LastSeenTime: now.Add(-time.Hour), ExpireTime: now.Add(7 * time.Hour)},
	} {
		if err := s.CreateConsoleSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.PruneConsoleSessions(ctx, now, now.Add(-15*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("PruneConsoleSessions = %d, %v; want 2", n, err)
	}
	if _, err := s.GetConsoleSession(ctx, h1); err != nil {
		t.Fatalf("the live session was pruned: %v", err)
	}
	if err := s.DeleteConsoleSession(ctx, h1); err != nil {
		t.Fatalf("DeleteConsoleSession: %v", err)
	}
	if err := s.DeleteConsoleSession(ctx, h1); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("DeleteConsoleSession twice = %v, want ErrNotFound", err)
	}
	if _, err := s.GetConsoleSession(ctx, h1); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("deleted session found: %v", err)
	}
}

func testReplicas(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Truncate(time.Second).UTC()
	beat := func(id string, seen time.Time, pos int64) {
		t.Helper()
		if err := s.BeatReplica(ctx, db.Replica{ID: id, Host: "host-" + id, Version: "v1", StartTime: now.Add(-time.Hour), SeenTime: seen, FeedPosition: pos}); err != nil {
			t.Fatalf("BeatReplica(%s): %v", id, err)
		}
	}
	beat("rep_b", now, 5)
	beat("rep_a", now.Add(-10*time.Minute), 3)
	beat("rep_b", now.Add(time.Second), 9) // a later beat moves seen and position only
	list, err := s.ListReplicas(ctx, now.Add(-time.Minute), 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListReplicas(last minute) = %+v, %v; want rep_b", list, err)
	}
	want := db.Replica{ID: "rep_b", Host: "host-rep_b", Version: "v1", StartTime: now.Add(-time.Hour), SeenTime: now.Add(time.Second), FeedPosition: 9}
	if list[0] != want {
		t.Fatalf("replica = %+v, want %+v", list[0], want)
	}
	if list, err = s.ListReplicas(ctx, now.Add(-time.Hour), 10); err != nil || len(list) != 2 || list[0].ID != "rep_a" || list[1].ID != "rep_b" {
		t.Fatalf("ListReplicas(last hour) = %+v, %v; want rep_a, rep_b", list, err)
	}
	if n, err := s.PruneReplicas(ctx, now.Add(-time.Minute)); err != nil || n != 1 {
		t.Fatalf("PruneReplicas = %d, %v; want 1", n, err)
	}
	if list, err = s.ListReplicas(ctx, time.Unix(0, 0), 10); err != nil || len(list) != 1 || list[0].ID != "rep_b" {
		t.Fatalf("after the prune: %+v, %v", list, err)
	}
}

func testConsoleCounts(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Add(time.Minute).Truncate(time.Second).UTC()
	if c, err := s.ConsoleCounts(ctx, now); err != nil || c != (db.Counts{}) {
		t.Fatalf("ConsoleCounts(empty) = %+v, %v", c, err)
	}
	SeedEveryTable(t, s) // Brands acme, beta; agt_1, agt_2; agt_r1 self-registered pending; one grant; one credential
	// A second self-registered agent, approved (changed since), and a
	// third, pending, and an operator's agent disabled: neither of the
	// last two counts twice.
	if _, _, err := s.SelfRegisterAgent(ctx, selfReg("agt_r2", "pa-two", "https://two.example", "j2", now)); err != nil {
		t.Fatal(err)
	}
	a, err := s.GetAgent(ctx, "agt_r2")
	if err != nil {
		t.Fatal(err)
	}
	a.Enabled, a.UpdateTime = true, now.Add(time.Minute)
	if _, err := s.UpdateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	op := mustAgent(t, s, "agt_3", "https://three.example")
	op.Enabled = false
	if _, err := s.UpdateAgent(ctx, op); err != nil {
		t.Fatal(err)
	}
	want := db.Counts{Agents: 5, DisabledAgents: 2, PendingAgents: 1, Brands: 2, LiveGrants: 1, LiveCredentials: 1}
	if c, err := s.ConsoleCounts(ctx, now); err != nil || c != want {
		t.Fatalf("ConsoleCounts = %+v, %v; want %+v", c, err, want)
	}
	if ids, err := s.ListPendingAgentIDs(ctx, "", 10); err != nil || !slices.Equal(ids, []string{"agt_r1"}) {
		t.Fatalf("ListPendingAgentIDs = %v, %v; want [agt_r1]", ids, err)
	}
	if ids, err := s.ListPendingAgentIDs(ctx, "agt_r1", 10); err != nil || len(ids) != 0 {
		t.Fatalf("ListPendingAgentIDs(after agt_r1) = %v, %v; want none", ids, err)
	}
	// The grant past its expiry is not live.
	if c, err := s.ConsoleCounts(ctx, now.Add(31*24*time.Hour)); err != nil || c.LiveGrants != 0 {
		t.Fatalf("ConsoleCounts a month on = %+v, %v; want no live grant", c, err)
	}
}

func testFindGrants(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	type spec struct{ id, brand, agent, client, user string }
	for i, g := range []spec{
		{"a2agrant_01", "acme", "agt_1", "https://pa.example", "user-7"},
		{"a2agrant_02", "acme", "agt_2", "https://other-pa.example", "user-7"},
		{"a2agrant_03", "beta", "agt_1", "https://pa.example", "user-7"},
		{"a2agrant_04", "acme", "agt_1", "https://pa.example", "user-8"},
	} {
		da := delegDevice(fmt.Sprintf("da_%d", i), g.brand, g.agent, g.client)
		mustDelegDevice(t, s, da)
		if _, _, err := s.ApproveDeviceAuthorization(ctx, da.ID, delegGrant(g.id, g.brand, g.agent, g.client, g.user, at), at); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		f    db.GrantFilter
		want []string
	}{
		{db.GrantFilter{}, []string{"a2agrant_04", "a2agrant_03", "a2agrant_02", "a2agrant_01"}},
		{db.GrantFilter{BrandID: "acme"}, []string{"a2agrant_04", "a2agrant_02", "a2agrant_01"}},
		{db.GrantFilter{AgentID: "agt_1"}, []string{"a2agrant_04", "a2agrant_03", "a2agrant_01"}},
		{db.GrantFilter{BrandID: "acme", BrandUser: "user-7"}, []string{"a2agrant_02", "a2agrant_01"}},
		{db.GrantFilter{BrandID: "acme", BrandUser: "user-7", AgentID: "agt_2"}, []string{"a2agrant_02"}},
		{db.GrantFilter{BrandUser: "user-7"}, []string{"a2agrant_03", "a2agrant_02", "a2agrant_01"}},
		{db.GrantFilter{BrandID: "nope"}, nil},
	} {
		var got []string
		before := ""
		for range 10 {
			page, err := s.FindGrants(ctx, c.f, before, 2)
			if err != nil {
				t.Fatalf("FindGrants(%+v): %v", c.f, err)
			}
			if len(page) == 0 {
				break
			}
			for _, g := range page {
				got = append(got, g.ID)
				if g.AgentDisplayName != "PA "+g.AgentID {
					t.Fatalf("FindGrants(%+v): grant %+v lacks its PA's name", c.f, g)
				}
			}
			before = page[len(page)-1].ID
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("FindGrants(%+v) = %v, want %v", c.f, got, c.want)
		}
	}
}
