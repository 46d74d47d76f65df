package pacta2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/services/brand"
	"pactd.dev/pactd/services/conversation"
)

const frontendToken = "frontend-secret"

// fakeVerifier stands in for pactd's VerificationService: "Bearer good-<sub>"
// is allowed as that sub of agent agt_1, "Bearer busy" is rate limited, every
// other value is refused; Brand "nope" is unknown (404).
type fakeVerifier struct {
	pactv1connect.UnimplementedVerificationServiceHandler
	mu   sync.Mutex
	seen []*pactv1.VerifyAgentRequestRequest
}

func (f *fakeVerifier) VerifyAgentRequest(ctx context.Context, req *pactv1.VerifyAgentRequestRequest) (*pactv1.VerifyAgentRequestResponse, error) {
	if info, ok := connect.CallInfoForHandlerContext(ctx); !ok || info.RequestHeader().Get("Authorization") != "Bearer "+frontendToken {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("no frontend token"))
	}
	f.mu.Lock()
	f.seen = append(f.seen, req)
	f.mu.Unlock()
	sub, ok := strings.CutPrefix(req.GetAuthorization(), "Bearer good-")
	switch {
	case req.GetAuthorization() == "Bearer busy":
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 429, RetryAfterSeconds: 7, Reason: pactv1.DenyReason_DENY_REASON_RATE_LIMITED}, nil
	case !ok || strings.ContainsAny(sub, " ,"):
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 401, WwwAuthenticate: `Bearer realm="a2a"`, Reason: pactv1.DenyReason_DENY_REASON_MALFORMED}, nil
	case req.GetBrandId() == "nope":
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 404, Reason: pactv1.DenyReason_DENY_REASON_UNKNOWN_BRAND}, nil
	}
	resp := &pactv1.VerifyAgentRequestResponse{Allowed: true, HttpStatus: 200,
		Caller: &pactv1.Caller{AgentId: "agt_1", Issuer: "https://pa.example", Subject: sub}}
	if d, ok := strings.CutPrefix(req.GetUserDelegation(), "Bearer deleg-"); ok {
		resp.Delegation = &pactv1.DelegationInfo{GrantId: "a2agrant_1", BrandUser: d}
	}
	return resp, nil
}

func (f *fakeVerifier) calls() []*pactv1.VerifyAgentRequestRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*pactv1.VerifyAgentRequestRequest(nil), f.seen...)
}

// fakeDelegation stands in for pactd's step-up and receipts: StartStepUp
// answers a fixed task for Brand acme and FailedPrecondition (no
// delegation) for any other; SignReceipt returns a receipt naming the
// request's fields.
type fakeDelegation struct {
	pactv1connect.UnimplementedDelegationServiceHandler
	pactv1connect.UnimplementedTokenServiceHandler
}

func (fakeDelegation) StartStepUp(_ context.Context, req *pactv1.StartStepUpRequest) (*pactv1.StartStepUpResponse, error) {
	if req.GetBrandId() != "acme" {
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("no delegation"))
	}
	return &pactv1.StartStepUpResponse{TaskId: "t-1", MissingScopes: req.GetMissingScopes(),
		VerificationUriComplete: "https://brand.example/login?return_to=x",
		Scopes:                  []*pactv1.Scope{{Id: req.GetMissingScopes()[0], Description: "See your orders"}}}, nil
}

func (fakeDelegation) SignReceipt(_ context.Context, req *pactv1.SignReceiptRequest) (*pactv1.SignReceiptResponse, error) {
	b, _ := json.Marshal(map[string]any{"jws": "h.p.s", "claims": map[string]any{
		"grantId": req.GetGrantId(), "user": req.GetBrandUser(), "pa": req.GetPaIssuer(), "scopesUsed": req.GetScopesUsed(), "actions": req.GetActions()}})
	return &pactv1.SignReceiptResponse{ReceiptJson: string(b)}, nil
}

// countingAgent echoes like EchoAgent, counts its runs, and can be held,
// made to fail or to panic; "need SCOPE" asks for SCOPE, and "act" answers
// with receipt actions (arguments included) and metadata of its own.
type countingAgent struct {
	runs    atomic.Int32
	entered chan struct{} // receives once per run when non-nil
	release chan struct{} // runs wait on it when non-nil
	fail    atomic.Bool
	panics  atomic.Bool
}

