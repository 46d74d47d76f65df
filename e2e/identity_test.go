package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
)

func errBody(r a2aerr.Reason, msg string) string { return string(a2aerr.Body(r, msg)) }

// wantA2A checks an A2A answer: status, the exact content type, the body.
func wantA2A(t *testing.T, name string, got response, status int, body string) {
	t.Helper()
	if got.status != status || got.header.Get("Content-Type") != "application/a2a+json" || got.body != body {
		t.Errorf("%s: got %d %q %s\nwant %d application/a2a+json %s", name, got.status, got.header.Get("Content-Type"), got.body, status, body)
	}
}

// wantBare checks a non-A2A answer: the status, no body, no A2A type.
func wantBare(t *testing.T, name string, got response, status int) {
	t.Helper()
	if got.status != status || got.body != "" || got.header.Get("Content-Type") == "application/a2a+json" {
		t.Errorf("%s: got %d %q %q; want a bare %d", name, got.status, got.header.Get("Content-Type"), got.body, status)
	}
}

func TestCardDiscovery(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		r := w.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", "")
		if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" ||
			r.header.Get("Cache-Control") != "public, max-age=300" || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("card: %d %v", r.status, r.header)
		}
		var card struct {
			Name                string `json:"name"`
			SupportedInterfaces []struct {
				URL             string `json:"url"`
				ProtocolBinding string `json:"protocolBinding"`
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"supportedInterfaces"`
			SecuritySchemes map[string]struct {
				HTTPAuthSecurityScheme struct{ Scheme string } `json:"httpAuthSecurityScheme"`
			} `json:"securitySchemes"`
			Capabilities map[string]bool `json:"capabilities"`
		}
		if err := json.Unmarshal([]byte(r.body), &card); err != nil {
			t.Fatalf("card %s: %v", r.body, err)
		}
		i := card.SupportedInterfaces
		if card.Name != "ACME Inc." || len(i) == 0 || i[0].URL != w.feURL+"/a2a/acme" || i[0].ProtocolBinding != "HTTP+JSON" || i[0].ProtocolVersion != "1.0" ||
			card.SecuritySchemes["platformJwt"].HTTPAuthSecurityScheme.Scheme != "Bearer" ||
			card.Capabilities["streaming"] || card.Capabilities["pushNotifications"] || card.Capabilities["extendedAgentCard"] {
			t.Fatalf("card %s", r.body)
		}
		// An unknown Brand: 404 with no A2A body.
		wantBare(t, "unknown Brand card", w.do(t, "GET", "/a2a/nobody/.well-known/agent-card.json", ""), 404)
	})
}

func TestIdentityConversation(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		tok := w.token(t, "user-123")

		// A new conversation, then its continuation.
		first := w.send(t, "acme", tok, userMsg("m-1", "", "Where is my order?"))
		r1 := decodeReply(t, first)
		if r1.Message.Parts[0].Text != "This is the acme support agent. You said: Where is my order?" {
			t.Fatalf("reply text %q", r1.Message.Parts[0].Text)
		}
		ctxID := r1.Message.ContextID
		r2 := decodeReply(t, w.send(t, "acme", tok, userMsg("m-2", ctxID, "Order 42")))
		if r2.Message.ContextID != ctxID || r2.Message.MessageID == r1.Message.MessageID {
			t.Fatalf("continuation %+v in %s", r2, ctxID)
		}
		// Content type and version headers are not enforced.
		for _, hdrs := range [][]string{
			{"Content-Type: text/plain", "A2A-Version: 2.0"},
			{"Content-Type: application/a2a+json"},
		} {
			b := `{"message":{"messageId":"lenient-` + strings.Join(hdrs, "") + `","role":"ROLE_USER","parts":[{"text":"hi"}],"contextId":"` + ctxID + `"}}`
			decodeReply(t, w.do(t, "POST", "/a2a/acme/message:send", b, append([]string{"Authorization: Bearer " + tok}, hdrs...)...))
		}

		// A retry of m-1 replays the stored reply, byte for byte, without
		// running the agent.
		runs := w.agent.runs.Load()
		again := w.send(t, "acme", tok, userMsg("m-1", ctxID, "Where is my order?"))
		if again.status != 200 || again.body != first.body || again.header.Get("Content-Type") != "application/a2a+json" {
			t.Fatalf("replay = %d %s; want %s", again.status, again.body, first.body)
		}
		if w.agent.runs.Load() != runs {
			t.Fatalf("the agent ran for a replayed messageId")
		}
		// The same messageId without contextId starts a new conversation.
		if r := decodeReply(t, w.send(t, "acme", tok, userMsg("m-1", "", "again"))); r.Message.ContextID == ctxID {
			t.Fatalf("m-1 without contextId continued %s", ctxID)
		}
		// A messageId equal to an agent reply id is refused.
		wantA2A(t, "agent reply id", w.send(t, "acme", tok, userMsg(r1.Message.MessageID, ctxID, "x")), 400,
			errBody(a2aerr.InvalidParams, a2aerr.MsgReplyIDCollision))

		// Foreign contexts: another sub, another Brand, a random UUID, a
		// non-UUID: identical answers.
		unknown := errBody(a2aerr.InvalidParams, a2aerr.MsgUnknownContextID)
		other := w.token(t, "user-456")
		cases := map[string]response{
			"other sub":   w.send(t, "acme", other, userMsg("f-1", ctxID, "x")),
			"other Brand": w.send(t, "beta", tok, userMsg("f-1", ctxID, "x")),
			"random uuid": w.send(t, "acme", tok, userMsg("f-1", "3f1e2d4c-5b6a-4798-8a7b-6c5d4e3f2a1b", "x")),
			"non-uuid":    w.send(t, "acme", tok, userMsg("f-1", "ctx-1", "x")),
		}
		for name, r := range cases {
			wantA2A(t, name, r, 400, unknown)
		}

		// taskId, malformed JSON and non-text parts, in the §4 order.
		wantA2A(t, "taskId", w.send(t, "acme", tok, map[string]any{"messageId": "t-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "x"}}, "taskId": "task-1"}),
			404, errBody(a2aerr.TaskNotFound, "Task not found"))
		wantA2A(t, "malformed JSON", w.do(t, "POST", "/a2a/acme/message:send", "{", "Authorization: Bearer "+tok), 400,
			errBody(a2aerr.InvalidParams, `The body must be JSON: {"message": Message}`))
		wantA2A(t, "raw part with empty text", w.send(t, "acme", tok, map[string]any{"messageId": "t-2", "role": "ROLE_USER", "parts": []any{map[string]any{"text": ""}, map[string]any{"raw": "aGVsbG8="}}}),
			400, errBody(a2aerr.ContentTypeNotSupported, "Only text parts are supported"))
		wantA2A(t, "role agent", w.send(t, "acme", tok, map[string]any{"messageId": "t-3", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "x"}}}),
			400, errBody(a2aerr.InvalidParams, "message.role must be ROLE_USER"))
		wantA2A(t, "blank", w.send(t, "acme", tok, userMsg("t-4", ctxID, "  \n ")), 400, errBody(a2aerr.InvalidParams, "The message text is empty"))
	})
}

func TestTaskRoutes(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		auth := "Authorization: Bearer " + w.token(t, "user-123")
		push := errBody(a2aerr.PushNotificationNotSupported, "Push notifications are not supported")
		cases := []struct {
			method, path string
			status       int
			body         string
		}{
			{"GET", "/a2a/acme/tasks", 200, `{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}`},
			{"GET", "/a2a/acme/tasks?pageSize=20&pageToken=x", 200, `{"tasks":[],"nextPageToken":"","pageSize":20,"totalSize":0}`},
			{"GET", "/a2a/acme/tasks?pageSize=0", 400, errBody(a2aerr.InvalidParams, "pageSize must be an integer from 1 to 100")},
			{"GET", "/a2a/acme/tasks?pageSize=1&pageSize=2", 400, errBody(a2aerr.InvalidParams, "pageSize must be an integer from 1 to 100")},
			{"GET", "/a2a/acme/tasks/task-9", 404, errBody(a2aerr.TaskNotFound, "Task not found: task-9")},
			{"POST", "/a2a/acme/tasks/task-9:cancel", 404, errBody(a2aerr.TaskNotFound, "Task not found: task-9")},
			{"POST", "/a2a/acme/tasks/task-9%3Acancel", 404, errBody(a2aerr.TaskNotFound, "Task not found: task-9")},
			{"POST", "/a2a/acme/message:stream", 400, errBody(a2aerr.UnsupportedOperation, "Streaming is not supported")},
			{"POST", "/a2a/acme/tasks/task-9:subscribe", 400, errBody(a2aerr.UnsupportedOperation, "Subscribing to tasks is not supported")},
			{"GET", "/a2a/acme/extendedAgentCard", 400, errBody(a2aerr.UnsupportedOperation, "The extended Agent Card is not supported")},
			{"GET", "/a2a/acme/tasks/task-9/pushNotificationConfigs", 400, push},
			{"POST", "/a2a/acme/tasks/task-9/pushNotificationConfigs", 400, push},
			{"GET", "/a2a/acme/tasks/task-9/pushNotificationConfigs/c1", 400, push},
			{"DELETE", "/a2a/acme/tasks/task-9/pushNotificationConfigs/c1", 400, push},
		}
		for _, c := range cases {
			wantA2A(t, c.method+" "+c.path, w.do(t, c.method, c.path, "", auth), c.status, c.body)
			// Without a token the same routes are 401: routing first, then
			// authentication, then the route's answer.
			wantBare(t, "no token "+c.method+" "+c.path, w.do(t, c.method, c.path, ""), 401)
		}
		// An unknown Brand is 404 even with a valid token.
		wantBare(t, "unknown Brand", w.do(t, "GET", "/a2a/nobody/tasks", "", auth), 404)
		wantBare(t, "unknown Brand send", w.send(t, "nobody", w.token(t, "user-123"), userMsg("m", "", "x")), 404)
	})
}

// TestUnmatchedRoutesBeforeAuth: unmatched routes are 404/405 with or
// without a token, and are refused before any authentication: pactd's
// front door matches the route first and verifies no PA JWT for them.
func TestUnmatchedRoutesBeforeAuth(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		auth := "Authorization: Bearer " + w.token(t, "user-123")
		before := w.verifications(t)
		cases := []struct {
			method, path string
			status       int
		}{
			{"GET", "/a2a/acme/unknown", 404},
			{"GET", "/a2a/acme/message:send", 405},
			{"PUT", "/a2a/acme/message:send", 405},
			{"DELETE", "/a2a/acme/message:send", 405},
			{"POST", "/a2a/acme/tasks", 405},
			{"GET", "/a2a/acme/tasks/x:cancel", 405},
			{"GET", "/a2a/acme/tasks/x:subscribe", 405},
			{"DELETE", "/a2a/acme/tasks/x/pushNotificationConfigs", 405},
			{"POST", "/a2a/acme/tasks/x/pushNotificationConfigs/c", 405},
			{"GET", "/a2a/nobody/unknown", 404},
		}
		for _, c := range cases {
			wantBare(t, c.method+" "+c.path, w.do(t, c.method, c.path, ""), c.status)
			wantBare(t, "with token "+c.method+" "+c.path, w.do(t, c.method, c.path, "{}", auth), c.status)
		}
		if n := w.verifications(t) - before; n != 0 {
			t.Fatalf("unmatched routes ran %d PA JWT verifications", n)
		}
		// The control: a matched route is verified, and counted.
		if r := w.do(t, "GET", "/a2a/acme/tasks", "", auth); r.status != 200 || w.verifications(t)-before != 1 {
			t.Fatalf("matched route: %d, %d verifications", r.status, w.verifications(t)-before)
		}
	})
}

// TestRootAndNotFoundPages: every frontend's root page lists the Brands by
// display name with their cards' links; a browser's GET (Accept names
// text/html) of an unknown Brand's card or page gets a 404 page, while an
// API client gets the bare 404 of PACT 1.0 §1.2 byte for byte (the
// positive control of the refusal: no body, never application/a2a+json).
func TestRootAndNotFoundPages(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		r := w.do(t, "GET", "/", "")
		if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" || r.header.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("root page: %d %v", r.status, r.header)
		}
		for _, want := range []string{`<h2>Shop Inc. <span class="id">shop</span></h2>`, `<a href="/a2a/shop/.well-known/agent-card.json">Agent Card</a>`,
			`<a href="/a2a/shop/oauth/connected">Connected assistants</a>`, `<h2>Mart Inc. <span class="id">mart</span></h2>`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("root page lacks %q", want)
			}
		}
		if strings.Contains(r.body, "/a2a/mart/oauth/connected") {
			t.Errorf("root page links a signed-assertion Brand's connected page, which lists nothing")
		}
		const browser = "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
		for _, path := range []string{"/a2a/nobody/.well-known/agent-card.json", "/a2a/nobody/oauth/connected", "/a2a/nobody/oauth/consent?user_code=BCDF-GHJK"} {
			r := w.do(t, "GET", path, "", browser)
			if r.status != 404 || r.header.Get("Content-Type") != "text/html; charset=utf-8" ||
				!strings.Contains(r.body, "This Provider serves no Brand named “nobody”.") || !strings.Contains(r.body, `<a href="/">`) {
				t.Errorf("browser GET %s: %d %v %s", path, r.status, r.header, r.body)
			}
			wantBare(t, "API GET "+path, w.do(t, "GET", path, ""), 404)
			wantBare(t, "JSON GET "+path, w.do(t, "GET", path, "", "Accept: application/json"), 404)
		}
	})
}

func TestPAJWTRefusals(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		with := func(k string, v any) map[string]any {
			c := w.claims("user-123")
			c[k] = v
			return c
		}
		msg := `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
		post := func(hdrs ...string) response { return w.do(t, "POST", "/a2a/acme/message:send", msg, hdrs...) }
		check := func(name string, r response) {
			t.Helper()
			wantBare(t, name, r, 401)
			if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="a2a"` {
				t.Errorf("%s: WWW-Authenticate = %q", name, got)
			}
		}
		// Tokens are made just before they are sent.
		cases := map[string]func() string{
			"fail/wrong-aud":     func() string { return w.pa.sign(t, "ES256", w.pa.kid, with("aud", "https://other.example/a2a")) },
			"fail/aud-interface": func() string { return w.pa.sign(t, "ES256", w.pa.kid, with("aud", w.feURL+"/a2a/acme")) },
			"fail/expired": func() string {
				now := time.Now().Unix()
				return w.pa.sign(t, "ES256", w.pa.kid, map[string]any{"iss": w.issuer, "sub": "user-123", "aud": w.audience, "iat": now - 200, "exp": now - 60})
			},
			"fail/unknown-kid":    func() string { return w.pa.sign(t, "ES256", "no-such-key", w.claims("user-123")) },
			"fail/hs256":          func() string { return w.pa.sign(t, "HS256", w.pa.kid, w.claims("user-123")) },
			"fail/disabled-agent": func() string { return w.pa.sign(t, "ES256", w.pa.kid, with("iss", w.disabled)) },
			"fail/unknown-issuer": func() string { return w.pa.sign(t, "ES256", w.pa.kid, with("iss", w.issuer+"/")) },
		}
		check("fail/no-token", post())
		check("fail/basic", post("Authorization: Basic dXNlcjpwYXNz"))
		for name, tok := range cases {
			check(name, post("Authorization: Bearer "+tok()))
		}
		// iat 31 s ahead (the suite's value) is beyond the 30 s skew only
		// while pactd's clock is less than 1 s past the token's making, so
		// a slower round trip cannot judge the rule and is tried again.
		for attempt := 0; ; attempt++ {
			made := time.Now()
			now := float64(made.UnixNano()) / 1e9
			tok := w.pa.sign(t, "ES256", w.pa.kid, map[string]any{"iss": w.issuer, "sub": "user-123", "aud": w.audience, "iat": now + 31, "exp": now + 151})
			r := post("Authorization: Bearer " + tok)
			if time.Since(made) < 900*time.Millisecond || attempt == 4 {
				check("fail/iat-31s-ahead", r)
				break
			}
		}
		// A delegation header to a Brand without delegation: 401
		// invalid_token, even with a valid PA JWT.
		r := post("Authorization: Bearer "+w.token(t, "user-123"), "X-A2A-User-Delegation: Bearer x.y.z")
		wantBare(t, "fail/delegation-disabled", r, 401)
		if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="a2a", error="invalid_token"` {
			t.Errorf("fail/delegation-disabled: WWW-Authenticate = %q", got)
		}
		if n := w.agent.runs.Load(); n != 0 {
			t.Fatalf("the agent ran %d times for refused tokens", n)
		}
		// Positive control: one token without jti, used twice and at two
		// Brands.
		tok := w.token(t, "user-123")
		for i, b := range []string{"acme", "beta", "acme"} {
			decodeReply(t, w.send(t, b, tok, userMsg(fmt.Sprintf("pc-%d", i), "", "hi")))
		}
	})
}

