package conversation_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/services/conversation"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var clock = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// withService runs f once per store engine (dbtest.Engines), each with a
// fresh store holding two Brands (acme, beta) and two agents (agt_1, agt_2).
func withService(t *testing.T, f func(t *testing.T, c pactv1connect.ConversationServiceClient)) {
	withClockedService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient, _ *testclock.Clock) { f(t, c) })
}

// withClockedService is withService with the service's clock, which reads
// clock until the test moves it.
func withClockedService(t *testing.T, f func(t *testing.T, c pactv1connect.ConversationServiceClient, clk *testclock.Clock)) {
	dbtest.Engines(t, func(t *testing.T, url string) {
		s := dbtest.Open(t, url, t.TempDir())
		for _, b := range []string{"acme", "beta"} {
			if _, err := s.CreateBrand(t.Context(), db.Brand{ID: b, DisplayName: b, CreateTime: clock, UpdateTime: clock}); err != nil {
				t.Fatal(err)
			}
		}
		for _, a := range []string{"agt_1", "agt_2"} {
			if _, err := s.CreateAgent(t.Context(), db.Agent{ID: a, Issuer: "https://" + a + ".example", JWKSURI: "https://" + a + ".example/j", DisplayName: a, Enabled: true, CreateTime: clock, UpdateTime: clock}); err != nil {
				t.Fatal(err)
			}
		}
		clk := testclock.New(clock)
		svc := conversation.New(conversation.Deps{Store: s, Now: clk.Now})
		mux := http.NewServeMux()
		mux.Handle(pactv1connect.NewConversationServiceHandler(svc))
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		f(t, pactv1connect.NewConversationServiceClient(srv.Client(), srv.URL), clk)
	})
}

var alice = &pactv1.Owner{BrandId: "acme", AgentId: "agt_1", Subject: "alice"}

func begin(t *testing.T, c pactv1connect.ConversationServiceClient, o *pactv1.Owner, contextID, messageID, brandUser string) *pactv1.BeginTurnResponse {
	t.Helper()
	r, err := c.BeginTurn(t.Context(), &pactv1.BeginTurnRequest{Owner: o, ContextId: contextID, MessageId: messageID, BrandUser: brandUser})
	if err != nil {
		t.Fatalf("BeginTurn(%s, %s): %v", contextID, messageID, err)
	}
	return r
}

func complete(t *testing.T, c pactv1connect.ConversationServiceClient, o *pactv1.Owner, contextID, messageID, replyID, body string) {
	t.Helper()
	if _, err := c.CompleteTurn(t.Context(), &pactv1.CompleteTurnRequest{Owner: o, ContextId: contextID, MessageId: messageID, ReplyMessageId: replyID, ReplyJson: body}); err != nil {
		t.Fatalf("CompleteTurn(%s): %v", messageID, err)
	}
}

// wantError checks an ERROR outcome's A2A error against a2aerr's bytes.
func wantError(t *testing.T, r *pactv1.BeginTurnResponse, reason a2aerr.Reason, msg string) {
	t.Helper()
	want := a2aerr.Proto(reason, msg)
	e := r.GetError()
	if r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_ERROR || e.GetBodyJson() != want.GetBodyJson() ||
		e.GetHttpStatus() != want.GetHttpStatus() || e.GetReason() != string(reason) || e.GetStatus() != want.GetStatus() || e.GetMessage() != msg {
		t.Fatalf("BeginTurn = %v; want ERROR %s %q", r, reason, msg)
	}
}

