package frontdoor_test

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/conversation"
	"pactd.dev/pactd/services/frontdoor"
)

// sendRequest is message:send of one text message at brand, as a
// frontend forwards it; with a delegation token when user is set.
func sendRequest(brand, msgID, contextID, text, user string) *pactv1.ServeRequest {
	r := &pactv1.ServeRequest{Method: "POST", Path: "/a2a/" + brand + "/message:send", Body: []byte(sendBody(msgID, contextID, text)),
		Headers: []*pactv1.HttpHeader{{Name: "Host", Value: "fe.example"}, {Name: "Authorization", Value: "Bearer good-alice"}}}
	if user != "" {
		r.Headers = append(r.Headers, &pactv1.HttpHeader{Name: "X-A2A-User-Delegation", Value: "Bearer deleg-" + user})
	}
	return r
}

// startTurn has Serve hand out a turn.
func (e *env) startTurn(t *testing.T, req *pactv1.ServeRequest) *pactv1.Turn {
	t.Helper()
	res, err := e.serve(t, req)
	if err != nil || res.GetTurn() == nil {
		t.Fatalf("Serve %s: %v %v; want a turn", req.GetBody(), res, err)
	}
	return res.GetTurn()
}

// finishReply finishes a turn with an AgentReply.
func finishReply(handle string, r *pactv1.AgentReply) *pactv1.FinishTurnRequest {
	return &pactv1.FinishTurnRequest{Handle: handle, Result: &pactv1.FinishTurnRequest_Reply{Reply: r}}
}

// TestTurnCarriesTheVerifiedCall: the turn Serve hands out names the
// Brand, the conversation (new or continued), the text, the verified
// caller and grant, the SDK's request with pactd's contextId and the
// request's metadata, the SDK path, and the timeout.
func TestTurnCarriesTheVerifiedCall(t *testing.T) {
	e := newEnv(t, func(o *options) { o.turnTimeout = 42 * time.Second })
	body := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"},{"text":"there"}],"extensions":["urn:x"]},"metadata":{"k":"v"}}`
	req := sendRequest("acme", "m1", "", "", "")
	req.Body = []byte(body)
	turn := e.startTurn(t, req)
	ctx := turn.GetContextId()
	want := fmt.Sprintf(`{"message":{"contextId":%q,"extensions":["urn:x"],"messageId":"m1","parts":[{"text":"hi"},{"text":"there"}],"role":"ROLE_USER"},"metadata":{"k":"v"}}`, ctx)
	if turn.GetBrandId() != "acme" || !turn.GetNewContext() || turn.GetText() != "hi\nthere" || turn.GetCaller().GetAgentId() != "agt_1" ||
		turn.GetCaller().GetSubject() != "alice" || turn.GetCaller().GetIssuer() != "https://pa.example" || turn.GetDelegation() != nil ||
		turn.GetSdkPath() != "/a2a/acme/message:send" || turn.GetTurnTimeoutSeconds() != 42 || turn.GetSdkRequestJson() != want || turn.GetHandle() == "" {
		t.Fatalf("turn = %v\nwant sdk_request_json %s", turn, want)
	}
	next := e.startTurn(t, sendRequest("acme", "m2", ctx, "more", "u9"))
	if next.GetNewContext() || next.GetContextId() != ctx || next.GetDelegation().GetBrandUser() != "u9" || next.GetDelegation().GetGrantId() != "a2agrant_1" {
		t.Fatalf("second turn = %v", next)
	}
	// A request without metadata, or with metadata that is not an object,
	// hands the SDK none.
	req = sendRequest("acme", "m3", ctx, "x", "")
	req.Body = []byte(`{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":"` + ctx + `"},"metadata":[1]}`)
	if got := e.startTurn(t, req).GetSdkRequestJson(); strings.Contains(got, `"metadata"`) {
		t.Fatalf("metadata [1] passed on: %s", got)
	}
}