// TestConcurrentDuplicateRunsAgentOnce: a duplicate of a running turn is
// refused, and a burst of identical messageIds runs the agent once.
func TestConcurrentDuplicateRunsAgentOnce(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		tok := w.token(t, "user-123")
		ctxID := decodeReply(t, w.send(t, "acme", tok, userMsg("m-0", "", "start"))).Message.ContextID

		// Deterministic: the second copy arrives while the first runs.
		w.agent.hold.Store(true)
		done := make(chan response, 1)
		go func() { done <- w.send(t, "acme", tok, userMsg("m-1", ctxID, "slow")) }()
		<-w.agent.entered
		wantA2A(t, "duplicate while running", w.send(t, "acme", tok, userMsg("m-1", ctxID, "slow")), 400,
			errBody(a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate))
		w.agent.release <- struct{}{}
		first := <-done
		decodeReply(t, first)
		w.agent.hold.Store(false)

		// A burst: every copy is the one reply, a pending-duplicate error,
		// or the replay of the one reply; the agent runs once.
		before := w.agent.runs.Load()
		const n = 8
		out := make([]response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { out[i] = w.send(t, "acme", tok, userMsg("m-burst", ctxID, "burst")) })
		}
		wg.Wait()
		if runs := w.agent.runs.Load() - before; runs != 1 {
			t.Fatalf("a burst of %d identical messageIds ran the agent %d times; want 1", n, runs)
		}
		pending := errBody(a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate)
		var ok string
		for _, r := range out {
			switch {
			case r.status == 200 && (ok == "" || r.body == ok):
				ok = r.body
			case r.status == 400 && r.body == pending:
			default:
				t.Fatalf("burst answer %d %s", r.status, r.body)
			}
		}
		if ok == "" {
			t.Fatalf("no copy of the burst got the reply")
		}
		if r := w.send(t, "acme", tok, userMsg("m-burst", ctxID, "burst")); r.body != ok {
			t.Fatalf("replay after the burst = %s; want %s", r.body, ok)
		}
	})
}