func TestTurnsRunReplayAndRefuse(t *testing.T) {
	withService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient) {
		r := begin(t, c, alice, "", "m1", "")
		ctxID := r.GetContextId()
		if r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN || !r.GetContextCreated() || !conversation.IsUUID(ctxID) || strings.ToLower(ctxID) != ctxID {
			t.Fatalf("first turn = %v; want RUN in a new lowercase UUID context", r)
		}
		// ok/pending-duplicate: no reply yet.
		wantError(t, begin(t, c, alice, ctxID, "m1", ""), a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate)

		body := `{"message":{"messageId":"r1","contextId":"` + ctxID + `","role":"ROLE_AGENT","parts":[{"text":"hi <&> \u00e9"}]}}`
		complete(t, c, alice, ctxID, "m1", "r1", body)
		// ok/replay: the stored body, byte for byte.
		r = begin(t, c, alice, ctxID, "m1", "")
		if r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_REPLAY || r.GetReplyJson() != body || r.GetContextId() != ctxID || r.GetContextCreated() {
			t.Fatalf("retry = %v; want REPLAY of %s", r, body)
		}
		// ok/continue.
		if r := begin(t, c, alice, ctxID, "m2", ""); r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN || r.GetContextCreated() || r.GetContextId() != ctxID {
			t.Fatalf("continuation = %v; want RUN in %s", r, ctxID)
		}
		// fail/agent-reply-id.
		wantError(t, begin(t, c, alice, ctxID, "r1", ""), a2aerr.InvalidParams, a2aerr.MsgReplyIDCollision)
		// ok/same-messageId-without-context starts a new conversation.
		if r := begin(t, c, alice, "", "m1", ""); r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN || r.GetContextId() == ctxID {
			t.Fatalf("m1 without contextId = %v; want RUN in a new context", r)
		}
		// fail/message-id-too-long is an A2A error; 256 bytes is fine.
		wantError(t, begin(t, c, alice, ctxID, strings.Repeat("x", 257), ""), a2aerr.InvalidParams, a2aerr.MsgMessageIDTooLong)
		if r := begin(t, c, alice, ctxID, strings.Repeat("x", 256), ""); r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN {
			t.Fatalf("256-byte messageId = %v; want RUN", r)
		}

		// fail/closed: after CloseContext every turn, retries included.
		if _, err := c.CloseContext(t.Context(), &pactv1.CloseContextRequest{Owner: alice, ContextId: ctxID}); err != nil {
			t.Fatalf("CloseContext: %v", err)
		}
		if _, err := c.CloseContext(t.Context(), &pactv1.CloseContextRequest{Owner: alice, ContextId: ctxID}); err != nil {
			t.Fatalf("CloseContext twice: %v", err)
		}
		wantError(t, begin(t, c, alice, ctxID, "m3", ""), a2aerr.UnsupportedOperation, a2aerr.MsgContextClosed)
		wantError(t, begin(t, c, alice, ctxID, "m1", ""), a2aerr.UnsupportedOperation, a2aerr.MsgContextClosed)
	})
}