// actReply is countingAgent's answer to "act": HTML characters and a
// number past float64's precision in the arguments, pass-through and
// "pact." metadata (which the frontend must drop).
var actReply = pacta2a.Reply{
	Text: "done <ok> & more", ScopesUsed: []string{"orders:read", "orders:cancel"},
	Actions: []pacta2a.Action{{Tool: "list_orders"}, {Tool: "cancel_order", Args: map[string]any{
		"orderId": "1002", "note": "<b>&", "big": json.Number("12345678901234567890"), "list": []any{1.5, true, nil}}}},
	Metadata: map[string]any{"trace": "t-1", "nested": map[string]any{"a": []any{"x"}}, "pact.receipt": "forged", "pact.other": 1},
}

func (a *countingAgent) Reply(ctx context.Context, t pacta2a.Turn) (pacta2a.Reply, error) {
	a.runs.Add(1)
	if a.entered != nil {
		a.entered <- struct{}{}
	}
	if a.release != nil {
		<-a.release
	}
	if a.fail.Load() {
		return pacta2a.Reply{}, errors.New("agent down")
	}
	if a.panics.Load() {
		panic("the agent fell over")
	}
	if t.Text == "act" {
		return actReply, nil
	}
	if scope, ok := strings.CutPrefix(t.Text, "need "); ok {
		return pacta2a.Reply{NeedScopes: []string{scope}, Text: "not here"}, nil
	}
	r, _ := pacta2a.EchoAgent{}.Reply(ctx, t)
	if t.Delegation != nil {
		r.Text += " (as " + t.Delegation.GetBrandUser() + ")"
	}
	return r, nil
}

// env is the frontend under test in front of a pactd made of the fake
// verifier and the real Brand and Conversation services on SQLite.
type env struct {
	url       string
	verifier  *fakeVerifier
	agent     *countingAgent
	rpcs      atomic.Int32 // every call that reached "pactd"
	ids       atomic.Int32
	log       lockedBuffer // the frontend's log
	serverLog lockedBuffer // its http.Server's own log
}

// lockedBuffer is a log sink the frontend writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, func(cfg pacta2a.Config) (http.Handler, error) { return pacta2a.NewHandler(cfg) })
}