// TestTurnHandles: FinishTurn refuses a handle pactd did not issue
// (InvalidArgument, field handle): altered in its payload or MAC,
// truncated, padded, with whitespace or a line break inserted, empty, past 4 KiB, or
// sealed under another secret; and refuses a request without a result.
// Nothing is stored or released for a refused handle. The control: the
// handle as issued finishes the turn.
func TestTurnHandles(t *testing.T) {
	e := newEnv(t)
	turn := e.startTurn(t, sendRequest("acme", "m1", "", "hi", ""))
	h := turn.GetHandle()
	payload, mac, ok := strings.Cut(h, ".")
	if !ok || strings.ContainsAny(h, "=+/ \n") {
		t.Fatalf("handle %q is not base64url(payload).base64url(MAC)", h)
	}
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	// A handle pactd never issued: a second service with another secret.
	other, err := frontdoor.New(frontdoor.Deps{Verify: e.verifier, Brands: brandCounter{Brands: panicBrands{}, calls: &e.calls}, Turns: e.turns,
		Delegation: e.deleg, Receipts: e.receipts, Registration: e.reg, Secret: []byte("another secret, at least 32 bytes long"),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	otherRes, err := other.Serve(t.Context(), sendRequest("beta", "m1", "", "hi", ""))
	if err != nil || otherRes.GetTurn() == nil {
		t.Fatalf("the other service: %v %v", otherRes, err)
	}
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"b":"acme","a":"agt_1","s":"alice","i":"https://pa.example","c":"` +
		turn.GetContextId() + `","m":"m1","x":99999999999}`))
	cases := []struct{ name, handle string }{
		{"fail/empty", ""},
		{"fail/payload-altered", flip(payload, len(payload)/2) + "." + mac},
		{"fail/payload-first-byte", flip(payload, 0) + "." + mac},
		{"fail/mac-altered", payload + "." + flip(mac, len(mac)/2)},
		{"fail/mac-last-byte", payload + "." + flip(mac, len(mac)-1)},
		{"fail/truncated-mac", h[:len(h)-1]},
		{"fail/truncated-half", h[:len(h)/2]},
		{"fail/payload-only", payload},
		{"fail/payload-dot", payload + "."},
		{"fail/mac-only", "." + mac},
		{"fail/padded", h + "="},
		{"fail/two-dots", h + "." + mac},
		{"fail/space-inserted", payload[:4] + " " + payload[4:] + "." + mac},
		// Go's base64 decoders skip CR and LF, even in strict mode.
		{"fail/newline-in-mac", payload + "." + mac[:5] + "\n" + mac[5:]},
		{"fail/newline-after-dot", payload + ".\n" + mac},
		{"fail/trailing-newline", h + "\n"},
		{"fail/trailing-crlf", h + "\r\n"},
		{"fail/cr-in-mac", payload + "." + mac[:1] + "\r" + mac[1:]},
		{"fail/newline-in-payload", payload[:3] + "\n" + payload[3:] + "." + mac},
		{"fail/std-base64", strings.NewReplacer("-", "+", "_", "/").Replace(h) + "+"},
		{"fail/forged-payload", forged + "." + mac},
		{"fail/over-4KiB", payload + strings.Repeat("A", 4<<10) + "." + mac},
		{"fail/other-secret", otherRes.GetTurn().GetHandle()},
	}
	for _, c := range cases {
		res, err := e.finish(t, finishReply(c.handle, &pactv1.AgentReply{Text: "x"}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), []string{"handle"}) {
			t.Errorf("%s: %v %v; want InvalidArgument on handle", c.name, res, err)
		}
	}
	// Our handle at the other service is refused too.
	if _, err := other.FinishTurn(t.Context(), finishReply(h, &pactv1.AgentReply{Text: "x"})); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("our handle at another secret's service: %v", err)
	}
	if _, err := e.finish(t, &pactv1.FinishTurnRequest{Handle: h}); connect.CodeOf(err) != connect.CodeInvalidArgument ||
		!slices.Equal(rpcerr.FieldViolations(err), []string{"result"}) {
		t.Errorf("no result: %v; want InvalidArgument on result", err)
	}
	if n := e.turns.abandoned.Load(); n != 0 {
		t.Fatalf("a refused handle released %d turns", n)
	}
	// The control.
	res, err := e.finish(t, finishReply(h, &pactv1.AgentReply{Text: "fine"}))
	if err != nil || res.GetResponse().GetStatus() != 200 || !strings.Contains(string(res.GetResponse().GetBody()), `"parts":[{"text":"fine"}]`) {
		t.Fatalf("the handle as issued: %v %v", res, err)
	}
}

