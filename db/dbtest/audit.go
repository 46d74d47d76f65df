package dbtest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

func runAudit(t *testing.T, newStore Factory) {
	t.Run("audit/grant-changes", func(t *testing.T) { t.Parallel(); testAuditGrantChanges(t, newStore(t)) })
	t.Run("audit/concurrent-rotation", func(t *testing.T) { t.Parallel(); testAuditConcurrentRotation(t, newStore(t)) })
	t.Run("audit/concurrent-revoke", func(t *testing.T) { t.Parallel(); testAuditConcurrentRevoke(t, newStore(t)) })
	t.Run("audit/list", func(t *testing.T) { t.Parallel(); testAuditList(t, newStore(t)) })
	t.Run("audit/prune", func(t *testing.T) { t.Parallel(); testAuditPrune(t, newStore(t)) })
}

// auditAll lists every event, oldest first.
func auditAll(t *testing.T, s db.Store) []db.AuditEvent {
	t.Helper()
	got, err := s.ListAuditEvents(t.Context(), db.AuditFilter{}, 0, 1000)
	if err != nil {
		t.Fatalf("ListAuditEvents: %v", err)
	}
	return got
}

// auditKinds are the kinds of events, in order.
func auditKinds(es []db.AuditEvent) []db.AuditKind {
	out := make([]db.AuditKind, 0, len(es))
	for _, e := range es {
		out = append(out, e.Kind)
	}
	return out
}

// testAuditGrantChanges: each grant change records the event its ctx
// carries in its transaction, completed from the grant; a refused change
// records nothing.
func testAuditGrantChanges(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Add(time.Minute)
	delegFixture(t, s)
	mustDelegDevice(t, s, delegDevice("da_1", "acme", "agt_1", "https://pa.example"))
	g := delegGrant("a2agrant_1", "acme", "agt_1", "https://pa.example", "user-7", now)

	created := db.WithAudit(ctx, db.AuditEvent{Kind: db.AuditGrantCreated, Actor: db.ActorFrontend, Scopes: g.Scopes})
	if _, _, err := s.ApproveDeviceAuthorization(created, "da_1", g, now); err != nil {
		t.Fatal(err)
	}
	// A second approval is refused (not pending) and records nothing.
	g2 := delegGrant("a2agrant_2", "acme", "agt_1", "https://pa.example", "user-7", now)
	if _, _, err := s.ApproveDeviceAuthorization(created, "da_1", g2, now); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("second approval: err = %v, want ErrNotFound", err)
	}
	if got := auditAll(t, s); len(got) != 1 {
		t.Fatalf("after a refused approval: %d events, want 1: %+v", len(got), got)
	}
	redeemed := db.WithAudit(ctx, db.AuditEvent{Kind: db.AuditGrantRedeemed, Actor: db.ActorPA})
	if _, err := s.RedeemDeviceAuthorization(redeemed, "da_1", now, delegRefresh("rt-0", g.ExpireTime)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RedeemDeviceAuthorization(redeemed, "da_1", now, delegRefresh("rt-again", g.ExpireTime)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("second redemption: err = %v, want ErrNotFound", err)
	}
	later := now.Add(time.Hour)
	refreshed := db.WithAudit(ctx, db.AuditEvent{Kind: db.AuditGrantRefreshed, Actor: db.ActorPA, Scopes: []string{"orders:read"}})
	if _, err := s.RotateRefreshToken(refreshed, delegHash("rt-0"), "acme", "https://pa.example", later, delegRefresh("rt-1", g.ExpireTime)); err != nil {
		t.Fatal(err)
	}
	// The rotated token again: refused, nothing recorded.
	if _, err := s.RotateRefreshToken(refreshed, delegHash("rt-0"), "acme", "https://pa.example", later, delegRefresh("rt-2", g.ExpireTime)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("reused token: err = %v, want ErrNotFound", err)
	}
	revoked := db.WithAudit(ctx, db.AuditEvent{Kind: db.AuditGrantRevoked, Actor: db.ActorAdmin})
	if ok, err := s.RevokeGrant(revoked, g.ID, later); err != nil || !ok {
		t.Fatalf("RevokeGrant = %v, %v", ok, err)
	}
	// Revoking a revoked grant changes nothing and records nothing.
	if ok, err := s.RevokeGrant(revoked, g.ID, later); err != nil || ok {
		t.Fatalf("second RevokeGrant = %v, %v; want false, nil", ok, err)
	}
	if _, err := s.RevokeGrant(revoked, "a2agrant_missing", later); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("RevokeGrant(missing): err = %v, want ErrNotFound", err)
	}
	// A change without an event records none (the ctx carries nothing).
	mustDelegDevice(t, s, delegDevice("da_2", "acme", "agt_2", "https://other-pa.example"))
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_2", delegGrant("a2agrant_3", "acme", "agt_2", "https://other-pa.example", "user-8", now), now); err != nil {
		t.Fatal(err)
	}

	got := auditAll(t, s)
	want := []db.AuditKind{db.AuditGrantCreated, db.AuditGrantRedeemed, db.AuditGrantRefreshed, db.AuditGrantRevoked}
	if !slices.Equal(auditKinds(got), want) {
		t.Fatalf("kinds = %v, want %v", auditKinds(got), want)
	}
	times := []time.Time{now, now, later, later}
	actors := []string{db.ActorFrontend, db.ActorPA, db.ActorPA, db.ActorAdmin}
	for i, e := range got {
		// Every event names the grant and its parties, filled from the
		// grant where the caller left them out.
		if e.GrantID != g.ID || e.BrandID != "acme" || e.BrandUser != "user-7" || e.AgentID != "agt_1" || e.ClientID != "https://pa.example" {
			t.Errorf("event %d (%s) parties = %+v", i, e.Kind, e)
		}
		if !e.Time.Equal(times[i].Truncate(time.Second)) || e.Time.Location() != time.UTC || e.Actor != actors[i] {
			t.Errorf("event %d (%s) time/actor = %v %q, want %v %q", i, e.Kind, e.Time, e.Actor, times[i], actors[i])
		}
		if i > 0 && e.ID <= got[i-1].ID {
			t.Errorf("ids do not grow: %d after %d", e.ID, got[i-1].ID)
		}
	}
	if fmt.Sprint(got[0].Scopes) != "[orders:read]" || fmt.Sprint(got[1].Scopes) != "[]" {
		t.Errorf("scopes = %v, %v; want [orders:read], []", got[0].Scopes, got[1].Scopes)
	}
}

