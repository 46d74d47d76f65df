package frontdoor_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
)

// An A2A SDK's answers to message:send, as an HTTP+JSON handler writes
// them (A2A 1.0): {"message": Message}, {"task": Task}, or an AIP-193
// error whose ErrorInfo (domain a2a-protocol.org) names the reason.

// sdkMessage is an agent Message answer with the given parts and, when
// not empty, metadata.
func sdkMessage(parts, metadata string) string {
	m := ""
	if metadata != "" {
		m = `,"metadata":` + metadata
	}
	return `{"message":{"messageId":"sdk-m","contextId":"sdk-c","taskId":"sdk-t","role":"ROLE_AGENT","parts":` + parts + m + `}}`
}

// sdkTask is a Task answer in state with the given metadata and status
// message parts (none when empty).
func sdkTask(state, metadata, parts string) string {
	msg := ""
	if parts != "" {
		msg = `,"message":{"messageId":"s","role":"ROLE_AGENT","parts":` + parts + `}`
	}
	return `{"task":{"id":"sdk-t","contextId":"sdk-c","status":{"state":"` + state + `"` + msg + `},"metadata":` + metadata + `}}`
}

// sdkError is an A2A error answer with the given reason, domain and
// message.
func sdkError(code int, status, reason, domain, message string) string {
	return fmt.Sprintf(`{"error":{"code":%d,"status":%q,"message":%q,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",`+
		`"domain":%q,"metadata":{"timestamp":"2026-12-07T00:00:00Z"},"reason":%q}]}}`, code, status, message, domain, reason)
}

// sdkAnswerCase is one SDK answer and what pactd makes of it.
type sdkAnswerCase struct {
	name   string
	brand  string // acme when empty
	user   string // a delegated turn as this Brand user when set
	status int32
	body   string
	// The answer: status and body (reply builds a reply body from its
	// text and metadata, given the turn's contextId and reply id).
	wantStatus int
	wantBody   func(ctx, replyID string) string
	// stored: the reply is kept for a retry; otherwise the turn is
	// released. cause: the one log line a failure writes.
	stored bool
	cause  string
}

func replyOf(text, metadata string) func(ctx, replyID string) string {
	return func(ctx, replyID string) string {
		m := ""
		if metadata != "" {
			m = `,"metadata":` + metadata
		}
		return `{"message":{"messageId":"` + replyID + `","contextId":"` + ctx + `","role":"ROLE_AGENT","parts":[{"text":` + text + `}]` + m + `}}`
	}
}

func fixed(body string) func(string, string) string {
	return func(string, string) string { return body }
}