// TestTurnHandleExpires: a handle is good for the turn timeout plus the
// slack of the frontend's call (30 s); after that FinishTurn answers
// INTERNAL and releases the turn (AbandonTurn), so the PA may send the
// messageId again. The control: just before, it finishes.
func TestTurnHandleExpires(t *testing.T) {
	e := newEnv(t, func(o *options) { o.turnTimeout = 10 * time.Second })
	start := time.Unix(e.clock.Now().Unix(), 0) // whole seconds, as the handle keeps them
	e.clock.Set(start)
	early := e.startTurn(t, sendRequest("acme", "m1", "", "hi", ""))
	late := e.startTurn(t, sendRequest("acme", "m2", early.GetContextId(), "hi", ""))

	e.clock.Set(start.Add(40*time.Second - time.Millisecond))
	res, err := e.finish(t, finishReply(early.GetHandle(), &pactv1.AgentReply{Text: "in time"}))
	if err != nil || res.GetResponse().GetStatus() != 200 {
		t.Fatalf("ok/before-expiry: %v %v", res, err)
	}

	e.clock.Set(start.Add(40 * time.Second))
	res, err = e.finish(t, finishReply(late.GetHandle(), &pactv1.AgentReply{Text: "too late"}))
	got := res.GetResponse()
	if err != nil || got.GetStatus() != 500 || string(got.GetBody()) != errBody(a2aerr.Internal, "Internal error") {
		t.Fatalf("fail/expired: %v %v; want the INTERNAL answer", res, err)
	}
	if n := e.turns.abandoned.Load(); n != 1 {
		t.Fatalf("AbandonTurn called %d times, want 1", n)
	}
	if lines := e.logLines("the turn handle has expired"); len(lines) != 1 {
		t.Errorf("the expiry is logged %d times: %v", len(lines), lines)
	}
	// Released: the same messageId runs again; the one in time replays.
	if again := e.startTurn(t, sendRequest("acme", "m2", early.GetContextId(), "hi", "")); again.GetContextId() != early.GetContextId() {
		t.Fatalf("the released turn: %v", again)
	}
	replay, err := e.serve(t, sendRequest("acme", "m1", early.GetContextId(), "hi", ""))
	if err != nil || !strings.Contains(string(replay.GetResponse().GetBody()), `"text":"in time"`) {
		t.Fatalf("the finished turn does not replay: %v %v", replay, err)
	}
}

