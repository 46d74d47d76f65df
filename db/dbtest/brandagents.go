package dbtest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// runBrandAgents is the per-Brand agent policy part of the contract
// (migration 0011).
func runBrandAgents(t *testing.T, newStore Factory) {
	t.Run("brand-agents/policy-and-list", func(t *testing.T) { t.Parallel(); testBrandAgents(t, newStore(t)) })
	t.Run("brand-agents/feed", func(t *testing.T) { t.Parallel(); testBrandAgentsFeed(t, newStore(t)) })
	t.Run("brand-agents/concurrent-adds-bounded", func(t *testing.T) { t.Parallel(); testBrandAgentsBound(t, newStore(t)) })
}

// A Brand starts admitting every PA; the listed policy admits exactly the
// listed ones (GetBrand loads the list), adding twice changes nothing,
// unknown Brands and agents are ErrNotFound and change nothing, and
// deleting an agent takes it off the list.
func testBrandAgents(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustAgent(t, s, "agt_1", "https://pa1.example")
	mustAgent(t, s, "agt_2", "https://pa2.example")
	mustAgent(t, s, "agt_3", "https://pa3.example")
	b, err := s.CreateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Acme", CreateTime: at, UpdateTime: at})
	if err != nil {
		t.Fatal(err)
	}
	if b.AgentPolicy != db.AgentPolicyAll || !b.Admits("agt_1") {
		t.Fatalf("new Brand policy %q admits agt_1 %v; want all, true", b.AgentPolicy, b.Admits("agt_1"))
	}
	for _, id := range []string{"agt_2", "agt_1"} {
		if added, err := s.AddBrandAgent(ctx, "acme", id, at); err != nil || !added {
			t.Fatalf("AddBrandAgent(%s) = %v, %v", id, added, err)
		}
	}
	if added, err := s.AddBrandAgent(ctx, "acme", "agt_1", at.Add(time.Hour)); err != nil || added {
		t.Fatalf("AddBrandAgent twice = %v, %v; want false, nil", added, err)
	}
	if _, err := s.AddBrandAgent(ctx, "nope", "agt_1", at); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("AddBrandAgent(unknown Brand) err = %v, want ErrNotFound", err)
	}
	if _, err := s.AddBrandAgent(ctx, "acme", "agt_9", at); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("AddBrandAgent(unknown agent) err = %v, want ErrNotFound", err)
	}
	// Still "all": the list is kept but not applied, and GetBrand leaves it out.
	got, err := s.GetBrand(ctx, "acme")
	if err != nil || got.AgentPolicy != db.AgentPolicyAll || got.Agents != nil || !got.Admits("agt_3") {
		t.Fatalf("GetBrand under all = %+v, %v", got, err)
	}
	if b, err = s.SetBrandAgentPolicy(ctx, "acme", db.AgentPolicyListed, at.Add(time.Minute)); err != nil || b.AgentPolicy != db.AgentPolicyListed ||
		!b.UpdateTime.Equal(at.Add(time.Minute).Truncate(time.Second)) {
		t.Fatalf("SetBrandAgentPolicy = %+v, %v", b, err)
	}
	got, err = s.GetBrand(ctx, "acme")
	if err != nil || !slices.Equal(got.Agents, []string{"agt_1", "agt_2"}) {
		t.Fatalf("GetBrand under listed: agents %v, %v; want [agt_1 agt_2]", got.Agents, err)
	}
	if !got.Admits("agt_1") || !got.Admits("agt_2") || got.Admits("agt_3") || got.Admits("") {
		t.Fatalf("listed Brand admits agt_1 %v agt_2 %v agt_3 %v \"\" %v; want true true false false", got.Admits("agt_1"), got.Admits("agt_2"), got.Admits("agt_3"), got.Admits(""))
	}
	// UpdateBrand writes every other field and leaves the policy.
	got.DisplayName = "Acme 2"
	if u, err := s.UpdateBrand(ctx, got); err != nil || u.AgentPolicy != db.AgentPolicyListed {
		t.Fatalf("UpdateBrand = %+v, %v; the policy must stay listed", u, err)
	}
	page, err := s.ListBrandAgents(ctx, "acme", "", 1)
	if err != nil || len(page) != 1 || page[0].AgentID != "agt_1" || page[0].DisplayName != "PA agt_1" || !page[0].AddTime.Equal(at.Truncate(time.Second)) {
		t.Fatalf("ListBrandAgents page 1 = %+v, %v", page, err)
	}
	if page, err = s.ListBrandAgents(ctx, "acme", "agt_1", 10); err != nil || len(page) != 1 || page[0].AgentID != "agt_2" {
		t.Fatalf("ListBrandAgents page 2 = %+v, %v", page, err)
	}
	if err := s.RemoveBrandAgent(ctx, "acme", "agt_2"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveBrandAgent(ctx, "acme", "agt_2"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("RemoveBrandAgent twice err = %v, want ErrNotFound", err)
	}
	if err := s.DeleteAgent(ctx, "agt_1"); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetBrand(ctx, "acme"); err != nil || got.Agents == nil || len(got.Agents) != 0 || got.Admits("agt_1") {
		t.Fatalf("after removing agt_2 and deleting agt_1: agents %#v, %v; want an empty list that admits none", got.Agents, err)
	}
	if _, err := s.SetBrandAgentPolicy(ctx, "nope", db.AgentPolicyListed, at); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("SetBrandAgentPolicy(unknown) err = %v", err)
	}
	if b, err = s.SetBrandAgentPolicy(ctx, "acme", db.AgentPolicyAll, at); err != nil || !b.Admits("agt_3") {
		t.Fatalf("back to all = %+v, %v", b, err)
	}
}