func TestUnknownContextIsOneAnswer(t *testing.T) {
	withService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient) {
		ctxID := begin(t, c, alice, "", "m1", "").GetContextId()
		// Positive control: the owner continues it.
		if r := begin(t, c, alice, ctxID, "m2", ""); r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN {
			t.Fatalf("owner's continuation = %v; want RUN", r)
		}
		cases := map[string]struct {
			o  *pactv1.Owner
			id string
		}{
			"fail/other-sub":       {&pactv1.Owner{BrandId: "acme", AgentId: "agt_1", Subject: "bob"}, ctxID},
			"fail/other-agent":     {&pactv1.Owner{BrandId: "acme", AgentId: "agt_2", Subject: "alice"}, ctxID},
			"fail/other-brand":     {&pactv1.Owner{BrandId: "beta", AgentId: "agt_1", Subject: "alice"}, ctxID},
			"fail/random-uuid":     {alice, conversation.NewUUID()},
			"fail/uppercase":       {alice, strings.ToUpper(ctxID)},
			"fail/non-uuid":        {alice, "not-a-uuid"},
			"fail/too-long":        {alice, ctxID + strings.Repeat("0", 64)},
			"fail/sql-ish":         {alice, "' OR 1=1 --"},
			"fail/uuid-no-hyphens": {alice, strings.ReplaceAll(ctxID, "-", "") + "abcd"},
		}
		var first string
		for name, tc := range cases {
			r := begin(t, c, tc.o, tc.id, "m9", "")
			wantError(t, r, a2aerr.InvalidParams, a2aerr.MsgUnknownContextID)
			if first == "" {
				first = r.GetError().GetBodyJson()
			} else if r.GetError().GetBodyJson() != first {
				t.Fatalf("%s: body %s differs from %s", name, r.GetError().GetBodyJson(), first)
			}
			// The foreign caller cannot complete, abandon or close it either.
			_, err := c.CloseContext(t.Context(), &pactv1.CloseContextRequest{Owner: tc.o, ContextId: tc.id})
			if connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("%s: CloseContext err = %v; want NotFound", name, err)
			}
			_, err = c.CompleteTurn(t.Context(), &pactv1.CompleteTurnRequest{Owner: tc.o, ContextId: tc.id, MessageId: "m2", ReplyMessageId: "rx", ReplyJson: "{}"})
			if connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("%s: CompleteTurn err = %v; want NotFound", name, err)
			}
			_, err = c.AbandonTurn(t.Context(), &pactv1.AbandonTurnRequest{Owner: tc.o, ContextId: tc.id, MessageId: "m2"})
			if connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("%s: AbandonTurn err = %v; want NotFound", name, err)
			}
		}
		// None of that touched the owner's pending turn m2.
		wantError(t, begin(t, c, alice, ctxID, "m2", ""), a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate)
	})
}

func TestBrandUserLock(t *testing.T) {
	withService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient) {
		// A context started under identity continues under delegation and
		// is then bound to that Brand user.
		ctxID := begin(t, c, alice, "", "m1", "").GetContextId()
		if r := begin(t, c, alice, ctxID, "m2", "bu-x"); r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN {
			t.Fatalf("first delegated turn = %v; want RUN", r)
		}
		wantError(t, begin(t, c, alice, ctxID, "m3", "bu-y"), a2aerr.InvalidParams, a2aerr.MsgOtherBrandUser)
		if r := begin(t, c, alice, ctxID, "m4", "bu-x"); r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN {
			t.Fatalf("same Brand user = %v; want RUN", r)
		}
		if r := begin(t, c, alice, ctxID, "m5", ""); r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN {
			t.Fatalf("identity-only turn in a bound context = %v; want RUN", r)
		}
		// A context created by a delegated turn is bound from the start.
		ctx2 := begin(t, c, alice, "", "m1", "bu-x").GetContextId()
		wantError(t, begin(t, c, alice, ctx2, "m2", "bu-y"), a2aerr.InvalidParams, a2aerr.MsgOtherBrandUser)

		// Concurrent first delegated turns with different Brand users: one
		// binds, the other is refused.
		ctx3 := begin(t, c, alice, "", "m1", "").GetContextId()
		var wg sync.WaitGroup
		out := make([]*pactv1.BeginTurnResponse, 8)
		for i := range out {
			wg.Go(func() {
				r, err := c.BeginTurn(t.Context(), &pactv1.BeginTurnRequest{Owner: alice, ContextId: ctx3, MessageId: "c" + string(rune('a'+i)), BrandUser: "bu-" + string(rune('a'+i))})
				if err != nil {
					t.Errorf("BeginTurn: %v", err)
				}
				out[i] = r
			})
		}
		wg.Wait()
		runs := 0
		for _, r := range out {
			if r.GetOutcome() == pactv1.TurnOutcome_TURN_OUTCOME_RUN {
				runs++
			} else if r.GetError().GetMessage() != a2aerr.MsgOtherBrandUser {
				t.Fatalf("concurrent bind answer = %v", r)
			}
		}
		if runs != 1 {
			t.Fatalf("%d of %d concurrent first delegated turns ran; want exactly 1", runs, len(out))
		}
	})
}