// TestTurnFinishedTwice defines what a second FinishTurn with the same
// handle does: the first finish stored the reply (a retry of the
// messageId replays it); a second finish, whatever its result, cannot
// store another reply (the conversation refuses it) and cannot release
// the stored turn (AbandonTurn is refused), so it answers INTERNAL and
// leaves the stored reply as it was. After a finish that released the
// turn, the handle cannot finish a later run of the same messageId
// (TestOldHandleCannotFinishALaterRun). A frontend never finishes a turn
// twice; this says what happens when one does.
func TestTurnFinishedTwice(t *testing.T) {
	e := newEnv(t)
	turn := e.startTurn(t, sendRequest("acme", "m1", "", "hi", ""))
	first, err := e.finish(t, finishReply(turn.GetHandle(), &pactv1.AgentReply{Text: "first"}))
	if err != nil || first.GetResponse().GetStatus() != 200 {
		t.Fatalf("first finish: %v %v", first, err)
	}
	for _, second := range []*pactv1.FinishTurnRequest{
		finishReply(turn.GetHandle(), &pactv1.AgentReply{Text: "second"}),
		finishReply(turn.GetHandle(), &pactv1.AgentReply{Text: "first"}),
		{Handle: turn.GetHandle(), Result: &pactv1.FinishTurnRequest_Failure{Failure: "late failure"}},
	} {
		res, err := e.finish(t, second)
		if err != nil || res.GetResponse().GetStatus() != 500 || string(res.GetResponse().GetBody()) != errBody(a2aerr.Internal, "Internal error") {
			t.Errorf("second finish %v: %v %v; want the INTERNAL answer", second.GetResult(), res, err)
		}
		replay, err := e.serve(t, sendRequest("acme", "m1", turn.GetContextId(), "hi", ""))
		if err != nil || !slices.Equal(replay.GetResponse().GetBody(), first.GetResponse().GetBody()) {
			t.Fatalf("after a second finish the stored reply is %v (%v); want the first %s", replay, err, first.GetResponse().GetBody())
		}
	}
	if n := len(e.logLines(`"msg":"abandon turn"`)); n != 3 {
		t.Errorf("the refused releases are logged %d times, want 3", n)
	}

}

// TestOldHandleCannotFinishALaterRun: a handle carries its run's claim of
// the turn. After a finish that released the turn, the PA sends the
// messageId again: the old handle can neither complete the new run (the
// conversation refuses its claim; INTERNAL) nor release it (the release is
// refused and logged), and the new run's own handle finishes it.
func TestOldHandleCannotFinishALaterRun(t *testing.T) {
	e := newEnv(t)
	released := e.startTurn(t, sendRequest("acme", "m2", "", "hi", ""))
	ctxID := released.GetContextId()
	if res, err := e.finish(t, &pactv1.FinishTurnRequest{Handle: released.GetHandle(), Result: &pactv1.FinishTurnRequest_Failure{Failure: "down"}}); err != nil ||
		res.GetResponse().GetStatus() != 500 {
		t.Fatalf("failure: %v %v", res, err)
	}
	// fail/finished again while nothing runs.
	if res, err := e.finish(t, finishReply(released.GetHandle(), &pactv1.AgentReply{Text: "late"})); err != nil || res.GetResponse().GetStatus() != 500 {
		t.Fatalf("a released turn finished again: %v %v; want INTERNAL", res, err)
	}
	rerun := e.startTurn(t, sendRequest("acme", "m2", ctxID, "hi", ""))
	abandonsBefore := len(e.logLines(`"msg":"abandon turn"`))
	// fail/the old handle, with a reply and with a failure: INTERNAL, and
	// the rerun stays pending (its retry is the pending duplicate).
	for _, old := range []*pactv1.FinishTurnRequest{
		finishReply(released.GetHandle(), &pactv1.AgentReply{Text: "stale"}),
		{Handle: released.GetHandle(), Result: &pactv1.FinishTurnRequest_Failure{Failure: "stale failure"}},
	} {
		res, err := e.finish(t, old)
		if err != nil || res.GetResponse().GetStatus() != 500 || string(res.GetResponse().GetBody()) != errBody(a2aerr.Internal, "Internal error") {
			t.Fatalf("the old handle of a rerun messageId (%v): %v %v; want the INTERNAL answer", old.GetResult(), res, err)
		}
		dup, err := e.serve(t, sendRequest("acme", "m2", ctxID, "hi", ""))
		if err != nil || string(dup.GetResponse().GetBody()) != errBody(a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate) {
			t.Fatalf("after the old handle's finish the rerun is %v (%v); want still pending", dup, err)
		}
	}
	if n := len(e.logLines(`"msg":"abandon turn"`)) - abandonsBefore; n != 2 {
		t.Errorf("the old handle's refused releases are logged %d times, want 2", n)
	}
	// ok/the rerun's own handle finishes it, and its reply is stored.
	res, err := e.finish(t, finishReply(rerun.GetHandle(), &pactv1.AgentReply{Text: "fresh"}))
	if err != nil || res.GetResponse().GetStatus() != 200 || !strings.Contains(string(res.GetResponse().GetBody()), `"text":"fresh"`) {
		t.Fatalf("the rerun's own handle: %v %v; want its reply", res, err)
	}
	replay, err := e.serve(t, sendRequest("acme", "m2", ctxID, "hi", ""))
	if err != nil || !slices.Equal(replay.GetResponse().GetBody(), res.GetResponse().GetBody()) {
		t.Fatalf("replay = %v (%v); want the rerun's reply", replay, err)
	}
}