// newEnvWith is newEnv with the frontend build makes from a Config whose
// Agent is the env's counting agent (Wrap clears it and uses an SDK).
func newEnvWith(t *testing.T, build func(pacta2a.Config) (http.Handler, error)) *env {
	t.Helper()
	store := dbtest.Open(t, "", t.TempDir())
	now := time.Now()
	for _, b := range []string{"acme", "beta"} {
		if _, err := store.CreateBrand(t.Context(), db.Brand{ID: b, DisplayName: strings.ToUpper(b), Description: "Support", CreateTime: now, UpdateTime: now}); err != nil {
			t.Fatal(err)
		}
	}
	// shop offers delegation, with the frontend's own sign-in (Sessions).
	if _, err := store.CreateBrand(t.Context(), db.Brand{ID: "shop", DisplayName: "Shop", Description: "Support", CreateTime: now, UpdateTime: now,
		Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See your orders"}},
			LoginURL: "https://shop.example/login", LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND.String()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateAgent(t.Context(), db.Agent{ID: "agt_1", Issuer: "https://pa.example", JWKSURI: "https://pa.example/j", DisplayName: "PA", Enabled: true, CreateTime: now, UpdateTime: now}); err != nil {
		t.Fatal(err)
	}
	e := &env{verifier: &fakeVerifier{}, agent: &countingAgent{}}
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewVerificationServiceHandler(e.verifier))
	mux.Handle(pactv1connect.NewBrandServiceHandler(brand.New(brand.Deps{Store: store, PublicURL: "https://provider.example"})))
	mux.Handle(pactv1connect.NewConversationServiceHandler(conversation.New(conversation.Deps{Store: store})))
	mux.Handle(pactv1connect.NewDelegationServiceHandler(fakeDelegation{}))
	mux.Handle(pactv1connect.NewTokenServiceHandler(fakeDelegation{}))
	pactd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.rpcs.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(pactd.Close)
	h, err := build(pacta2a.Config{
		PactdURL: pactd.URL, Token: frontendToken, Agent: e.agent, Logger: slog.New(slog.NewJSONHandler(&e.log, nil)),
		NewMessageID: func() string { return fmt.Sprintf("reply-%d", e.ids.Add(1)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	fe := httptest.NewUnstartedServer(h)
	fe.Config.ErrorLog = log.New(&e.serverLog, "", 0)
	fe.Start()
	t.Cleanup(fe.Close)
	e.url = fe.URL
	return e
}

type response struct {
	status int
	header http.Header
	body   string
}

// do sends one request; headers are "Name: value" strings.
func (e *env) do(t *testing.T, method, path, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, string(b)}
}

const good = "Authorization: Bearer good-alice"

func errBody(r a2aerr.Reason, msg string) string { return string(a2aerr.Body(r, msg)) }

// wantA2A checks an A2A answer: status, the exact content type and body.
func wantA2A(t *testing.T, name string, got response, status int, body string) {
	t.Helper()
	if got.status != status || got.header.Get("Content-Type") != "application/a2a+json" || got.body != body {
		t.Errorf("%s: got %d %q %s\nwant %d application/a2a+json %s", name, got.status, got.header.Get("Content-Type"), got.body, status, body)
	}
}

// wantBare checks a non-A2A answer: the status and no body.
func wantBare(t *testing.T, name string, got response, status int) {
	t.Helper()
	if got.status != status || got.body != "" || got.header.Get("Content-Type") == "application/a2a+json" {
		t.Errorf("%s: got %d %q %q; want a bare %d", name, got.status, got.header.Get("Content-Type"), got.body, status)
	}
}

// TestRootPage: GET / lists every Brand by display name, with its card's
// link, and the connected page's for a Brand with delegation; the page
// has the pages' headers. Another method there is a bare 404.
func TestRootPage(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, "GET", "/", "")
	if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" ||
		!strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'none'") || r.header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("root: %d %v", r.status, r.header)
	}
	for _, want := range []string{
		`<h2>ACME <span class="id">acme</span></h2>`, `<a href="/a2a/acme/.well-known/agent-card.json">Agent Card</a></li>`,
		`<h2>BETA <span class="id">beta</span></h2>`,
		`<h2>Shop <span class="id">shop</span></h2>`, `<a href="/a2a/shop/.well-known/agent-card.json">Agent Card</a> · <a href="/a2a/shop/oauth/connected">Connected assistants</a>`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("root page lacks %q", want)
		}
	}
	if strings.Contains(r.body, "/a2a/acme/oauth/connected") {
		t.Errorf("root page links a connected page of a Brand without delegation")
	}
	wantBare(t, "POST /", e.do(t, "POST", "/", ""), 404)
}

// TestNotFoundPage: a browser's GET (Accept names text/html) of an unknown
// Brand's card or pages, or of any unmatched path, gets an HTML 404 page;
// every other request gets the bare 404 PACT 1.0 §1.2 and §1.3 require
// (the positive controls), also with Accept: application/json or
// text/html;q=0.
func TestNotFoundPage(t *testing.T) {
	e := newEnv(t)
	const browser = "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, c := range []struct {
		path, want string
		post       int // a POST's bare status
	}{
		{"/a2a/nope/.well-known/agent-card.json", "This Provider serves no Brand named “nope”.", 405},
		// connected takes POST too (a signed-assertion Brand's login posts
		// there), so an unknown Brand's POST is 404, as consent's.
		{"/a2a/nope/oauth/connected", "This Provider serves no Brand named “nope”.", 404},
		{"/a2a/nope%3Cb%3E/oauth/consent", "This Provider serves no such Brand.", 404},
		{"/a2a/acme/unknown", "There is no page at this address.", 404},
		{"/elsewhere", "There is no page at this address.", 404},
	} {
		r := e.do(t, "GET", c.path, "", browser)
		if r.status != 404 || r.header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(r.body, c.want) ||
			!strings.Contains(r.body, `<a href="/">`) || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("browser GET %s: %d %v %s", c.path, r.status, r.header, r.body)
		}
		for _, hdr := range []string{"", "Accept: application/json", "Accept: text/html;q=0, application/json"} {
			if hdr == "" {
				wantBare(t, "GET "+c.path, e.do(t, "GET", c.path, ""), 404)
			} else {
				wantBare(t, "GET "+c.path+" "+hdr, e.do(t, "GET", c.path, "", hdr), 404)
			}
		}
		wantBare(t, "POST "+c.path, e.do(t, "POST", c.path, "", browser), c.post)
	}
}