func TestConcurrentDuplicateRunsOnce(t *testing.T) {
	withService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient) {
		ctxID := begin(t, c, alice, "", "m0", "").GetContextId()
		const n = 12
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			runs int
		)
		for range n {
			wg.Go(func() {
				r, err := c.BeginTurn(t.Context(), &pactv1.BeginTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "dup"})
				if err != nil {
					t.Errorf("BeginTurn: %v", err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.GetOutcome() == pactv1.TurnOutcome_TURN_OUTCOME_RUN:
					runs++
				case r.GetError().GetMessage() != a2aerr.MsgPendingDuplicate:
					t.Errorf("duplicate answer = %v; want the pending-duplicate error", r)
				}
			})
		}
		wg.Wait()
		if runs != 1 {
			t.Fatalf("%d of %d concurrent duplicates got RUN; want exactly 1", runs, n)
		}
	})
}

func TestCompleteAndAbandon(t *testing.T) {
	withService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient) {
		ctx := t.Context()
		ctxID := begin(t, c, alice, "", "m1", "").GetContextId()
		req := &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r1", ReplyJson: `{"message":{}}`}
		first, err := c.CompleteTurn(ctx, req)
		if err != nil || !first.GetStoredAt().AsTime().Equal(clock) {
			t.Fatalf("CompleteTurn = %v, %v", first, err)
		}
		// ok/retry of the same completion is a no-op.
		if again, err := c.CompleteTurn(ctx, req); err != nil || !again.GetStoredAt().AsTime().Equal(clock) {
			t.Fatalf("CompleteTurn retry = %v, %v; want success", again, err)
		}
		// fail/another reply for a replied turn.
		other := &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r2", ReplyJson: `{"message":{}}`}
		if _, err := c.CompleteTurn(ctx, other); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("second reply err = %v; want FailedPrecondition", err)
		}
		// fail/reply id already used by a User message.
		begin(t, c, alice, ctxID, "m2", "")
		clash := &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m2", ReplyMessageId: "m1", ReplyJson: `{}`}
		if _, err := c.CompleteTurn(ctx, clash); connect.CodeOf(err) != connect.CodeAlreadyExists {
			t.Fatalf("reply id = a User messageId: err = %v; want AlreadyExists", err)
		}
		// ok/abandon releases m2 for another try; abandoning again fails.
		ab := &pactv1.AbandonTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m2"}
		if _, err := c.AbandonTurn(ctx, ab); err != nil {
			t.Fatalf("AbandonTurn: %v", err)
		}
		if _, err := c.AbandonTurn(ctx, ab); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("AbandonTurn twice err = %v; want FailedPrecondition", err)
		}
		if r := begin(t, c, alice, ctxID, "m2", ""); r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN {
			t.Fatalf("after abandon = %v; want RUN", r)
		}
		// fail/never begun.
		never := &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "nope", ReplyMessageId: "r9", ReplyJson: `{}`}
		if _, err := c.CompleteTurn(ctx, never); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("CompleteTurn(never begun) err = %v; want FailedPrecondition", err)
		}
	})
}

