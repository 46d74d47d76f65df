package dbtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// runConversations is the contract of db.ConversationStore.
func runConversations(t *testing.T, newStore Factory) {
	t.Run("contexts", func(t *testing.T) { t.Parallel(); testConversationContexts(t, newStore(t)) })
	t.Run("turns", func(t *testing.T) { t.Parallel(); testConversationTurns(t, newStore(t)) })
	t.Run("concurrent-claims", func(t *testing.T) { t.Parallel(); testConcurrentClaims(t, newStore(t)) })
	t.Run("concurrent-binds", func(t *testing.T) { t.Parallel(); testConcurrentBinds(t, newStore(t)) })
	t.Run("cascade", func(t *testing.T) { t.Parallel(); testConversationCascade(t, newStore(t)) })
}

const (
	ctxA = "0b7f8e3c-2d6a-4c1e-9f0a-1b2c3d4e5f60"
	ctxB = "5a4d3c2b-1e0f-4a9b-8c7d-6e5f4a3b2c1d"
)

// conversationFixture creates a Brand, an agent and one open context ctxA.
func conversationFixture(t *testing.T, s db.Store) db.Conversation {
	t.Helper()
	ctx := t.Context()
	if _, err := s.CreateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Acme", CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatalf("CreateBrand: %v", err)
	}
	mustAgent(t, s, "agt_1", "https://pa.example")
	c, err := s.CreateConversation(ctx, db.Conversation{ID: ctxA, BrandID: "acme", AgentID: "agt_1", Subject: "user-1", CreateTime: at, UpdateTime: at})
	if err != nil {
		t.Fatalf("CreateConversation: %v", err)
	}
	return c
}

func testConversationContexts(t *testing.T, s db.Store) {
	ctx := t.Context()
	c := conversationFixture(t, s)
	want := db.Conversation{ID: ctxA, BrandID: "acme", AgentID: "agt_1", Subject: "user-1",
		CreateTime: at.Truncate(time.Second).UTC(), UpdateTime: at.Truncate(time.Second).UTC()}
	if c != want || c.Closed() {
		t.Fatalf("CreateConversation = %+v, want %+v (open)", c, want)
	}
	if got, err := s.GetConversation(ctx, ctxA); err != nil || got != c {
		t.Fatalf("GetConversation = %+v, %v; want %+v", got, err, c)
	}
	if _, err := s.GetConversation(ctx, ctxB); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetConversation(missing) err = %v, want ErrNotFound", err)
	}
	if _, err := s.CreateConversation(ctx, c); !errors.Is(err, db.ErrConflict) {
		t.Errorf("CreateConversation(same id) err = %v, want ErrConflict", err)
	}
	for name, bad := range map[string]db.Conversation{
		"unknown-brand": {ID: ctxB, BrandID: "nope", AgentID: "agt_1", Subject: "s", CreateTime: at, UpdateTime: at},
		"unknown-agent": {ID: ctxB, BrandID: "acme", AgentID: "agt_nope", Subject: "s", CreateTime: at, UpdateTime: at},
	} {
		if _, err := s.CreateConversation(ctx, bad); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("CreateConversation(%s) err = %v, want ErrNotFound", name, err)
		}
	}

	// The Brand user binds once; a second bind reports the first.
	later := at.Add(time.Minute)
	got, err := s.BindConversationUser(ctx, ctxA, "brand-user-x", later)
	if err != nil || got.BrandUser != "brand-user-x" || !got.UpdateTime.Equal(later.Truncate(time.Second)) {
		t.Fatalf("BindConversationUser = %+v, %v; want bound to brand-user-x at %v", got, err, later)
	}
	got, err = s.BindConversationUser(ctx, ctxA, "brand-user-y", later.Add(time.Minute))
	if err != nil || got.BrandUser != "brand-user-x" {
		t.Fatalf("second BindConversationUser = %+v, %v; want still brand-user-x", got, err)
	}
	if _, err := s.BindConversationUser(ctx, ctxB, "u", later); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("BindConversationUser(missing) err = %v, want ErrNotFound", err)
	}
	// A context created bound stays bound.
	c2, err := s.CreateConversation(ctx, db.Conversation{ID: ctxB, BrandID: "acme", AgentID: "agt_1", Subject: "user-1", BrandUser: "bu", CreateTime: at, UpdateTime: at})
	if err != nil || c2.BrandUser != "bu" {
		t.Fatalf("CreateConversation(bound) = %+v, %v", c2, err)
	}
	if got, err := s.BindConversationUser(ctx, ctxB, "other", later); err != nil || got.BrandUser != "bu" {
		t.Fatalf("BindConversationUser(created bound) = %+v, %v; want bu", got, err)
	}

	// Closing is idempotent and keeps the first close time.
	closeAt := at.Add(time.Hour)
	if err := s.CloseConversation(ctx, ctxA, closeAt); err != nil {
		t.Fatalf("CloseConversation: %v", err)
	}
	if err := s.CloseConversation(ctx, ctxA, closeAt.Add(time.Hour)); err != nil {
		t.Fatalf("CloseConversation twice: %v", err)
	}
	got, err = s.GetConversation(ctx, ctxA)
	if err != nil || !got.Closed() || !got.CloseTime.Equal(closeAt.Truncate(time.Second)) || got.CloseTime.Location() != time.UTC {
		t.Fatalf("closed conversation = %+v, %v; want CloseTime %v UTC", got, err, closeAt)
	}
	if err := s.CloseConversation(ctx, "0b7f8e3c-0000-4c1e-9f0a-1b2c3d4e5f60", closeAt); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CloseConversation(missing) err = %v, want ErrNotFound", err)
	}
}

