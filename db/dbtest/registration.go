package dbtest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

func runRegistration(t *testing.T, newStore Factory) {
	t.Run("registration", func(t *testing.T) { t.Parallel(); testRegistration(t, newStore(t)) })
	t.Run("registration/race", func(t *testing.T) { t.Parallel(); testRegistrationRace(t, newStore(t)) })
}

func selfReg(id, name, issuer, jti string, now time.Time) db.SelfRegistration {
	return db.SelfRegistration{
		Name: name, JTI: jti, JTIExpire: now.Add(5 * time.Minute), Now: now,
		Agent: db.Agent{ID: id, Issuer: issuer, JWKSURI: issuer + "/jwks.json", DisplayName: name, Enabled: false, CreateTime: now, UpdateTime: now},
	}
}

// state is what a refusal must leave unchanged: the agents and the jti count.
func state(t *testing.T, s db.Store) ([]db.Agent, int64) {
	t.Helper()
	list, err := s.ListAgents(t.Context(), "", 100)
	if err != nil {
		t.Fatalf("ListAgents: %v", err)
	}
	n, err := s.CountRegistrationJTIs(t.Context())
	if err != nil {
		t.Fatalf("CountRegistrationJTIs: %v", err)
	}
	return list, n
}

func testRegistration(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Truncate(time.Second).UTC()
	// Positive control: a new registration creates the agent and its name.
	a, created, err := s.SelfRegisterAgent(ctx, selfReg("agt_r1", "pa-one", "https://one.example", "j1", now))
	if err != nil || !created || a.ID != "agt_r1" || a.Enabled {
		t.Fatalf("SelfRegisterAgent = %+v, %v, %v; want agt_r1 created, pending", a, created, err)
	}
	if name, err := s.GetAgentRegistrationName(ctx, "agt_r1"); err != nil || name != "pa-one" {
		t.Fatalf("GetAgentRegistrationName = %q, %v; want pa-one", name, err)
	}
	mustAgent(t, s, "agt_op", "https://op.example")
	if _, err := s.GetAgentRegistrationName(ctx, "agt_op"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("GetAgentRegistrationName(operator agent) = %v; want ErrNotFound", err)
	}
	agents0, jtis0 := state(t, s)
	if jtis0 != 1 {
		t.Fatalf("jtis = %d after one registration, want 1", jtis0)
	}
	refusals := []struct {
		name string
		r    db.SelfRegistration
		want error
	}{
		{"replayed jti", selfReg("agt_r2", "pa-two", "https://one.example", "j1", now), db.ErrReplay},
		{"name taken by another issuer", selfReg("agt_r2", "pa-one", "https://two.example", "j2", now), db.ErrNameTaken},
		{"issuer taken under another name", selfReg("agt_r2", "pa-other", "https://one.example", "j3", now), db.ErrIssuerTaken},
		{"issuer registered by an operator", selfReg("agt_r2", "pa-op", "https://op.example", "j4", now), db.ErrIssuerTaken},
	}
	for _, tc := range refusals {
		if _, _, err := s.SelfRegisterAgent(ctx, tc.r); !errors.Is(err, tc.want) {
			t.Fatalf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		agents, jtis := state(t, s)
		if len(agents) != len(agents0) || jtis != jtis0 {
			t.Fatalf("%s: refusal stored something: %d agents (want %d), %d jtis (want %d)", tc.name, len(agents), len(agents0), jtis, jtis0)
		}
	}
	// Identical registration with a fresh jti: the existing agent, jti consumed.
	got, created, err := s.SelfRegisterAgent(ctx, selfReg("agt_r3", "pa-one", "https://one.example", "j5", now))
	if err != nil || created || got.ID != "agt_r1" {
		t.Fatalf("identical SelfRegisterAgent = %+v, %v, %v; want agt_r1 not created", got, created, err)
	}
	if _, jtis := state(t, s); jtis != 2 {
		t.Fatalf("jtis = %d after an idempotent registration, want 2", jtis)
	}
	// A jti past its expiry is pruned and may be used again (its token is
	// expired by then, so only the clock made this possible).
	later := now.Add(10 * time.Minute)
	if _, _, err := s.SelfRegisterAgent(ctx, selfReg("agt_r4", "pa-one", "https://one.example", "j1", later)); err != nil {
		t.Fatalf("SelfRegisterAgent after jti expiry: %v", err)
	}
	if _, jtis := state(t, s); jtis != 1 {
		t.Fatalf("jtis = %d after pruning, want 1", jtis)
	}
	// Deleting the agent frees its name.
	if err := s.DeleteAgent(ctx, "agt_r1"); err != nil {
		t.Fatal(err)
	}
	if _, created, err := s.SelfRegisterAgent(ctx, selfReg("agt_r5", "pa-one", "https://five.example", "j6", later)); err != nil || !created {
		t.Fatalf("SelfRegisterAgent after delete = %v, %v; want created", created, err)
	}
}

// testRegistrationRace: many callers with one jti; exactly one is accepted.
func testRegistrationRace(t *testing.T, s db.Store) {
	now := at.Truncate(time.Second).UTC()
	const n = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted int
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := s.SelfRegisterAgent(t.Context(), selfReg("agt_x"+string(rune('a'+i)), "pa-race", "https://race.example", "same", now))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				accepted++
			case errors.Is(err, db.ErrReplay), errors.Is(err, db.ErrConflict):
			default:
				t.Errorf("SelfRegisterAgent: %v", err)
			}
		}()
	}
	wg.Wait()
	if accepted != 1 {
		t.Fatalf("%d of %d callers with one jti were accepted, want exactly 1", accepted, n)
	}
	if agents, jtis := state(t, s); len(agents) != 1 || jtis != 1 {
		t.Fatalf("after the race: %d agents, %d jtis; want 1 and 1", len(agents), jtis)
	}
}