// TestStaleClaimIsTakenOver: a turn left pending (its frontend died) is
// claimed again once its claim is older than StaleClaimAge, not before;
// the run it was taken from can then neither complete nor release it, and
// the new run completes it.
func TestStaleClaimIsTakenOver(t *testing.T) {
	withClockedService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient, clk *testclock.Clock) {
		ctx := t.Context()
		first := begin(t, c, alice, "", "m1", "")
		ctxID, old := first.GetContextId(), first.GetClaim()
		if first.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN || len(old) != 22 {
			t.Fatalf("BeginTurn(m1) = %v; want RUN with a 22-byte claim", first)
		}
		// fail/the claim is not stale yet: the pending duplicate, no claim.
		clk.Advance(conversation.StaleClaimAge - time.Second)
		dup := begin(t, c, alice, ctxID, "m1", "")
		wantError(t, dup, a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate)
		if dup.GetClaim() != "" {
			t.Fatalf("pending duplicate carries claim %q; want none", dup.GetClaim())
		}
		// ok/stale: the retry runs under a new claim.
		clk.Advance(2 * time.Second)
		again := begin(t, c, alice, ctxID, "m1", "")
		fresh := again.GetClaim()
		if again.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_RUN || again.GetContextCreated() || fresh == "" || fresh == old {
			t.Fatalf("BeginTurn(stale m1) = %v; want RUN under a new claim (old %q)", again, old)
		}
		// fail/the old claimant: completion and release are refused, even
		// with a reply id that is already used (not ALREADY_EXISTS: the turn
		// is not its to complete).
		body := `{"message":{"text":"old"}}`
		for name, req := range map[string]*pactv1.CompleteTurnRequest{
			"fresh-reply-id": {Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r-old", ReplyJson: body, Claim: old},
			"used-reply-id":  {Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "m1", ReplyJson: body, Claim: old},
		} {
			if _, err := c.CompleteTurn(ctx, req); connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Fatalf("CompleteTurn(old claim, %s) err = %v; want FailedPrecondition", name, err)
			}
		}
		if _, err := c.AbandonTurn(ctx, &pactv1.AbandonTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", Claim: old}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("AbandonTurn(old claim) err = %v; want FailedPrecondition", err)
		}
		wantError(t, begin(t, c, alice, ctxID, "m1", ""), a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate)
		// ok/the new claimant completes it, and may retry the completion.
		reply := &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r-new", ReplyJson: `{"message":{"text":"new"}}`, Claim: fresh}
		for range 2 {
			if r, err := c.CompleteTurn(ctx, reply); err != nil || !r.GetStoredAt().AsTime().Equal(clk.Now()) {
				t.Fatalf("CompleteTurn(new claim) = %v, %v; want stored at %v", r, err, clk.Now())
			}
		}
		// fail/the old claimant's identical reply does not pass for a retry.
		oldRetry := &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r-new", ReplyJson: reply.GetReplyJson(), Claim: old}
		if _, err := c.CompleteTurn(ctx, oldRetry); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("CompleteTurn(old claim, the stored reply) err = %v; want FailedPrecondition", err)
		}
		// A replied turn stays replied, however late the retry.
		clk.Advance(24 * time.Hour)
		r := begin(t, c, alice, ctxID, "m1", "")
		if r.GetOutcome() != pactv1.TurnOutcome_TURN_OUTCOME_REPLAY || r.GetReplyJson() != reply.GetReplyJson() || r.GetClaim() != "" {
			t.Fatalf("BeginTurn(replied m1) a day later = %v; want REPLAY of the new reply, no claim", r)
		}
	})
}