func testConversationTurns(t *testing.T, s db.Store) {
	ctx := t.Context()
	conversationFixture(t, s)

	tu, claimed, err := s.ClaimTurn(ctx, ctxA, "m1", at)
	if err != nil || !claimed || tu.State != db.TurnPending || tu.Role != db.MessageRoleUser || tu.MessageID != "m1" || tu.ContextID != ctxA {
		t.Fatalf("ClaimTurn(m1) = %+v, %v, %v; want a claimed pending user turn", tu, claimed, err)
	}
	// A duplicate before the reply sees the pending turn.
	tu, claimed, err = s.ClaimTurn(ctx, ctxA, "m1", at)
	if err != nil || claimed || tu.State != db.TurnPending || tu.Role != db.MessageRoleUser {
		t.Fatalf("ClaimTurn(m1 again) = %+v, %v, %v; want the pending turn, not claimed", tu, claimed, err)
	}
	// The messageId namespace is per context.
	if _, err := s.CreateConversation(ctx, db.Conversation{ID: ctxB, BrandID: "acme", AgentID: "agt_1", Subject: "user-1", CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	if _, claimed, err := s.ClaimTurn(ctx, ctxB, "m1", at); err != nil || !claimed {
		t.Fatalf("ClaimTurn(m1 in another context) = %v, %v; want claimed", claimed, err)
	}
	if _, _, err := s.ClaimTurn(ctx, "5a4d3c2b-0000-4a9b-8c7d-6e5f4a3b2c1d", "m1", at); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("ClaimTurn(missing context) err = %v, want ErrNotFound", err)
	}

	reply := `{"message":{"messageId":"r1","contextId":"` + ctxA + `","role":"ROLE_AGENT","parts":[{"text":"hi <&>"}]}}`
	later := at.Add(time.Minute)
	if err := s.CompleteTurn(ctx, ctxA, "m1", "r1", reply, later); err != nil {
		t.Fatalf("CompleteTurn: %v", err)
	}
	tu, claimed, err = s.ClaimTurn(ctx, ctxA, "m1", later)
	if err != nil || claimed || tu.State != db.TurnReplied || tu.ReplyMessageID != "r1" || tu.ReplyJSON != reply {
		t.Fatalf("ClaimTurn(replied m1) = %+v, %v, %v; want the stored reply byte for byte", tu, claimed, err)
	}
	if c, err := s.GetConversation(ctx, ctxA); err != nil || !c.UpdateTime.Equal(later.Truncate(time.Second)) {
		t.Errorf("context UpdateTime after CompleteTurn = %v, %v; want %v", c.UpdateTime, err, later)
	}
	// The reply id is reserved: a User message may not reuse it.
	tu, claimed, err = s.ClaimTurn(ctx, ctxA, "r1", later)
	if err != nil || claimed || tu.Role != db.MessageRoleAgent {
		t.Fatalf("ClaimTurn(agent reply id) = %+v, %v, %v; want the agent row, not claimed", tu, claimed, err)
	}
	if got, err := s.GetTurn(ctx, ctxA, "r1"); err != nil || got.Role != db.MessageRoleAgent || got.State != db.TurnReplied {
		t.Fatalf("GetTurn(r1) = %+v, %v", got, err)
	}
	if _, err := s.GetTurn(ctx, ctxA, "nope"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetTurn(missing) err = %v, want ErrNotFound", err)
	}

	// Completing twice, or a turn never claimed, changes nothing.
	if err := s.CompleteTurn(ctx, ctxA, "m1", "r1b", "{}", later); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(replied) err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetTurn(ctx, ctxA, "r1b"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("refused CompleteTurn reserved its reply id: %v", err)
	}
	if err := s.CompleteTurn(ctx, ctxA, "never", "r9", "{}", later); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(unclaimed) err = %v, want ErrNotFound", err)
	}
	// A reply id that collides with a User messageId is refused atomically.
	if _, claimed, err := s.ClaimTurn(ctx, ctxA, "m2", later); err != nil || !claimed {
		t.Fatalf("ClaimTurn(m2) = %v, %v", claimed, err)
	}
	for _, used := range []string{"m1", "r1", "m2"} {
		if err := s.CompleteTurn(ctx, ctxA, "m2", used, "{}", later); !errors.Is(err, db.ErrConflict) {
			t.Errorf("CompleteTurn(reply id %s already used) err = %v, want ErrConflict", used, err)
		}
	}
	if tu, err := s.GetTurn(ctx, ctxA, "m2"); err != nil || tu.State != db.TurnPending {
		t.Fatalf("m2 after refused completions = %+v, %v; want still pending", tu, err)
	}

	// Abandon releases a pending turn only.
	if err := s.AbandonTurn(ctx, ctxA, "m2"); err != nil {
		t.Fatalf("AbandonTurn: %v", err)
	}
	if err := s.AbandonTurn(ctx, ctxA, "m2"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("AbandonTurn twice err = %v, want ErrNotFound", err)
	}
	for _, id := range []string{"m1", "r1"} {
		if err := s.AbandonTurn(ctx, ctxA, id); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("AbandonTurn(%s) err = %v, want ErrNotFound", id, err)
		}
	}
	if _, claimed, err := s.ClaimTurn(ctx, ctxA, "m2", later); err != nil || !claimed {
		t.Fatalf("ClaimTurn(abandoned m2) = %v, %v; want claimed again", claimed, err)
	}
}