// sdkAnswerCases are the SDK answers FinishTurn reads: PACT answers
// (replies, receipts, step-ups), the SDK errors a PA may see, and every
// failure shape.
func sdkAnswerCases() []sdkAnswerCase {
	internal := fixed(errBody(a2aerr.Internal, "Internal error"))
	fail := func(name, body, cause string) sdkAnswerCase {
		return sdkAnswerCase{name: "fail/" + name, status: 200, body: body, wantStatus: 500, wantBody: internal, cause: cause}
	}
	failStatus := func(name string, status int32, body, cause string) sdkAnswerCase {
		c := fail(name, body, cause)
		c.status = status
		return c
	}
	refuse := func(name, body string, reason a2aerr.Reason, msg string) sdkAnswerCase {
		return sdkAnswerCase{name: "refused/" + name, status: 400, body: body, wantStatus: 400, wantBody: fixed(errBody(reason, msg))}
	}
	const domain = "a2a-protocol.org"
	text := `[{"text":"x"}]`
	stepUp := sdkTask("TASK_STATE_AUTH_REQUIRED", `{"pact.missingScopes":["orders:read"]}`, `[{"text":"not here"}]`)
	return []sdkAnswerCase{
		{name: "ok/text", status: 200, body: sdkMessage(`[{"text":"hi <b> & \u00e9"}]`, ""), wantStatus: 200,
			wantBody: replyOf(`"hi <b> & é"`, ""), stored: true},
		{name: "ok/two-parts", status: 200, body: sdkMessage(`[{"text":"a"},{"text":"b","metadata":{"x":1}}]`, ""), wantStatus: 200,
			wantBody: replyOf(`"a\nb"`, ""), stored: true},
		{name: "ok/extra-members", status: 200, body: `{"message":{"role":"ROLE_AGENT","parts":[{"text":"x"}],"extensions":["urn:x"],"kind":"message"}}`,
			wantStatus: 200, wantBody: replyOf(`"x"`, ""), stored: true},
		{name: "ok/receipt", user: "u1", status: 200, body: sdkMessage(text, `{"pact.scopesUsed":["orders:read"],"pact.actions":[`+
			`{"tool":"cancel_order","args":{"orderId":"1002", "n":12345678901234567890}},{"tool":"list_orders"},{"tool":"ping","args":null}],`+
			`"trace":"t","pact.receipt":"forged","pact.other":1}`), wantStatus: 200,
			wantBody: replyOf(`"x"`, `{"pact.receipt":{"claims":{"actions":[{"tool":"cancel_order","args_json":"{\"orderId\":\"1002\", \"n\":12345678901234567890}"},`+
				`{"tool":"list_orders"},{"tool":"ping"}],"grantId":"a2agrant_1","pa":"https://pa.example","scopesUsed":["orders:read"],"user":"u1"},"jws":"h.p.s"},"trace":"t"}`),
			stored: true},
		{name: "ok/identity-only-receipt-metadata", status: 200, body: sdkMessage(text, `{"pact.scopesUsed":["orders:read"],"pact.actions":[{"tool":"t"}]}`),
			wantStatus: 200, wantBody: replyOf(`"x"`, ""), stored: true},
		{name: "ok/metadata-canonical", status: 200, body: sdkMessage(text, `{"z":[1.0,1e2],"b":{"y":"\u003c","a":-0.0}}`), wantStatus: 200,
			wantBody: replyOf(`"x"`, `{"b":{"a":0,"y":"<"},"z":[1,100]}`), stored: true},
		{name: "ok/metadata-null", status: 200, body: sdkMessage(text, `null`), wantStatus: 200, wantBody: replyOf(`"x"`, ""), stored: true},
		{name: "ok/scopes-and-actions-null", user: "u1", status: 200, body: sdkMessage(text, `{"pact.scopesUsed":null,"pact.actions":null}`),
			wantStatus: 200, wantBody: replyOf(`"x"`, `{"pact.receipt":{"claims":{"actions":null,"grantId":"a2agrant_1","pa":"https://pa.example",`+
				`"scopesUsed":null,"user":"u1"},"jws":"h.p.s"}}`), stored: true},
		{name: "ok/step-up", status: 200, body: stepUp, wantStatus: 200, wantBody: func(ctx, replyID string) string {
			return `{"task":{"id":"t-1","contextId":"` + ctx + `","status":{"state":"TASK_STATE_AUTH_REQUIRED","message":{"messageId":"` + replyID +
				`","contextId":"` + ctx + `","role":"ROLE_AGENT","parts":[{"text":"I need your permission first: See your orders. ` +
				`Please approve it at the link your assistant shows you."}]}},"metadata":{"pact.missingScopes":["orders:read"],` +
				`"pact.verificationUriComplete":"https://brand.example/login?return_to=x"}}}`
		}},
		{name: "ok/step-up-without-delegation", brand: "beta", status: 200, body: stepUp, wantStatus: 200, wantBody: replyOf(`"not here"`, ""), stored: true},

		refuse("invalid-params", sdkError(400, "INVALID_ARGUMENT", "INVALID_PARAMS", domain, "say an order number: invalid params"),
			a2aerr.InvalidParams, "say an order number: invalid params"),
		refuse("invalid-params-no-message", sdkError(400, "INVALID_ARGUMENT", "INVALID_PARAMS", domain, ""), a2aerr.InvalidParams, "Invalid params"),
		refuse("invalid-params-blank-message", sdkError(400, "INVALID_ARGUMENT", "INVALID_PARAMS", domain, " \n"), a2aerr.InvalidParams, "Invalid params"),
		refuse("content-type", sdkError(400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", domain, "no <images> & here: incompatible content types"),
			a2aerr.ContentTypeNotSupported, "no <images> & here: incompatible content types"),
		refuse("content-type-no-message", sdkError(400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", domain, ""),
			a2aerr.ContentTypeNotSupported, "Only text parts are supported"),
		refuse("unsupported-operation", sdkError(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", domain, "this operation is not supported"),
			a2aerr.UnsupportedOperation, "this operation is not supported"),
		refuse("unsupported-operation-no-message", sdkError(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", domain, ""),
			a2aerr.UnsupportedOperation, "This operation is not supported"),
		refuse("second-detail", `{"error":{"code":400,"message":"m","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"},`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"INVALID_PARAMS"}]}}`, a2aerr.InvalidParams, "m"),

		fail("data-part", sdkMessage(`[{"text":"x"},{"data":{"a":1}}]`, ""), "PACT replies carry text only"),
		fail("raw-part", sdkMessage(`[{"raw":"aGk="}]`, ""), "PACT replies carry text only"),
		fail("url-part", sdkMessage(`[{"url":"https://x.example/a.png"}]`, ""), "PACT replies carry text only"),
		fail("text-and-data", sdkMessage(`[{"text":"x","data":{}}]`, ""), "PACT replies carry text only"),
		fail("text-not-string", sdkMessage(`[{"text":5}]`, ""), "PACT replies carry text only"),
		fail("no-parts", sdkMessage(`[]`, ""), "has no parts"),
		fail("parts-missing", `{"message":{"role":"ROLE_AGENT"}}`, "has no parts"),
		fail("part-not-object", sdkMessage(`["x"]`, ""), "a part that is not an object"),
		fail("user-role", `{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}`, `with role "ROLE_USER", not ROLE_AGENT`),
		fail("no-role", `{"message":{"parts":[{"text":"x"}]}}`, `with role "", not ROLE_AGENT`),
		fail("message-not-object", `{"message":[1]}`, "is not a Message object"),
		fail("message-null", `{"message":null}`, `with role "", not ROLE_AGENT`),
		fail("scopes-used-string", sdkMessage(text, `{"pact.scopesUsed":"orders:read"}`), "pact.scopesUsed must be an array of strings"),
		fail("scopes-used-empty-id", sdkMessage(text, `{"pact.scopesUsed":["orders:read",""]}`), "pact.scopesUsed must be an array of non-empty strings"),
		fail("scopes-used-null-id", sdkMessage(text, `{"pact.scopesUsed":[null]}`), "pact.scopesUsed must be an array of non-empty strings"),
		fail("action-without-tool", sdkMessage(text, `{"pact.actions":[{"args":1}]}`), "each action needs a tool"),
		fail("action-empty-tool", sdkMessage(text, `{"pact.actions":[{"tool":""}]}`), "each action needs a tool"),
		fail("action-null", sdkMessage(text, `{"pact.actions":[null]}`), "each action needs a tool"),
		fail("action-tool-number", sdkMessage(text, `{"pact.actions":[{"tool":1}]}`), "each action needs a tool"),
		fail("actions-not-array", sdkMessage(text, `{"pact.actions":{"tool":"t"}}`), "pact.actions must be an array"),
		fail("metadata-array", sdkMessage(text, `[]`), "metadata is not an object"),
		fail("metadata-string", sdkMessage(text, `"x"`), "metadata is not an object"),
		fail("metadata-lone-surrogate", sdkMessage(text, `{"k":"\ud800"}`), "lone surrogate"),
		fail("metadata-number-range", sdkMessage(text, `{"k":1e400}`), "number outside the IEEE 754 double range"),
		fail("completed-task", sdkTask("TASK_STATE_COMPLETED", `{}`, text), `state "TASK_STATE_COMPLETED"`),
		fail("working-task", sdkTask("TASK_STATE_WORKING", `{"pact.missingScopes":["orders:read"]}`, ""), `state "TASK_STATE_WORKING"`),
		fail("step-up-without-scopes", sdkTask("TASK_STATE_AUTH_REQUIRED", `{}`, text), "has no pact.missingScopes"),
		fail("step-up-empty-scopes", sdkTask("TASK_STATE_AUTH_REQUIRED", `{"pact.missingScopes":[]}`, ""), "has no pact.missingScopes"),
		fail("step-up-scopes-string", sdkTask("TASK_STATE_AUTH_REQUIRED", `{"pact.missingScopes":"orders:read"}`, ""), "pact.missingScopes must be an array"),
		fail("step-up-empty-scope", sdkTask("TASK_STATE_AUTH_REQUIRED", `{"pact.missingScopes":[""]}`, ""), "non-empty strings"),
		fail("step-up-data-part", sdkTask("TASK_STATE_AUTH_REQUIRED", `{"pact.missingScopes":["orders:read"]}`, `[{"data":{}}]`), "text only"),
		fail("task-not-object", `{"task":"t"}`, "is not a Task object"),
		fail("message-and-task", `{"message":{},"task":{}}`, "not one Message or Task"),
		fail("status-update", `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`, "neither a Message nor a Task"),
		fail("error-with-200", sdkError(400, "INVALID_ARGUMENT", "INVALID_PARAMS", domain, "m"), "neither a Message nor a Task"),
		fail("empty-object", `{}`, "not one Message or Task"),
		fail("not-json", `{`, "answered 200 with a body that is not a JSON object"),
		fail("json-null", `null`, "not a JSON object"),
		fail("json-array", `[]`, "not a JSON object"),
		fail("empty-body", ``, "not a JSON object"),
		fail("too-large", sdkMessage(`[{"text":"`+strings.Repeat("a", 1<<20)+`"}]`, ""), "larger than 1048576 bytes"),
		failStatus("internal-error", 500, sdkError(500, "INTERNAL", "INTERNAL_ERROR", domain, "database down"), `answered 500 INTERNAL_ERROR: "database down"`),
		failStatus("unauthenticated", 401, sdkError(401, "UNAUTHENTICATED", "UNAUTHENTICATED", domain, "who?"), "answered 401 UNAUTHENTICATED"),
		failStatus("gateway-timeout", 504, `{"error":{"code":504,"status":"DEADLINE_EXCEEDED","message":"timeout"}}`, "answered 504"),
		failStatus("other-domain", 400, sdkError(400, "INVALID_ARGUMENT", "INVALID_PARAMS", "other.example", "m"), `answered 400 : "m"`),
		failStatus("other-detail-type", 400, `{"error":{"message":"m","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest",`+
			`"domain":"a2a-protocol.org","reason":"INVALID_PARAMS"}]}}`, `answered 400 : "m"`),
		failStatus("task-not-found", 404, sdkError(404, "NOT_FOUND", "TASK_NOT_FOUND", domain, "no task"), "answered 404 TASK_NOT_FOUND"),
		failStatus("error-not-object", 400, `{"error":"bad"}`, `answered 400 : ""`),
		failStatus("status-zero", 0, sdkMessage(text, ""), "answered 0"),
		failStatus("message-with-400", 400, sdkMessage(text, ""), "answered 400"),
		failStatus("html-502", 502, `<html>Bad Gateway</html>`, "answered 502 with a body that is not a JSON object"),
	}
}

// TestFinishTurnSDKAnswer: what pactd makes of each SDK answer a frontend
// hands FinishTurn: a Message is the reply (its pact.scopesUsed and
// pact.actions go to the receipt of a delegated turn, args as the SDK
// wrote them; its other metadata passes on canonical; "pact." keys are
// dropped) and is stored; a step-up Task is pactd's step-up (or the
// Task's text where the Brand offers no delegation); INVALID_PARAMS,
// CONTENT_TYPE_NOT_SUPPORTED and UNSUPPORTED_OPERATION pass on to the PA
// in PACT's envelope with the SDK's message (or a default), unlogged;
// anything else fails the turn: INTERNAL, one log line with the cause.
// Every answer that is not a stored reply releases the messageId.
func TestFinishTurnSDKAnswer(t *testing.T) {
	e := newEnv(t)
	for i, c := range sdkAnswerCases() {
		t.Run(c.name, func(t *testing.T) {
			brand := c.brand
			if brand == "" {
				brand = "acme"
			}
			msgID := fmt.Sprintf("m%d", i)
			// A conversation of its own: every reply is reply-1.
			turn := e.startTurn(t, sendRequest(brand, msgID, "", "hi", c.user))
			mark, abandoned, receipts := len(e.log.String()), e.turns.abandoned.Load(), len(e.receipts.requests())
			e.ids.Store(0)
			res, err := e.finish(t, &pactv1.FinishTurnRequest{Handle: turn.GetHandle(),
				Result: &pactv1.FinishTurnRequest_SdkAnswer{SdkAnswer: &pactv1.SdkAnswer{Status: c.status, Body: []byte(c.body)}}})
			if err != nil {
				t.Fatalf("FinishTurn: %v", err)
			}
			got := res.GetResponse()
			if want := c.wantBody(turn.GetContextId(), "reply-1"); int(got.GetStatus()) != c.wantStatus || string(got.GetBody()) != want ||
				headerOf(got, "Content-Type") != "application/a2a+json" {
				t.Fatalf("answer %d %v %s\nwant %d %s", got.GetStatus(), got.GetHeaders(), got.GetBody(), c.wantStatus, want)
			}
			logged := e.logEntries(t, mark)
			switch {
			case c.cause != "" && (len(logged) != 1 || logged[0]["msg"] != "run turn" || !strings.Contains(fmt.Sprint(logged[0]["error"]), c.cause)):
				t.Errorf("want one log line with the cause %q; got %v", c.cause, logged)
			case c.cause == "" && len(logged) != 0:
				t.Errorf("logged: %v", logged)
			}
			if released := e.turns.abandoned.Load() - abandoned; released != map[bool]int32{true: 0, false: 1}[c.stored] {
				t.Errorf("AbandonTurn called %d times (stored %v)", released, c.stored)
			}
			if n := len(e.receipts.requests()) - receipts; n != map[bool]int{true: 1}[c.user != "" && c.stored] {
				t.Errorf("SignReceipt called %d times", n)
			}
			again, err := e.serve(t, sendRequest(brand, msgID, turn.GetContextId(), "hi", c.user))
			switch {
			case err != nil:
				t.Fatal(err)
			case c.stored && !slices.Equal(again.GetResponse().GetBody(), got.GetBody()):
				t.Errorf("the stored reply does not replay: %v", again)
			case !c.stored && again.GetTurn() == nil:
				t.Errorf("the messageId was not released: %v", again)
			}
		})
	}
	// The receipt of ok/receipt names the actions with the SDK's own
	// argument bytes.
	reqs := e.receipts.requests()
	if len(reqs) == 0 {
		t.Fatal("no receipt was signed")
	}
	acts := reqs[0].GetActions()
	if len(acts) != 3 || acts[0].GetArgsJson() != `{"orderId":"1002", "n":12345678901234567890}` || acts[1].GetArgsJson() != "" ||
		acts[2].GetArgsJson() != "" || acts[0].GetArgsHash() != "" || !slices.Equal(reqs[0].GetScopesUsed(), []string{"orders:read"}) {
		t.Errorf("SignReceipt got %v", reqs[0])
	}
}

// TestFinishTurnFailure: a frontend's failure (the agent threw, panicked
// or timed out) answers INTERNAL, logs the cause once (clipped: a stack
// may follow it) and releases the messageId. An empty failure is a
// failure too (an exception's text may be empty, as Python's str() of a
// bare Exception is), never a call without result that leaves the
// messageId claimed.
func TestFinishTurnFailure(t *testing.T) {
	e := newEnv(t)
	for i, cause := range []string{"the agent panicked: executor fell over\n" + strings.Repeat("goroutine 7 [running]:\n", 100), ""} {
		msgID := fmt.Sprintf("m%d", i)
		turn := e.startTurn(t, sendRequest("acme", msgID, "", "hi", ""))
		mark, abandoned := len(e.log.String()), e.turns.abandoned.Load()
		res, err := e.finish(t, &pactv1.FinishTurnRequest{Handle: turn.GetHandle(), Result: &pactv1.FinishTurnRequest_Failure{Failure: cause}})
		if err != nil || res.GetResponse().GetStatus() != 500 || string(res.GetResponse().GetBody()) != errBody(a2aerr.Internal, "Internal error") {
			t.Fatalf("failure %.20q: %v %v", cause, res, err)
		}
		logged := e.logEntries(t, mark)
		if len(logged) != 1 {
			t.Fatalf("failure %.20q is logged %d times: %v", cause, len(logged), logged)
		}
		msg := fmt.Sprint(logged[0]["error"])
		if logged[0]["msg"] != "run turn" || !strings.HasPrefix(msg, "the agent failed: ") || len(msg) > 400 ||
			cause != "" && (!strings.Contains(msg, "executor fell over") || !strings.HasSuffix(msg, "…")) ||
			cause == "" && msg != "the agent failed: (no cause given)" {
			t.Errorf("failure %.20q is logged as %q; want one clipped line", cause, msg)
		}
		if e.turns.abandoned.Load() != abandoned+1 {
			t.Errorf("failure %.20q: the turn was not released", cause)
		}
		if again := e.startTurn(t, sendRequest("acme", msgID, turn.GetContextId(), "hi", "")); again == nil {
			t.Fatal("not released")
		}
	}
}
