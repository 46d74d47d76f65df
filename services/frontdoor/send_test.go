package frontdoor_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/services/conversation"
	"pactd.dev/pactd/services/frontdoor"
)

func TestSendValidationOrder(t *testing.T) {
	e := newEnv(t)
	msg := func(fields string) string { return `{"message":{` + fields + `}}` }
	const (
		id   = `"messageId":"m1"`
		user = `"role":"ROLE_USER"`
		text = `"parts":[{"text":"hi"}]`
	)
	schema := func(m string) string { return errBody(a2aerr.InvalidParams, m) }
	badBody := schema(`The body must be JSON: {"message": Message}`)
	badPart := schema("Each part must be an object with exactly one of text, raw, url or data")
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"fail/not-json", `{`, 400, badBody},
		{"fail/empty", ``, 400, badBody},
		{"fail/array", `[]`, 400, badBody},
		{"fail/no-message", `{}`, 400, badBody},
		{"fail/message-null", `{"message":null}`, 400, badBody},
		{"fail/message-case", `{"MESSAGE":{` + id + `,` + user + `,` + text + `}}`, 400, badBody},
		{"fail/no-message-id", msg(user + `,` + text), 400, schema("message.messageId must be a non-empty string")},
		{"fail/empty-message-id", msg(`"messageId":"",` + user + `,` + text), 400, schema("message.messageId must be a non-empty string")},
		{"fail/numeric-message-id", msg(`"messageId":1,` + user + `,` + text), 400, schema("message.messageId must be a non-empty string")},
		{"fail/bad-role", msg(id + `,"role":"user",` + text), 400, schema("message.role must be ROLE_USER")},
		{"fail/no-parts", msg(id + `,` + user), 400, schema("message.parts must be a non-empty array of parts")},
		{"fail/empty-parts", msg(id + `,` + user + `,"parts":[]`), 400, schema("message.parts must be a non-empty array of parts")},
		{"fail/part-kind", msg(id + `,` + user + `,"parts":[{"kind":"text","text":"hi"}]`), 400, badPart},
		{"fail/part-two-kinds", msg(id + `,` + user + `,"parts":[{"text":"hi","url":"https://x"}]`), 400, badPart},
		{"fail/part-none", msg(id + `,` + user + `,"parts":[{"metadata":{}}]`), 400, badPart},
		{"fail/part-text-number", msg(id + `,` + user + `,"parts":[{"text":5}]`), 400, badPart},
		{"fail/part-not-object", msg(id + `,` + user + `,"parts":["hi"]`), 400, schema("message.parts must be a non-empty array of parts")},
		{"fail/context-number", msg(id + `,` + user + `,` + text + `,"contextId":5`), 400, schema("message.contextId and message.taskId must be strings")},
		{"fail/metadata-array", msg(id + `,` + user + `,` + text + `,"metadata":[]`), 400, schema("message.metadata must be an object")},
		// Schema errors come before taskId, taskId before role, role before
		// content type, content type before blank text.
		{"fail/task-id", msg(id + `,"role":"ROLE_AGENT","parts":[{"raw":"aGVsbG8="}],"taskId":"t1"`), 404, errBody(a2aerr.TaskNotFound, "Task not found")},
		{"fail/role-agent", msg(id + `,"role":"ROLE_AGENT","parts":[{"raw":"aGVsbG8="}]`), 400, schema("message.role must be ROLE_USER")},
		{"fail/role-unspecified", msg(id + `,"role":"ROLE_UNSPECIFIED",` + text), 400, schema("message.role must be ROLE_USER")},
		{"fail/raw-with-empty-text", msg(id + `,` + user + `,"parts":[{"text":""},{"raw":"aGVsbG8="}]`), 400, errBody(a2aerr.ContentTypeNotSupported, "Only text parts are supported")},
		{"fail/url", msg(id + `,` + user + `,"parts":[{"url":"https://x.example/a.png","mediaType":"image/png","filename":"a.png"}]`), 400, errBody(a2aerr.ContentTypeNotSupported, "Only text parts are supported")},
		{"fail/data", msg(id + `,` + user + `,"parts":[{"data":{"a":1}}]`), 400, errBody(a2aerr.ContentTypeNotSupported, "Only text parts are supported")},
		{"fail/blank", msg(id + `,` + user + `,"parts":[{"text":" \n\t"},{"text":""}]`), 400, schema("The message text is empty")},
		{"fail/unknown-context", msg(id + `,` + user + `,` + text + `,"contextId":"nope"`), 400, errBody(a2aerr.InvalidParams, a2aerr.MsgUnknownContextID)},
		{"fail/message-id-too-long", msg(`"messageId":"` + strings.Repeat("m", 257) + `",` + user + `,` + text), 400, errBody(a2aerr.InvalidParams, a2aerr.MsgMessageIDTooLong)},
	}
	for _, c := range cases {
		wantA2A(t, c.name, e.do(t, "POST", "/a2a/acme/message:send", c.body, good), c.status, c.want)
	}
	if n := e.agent.runs.Load(); n != 0 {
		t.Fatalf("the agent ran %d times for refused messages", n)
	}
	// Positive control: with metadata, configuration and unknown message
	// fields it passes.
	ok := `{"message":{` + id + `,` + user + `,"parts":[{"text":"hi","metadata":{"k":1}}],"metadata":{},"extensions":[]},"configuration":{"blocking":true},"metadata":{}}`
	if r := e.do(t, "POST", "/a2a/acme/message:send", ok, good); r.status != 200 {
		t.Fatalf("valid message: %d %s", r.status, r.body)
	}
}