// testConcurrentClaims: of many concurrent claims of one messageId exactly
// one wins, so the agent runs once.
func testConcurrentClaims(t *testing.T, s db.Store) {
	conversationFixture(t, s)
	const n = 16
	for round := range 3 {
		msg := fmt.Sprintf("dup-%d", round)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners int
			errs    []error
		)
		start := make(chan struct{})
		for range n {
			wg.Go(func() {
				<-start
				tu, claimed, err := s.ClaimTurn(t.Context(), ctxA, msg, at)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case claimed:
					winners++
				case tu.State != db.TurnPending:
					errs = append(errs, fmt.Errorf("loser saw state %q, want pending", tu.State))
				}
			})
		}
		close(start)
		wg.Wait()
		if winners != 1 || len(errs) > 0 {
			t.Fatalf("round %d: %d of %d concurrent claims won (want 1); errors: %v", round, winners, n, errs)
		}
	}
}

// testConcurrentBinds: concurrent binds to different Brand users agree on one.
func testConcurrentBinds(t *testing.T, s db.Store) {
	conversationFixture(t, s)
	const n = 12
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		saw = map[string]int{}
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			c, err := s.BindConversationUser(t.Context(), ctxA, fmt.Sprintf("bu-%d", i), at)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				saw["error: "+err.Error()]++
				return
			}
			saw[c.BrandUser]++
		})
	}
	close(start)
	wg.Wait()
	if len(saw) != 1 {
		t.Fatalf("concurrent binds saw %v; want every call to report the same Brand user", saw)
	}
	c, err := s.GetConversation(t.Context(), ctxA)
	if err != nil || saw[c.BrandUser] != n {
		t.Fatalf("stored Brand user %q (%v); calls saw %v", c.BrandUser, err, saw)
	}
}

// testConversationCascade: deleting an agent deletes its contexts and turns.
func testConversationCascade(t *testing.T, s db.Store) {
	ctx := t.Context()
	conversationFixture(t, s)
	if _, _, err := s.ClaimTurn(ctx, ctxA, "m1", at); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAgent(ctx, "agt_1"); err != nil {
		t.Fatalf("DeleteAgent with a conversation: %v", err)
	}
	if _, err := s.GetConversation(ctx, ctxA); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("conversation of a deleted agent: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetTurn(ctx, ctxA, "m1"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("turn of a deleted agent: err = %v, want ErrNotFound", err)
	}
}