func TestAgentCard(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" ||
		r.header.Get("Cache-Control") != "public, max-age=300" || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("card: %d %v", r.status, r.header)
	}
	var card struct {
		Name                string                 `json:"name"`
		SupportedInterfaces []struct{ URL string } `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal([]byte(r.body), &card); err != nil || card.Name != "ACME" || card.SupportedInterfaces[0].URL != "https://provider.example/a2a/acme" {
		t.Fatalf("card body %s (%v)", r.body, err)
	}
	wantBare(t, "unknown Brand card", e.do(t, "GET", "/a2a/nope/.well-known/agent-card.json", ""), 404)
	wantBare(t, "card by POST", e.do(t, "POST", "/a2a/acme/.well-known/agent-card.json", ""), 405)
	if n := len(e.verifier.calls()); n != 0 {
		t.Fatalf("the card route called VerifyAgentRequest %d times; it needs no authentication", n)
	}
}

// TestUnmatchedRoutesBeforeAuth: routing happens before authentication, so
// these never reach pactd, token or not.
func TestUnmatchedRoutesBeforeAuth(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		method, path string
		status       int
	}{
		{"GET", "/a2a/acme/unknown", 404},
		{"GET", "/a2a/acme/message:send", 405},
		{"PUT", "/a2a/acme/message:send", 405},
		{"DELETE", "/a2a/acme/message:send", 405},
		{"GET", "/a2a/acme/message%3Asend", 405},
		{"POST", "/a2a/acme/tasks", 405},
		{"GET", "/a2a/acme/tasks/x:cancel", 405},
		{"GET", "/a2a/acme/tasks/x:subscribe", 405},
		{"GET", "/a2a/acme/message:stream", 405},
		{"POST", "/a2a/acme/extendedAgentCard", 405},
		{"DELETE", "/a2a/acme/tasks/x/pushNotificationConfigs", 405},
		{"POST", "/a2a/acme/tasks/x/pushNotificationConfigs/c", 405},
		{"POST", "/a2a/acme/tasks/x", 405},
		{"GET", "/a2a/acme/tasks/", 404},
		{"GET", "/a2a/acme/tasks/x/y", 404},
		{"GET", "/a2a/acme/tasks/x/pushNotificationConfigs/c/d", 404},
		{"POST", "/a2a/acme/tasks/:cancel", 405}, // ":cancel" alone is a task id
		{"POST", "/a2a/acme/message:send/", 404},
		{"POST", "/a2a/acme", 404},
		{"POST", "/a2a//message:send", 404},
		{"POST", "/", 404}, // GET / is the root page (TestRootPage)
		{"GET", "/a2a", 404},
		{"GET", "/.well-known/agent-card.json", 404},
	}
	for _, c := range cases {
		for _, hdr := range []string{"", good} {
			var r response
			if hdr == "" {
				r = e.do(t, c.method, c.path, "{}")
			} else {
				r = e.do(t, c.method, c.path, "{}", hdr)
			}
			wantBare(t, c.method+" "+c.path, r, c.status)
			if c.status == 405 && r.header.Get("Allow") == "" {
				t.Errorf("%s %s: 405 without Allow", c.method, c.path)
			}
		}
	}
	if n := e.rpcs.Load(); n != 0 {
		t.Fatalf("unmatched routes made %d calls to pactd; want none", n)
	}
}

func TestAuthenticationIsPactdsAnswer(t *testing.T) {
	e := newEnv(t)
	send := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	for _, hdrs := range [][]string{
		nil,
		{"Authorization: Basic Zm9vOmJhcg=="},
		{"Authorization: Bearer bad"},
		{good, "Authorization: Bearer good-bob"}, // two Authorization headers
	} {
		for _, route := range [][2]string{{"POST", "/a2a/acme/message:send"}, {"GET", "/a2a/acme/tasks"}, {"GET", "/a2a/acme/tasks/t1"}, {"POST", "/a2a/acme/message:stream"}} {
			r := e.do(t, route[0], route[1], send, hdrs...)
			wantBare(t, fmt.Sprint(route, hdrs), r, 401)
			if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="a2a"` {
				t.Errorf("%v %v: WWW-Authenticate = %q", route, hdrs, got)
			}
		}
	}
	r := e.do(t, "POST", "/a2a/acme/message:send", send, "Authorization: Bearer busy")
	wantBare(t, "rate limited", r, 429)
	if r.header.Get("Retry-After") != "7" {
		t.Errorf("Retry-After = %q, want 7", r.header.Get("Retry-After"))
	}
	// An unknown Brand is a bare 404 even with a valid token.
	wantBare(t, "unknown Brand", e.do(t, "POST", "/a2a/nope/message:send", send, good), 404)
	wantBare(t, "unknown Brand tasks", e.do(t, "GET", "/a2a/nope/tasks", "", good), 404)
	if e.agent.runs.Load() != 0 {
		t.Fatalf("the agent ran for a refused request")
	}
	// pactd got the raw headers and the Brand from the path.
	e.do(t, "GET", "/a2a/beta/tasks", "", good, "X-A2A-User-Delegation: Bearer deleg-u1")
	calls := e.verifier.calls()
	last := calls[len(calls)-1]
	if last.GetBrandId() != "beta" || last.GetAuthorization() != "Bearer good-alice" || last.GetUserDelegation() != "Bearer deleg-u1" {
		t.Fatalf("VerifyAgentRequest got %v", last)
	}
}