// testAuditConcurrentRotation: of concurrent rotations of one token exactly
// one succeeds, and exactly one refreshed event is recorded.
func testAuditConcurrentRotation(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Add(time.Minute)
	g := delegRotationFixture(t, s, now)
	refreshed := db.WithAudit(ctx, db.AuditEvent{Kind: db.AuditGrantRefreshed, Actor: db.ActorPA})
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range n {
		wg.Go(func() {
			_, err := s.RotateRefreshToken(refreshed, delegHash("rt-0"), "acme", "https://pa.example", now, delegRefresh(fmt.Sprintf("rt-c%d", i), g.ExpireTime))
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			} else if !errors.Is(err, db.ErrNotFound) {
				t.Errorf("rotation %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	got := auditAll(t, s)
	if wins != 1 || len(got) != 1 || got[0].Kind != db.AuditGrantRefreshed || got[0].GrantID != g.ID {
		t.Fatalf("wins = %d, events = %+v; want one win and one refreshed event", wins, got)
	}
}

// testAuditConcurrentRevoke: of concurrent revocations of one grant
// exactly one revokes it, and exactly one revoked event is recorded.
func testAuditConcurrentRevoke(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Add(time.Minute)
	g := delegRotationFixture(t, s, now)
	revoked := db.WithAudit(ctx, db.AuditEvent{Kind: db.AuditGrantReuseRevoked, Actor: db.ActorPA})
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range n {
		wg.Go(func() {
			ok, err := s.RevokeGrant(revoked, g.ID, now)
			if err != nil {
				t.Errorf("revoke %d: %v", i, err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	got := auditAll(t, s)
	if wins != 1 || len(got) != 1 || got[0].Kind != db.AuditGrantReuseRevoked || got[0].GrantID != g.ID {
		t.Fatalf("wins = %d, events = %+v; want one revocation and one event", wins, got)
	}
}

// testAuditList: filters, time range, paging, and the stored form of
// receipt events.
func testAuditList(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Add(time.Minute)
	g := delegRotationFixture(t, s, now) // grant a2agrant_1: acme, user-7, agt_1
	type rec struct {
		kind                        db.AuditKind
		brand, user, agent, grantID string
		off                         time.Duration
	}
	recs := []rec{
		{db.AuditStepUp, "acme", "", "agt_1", "", 0},
		{db.AuditReceiptSigned, "", "", "", g.ID, time.Minute}, // parties from the grant
		{db.AuditReceiptSigned, "beta", "user-9", "agt_2", "a2agrant_9", 2 * time.Minute},
		{db.AuditGrantRevoked, "acme", "user-8", "agt_2", "a2agrant_8", 3 * time.Minute},
		{db.AuditReceiptSigned, "", "", "", g.ID, 4 * time.Minute},
	}
	var ids []int64
	for i, r := range recs {
		e := db.AuditEvent{Kind: r.kind, Time: now.Add(r.off), BrandID: r.brand, BrandUser: r.user, AgentID: r.agent, GrantID: r.grantID, Actor: db.ActorFrontend}
		if r.kind == db.AuditReceiptSigned {
			e.Scopes = []string{"orders:read"}
			e.Actions = []db.AuditAction{{Tool: "lookup_order", ArgsHash: "abc"}, {Tool: "list"}}
			e.Detail = fmt.Sprintf("jws-%d", i)
		}
		out, err := s.RecordAuditEvent(ctx, e)
		if err != nil {
			t.Fatalf("RecordAuditEvent(%d): %v", i, err)
		}
		ids = append(ids, out.ID)
	}
	if _, err := s.RecordAuditEvent(ctx, db.AuditEvent{Kind: db.AuditStepUp}); err == nil {
		t.Fatal("RecordAuditEvent without a time succeeded")
	}
	all := auditAll(t, s)
	if len(all) != len(recs) {
		t.Fatalf("%d events, want %d", len(all), len(recs))
	}
	r1 := all[1]
	if r1.ID != ids[1] || r1.BrandID != "acme" || r1.BrandUser != "user-7" || r1.AgentID != "agt_1" || r1.ClientID != "https://pa.example" ||
		fmt.Sprint(r1.Actions) != "[{lookup_order abc} {list }]" || fmt.Sprint(r1.Scopes) != "[orders:read]" || r1.Detail != "jws-1" {
		t.Fatalf("receipt event = %+v", r1)
	}
	if len(all[0].Actions) != 0 || fmt.Sprint(all[0].Scopes) != "[]" {
		t.Errorf("step-up event = %+v, want no actions and no scopes", all[0])
	}
	// Filters: each picks exactly the events it names (by position).
	for name, c := range map[string]struct {
		f    db.AuditFilter
		want []int
	}{
		"none":          {db.AuditFilter{}, []int{0, 1, 2, 3, 4}},
		"brand":         {db.AuditFilter{BrandID: "acme"}, []int{0, 1, 3, 4}},
		"brand+user":    {db.AuditFilter{BrandID: "acme", BrandUser: "user-7"}, []int{1, 4}},
		"agent":         {db.AuditFilter{AgentID: "agt_2"}, []int{2, 3}},
		"grant":         {db.AuditFilter{GrantID: g.ID}, []int{1, 4}},
		"kind":          {db.AuditFilter{Kind: db.AuditReceiptSigned}, []int{1, 2, 4}},
		"start":         {db.AuditFilter{Start: now.Add(2 * time.Minute)}, []int{2, 3, 4}},
		"end-exclusive": {db.AuditFilter{End: now.Add(2 * time.Minute)}, []int{0, 1}},
		"range":         {db.AuditFilter{Start: now.Add(time.Minute), End: now.Add(4 * time.Minute)}, []int{1, 2, 3}},
		"kind+brand":    {db.AuditFilter{Kind: db.AuditReceiptSigned, BrandID: "beta"}, []int{2}},
		"no-match":      {db.AuditFilter{BrandID: "nope"}, nil},
	} {
		got, err := s.ListAuditEvents(ctx, c.f, 0, 100)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var gotIDs, wantIDs []int64
		for _, e := range got {
			gotIDs = append(gotIDs, e.ID)
		}
		for _, i := range c.want {
			wantIDs = append(wantIDs, ids[i])
		}
		if !slices.Equal(gotIDs, wantIDs) {
			t.Errorf("%s: ids = %v, want %v", name, gotIDs, wantIDs)
		}
	}
	// Paging: pages of two, after the last id of the page before.
	var paged []int64
	after := int64(0)
	for range 4 {
		page, err := s.ListAuditEvents(ctx, db.AuditFilter{}, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("page of %d, limit 2", len(page))
		}
		for _, e := range page {
			paged = append(paged, e.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(paged, ids) {
		t.Fatalf("paged ids = %v, want %v", paged, ids)
	}
}

// testAuditPrune: events before the bound go, the rest stay; ids keep
// growing after a prune (a page token never meets a reused id).
func testAuditPrune(t *testing.T, s db.Store) {
	ctx := t.Context()
	for i := range 5 {
		if _, err := s.RecordAuditEvent(ctx, db.AuditEvent{Kind: db.AuditStepUp, Time: at.Add(time.Duration(i) * time.Hour), BrandID: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	last := auditAll(t, s)[4].ID
	n, err := s.PruneAuditEvents(ctx, at.Add(3*time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("PruneAuditEvents = %d, %v; want 3", n, err)
	}
	left := auditAll(t, s)
	if len(left) != 2 || !left[0].Time.Equal(at.Add(3*time.Hour).Truncate(time.Second)) {
		t.Fatalf("left = %+v", left)
	}
	if n, err := s.PruneAuditEvents(ctx, at.Add(3*time.Hour)); err != nil || n != 0 {
		t.Fatalf("second prune = %d, %v; want 0", n, err)
	}
	// Prune everything, then record: the new id is past every old one.
	if n, err := s.PruneAuditEvents(ctx, at.Add(24*time.Hour)); err != nil || n != 2 {
		t.Fatalf("prune all = %d, %v; want 2", n, err)
	}
	e, err := s.RecordAuditEvent(ctx, db.AuditEvent{Kind: db.AuditStepUp, Time: at})
	if err != nil || e.ID <= last {
		t.Fatalf("after pruning all: id %d (err %v), want > %d", e.ID, err, last)
	}
}