// TestStaleTurnIsTakenOver: a frontend that died mid-turn leaves it
// pending; once the claim is stale the PA's retry runs it again. The dead
// run's handle, expired by then, releases nothing: its FinishTurn answers
// INTERNAL and the new run stays pending until its own handle finishes it.
func TestStaleTurnIsTakenOver(t *testing.T) {
	e := newEnv(t)
	start := e.clock.Now()
	dead := e.startTurn(t, sendRequest("acme", "m1", "", "hi", ""))
	ctxID := dead.GetContextId()
	// fail/not stale yet (the handle has long expired): the pending duplicate.
	e.clock.Set(start.Add(conversation.StaleClaimAge - time.Second))
	dup, err := e.serve(t, sendRequest("acme", "m1", ctxID, "hi", ""))
	if err != nil || string(dup.GetResponse().GetBody()) != errBody(a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate) {
		t.Fatalf("retry before the stale age: %v %v; want the pending duplicate", dup, err)
	}
	// ok/stale: the retry runs.
	e.clock.Set(start.Add(conversation.StaleClaimAge + 2*time.Second))
	retry := e.startTurn(t, sendRequest("acme", "m1", ctxID, "hi", ""))
	// fail/the dead run's handle: expired, and its release is refused.
	res, err := e.finish(t, finishReply(dead.GetHandle(), &pactv1.AgentReply{Text: "from the dead"}))
	if err != nil || res.GetResponse().GetStatus() != 500 || string(res.GetResponse().GetBody()) != errBody(a2aerr.Internal, "Internal error") {
		t.Fatalf("the dead run's handle: %v %v; want the INTERNAL answer", res, err)
	}
	dup, err = e.serve(t, sendRequest("acme", "m1", ctxID, "hi", ""))
	if err != nil || string(dup.GetResponse().GetBody()) != errBody(a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate) {
		t.Fatalf("after the dead handle's finish: %v %v; want the retry still pending", dup, err)
	}
	// ok/the retry's handle finishes it.
	res, err = e.finish(t, finishReply(retry.GetHandle(), &pactv1.AgentReply{Text: "retried"}))
	if err != nil || res.GetResponse().GetStatus() != 200 || !strings.Contains(string(res.GetResponse().GetBody()), `"text":"retried"`) {
		t.Fatalf("the retry's handle: %v %v; want its reply", res, err)
	}
}

// TestTurnTimeoutIsCapped: New refuses a turn timeout above
// MaxTurnTimeout, so a handle always ends before its claim is stale.
func TestTurnTimeoutIsCapped(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		ok      bool
	}{{0, true}, {frontdoor.MaxTurnTimeout, true}, {frontdoor.MaxTurnTimeout + time.Second, false}} {
		_, err := frontdoor.New(frontdoor.Deps{Secret: secret, TurnTimeout: tc.timeout})
		if (err == nil) != tc.ok {
			t.Errorf("New(TurnTimeout %v) err = %v; want ok %v", tc.timeout, err, tc.ok)
		}
	}
	if frontdoor.MaxHandleLife >= conversation.StaleClaimAge {
		t.Errorf("MaxHandleLife %v is not below the stale-claim age %v", frontdoor.MaxHandleLife, conversation.StaleClaimAge)
	}
}