func TestErrorRoutesAndTaskList(t *testing.T) {
	e := newEnv(t)
	unsupported := func(m string) string { return errBody(a2aerr.UnsupportedOperation, m) }
	push := errBody(a2aerr.PushNotificationNotSupported, "Push notifications are not supported")
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/a2a/acme/tasks/t-123", 404, errBody(a2aerr.TaskNotFound, "Task not found: t-123")},
		{"POST", "/a2a/acme/tasks/t-123:cancel", 404, errBody(a2aerr.TaskNotFound, "Task not found: t-123")},
		{"POST", "/a2a/acme/tasks/t-123%3Acancel", 404, errBody(a2aerr.TaskNotFound, "Task not found: t-123")},
		{"POST", "/a2a/acme/tasks/t-123%3acancel", 404, errBody(a2aerr.TaskNotFound, "Task not found: t-123")},
		{"GET", "/a2a/acme/tasks/%3Cb%3E&x", 404, errBody(a2aerr.TaskNotFound, "Task not found: <b>&x")},
		{"POST", "/a2a/acme/message:stream", 400, unsupported("Streaming is not supported")},
		{"POST", "/a2a/acme/message%3Astream", 400, unsupported("Streaming is not supported")},
		{"POST", "/a2a/acme/tasks/t1:subscribe", 400, unsupported("Subscribing to tasks is not supported")},
		{"GET", "/a2a/acme/extendedAgentCard", 400, unsupported("The extended Agent Card is not supported")},
		{"GET", "/a2a/acme/tasks/t1/pushNotificationConfigs", 400, push},
		{"POST", "/a2a/acme/tasks/t1/pushNotificationConfigs", 400, push},
		{"GET", "/a2a/acme/tasks/t1/pushNotificationConfigs/c1", 400, push},
		{"DELETE", "/a2a/acme/tasks/t1/pushNotificationConfigs/c1", 400, push},
		{"GET", "/a2a/acme/tasks", 200, `{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}`},
		{"GET", "/a2a/acme/tasks?pageSize=1", 200, `{"tasks":[],"nextPageToken":"","pageSize":1,"totalSize":0}`},
		{"GET", "/a2a/acme/tasks?pageSize=100&status=x&pageToken=y", 200, `{"tasks":[],"nextPageToken":"","pageSize":100,"totalSize":0}`},
	}
	for _, bad := range []string{"0", "101", "-1", "1.5", "abc", "", "+5", " 5", "5&pageSize=5", "99999999999999999999"} {
		cases = append(cases, struct {
			method, path string
			status       int
			body         string
		}{"GET", "/a2a/acme/tasks?pageSize=" + strings.ReplaceAll(bad, " ", "%20"), 400, errBody(a2aerr.InvalidParams, "pageSize must be an integer from 1 to 100")})
	}
	for _, c := range cases {
		wantA2A(t, c.method+" "+c.path, e.do(t, c.method, c.path, "", good), c.status, c.body)
	}
}

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