// TestClaimScopesCompleteAndAbandon: with a claim, CompleteTurn and
// AbandonTurn act on that run only; without one, as before claims.
func TestClaimScopesCompleteAndAbandon(t *testing.T) {
	withService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient) {
		ctx := t.Context()
		b := begin(t, c, alice, "", "m1", "")
		ctxID, run1 := b.GetContextId(), b.GetClaim()
		// fail/a claim that is not the turn's.
		if _, err := c.AbandonTurn(ctx, &pactv1.AbandonTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", Claim: "not-this-run"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("AbandonTurn(wrong claim) err = %v; want FailedPrecondition", err)
		}
		// ok/its own claim releases it; the next run gets another claim.
		if _, err := c.AbandonTurn(ctx, &pactv1.AbandonTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", Claim: run1}); err != nil {
			t.Fatalf("AbandonTurn(own claim): %v", err)
		}
		run2 := begin(t, c, alice, ctxID, "m1", "").GetClaim()
		if run2 == "" || run2 == run1 {
			t.Fatalf("second run's claim %q; want a new one (first %q)", run2, run1)
		}
		// fail/the released run cannot finish the next one.
		done := &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r1", ReplyJson: `{"message":{}}`, Claim: run1}
		if _, err := c.CompleteTurn(ctx, done); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("CompleteTurn(released run's claim) err = %v; want FailedPrecondition", err)
		}
		if _, err := c.AbandonTurn(ctx, &pactv1.AbandonTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", Claim: run1}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("AbandonTurn(released run's claim) err = %v; want FailedPrecondition", err)
		}
		// fail/a used reply id under the turn's own claim is still ALREADY_EXISTS.
		clash := &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "m1", ReplyJson: `{}`, Claim: run2}
		if _, err := c.CompleteTurn(ctx, clash); connect.CodeOf(err) != connect.CodeAlreadyExists {
			t.Fatalf("CompleteTurn(own claim, used reply id) err = %v; want AlreadyExists", err)
		}
		// ok/no claim: completes whichever run holds the turn, as before.
		done.Claim = ""
		if _, err := c.CompleteTurn(ctx, done); err != nil {
			t.Fatalf("CompleteTurn(no claim): %v", err)
		}
		// ok/a retry with the holder's claim is the same no-op.
		done.Claim = run2
		if _, err := c.CompleteTurn(ctx, done); err != nil {
			t.Fatalf("CompleteTurn retry with the holder's claim: %v", err)
		}
		// ok/no claim releases whichever run holds the turn.
		begin(t, c, alice, ctxID, "m2", "")
		if _, err := c.AbandonTurn(ctx, &pactv1.AbandonTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m2"}); err != nil {
			t.Fatalf("AbandonTurn(no claim): %v", err)
		}
	})
}

// TestConcurrentStaleTakeoverRunsOnce: many retries of one stale turn at
// once: exactly one runs it, the others get the pending duplicate.
func TestConcurrentStaleTakeoverRunsOnce(t *testing.T) {
	withClockedService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient, clk *testclock.Clock) {
		ctxID := begin(t, c, alice, "", "dup", "").GetContextId()
		clk.Advance(conversation.StaleClaimAge + time.Minute)
		const n = 12
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			claims []string
		)
		start := make(chan struct{})
		for range n {
			wg.Go(func() {
				<-start
				r, err := c.BeginTurn(t.Context(), &pactv1.BeginTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "dup"})
				if err != nil {
					t.Errorf("BeginTurn: %v", err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.GetOutcome() == pactv1.TurnOutcome_TURN_OUTCOME_RUN:
					claims = append(claims, r.GetClaim())
				case r.GetError().GetMessage() != a2aerr.MsgPendingDuplicate:
					t.Errorf("duplicate answer = %v; want the pending-duplicate error", r)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(claims) != 1 || claims[0] == "" {
			t.Fatalf("%d of %d concurrent retries of a stale turn got RUN (claims %q); want exactly 1", len(claims), n, claims)
		}
		if _, err := c.CompleteTurn(t.Context(), &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "dup", ReplyMessageId: "r", ReplyJson: `{}`, Claim: claims[0]}); err != nil {
			t.Fatalf("CompleteTurn(winner's claim): %v", err)
		}
	})
}