// TestReceipts: a delegated reply's SignReceipt names the grant, the PA,
// the Brand user, the scopes used and each action with its arguments as
// the agent's JSON (args_json, never a hash: pactd's token service
// hashes them); the receipt goes under pact.receipt, the agent's "pact."
// metadata is dropped and its other metadata passed on. An identity-only
// reply has no receipt and no "pact." key.
func TestReceipts(t *testing.T) {
	e := newEnv(t)
	turn := e.startTurn(t, sendRequest("acme", "m1", "", "act", "u1"))
	rp, err := actReply.agentReply()
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.finish(t, finishReply(turn.GetHandle(), rp))
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.receipts.requests()
	if len(reqs) != 1 {
		t.Fatalf("SignReceipt called %d times", len(reqs))
	}
	got := reqs[0]
	wantActions := []*pactv1.ReceiptAction{{Tool: "list_orders"}, {Tool: "cancel_order",
		ArgsJson: `{"big":12345678901234567890,"list":[1.5,true,null],"note":"\u003cb\u003e\u0026","orderId":"1002"}`}}
	if got.GetBrandId() != "acme" || got.GetGrantId() != "a2agrant_1" || got.GetPaIssuer() != "https://pa.example" || got.GetBrandUser() != "u1" ||
		!slices.Equal(got.GetScopesUsed(), []string{"orders:read", "orders:cancel"}) || len(got.GetActions()) != 2 || got.GetTs() != nil {
		t.Fatalf("SignReceipt got %v", got)
	}
	for i, a := range got.GetActions() {
		if a.GetTool() != wantActions[i].GetTool() || a.GetArgsJson() != wantActions[i].GetArgsJson() || a.GetArgsHash() != "" {
			t.Errorf("action %d = %v, want %v (no args_hash)", i, a, wantActions[i])
		}
	}
	want := `{"message":{"messageId":"reply-1","contextId":"` + turn.GetContextId() + `","role":"ROLE_AGENT","parts":[{"text":"done <ok> & more"}],` +
		`"metadata":{"nested":{"a":["x"]},"pact.receipt":{"claims":{"actions":[{"tool":"list_orders"},{"tool":"cancel_order",` +
		`"args_json":"{\"big\":12345678901234567890,\"list\":[1.5,true,null],\"note\":\"\\u003cb\\u003e\\u0026\",\"orderId\":\"1002\"}"}],` +
		`"grantId":"a2agrant_1","pa":"https://pa.example","scopesUsed":["orders:read","orders:cancel"],"user":"u1"},"jws":"h.p.s"},"trace":"t-1"}}}`
	if body := string(res.GetResponse().GetBody()); res.GetResponse().GetStatus() != 200 || body != want {
		t.Fatalf("delegated reply:\n got %s\nwant %s", body, want)
	}

	identity := e.startTurn(t, sendRequest("acme", "m2", turn.GetContextId(), "act", ""))
	res, err = e.finish(t, finishReply(identity.GetHandle(), rp))
	want = `{"message":{"messageId":"reply-2","contextId":"` + turn.GetContextId() + `","role":"ROLE_AGENT","parts":[{"text":"done <ok> & more"}],` +
		`"metadata":{"nested":{"a":["x"]},"trace":"t-1"}}}`
	if err != nil || string(res.GetResponse().GetBody()) != want || len(e.receipts.requests()) != 1 {
		t.Fatalf("identity-only reply: %s (%v); want %s without SignReceipt", res.GetResponse().GetBody(), err, want)
	}
}