// Each change of the policy or the list appends one change of its Brand,
// so replicas drop the Brand; refused changes append nothing.
func testBrandAgentsFeed(t *testing.T, s db.Store) {
	ctx := t.Context()
	mustAgent(t, s, "agt_1", "https://pa1.example")
	if _, err := s.CreateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Acme", CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	r := &feedReader{t: t, s: s}
	r.expect("setup", false, "agents:https://pa1.example", "brands:acme")
	if _, err := s.SetBrandAgentPolicy(ctx, "acme", db.AgentPolicyListed, at); err != nil {
		t.Fatal(err)
	}
	r.expect("SetBrandAgentPolicy", true, "brands:acme")
	if _, err := s.AddBrandAgent(ctx, "acme", "agt_1", at); err != nil {
		t.Fatal(err)
	}
	r.expect("AddBrandAgent", true, "brands:acme")
	if _, err := s.AddBrandAgent(ctx, "acme", "agt_1", at); err != nil {
		t.Fatal(err)
	}
	r.expect("AddBrandAgent(again)", true)
	if _, err := s.AddBrandAgent(ctx, "acme", "agt_9", at); !errors.Is(err, db.ErrNotFound) {
		t.Fatal(err)
	}
	r.expect("AddBrandAgent(unknown agent)", true)
	if _, err := s.ListBrandAgents(ctx, "acme", "", 10); err != nil {
		t.Fatal(err)
	}
	r.expect("ListBrandAgents", true)
	if err := s.RemoveBrandAgent(ctx, "acme", "agt_1"); err != nil {
		t.Fatal(err)
	}
	r.expect("RemoveBrandAgent", true, "brands:acme")
	if err := s.RemoveBrandAgent(ctx, "acme", "agt_1"); !errors.Is(err, db.ErrNotFound) {
		t.Fatal(err)
	}
	r.expect("RemoveBrandAgent(absent)", true)
	// Deleting a listed agent takes it off the list: its Brand changes too.
	if _, err := s.AddBrandAgent(ctx, "acme", "agt_1", at); err != nil {
		t.Fatal(err)
	}
	r.expect("AddBrandAgent(back)", true, "brands:acme")
	if err := s.DeleteAgent(ctx, "agt_1"); err != nil {
		t.Fatal(err)
	}
	r.expect("DeleteAgent(listed)", false, "agents:https://pa1.example", "brands:acme")
}

// Adds racing for the last places of a full list never push it past
// db.MaxBrandAgents: exactly the free places are taken, the rest are
// ErrFull, and an agent already listed is still added "again" (false, nil).
func testBrandAgentsBound(t *testing.T, s db.Store) {
	ctx := t.Context()
	if _, err := s.CreateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Acme", CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	const free, racers = 3, 12
	for i := range db.MaxBrandAgents - free + racers {
		mustAgent(t, s, fmt.Sprintf("agt_%04d", i), fmt.Sprintf("https://pa%04d.example", i))
	}
	for i := range db.MaxBrandAgents - free {
		if _, err := s.AddBrandAgent(ctx, "acme", fmt.Sprintf("agt_%04d", i), at); err != nil {
			t.Fatal(err)
		}
	}
	var added, full atomic.Int64
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			ok, err := s.AddBrandAgent(ctx, "acme", fmt.Sprintf("agt_%04d", db.MaxBrandAgents-free+i), at)
			switch {
			case errors.Is(err, db.ErrFull):
				full.Add(1)
			case err != nil:
				t.Errorf("AddBrandAgent: %v", err)
			case ok:
				added.Add(1)
			}
		})
	}
	wg.Wait()
	if added.Load() != free || full.Load() != racers-free {
		t.Fatalf("racing adds: %d added, %d full; want %d, %d", added.Load(), full.Load(), free, racers-free)
	}
	if ok, err := s.AddBrandAgent(ctx, "acme", "agt_0000", at); err != nil || ok {
		t.Fatalf("AddBrandAgent(listed) on a full list = %v, %v; want false, nil", ok, err)
	}
	if _, err := s.SetBrandAgentPolicy(ctx, "acme", db.AgentPolicyListed, at); err != nil {
		t.Fatal(err)
	}
	if b, err := s.GetBrand(ctx, "acme"); err != nil || len(b.Agents) != db.MaxBrandAgents {
		t.Fatalf("list holds %d, %v; want %d", len(b.Agents), err, db.MaxBrandAgents)
	}
}
