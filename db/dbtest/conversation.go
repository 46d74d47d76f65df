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
	t.Run("turn-claims", func(t *testing.T) { t.Parallel(); testTurnClaims(t, newStore(t)) })
	t.Run("concurrent-stale-claims", func(t *testing.T) { t.Parallel(); testConcurrentStaleClaims(t, newStore(t)) })
	t.Run("concurrent-binds", func(t *testing.T) { t.Parallel(); testConcurrentBinds(t, newStore(t)) })
	t.Run("cascade", func(t *testing.T) { t.Parallel(); testConversationCascade(t, newStore(t)) })
}

const (
	ctxA = "0b7f8e3c-2d6a-4c1e-9f0a-1b2c3d4e5f60"
	ctxB = "5a4d3c2b-1e0f-4a9b-8c7d-6e5f4a3b2c1d"
)

// staleAge is the stale-claim age the contract tests claim turns with (the
// store takes the cut-off, staleBefore, from its caller).
const staleAge = 10 * time.Minute

// claim claims messageID in the context at now, taking over a pending
// turn claimed more than staleAge before.
func claim(t *testing.T, s db.Store, contextID, messageID, claimID string, now time.Time) (db.Turn, bool, error) {
	t.Helper()
	return s.ClaimTurn(t.Context(), contextID, messageID, claimID, now, now.Add(-staleAge))
}

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

	tu, claimed, err := claim(t, s, ctxA, "m1", "c-m1", at)
	if err != nil || !claimed || tu.State != db.TurnPending || tu.Role != db.MessageRoleUser || tu.MessageID != "m1" || tu.ContextID != ctxA || tu.Claim != "c-m1" {
		t.Fatalf("ClaimTurn(m1) = %+v, %v, %v; want a claimed pending user turn", tu, claimed, err)
	}
	// A duplicate before the reply sees the pending turn.
	tu, claimed, err = claim(t, s, ctxA, "m1", "c-m1-dup", at)
	if err != nil || claimed || tu.State != db.TurnPending || tu.Role != db.MessageRoleUser || tu.Claim != "c-m1" {
		t.Fatalf("ClaimTurn(m1 again) = %+v, %v, %v; want the pending turn, not claimed", tu, claimed, err)
	}
	// The messageId namespace is per context.
	if _, err := s.CreateConversation(ctx, db.Conversation{ID: ctxB, BrandID: "acme", AgentID: "agt_1", Subject: "user-1", CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	if _, claimed, err := claim(t, s, ctxB, "m1", "c-m1", at); err != nil || !claimed {
		t.Fatalf("ClaimTurn(m1 in another context) = %v, %v; want claimed", claimed, err)
	}
	if _, _, err := claim(t, s, "5a4d3c2b-0000-4a9b-8c7d-6e5f4a3b2c1d", "m1", "c-m1", at); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("ClaimTurn(missing context) err = %v, want ErrNotFound", err)
	}

	reply := `{"message":{"messageId":"r1","contextId":"` + ctxA + `","role":"ROLE_AGENT","parts":[{"text":"hi <&>"}]}}`
	later := at.Add(time.Minute)
	if err := s.CompleteTurn(ctx, ctxA, "m1", "", "r1", reply, later); err != nil {
		t.Fatalf("CompleteTurn: %v", err)
	}
	tu, claimed, err = claim(t, s, ctxA, "m1", "c-m1", later)
	if err != nil || claimed || tu.State != db.TurnReplied || tu.ReplyMessageID != "r1" || tu.ReplyJSON != reply {
		t.Fatalf("ClaimTurn(replied m1) = %+v, %v, %v; want the stored reply byte for byte", tu, claimed, err)
	}
	if c, err := s.GetConversation(ctx, ctxA); err != nil || !c.UpdateTime.Equal(later.Truncate(time.Second)) {
		t.Errorf("context UpdateTime after CompleteTurn = %v, %v; want %v", c.UpdateTime, err, later)
	}
	// The reply id is reserved: a User message may not reuse it.
	tu, claimed, err = claim(t, s, ctxA, "r1", "c-r1", later)
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
	if err := s.CompleteTurn(ctx, ctxA, "m1", "", "r1b", "{}", later); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(replied) err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetTurn(ctx, ctxA, "r1b"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("refused CompleteTurn reserved its reply id: %v", err)
	}
	if err := s.CompleteTurn(ctx, ctxA, "never", "", "r9", "{}", later); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(unclaimed) err = %v, want ErrNotFound", err)
	}
	// A reply id that collides with a User messageId is refused atomically.
	if _, claimed, err := claim(t, s, ctxA, "m2", "c-m2", later); err != nil || !claimed {
		t.Fatalf("ClaimTurn(m2) = %v, %v", claimed, err)
	}
	for _, used := range []string{"m1", "r1", "m2"} {
		if err := s.CompleteTurn(ctx, ctxA, "m2", "", used, "{}", later); !errors.Is(err, db.ErrConflict) {
			t.Errorf("CompleteTurn(reply id %s already used) err = %v, want ErrConflict", used, err)
		}
	}
	if tu, err := s.GetTurn(ctx, ctxA, "m2"); err != nil || tu.State != db.TurnPending {
		t.Fatalf("m2 after refused completions = %+v, %v; want still pending", tu, err)
	}

	// Abandon releases a pending turn only.
	if err := s.AbandonTurn(ctx, ctxA, "m2", ""); err != nil {
		t.Fatalf("AbandonTurn: %v", err)
	}
	if err := s.AbandonTurn(ctx, ctxA, "m2", ""); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("AbandonTurn twice err = %v, want ErrNotFound", err)
	}
	for _, id := range []string{"m1", "r1"} {
		if err := s.AbandonTurn(ctx, ctxA, id, ""); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("AbandonTurn(%s) err = %v, want ErrNotFound", id, err)
		}
	}
	if _, claimed, err := claim(t, s, ctxA, "m2", "c-m2", later); err != nil || !claimed {
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
		for i := range n {
			wg.Go(func() {
				<-start
				tu, claimed, err := claim(t, s, ctxA, msg, fmt.Sprintf("c-%d", i), at)
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

// testTurnClaims: a pending turn's claim may be taken over once it is
// stale, never before and never from a replied turn or an agent row; a
// completion or release under a claim acts on that claim's run only, and
// one without a claim on whichever run holds the turn.
func testTurnClaims(t *testing.T, s db.Store) {
	ctx := t.Context()
	conversationFixture(t, s)
	sec := func(d time.Duration) time.Time { return at.Add(d).Truncate(time.Second).UTC() }
	pending := func(msg, claimID string) {
		t.Helper()
		tu, err := s.GetTurn(ctx, ctxA, msg)
		if err != nil || tu.State != db.TurnPending || tu.Claim != claimID {
			t.Fatalf("GetTurn(%s) = %+v, %v; want pending under claim %q", msg, tu, err, claimID)
		}
	}

	if tu, claimed, err := claim(t, s, ctxA, "m1", "c1", at); err != nil || !claimed || tu.Claim != "c1" {
		t.Fatalf("ClaimTurn(m1, c1) = %+v, %v, %v; want claimed under c1", tu, claimed, err)
	}
	// fail/not yet stale: the claim stays c1 and no row is claimed.
	tu, claimed, err := claim(t, s, ctxA, "m1", "c2", at.Add(staleAge-time.Second))
	if err != nil || claimed || tu.State != db.TurnPending || tu.Claim != "c1" || !tu.UpdateTime.Equal(sec(0)) {
		t.Fatalf("ClaimTurn(m1, c2) before the stale age = %+v, %v, %v; want the pending turn under c1, not claimed", tu, claimed, err)
	}
	// ok/stale: taken over under the new claim, at the new time; first
	// claimed when it was.
	tu, claimed, err = claim(t, s, ctxA, "m1", "c2", at.Add(staleAge+time.Minute))
	if err != nil || !claimed || tu.State != db.TurnPending || tu.Role != db.MessageRoleUser || tu.Claim != "c2" ||
		!tu.UpdateTime.Equal(sec(staleAge+time.Minute)) || !tu.CreateTime.Equal(sec(0)) {
		t.Fatalf("ClaimTurn(m1, c2) after the stale age = %+v, %v, %v; want claimed under c2", tu, claimed, err)
	}
	pending("m1", "c2")
	// fail/the run it was taken from: neither its completion nor its
	// release changes anything (and the reply id stays free).
	later := at.Add(staleAge + 2*time.Minute)
	if err := s.CompleteTurn(ctx, ctxA, "m1", "c1", "r1", `{"old":1}`, later); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(m1, old claim c1) err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetTurn(ctx, ctxA, "r1"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn under the old claim reserved its reply id: %v", err)
	}
	if err := s.AbandonTurn(ctx, ctxA, "m1", "c1"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("AbandonTurn(m1, old claim c1) err = %v, want ErrNotFound", err)
	}
	if err := s.AbandonTurn(ctx, ctxA, "m1", "nope"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("AbandonTurn(m1, unknown claim) err = %v, want ErrNotFound", err)
	}
	pending("m1", "c2")
	// ok/the claim's own run completes it.
	reply := `{"message":{"messageId":"r1"}}`
	if err := s.CompleteTurn(ctx, ctxA, "m1", "c2", "r1", reply, later); err != nil {
		t.Fatalf("CompleteTurn(m1, c2): %v", err)
	}
	// fail/a replied turn is never claimed again, however old; the replay
	// is the stored reply.
	for _, msg := range []string{"m1", "r1"} {
		tu, claimed, err := claim(t, s, ctxA, msg, "c3", later.Add(24*time.Hour))
		if err != nil || claimed || tu.State != db.TurnReplied {
			t.Fatalf("ClaimTurn(%s) a day later = %+v, %v, %v; want the replied row, not claimed", msg, tu, claimed, err)
		}
		if msg == "m1" && (tu.Claim != "c2" || tu.ReplyJSON != reply || tu.ReplyMessageID != "r1") {
			t.Fatalf("ClaimTurn(replied m1) = %+v; want the stored reply under c2", tu)
		}
		if msg == "r1" && tu.Role != db.MessageRoleAgent {
			t.Fatalf("ClaimTurn(agent reply id) = %+v; want the agent row", tu)
		}
	}
	// fail/completing a replied turn again, with its own claim.
	if err := s.CompleteTurn(ctx, ctxA, "m1", "c2", "r1x", reply, later); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(replied m1, c2) err = %v, want ErrNotFound", err)
	}

	// Release: a wrong claim changes nothing, the right one releases.
	if _, claimed, err := claim(t, s, ctxA, "m2", "d1", at); err != nil || !claimed {
		t.Fatalf("ClaimTurn(m2, d1) = %v, %v", claimed, err)
	}
	if err := s.AbandonTurn(ctx, ctxA, "m2", "d2"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("AbandonTurn(m2, wrong claim) err = %v, want ErrNotFound", err)
	}
	if err := s.CompleteTurn(ctx, ctxA, "m2", "d2", "r2", "{}", at); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(m2, wrong claim) err = %v, want ErrNotFound", err)
	}
	pending("m2", "d1")
	if err := s.AbandonTurn(ctx, ctxA, "m2", "d1"); err != nil {
		t.Fatalf("AbandonTurn(m2, d1): %v", err)
	}
	if _, err := s.GetTurn(ctx, ctxA, "m2"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("m2 after its release: err = %v, want ErrNotFound", err)
	}
	// ok/the next run of m2 has its own claim; the released run's claim
	// cannot finish it.
	if tu, claimed, err := claim(t, s, ctxA, "m2", "d3", at); err != nil || !claimed || tu.Claim != "d3" {
		t.Fatalf("ClaimTurn(released m2, d3) = %+v, %v, %v; want claimed under d3", tu, claimed, err)
	}
	if err := s.CompleteTurn(ctx, ctxA, "m2", "d1", "r2", "{}", at); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(m2, released claim d1) err = %v, want ErrNotFound", err)
	}
	pending("m2", "d3")

	// An empty claim completes or releases whichever run holds the turn,
	// as callers from before claims do.
	if _, claimed, err := claim(t, s, ctxA, "m3", "e1", at); err != nil || !claimed {
		t.Fatalf("ClaimTurn(m3) = %v, %v", claimed, err)
	}
	if err := s.CompleteTurn(ctx, ctxA, "m3", "", "r3", "{}", at); err != nil {
		t.Errorf("CompleteTurn(m3, no claim): %v", err)
	}
	if tu, err := s.GetTurn(ctx, ctxA, "m3"); err != nil || tu.State != db.TurnReplied || tu.Claim != "e1" {
		t.Errorf("m3 after CompleteTurn without a claim = %+v, %v; want replied, claim e1 kept", tu, err)
	}
	if err := s.AbandonTurn(ctx, ctxA, "m2", ""); err != nil {
		t.Errorf("AbandonTurn(m2, no claim): %v", err)
	}
	// A turn claimed before claims had ids (claim '') is finished without
	// one, and taken over like any other once stale.
	if _, claimed, err := claim(t, s, ctxA, "m4", "", at); err != nil || !claimed {
		t.Fatalf("ClaimTurn(m4, no claim id) = %v, %v", claimed, err)
	}
	if err := s.CompleteTurn(ctx, ctxA, "m4", "f1", "r4", "{}", at); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("CompleteTurn(m4 without claim id, claim f1) err = %v, want ErrNotFound", err)
	}
	if tu, claimed, err := claim(t, s, ctxA, "m4", "f1", at.Add(staleAge+time.Minute)); err != nil || !claimed || tu.Claim != "f1" {
		t.Fatalf("ClaimTurn(stale m4 without claim id) = %+v, %v, %v; want claimed under f1", tu, claimed, err)
	}
}