func TestMalformedCallsAreInvalidArgument(t *testing.T) {
	withService(t, func(t *testing.T, c pactv1connect.ConversationServiceClient) {
		ctx := t.Context()
		ctxID := begin(t, c, alice, "", "m1", "").GetContextId()
		cases := map[string]struct {
			call  func() error
			field string
		}{
			"fail/no-owner": {func() error {
				_, err := c.BeginTurn(ctx, &pactv1.BeginTurnRequest{MessageId: "m"})
				return err
			}, "owner.brand_id"},
			"fail/no-subject": {func() error {
				_, err := c.BeginTurn(ctx, &pactv1.BeginTurnRequest{Owner: &pactv1.Owner{BrandId: "acme", AgentId: "agt_1"}, MessageId: "m"})
				return err
			}, "owner.subject"},
			"fail/no-message-id": {func() error {
				_, err := c.BeginTurn(ctx, &pactv1.BeginTurnRequest{Owner: alice})
				return err
			}, "message_id"},
			"fail/brand-user-too-long": {func() error {
				_, err := c.BeginTurn(ctx, &pactv1.BeginTurnRequest{Owner: alice, MessageId: "m", BrandUser: strings.Repeat("u", 257)})
				return err
			}, "brand_user"},
			"fail/reply-not-json": {func() error {
				_, err := c.CompleteTurn(ctx, &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r", ReplyJson: `{"x":`})
				return err
			}, "reply_json"},
			"fail/reply-not-object": {func() error {
				_, err := c.CompleteTurn(ctx, &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r", ReplyJson: `[]`})
				return err
			}, "reply_json"},
			"fail/reply-too-large": {func() error {
				_, err := c.CompleteTurn(ctx, &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r", ReplyJson: `{"x":"` + strings.Repeat("a", conversation.MaxReplyJSON) + `"}`})
				return err
			}, "reply_json"},
			"fail/no-reply-id": {func() error {
				_, err := c.CompleteTurn(ctx, &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyJson: `{}`})
				return err
			}, "reply_message_id"},
			"fail/complete-claim-too-long": {func() error {
				_, err := c.CompleteTurn(ctx, &pactv1.CompleteTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", ReplyMessageId: "r", ReplyJson: `{}`, Claim: strings.Repeat("k", conversation.MaxClaim+1)})
				return err
			}, "claim"},
			"fail/abandon-claim-too-long": {func() error {
				_, err := c.AbandonTurn(ctx, &pactv1.AbandonTurnRequest{Owner: alice, ContextId: ctxID, MessageId: "m1", Claim: strings.Repeat("k", conversation.MaxClaim+1)})
				return err
			}, "claim"},
			"fail/close-no-context": {func() error {
				_, err := c.CloseContext(ctx, &pactv1.CloseContextRequest{Owner: alice})
				return err
			}, "context_id"},
		}
		for name, tc := range cases {
			err := tc.call()
			if connect.CodeOf(err) != connect.CodeInvalidArgument || rpcerr.Reason(err) != "ERROR_REASON_INVALID_ARGUMENT" {
				t.Errorf("%s: err = %v; want InvalidArgument", name, err)
				continue
			}
			fields := rpcerr.FieldViolations(err)
			if len(fields) == 0 || fields[0] != tc.field {
				t.Errorf("%s: violations %v; want %s first", name, fields, tc.field)
			}
		}
		// Control: the refused completions stored nothing; m1 is pending.
		wantError(t, begin(t, c, alice, ctxID, "m1", ""), a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate)
	})
}

func TestUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		u := conversation.NewUUID()
		if !conversation.IsUUID(u) || u[14] != '4' || !strings.ContainsRune("89ab", rune(u[19])) || seen[u] {
			t.Fatalf("NewUUID = %s: not a fresh lowercase v4 UUID", u)
		}
		seen[u] = true
	}
	for _, bad := range []string{"", "0b7f8e3c-2d6a-4c1e-9f0a-1b2c3d4e5f6", "0b7f8e3c-2d6a-4c1e-9f0a-1b2c3d4e5f6g", "0b7f8e3c2d6a-4c1e-9f0a-1b2c3d4e5f600"} {
		if conversation.IsUUID(bad) {
			t.Errorf("IsUUID(%q) = true", bad)
		}
	}
}

func TestClaimID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := conversation.NewClaimID()
		if len(id) != 22 || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" || seen[id] {
			t.Fatalf("NewClaimID() = %q; want 22 base64url bytes, never repeated", id)
		}
		seen[id] = true
	}
}