// A Brand that admits only listed PAs: every frontend sends pactd's answer
// for an unlisted PA, a bare 401 with `Bearer realm="a2a"` (the answer for a
// PA that is not onboarded, PACT §1.4), and the agent never runs; once the
// PA is listed the same request is answered (positive control).
func TestBrandAgentPolicyRefusal(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		ctx := t.Context()
		if _, err := w.brands.SetBrandAgentPolicy(ctx, &pactv1.SetBrandAgentPolicyRequest{BrandId: "beta", Policy: pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED}); err != nil {
			t.Fatal(err)
		}
		msg := `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
		for _, route := range [][2]string{{"POST", "/a2a/beta/message:send"}, {"GET", "/a2a/beta/tasks"}} {
			r := w.do(t, route[0], route[1], msg, "Authorization: Bearer "+w.token(t, "user-123"))
			wantBare(t, "fail/not-listed "+route[1], r, 401)
			if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="a2a"` {
				t.Errorf("fail/not-listed %s: WWW-Authenticate = %q", route[1], got)
			}
		}
		if n := w.agent.runs.Load(); n != 0 {
			t.Fatalf("the agent ran %d times for an unlisted PA", n)
		}
		// Another Brand is untouched, and listing the PA admits it.
		decodeReply(t, w.send(t, "acme", w.token(t, "user-123"), userMsg("pc-acme", "", "hi")))
		if _, err := w.brands.AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: "beta", AgentId: w.agentID}); err != nil {
			t.Fatal(err)
		}
		decodeReply(t, w.send(t, "beta", w.token(t, "user-123"), userMsg("pc-beta", "", "hi")))
	})
}