// testConcurrentStaleClaims: of many concurrent claims of one stale
// pending turn exactly one takes it over; the others see the winner's
// claim.
func testConcurrentStaleClaims(t *testing.T, s db.Store) {
	conversationFixture(t, s)
	const n = 16
	for round := range 3 {
		msg := fmt.Sprintf("stale-%d", round)
		if _, claimed, err := claim(t, s, ctxA, msg, "dead", at); err != nil || !claimed {
			t.Fatalf("ClaimTurn(%s) = %v, %v", msg, claimed, err)
		}
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			winner string
			seen   []string
			errs   []error
		)
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				id := fmt.Sprintf("c-%d", i)
				tu, claimed, err := claim(t, s, ctxA, msg, id, at.Add(staleAge+time.Minute))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case claimed && winner != "":
					errs = append(errs, fmt.Errorf("both %s and %s took the turn over", winner, id))
				case claimed:
					winner = id
				case tu.State != db.TurnPending:
					errs = append(errs, fmt.Errorf("loser saw state %q, want pending", tu.State))
				default:
					seen = append(seen, tu.Claim)
				}
			})
		}
		close(start)
		wg.Wait()
		if winner == "" || len(errs) > 0 {
			t.Fatalf("round %d: no claim won or errors: %v", round, errs)
		}
		for _, c := range seen {
			if c != winner {
				t.Fatalf("round %d: a loser saw claim %q; want the winner's %q", round, c, winner)
			}
		}
		if tu, err := s.GetTurn(t.Context(), ctxA, msg); err != nil || tu.Claim != winner {
			t.Fatalf("round %d: stored %+v, %v; want the winner's claim %q", round, tu, err, winner)
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
	if _, _, err := claim(t, s, ctxA, "m1", "c1", at); err != nil {
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