// TestReplyMetadataIsCanonical: reply metadata comes out in its RFC 8785
// form whichever language wrote it, so {"b":1.0} and {"b":1} give the
// same reply bytes; "pact." keys are dropped (all of them: no metadata
// member is left). Metadata that is not an I-JSON object fails the turn
// (INTERNAL, released), naming why in the log.
func TestReplyMetadataIsCanonical(t *testing.T) {
	e := newEnv(t)
	n := 0
	// finish runs a turn in a conversation of its own, so every reply is
	// reply-1 and whole bodies compare; it returns pactd's answer and the
	// reply the metadata should give.
	finish := func(meta, wantMeta string) (got *pactv1.HttpResponse, want string) {
		t.Helper()
		n++
		turn := e.startTurn(t, sendRequest("acme", fmt.Sprintf("m%d", n), "", "hi", ""))
		e.ids.Store(0)
		res, err := e.finish(t, finishReply(turn.GetHandle(), &pactv1.AgentReply{Text: "x", MetadataJson: meta}))
		if err != nil {
			t.Fatal(err)
		}
		m := ""
		if wantMeta != "" {
			m = `,"metadata":` + wantMeta
		}
		return res.GetResponse(), `{"message":{"messageId":"reply-1","contextId":"` + turn.GetContextId() + `","role":"ROLE_AGENT","parts":[{"text":"x"}]` + m + `}}`
	}
	for _, c := range []struct{ in, want string }{
		{`{"b":1.0}`, `{"b":1}`},
		{`{"b":1}`, `{"b":1}`},
		{` { "b" : 1e0 } `, `{"b":1}`},
		{`{"b":10E-1}`, `{"b":1}`},
		{`{"z":{"y":2,"b":[1.50,"\u00e9\/"]},"a":null}`, `{"a":null,"z":{"b":[1.5,"é/"],"y":2}}`},
		{`{"n":1e21,"m":0.000001,"k":-0}`, `{"k":0,"m":0.000001,"n":1e+21}`},
		{`{"s":"<b>&"}`, `{"s":"<b>&"}`},
		{`{"pact.receipt":"forged","pact.x":1,"keep":true}`, `{"keep":true}`},
		{`{"pact.receipt":"forged"}`, ``},
		{`{}`, ``},
	} {
		got, want := finish(c.in, c.want)
		if got.GetStatus() != 200 || string(got.GetBody()) != want {
			t.Errorf("metadata %s: %d %s\nwant %s", c.in, got.GetStatus(), got.GetBody(), want)
		}
	}
	for _, c := range []struct{ in, cause string }{
		{`[1]`, "metadata must be a JSON object"},
		{`"x"`, "metadata must be a JSON object"},
		{`null`, "metadata must be a JSON object"},
		{`{"a":1,"a":2}`, "duplicate member name"},
		{`{"a":"\ud800"}`, "lone surrogate"},
		{`{"a":1e400}`, "number outside the IEEE 754 double range"},
		{`{"a":`, "not JSON"},
	} {
		before, mark := e.turns.abandoned.Load(), len(e.log.String())
		got, _ := finish(c.in, "")
		if got.GetStatus() != 500 || string(got.GetBody()) != errBody(a2aerr.Internal, "Internal error") || e.turns.abandoned.Load() != before+1 {
			t.Errorf("metadata %s: %d %s; want INTERNAL and the turn released", c.in, got.GetStatus(), got.GetBody())
		}
		if logged := e.log.String()[mark:]; strings.Count(logged, "\n") != 1 || !strings.Contains(logged, `"msg":"run turn"`) ||
			!strings.Contains(logged, "the agent's metadata_json") || !strings.Contains(logged, c.cause) {
			t.Errorf("metadata %s: want one log line with the cause %q; got %s", c.in, c.cause, logged)
		}
	}
}