// reply is the strict shape of a message:send answer.
type reply struct {
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

func decodeReply(t *testing.T, r response) reply {
	t.Helper()
	if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" {
		t.Fatalf("send: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	dec := json.NewDecoder(strings.NewReader(r.body))
	dec.DisallowUnknownFields()
	var out reply
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("reply %s is not strictly {message:{messageId,contextId,role,parts:[{text}]}}: %v", r.body, err)
	}
	return out
}

func TestSendRepliesContinuesAndReplays(t *testing.T) {
	e := newEnv(t)
	send := func(msgID, contextID, text string, hdrs ...string) response {
		m := map[string]any{"messageId": msgID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
		if contextID != "" {
			m["contextId"] = contextID
		}
		b, _ := json.Marshal(map[string]any{"message": m})
		return e.do(t, "POST", "/a2a/acme/message:send", string(b), append([]string{good}, hdrs...)...)
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
	foreign := e.do(t, "POST", "/a2a/acme/message:send", `{"message":{"messageId":"z","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":"`+ctxID+`"}}`, "Authorization: Bearer good-bob")
	random := e.do(t, "POST", "/a2a/acme/message:send", `{"message":{"messageId":"z","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":"`+conversation.NewUUID()+`"}}`, good)
	otherBrand := e.do(t, "POST", "/a2a/beta/message:send", `{"message":{"messageId":"z","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":"`+ctxID+`"}}`, good)
	for name, got := range map[string]response{"other sub": foreign, "random": random, "other Brand": otherBrand} {
		wantA2A(t, name, got, 400, errBody(a2aerr.InvalidParams, a2aerr.MsgUnknownContextID))
	}
	if r.Message.Metadata != nil {
		t.Fatalf("identity-only reply has metadata %s", first.body)
	}
	// Delegation: the verified Brand user reaches pactd's lock and the
	// agent, and the reply carries pactd's receipt, stored with it.
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
	body := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"slow"}]}}`
	// Make a context first (runs the agent once).
	go func() { <-e.agent.entered; e.agent.release <- struct{}{} }()
	ctxID := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", body, good)).Message.ContextID
	withCtx := `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"slow"}],"contextId":"` + ctxID + `"}}`

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

	// A failing agent answers INTERNAL and releases the messageId.
	e.agent.fail.Store(true)
	m3 := `{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":"` + ctxID + `"}}`
	go func() { <-e.agent.entered; e.agent.release <- struct{}{} }()
	wantA2A(t, "agent failure", e.do(t, "POST", "/a2a/acme/message:send", m3, good), 500, errBody(a2aerr.Internal, "Internal error"))
	e.agent.fail.Store(false)
	go func() { <-e.agent.entered; e.agent.release <- struct{}{} }()
	decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", m3, good))
}

// TestStepUp: a turn needing a scope answers the AUTH_REQUIRED task, is
// not stored (the messageId runs again), and falls back to the agent's
// text at a Brand without delegation.
func TestStepUp(t *testing.T) {
	e := newEnv(t)
	body := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"need orders:read"}]}}`
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
	again := strings.Replace(body, `"parts"`, `"contextId":"`+ctxID+`","parts"`, 1)
	wantA2A(t, "step-up again", e.do(t, "POST", "/a2a/acme/message:send", again, good), 200, fmt.Sprintf(want, ctxID, 2, ctxID))
	if n := e.agent.runs.Load(); n != 2 {
		t.Fatalf("agent runs = %d, want 2", n)
	}
	if got := decodeReply(t, e.do(t, "POST", "/a2a/beta/message:send", body, good)); got.Message.Parts[0].Text != "not here" {
		t.Fatalf("no-delegation fallback = %+v", got)
	}
}

func TestBodyLimit(t *testing.T) {
	e := newEnv(t)
	big := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("a", 1<<20) + `"}]}}`
	wantA2A(t, "body over 1 MiB", e.do(t, "POST", "/a2a/acme/message:send", big, good), 400,
		errBody(a2aerr.InvalidParams, "The request body is unreadable or too large"))
}

func TestNewHandlerNeedsURLAndToken(t *testing.T) {
	for _, c := range []pacta2a.Config{{}, {PactdURL: "http://127.0.0.1:1"}, {Token: "t"}, {PactdURL: "::", Token: "t"}} {
		if _, err := pacta2a.NewHandler(c); err == nil {
			t.Errorf("NewHandler(%+v) succeeded", c)
		}
	}
	if _, err := pacta2a.NewHandler(pacta2a.Config{PactdURL: "http://127.0.0.1:1", Token: "t"}); err != nil {
		t.Errorf("NewHandler(valid) = %v", err)
	}
}