// replyBody is the strict shape of a message:send answer.
type replyBody struct {
	Message struct {
		MessageID string `json:"messageId"`
		ContextID string `json:"contextId"`
		Role      string `json:"role"`
		Parts     []struct {
			Text string `json:"text"`
		} `json:"parts"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	} `json:"message"`
}

func decodeReply(t *testing.T, r response) replyBody {
	t.Helper()
	if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" {
		t.Fatalf("send: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	dec := json.NewDecoder(strings.NewReader(r.body))
	dec.DisallowUnknownFields()
	var out replyBody
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("reply %s is not strictly {message:{messageId,contextId,role,parts:[{text}]}}: %v", r.body, err)
	}
	return out
}

func TestSendRepliesContinuesAndReplays(t *testing.T) {
	e := newEnv(t)
	send := func(msgID, contextID, text string, hdrs ...string) response {
		return e.do(t, "POST", "/a2a/acme/message:send", sendBody(msgID, contextID, text), append([]string{good}, hdrs...)...)
	}
	first := send("m1", "", "hello")
	r := decodeReply(t, first)
	if r.Message.Role != "ROLE_AGENT" || r.Message.MessageID != "reply-1" || !conversation.IsUUID(r.Message.ContextID) ||
		len(r.Message.Parts) != 1 || r.Message.Parts[0].Text != "This is the acme support agent. You said: hello" {
		t.Fatalf("first reply = %+v", r)
	}
	ctxID := r.Message.ContextID
	// Content-Type and A2A-Version are not enforced.
	r2 := decodeReply(t, send("m2", ctxID, "again", "Content-Type: text/plain", "A2A-Version: 2.0"))
	if r2.Message.ContextID != ctxID || r2.Message.MessageID != "reply-2" {
		t.Fatalf("continuation = %+v", r2)
	}
	decodeReply(t, send("m3", ctxID, "more", "Content-Type: application/a2a+json"))
	// A retry replays the stored bytes without running the agent.
	before := e.agent.runs.Load()
	if again := send("m1", ctxID, "hello"); again.status != 200 || again.body != first.body {
		t.Fatalf("replay = %d %s; want %s", again.status, again.body, first.body)
	}
	if e.agent.runs.Load() != before {
		t.Fatalf("the agent ran again for a replayed messageId")
	}
	// A messageId equal to an agent reply id is refused.
	wantA2A(t, "reply id as messageId", send("reply-1", ctxID, "x"), 400, errBody(a2aerr.InvalidParams, a2aerr.MsgReplyIDCollision))
	// Another User (sub) cannot use the context: identical to a random id.
	foreign := e.do(t, "POST", "/a2a/acme/message:send", sendBody("z", ctxID, "x"), "Authorization: Bearer good-bob")
	random := e.do(t, "POST", "/a2a/acme/message:send", sendBody("z", conversation.NewUUID(), "x"), good)
	otherBrand := e.do(t, "POST", "/a2a/beta/message:send", sendBody("z", ctxID, "x"), good)
	for name, got := range map[string]response{"other sub": foreign, "random": random, "other Brand": otherBrand} {
		wantA2A(t, name, got, 400, errBody(a2aerr.InvalidParams, a2aerr.MsgUnknownContextID))
	}
	if r.Message.Metadata != nil {
		t.Fatalf("identity-only reply has metadata %s", first.body)
	}
	// Delegation: the verified Brand user reaches the conversation's lock
	// and the agent, and the reply carries the receipt, stored with it.
	signed := send("d1", ctxID, "mine", "X-A2A-User-Delegation: Bearer deleg-u1")
	d := decodeReply(t, signed)
	want := `{"claims":{"actions":null,"grantId":"a2agrant_1","pa":"https://pa.example","scopesUsed":null,"user":"u1"},"jws":"h.p.s"}`
	if !strings.HasSuffix(d.Message.Parts[0].Text, "(as u1)") || string(d.Message.Metadata["pact.receipt"]) != want {
		t.Fatalf("delegated reply = %s", signed.body)
	}
	if again := send("d1", ctxID, "mine", "X-A2A-User-Delegation: Bearer deleg-u1"); again.body != signed.body {
		t.Fatalf("delegated replay %s != %s", again.body, signed.body)
	}
	wantA2A(t, "other Brand user", send("d2", ctxID, "x", "X-A2A-User-Delegation: Bearer deleg-u2"), 400, errBody(a2aerr.InvalidParams, a2aerr.MsgOtherBrandUser))
}

func TestSendDuplicateWhileRunningAndAgentFailure(t *testing.T) {
	e := newEnv(t)
	e.agent.entered = make(chan struct{}, 1)
	e.agent.release = make(chan struct{})
	// Make a context first (runs the agent once).
	go func() { <-e.agent.entered; e.agent.release <- struct{}{} }()
	ctxID := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "slow"), good)).Message.ContextID
	withCtx := sendBody("m2", ctxID, "slow")

	done := make(chan response, 1)
	go func() { done <- e.do(t, "POST", "/a2a/acme/message:send", withCtx, good) }()
	<-e.agent.entered // the first m2 is running
	wantA2A(t, "duplicate while running", e.do(t, "POST", "/a2a/acme/message:send", withCtx, good), 400,
		errBody(a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate))
	e.agent.release <- struct{}{}
	first := <-done
	decodeReply(t, first)
	if again := e.do(t, "POST", "/a2a/acme/message:send", withCtx, good); again.body != first.body {
		t.Fatalf("replay %s != %s", again.body, first.body)
	}
	if n := e.agent.runs.Load(); n != 2 {
		t.Fatalf("agent runs = %d, want 2 (one per messageId)", n)
	}

	// A failing agent answers INTERNAL and releases the messageId; the
	// cause is in pactd's log once.
	e.agent.fail.Store(true)
	m3 := sendBody("m3", ctxID, "x")
	go func() { <-e.agent.entered; e.agent.release <- struct{}{} }()
	wantA2A(t, "agent failure", e.do(t, "POST", "/a2a/acme/message:send", m3, good), 500, errBody(a2aerr.Internal, "Internal error"))
	if lines := e.logLines("agent down"); len(lines) != 1 || !strings.Contains(lines[0], `"msg":"run turn"`) {
		t.Errorf("the failure's cause is logged %d times: %v", len(lines), lines)
	}
	if n := e.turns.abandoned.Load(); n != 1 {
		t.Errorf("AbandonTurn called %d times, want 1", n)
	}
	e.agent.fail.Store(false)
	go func() { <-e.agent.entered; e.agent.release <- struct{}{} }()
	decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", m3, good))
}

// TestStepUp: a turn needing a scope answers the AUTH_REQUIRED task, is
// not stored (the messageId runs again), and falls back to the agent's
// text at a Brand without delegation.
func TestStepUp(t *testing.T) {
	e := newEnv(t)
	body := sendBody("m1", "", "need orders:read")
	want := `{"task":{"id":"t-1","contextId":"%s","status":{"state":"TASK_STATE_AUTH_REQUIRED","message":{"messageId":"reply-%d","contextId":"%s","role":"ROLE_AGENT",` +
		`"parts":[{"text":"I need your permission first: See your orders. Please approve it at the link your assistant shows you."}]}},` +
		`"metadata":{"pact.missingScopes":["orders:read"],"pact.verificationUriComplete":"https://brand.example/login?return_to=x"}}}`
	r := e.do(t, "POST", "/a2a/acme/message:send", body, good)
	var task struct{ Task struct{ ContextID string } }
	if json.Unmarshal([]byte(r.body), &task) != nil || task.Task.ContextID == "" {
		t.Fatalf("step-up = %d %s", r.status, r.body)
	}
	ctxID := task.Task.ContextID
	wantA2A(t, "step-up", r, 200, fmt.Sprintf(want, ctxID, 1, ctxID))
	wantA2A(t, "step-up again", e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", ctxID, "need orders:read"), good), 200,
		fmt.Sprintf(want, ctxID, 2, ctxID))
	if n := e.agent.runs.Load(); n != 2 {
		t.Fatalf("agent runs = %d, want 2", n)
	}
	if got := decodeReply(t, e.do(t, "POST", "/a2a/beta/message:send", body, good)); got.Message.Parts[0].Text != "not here" {
		t.Fatalf("no-delegation fallback = %+v", got)
	}
	su := e.deleg.stepUpRequests()
	if len(su) != 3 || su[0].GetBrandId() != "acme" || su[0].GetAgentId() != "agt_1" || su[0].GetContextId() != ctxID ||
		len(su[0].GetMissingScopes()) != 1 || su[0].GetMissingScopes()[0] != "orders:read" {
		t.Fatalf("StartStepUp got %v", su)
	}
}

// TestBodyLimit: a body past MaxBodyBytes is never forwarded; the
// frontend says body_too_large and pactd answers message:send's refusal
// with Connection: close.
func TestBodyLimit(t *testing.T) {
	e := newEnv(t)
	big := sendBody("m1", "", strings.Repeat("a", frontdoor.MaxBodyBytes))
	r := e.do(t, "POST", "/a2a/acme/message:send", big, good)
	wantA2A(t, "body over 1 MiB", r, 400, errBody(a2aerr.InvalidParams, "The request body is unreadable or too large"))
	if !r.close {
		t.Errorf("body over 1 MiB: the connection was kept")
	}
	if e.agent.runs.Load() != 0 {
		t.Fatalf("the agent ran for an oversized body")
	}
}

// TestBodyTooLargeAtServe: Serve's answer to body_too_large on each route
// that reads a body, as the route refuses a body past its own bound:
// message:send's A2A error and a page form's 413 page in both login
// modes (each with Connection: close), the OAuth token endpoint's 413 invalid_request, and
// self-registration's 413. The control: the same requests with a small
// body are read.
func TestBodyTooLargeAtServe(t *testing.T) {
	e := newEnv(t)
	req := func(method, path string, tooLarge bool, body string, headers ...string) *pactv1.ServeRequest {
		r := &pactv1.ServeRequest{Method: method, Path: path, BodyTooLarge: tooLarge, Body: []byte(body), SignsInUsers: true, BrandUser: "alice"}
		for _, h := range append([]string{"Host: fe.example"}, headers...) {
			k, v, _ := strings.Cut(h, ": ")
			r.Headers = append(r.Headers, &pactv1.HttpHeader{Name: k, Value: v})
		}
		return r
	}
	const form = "Content-Type: application/x-www-form-urlencoded"
	resp := func(r *pactv1.ServeRequest) *pactv1.HttpResponse {
		t.Helper()
		res, err := e.serve(t, r)
		if err != nil || res.GetResponse() == nil {
			t.Fatalf("Serve %s %s: %v %v", r.GetMethod(), r.GetPath(), res, err)
		}
		return res.GetResponse()
	}
	header := func(res *pactv1.HttpResponse, name string) string {
		for _, h := range res.GetHeaders() {
			if h.GetName() == name {
				return h.GetValue()
			}
		}
		return ""
	}

	send := resp(req("POST", "/a2a/acme/message:send", true, "", good))
	if send.GetStatus() != 400 || string(send.GetBody()) != errBody(a2aerr.InvalidParams, "The request body is unreadable or too large") ||
		header(send, "Connection") != "close" || header(send, "Content-Type") != "application/a2a+json" {
		t.Errorf("message:send: %d %v %s", send.GetStatus(), send.GetHeaders(), send.GetBody())
	}
	for _, c := range []struct{ path, says string }{
		{"/a2a/shop/oauth/consent/decision", "The form is too large."},
		{"/a2a/shop/oauth/connected/revoke", "The form is too large."},
		{"/a2a/mart/oauth/consent/decision", "The form is too large."},
		{"/a2a/mart/oauth/connected/revoke", "The form is too large."},
		{"/a2a/mart/oauth/consent", "The sign-in could not be read."},
		{"/a2a/mart/oauth/connected", "The sign-in could not be read."},
	} {
		page := resp(req("POST", c.path, true, "", form))
		if page.GetStatus() != 413 || header(page, "Connection") != "close" || header(page, "Content-Type") != "text/html; charset=utf-8" ||
			!strings.Contains(string(page.GetBody()), c.says) {
			t.Errorf("%s: %d %v %s", c.path, page.GetStatus(), page.GetHeaders(), page.GetBody())
		}
	}
	token := resp(req("POST", "/a2a/shop/oauth/token", true, "", form, good))
	if token.GetStatus() != 413 || string(token.GetBody()) != `{"error":"invalid_request","error_description":"the request body is too large"}` ||
		header(token, "Cache-Control") != "no-store" {
		t.Errorf("token endpoint: %d %v %s", token.GetStatus(), token.GetHeaders(), token.GetBody())
	}
	reg := resp(req("POST", "/api/platforms", true, "", "Authorization: Bearer tok"))
	if reg.GetStatus() != 413 || string(reg.GetBody()) != `{"error":"body_too_large"}`+"\n" || header(reg, "Connection") != "close" {
		t.Errorf("registration: %d %v %s", reg.GetStatus(), reg.GetHeaders(), reg.GetBody())
	}
	if e.agent.runs.Load() != 0 || e.oauth.calls.Load() != 0 || e.reg.request() != nil || len(e.deleg.revokedIDs()) != 0 {
		t.Fatalf("an oversized body reached a service")
	}

	// The controls: small bodies are read, and answered by the services.
	if res, err := e.serve(t, req("POST", "/a2a/acme/message:send", false, sendBody("m1", "", "hi"), good)); err != nil || res.GetTurn() == nil {
		t.Errorf("message:send control: %v %v", res, err)
	}
	if token := resp(req("POST", "/a2a/shop/oauth/token", false, "grant_type=x", form, good)); token.GetStatus() != 400 ||
		string(token.GetBody()) != `{"error":"authorization_pending"}` {
		t.Errorf("token control: %d %s", token.GetStatus(), token.GetBody())
	}
	if page := resp(req("POST", "/a2a/shop/oauth/consent/decision", false, "decision=allow", form)); page.GetStatus() != 403 ||
		header(page, "Connection") != "" {
		t.Errorf("form control (no CSRF token: 403): %d %v", page.GetStatus(), page.GetHeaders())
	}
}

// TestOversizedBodyClosesTheConnection (RFC 9112 §9.3): after refusing a
// body past its bound, the frontend closes the connection, so the next
// request a keep-alive client sends on it is never parsed out of the rest
// of that body, and nothing hangs: the client reads the refusal, then
// end of file. Over one TCP connection each: message:send past 1 MiB
// (far past, and just past), a consent form past 16 KiB (pactd's page
// bound, within the frontend's), and a body that stops arriving. The
// control: a body within its bound keeps the connection for the next
// request.
func TestOversizedBodyClosesTheConnection(t *testing.T) {
	e := newEnv(t, withSessions)
	addr := strings.TrimPrefix(e.url, "http://")
	auth := "Authorization: Bearer good-alice\r\n"
	next := "GET /a2a/acme/tasks HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n"
	sendHead := func(n int) string {
		return "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n"
	}
	formHead := func(n int) string {
		return "POST /a2a/shop/oauth/consent/decision HTTP/1.1\r\nHost: x\r\nCookie: user=alice\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
			strconv.Itoa(n) + "\r\n\r\n"
	}
	big := func(n int) string { return "csrf=" + strings.Repeat("a", n-5) }
	tooLarge := errBody(a2aerr.InvalidParams, "The request body is unreadable or too large")
	cases := []struct {
		name         string
		head, body   string // body is written after the head, then next
		status       int
		wantA2A      string // the exact A2A body, when the answer is A2A
		keepsConnect bool
	}{
		{"fail/send-far-past-1MiB", sendHead(4 << 20), big(4 << 20), 400, tooLarge, false},
		{"fail/send-just-past-1MiB", sendHead(1<<20 + 10), big(1<<20 + 10), 400, tooLarge, false},
		{"fail/form-past-16KiB", formHead(20 << 10), big(20 << 10), 413, "", false},
		{"fail/send-body-stops", sendHead(4 << 20), big(1<<20 + 100), 400, tooLarge, false},
		{"ok/send-within-bound", sendHead(len(`{`)), `{`, 400, errBody(a2aerr.InvalidParams, `The body must be JSON: {"message": Message}`), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, never blocks it
			go func() {
				// The server may stop reading and close; writing the rest then fails, as it should.
				_, _ = io.WriteString(conn, c.head+c.body)
				if !strings.Contains(c.name, "stops") {
					_, _ = io.WriteString(conn, next)
				}
			}()
			br := bufio.NewReader(conn)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("reading the refusal: %v", err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.status || c.wantA2A != "" && string(b) != c.wantA2A {
				t.Fatalf("answer %d %s; want %d %s", res.StatusCode, b, c.status, c.wantA2A)
			}
			if res.Close == c.keepsConnect {
				t.Fatalf("Connection: close = %v, want %v", res.Close, !c.keepsConnect)
			}
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			second, err := http.ReadResponse(br, nil)
			switch {
			case c.keepsConnect && err != nil:
				t.Fatalf("the connection was not kept for the next request: %v", err)
			case c.keepsConnect:
				b, _ := io.ReadAll(second.Body)
				if second.StatusCode != 200 || !strings.Contains(string(b), `"tasks":[]`) {
					t.Fatalf("next request on the kept connection: %d %s", second.StatusCode, b)
				}
			case err == nil:
				t.Fatalf("a second answer (%d) came on a connection that should be closed", second.StatusCode)
			case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err):
				// closed: the rest of the body was never read as a request
			default:
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("the connection hangs after the refusal")
				}
				t.Fatalf("after the refusal: %v", err)
			}
		})
	}
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe")
}

// TestSendBodyNotUTF8: a message:send body that is not UTF-8 is not a
// JSON text PAs may exchange (RFC 8259 §8.1), and it is refused as one
// before a turn is claimed: its bytes would otherwise go on in the SDK's
// request (sdk_request_json, a protobuf string, which must be UTF-8), so
// no frontend could receive the turn and its messageId would stay
// claimed. The control: the same messages in UTF-8 run, with the same
// messageId.
func TestSendBodyNotUTF8(t *testing.T) {
	e := newEnv(t)
	bad := func(body, invalid string) string { return strings.Replace(body, "@", invalid, 1) }
	notJSON := errBody(a2aerr.InvalidParams, `The body must be JSON: {"message": Message}`)
	for _, c := range []struct{ name, body string }{
		{"fail/text", bad(sendBody("m1", "", "hi @"), "\xff")},
		{"fail/truncated-sequence", bad(sendBody("m1", "", "hi @"), "\xc3")},
		{"fail/surrogate-as-utf8", bad(sendBody("m1", "", "hi @"), "\xed\xa0\x80")},
		{"fail/overlong", bad(sendBody("m1", "", "hi @"), "\xc0\xaf")},
		{"fail/message-metadata", bad(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"k":"@"}}}`, "\xfe")},
		{"fail/request-metadata", bad(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"k":"@"}}`, "\x80")},
		{"fail/part-metadata", bad(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi","metadata":{"@":1}}]}}`, "\xff")},
	} {
		wantA2A(t, c.name, e.do(t, "POST", "/a2a/acme/message:send", c.body, good), 400, notJSON)
	}
	if n := e.agent.runs.Load(); n != 0 || e.calls.Load() != 0 {
		t.Fatalf("a body that is not UTF-8 reached the agent (%d runs) or the conversation (%d calls)", n, e.calls.Load())
	}
	for _, body := range []string{
		bad(sendBody("m1", "", "hi @"), "é"),
		`{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi","metadata":{"ü":1}}]},"metadata":{"k":"\u00ff"}}`,
	} {
		if r := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", body, good)); r.Message.Parts[0].Text == "" {
			t.Fatalf("control %s: %+v", body, r)
		}
	}
}
