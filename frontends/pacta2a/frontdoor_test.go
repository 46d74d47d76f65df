package pacta2a_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// fakeDoor stands in for pactd's FrontDoorService: it records what the
// frontend forwards and answers what the test scripts (answer); FinishTurn
// records the agent's result and answers 200 "finished".
type fakeDoor struct {
	pactv1connect.UnimplementedFrontDoorServiceHandler
	mu       sync.Mutex
	serves   []*pactv1.ServeRequest
	finishes []*pactv1.FinishTurnRequest
	answer   func(n int, req *pactv1.ServeRequest) (*pactv1.ServeResponse, error)
}

func (f *fakeDoor) Serve(ctx context.Context, req *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
	if info, ok := connect.CallInfoForHandlerContext(ctx); !ok || info.RequestHeader().Get("Authorization") != "Bearer "+frontendToken {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("no frontend token"))
	}
	f.mu.Lock()
	f.serves = append(f.serves, req)
	n, answer := len(f.serves), f.answer
	f.mu.Unlock()
	return answer(n, req)
}

func (f *fakeDoor) FinishTurn(_ context.Context, req *pactv1.FinishTurnRequest) (*pactv1.FinishTurnResponse, error) {
	f.mu.Lock()
	f.finishes = append(f.finishes, req)
	f.mu.Unlock()
	return &pactv1.FinishTurnResponse{Response: &pactv1.HttpResponse{Status: 200, Body: []byte("finished")}}, nil
}

func (f *fakeDoor) recorded() ([]*pactv1.ServeRequest, []*pactv1.FinishTurnRequest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.serves), slices.Clone(f.finishes)
}

// respond is a fake answer: this response to every request.
func respond(status int32, body string, headers ...string) func(int, *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
	res := &pactv1.HttpResponse{Status: status, Body: []byte(body)}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		res.Headers = append(res.Headers, &pactv1.HttpHeader{Name: k, Value: v})
	}
	return func(int, *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
		return &pactv1.ServeResponse{Outcome: &pactv1.ServeResponse_Response{Response: res}}, nil
	}
}

// aTurn is a fake answer: a turn for the agent.
func aTurn(delegated bool) func(int, *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
	t := &pactv1.Turn{Handle: "h.1", BrandId: "acme", ContextId: "ctx-1", NewContext: true, Text: "hi\nthere",
		Caller:         &pactv1.Caller{AgentId: "agt_1", Issuer: "https://pa.example", Subject: "alice"},
		SdkRequestJson: `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"},{"text":"there"}],"contextId":"ctx-1"},"metadata":{"k":"v"}}`,
		SdkPath:        "/a2a/acme/message:send", TurnTimeoutSeconds: 5}
	if delegated {
		t.Delegation = &pactv1.DelegationInfo{GrantId: "a2agrant_1", BrandUser: "u9", Scopes: []string{"orders:read"}}
	}
	return func(int, *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
		return &pactv1.ServeResponse{Outcome: &pactv1.ServeResponse_Turn{Turn: t}}, nil
	}
}

const frontendToken = "frontend-secret"

// newFrontend serves h's frontend (built from a Config pointing at the
// fake) and returns its URL.
func newFrontend(t *testing.T, door *fakeDoor, build func(pacta2a.Config) (http.Handler, error)) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewFrontDoorServiceHandler(door))
	pactd := httptest.NewServer(mux)
	t.Cleanup(pactd.Close)
	h, err := build(pacta2a.Config{PactdURL: pactd.URL, Token: frontendToken, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	fe := httptest.NewServer(h)
	t.Cleanup(fe.Close)
	return fe.URL
}

func withAgent(a pacta2a.Agent, s pacta2a.Sessions) func(pacta2a.Config) (http.Handler, error) {
	return func(cfg pacta2a.Config) (http.Handler, error) {
		cfg.Agent, cfg.Sessions = a, s
		return pacta2a.NewHandler(cfg)
	}
}

// rawRequest sends bytes on a fresh connection and reads one response.
func rawRequest(t *testing.T, feURL, raw string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(feURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestForwardsTheRequestAsReceived: pactd gets the raw target (odd
// escapes and all), the query, every header but cookies and hop-by-hop
// ones (Host included), the body, the client's address and whether the
// frontend signs Users in; the frontend writes pactd's status, headers
// (repeated ones repeated) and body byte for byte, adding no body of its
// own.
func TestForwardsTheRequestAsReceived(t *testing.T) {
	door := &fakeDoor{answer: respond(404, "", "Www-Authenticate: Bearer realm=\"a2a\"", "Vary: a", "Vary: b")}
	fe := newFrontend(t, door, withAgent(nil, nil))
	res, body := rawRequest(t, fe, "POST /a2a/%FF%3a/message%3Asend?x=%0D&y=1 HTTP/1.1\r\nHost: shop.example\r\n"+
		"Authorization: Bearer t\r\nCookie: s=1\r\nX-Custom: a\r\nX-Custom: b\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\n{}x")
	if res.StatusCode != 404 || body != "" || res.Header.Get("Www-Authenticate") != `Bearer realm="a2a"` ||
		!slices.Equal(res.Header.Values("Vary"), []string{"a", "b"}) || res.Header.Get("Content-Type") != "" {
		t.Fatalf("answer %d %v %q", res.StatusCode, res.Header, body)
	}
	serves, _ := door.recorded()
	r := serves[0]
	if r.GetMethod() != "POST" || r.GetPath() != "/a2a/%FF%3a/message%3Asend" || r.GetQuery() != "x=%0D&y=1" || string(r.GetBody()) != "{}x" ||
		r.GetBodyTooLarge() || r.GetSignsInUsers() || !strings.HasPrefix(r.GetClientAddress(), "127.0.0.1:") {
		t.Fatalf("forwarded %v", r)
	}
	got := map[string][]string{}
	for _, h := range r.GetHeaders() {
		got[http.CanonicalHeaderKey(h.GetName())] = append(got[http.CanonicalHeaderKey(h.GetName())], h.GetValue())
	}
	if !slices.Equal(got["Host"], []string{"shop.example"}) || !slices.Equal(got["X-Custom"], []string{"a", "b"}) ||
		!slices.Equal(got["Authorization"], []string{"Bearer t"}) || got["Cookie"] != nil || got["Connection"] != nil {
		t.Fatalf("forwarded headers %v", got)
	}
}

// TestOversizedBodyIsNotForwarded: past 1 MiB the frontend stops reading,
// tells pactd the body was too large, writes pactd's refusal and closes
// the connection, so a keep-alive client's next request is never read out
// of the rest of the body; a body of exactly 1 MiB is forwarded whole (the
// control).
func TestOversizedBodyIsNotForwarded(t *testing.T) {
	door := &fakeDoor{answer: respond(400, "refused")}
	fe := newFrontend(t, door, withAgent(nil, nil))
	for _, n := range []int{pacta2a.MaxBodyBytes, pacta2a.MaxBodyBytes + 1, 2 << 20} {
		before, _ := door.recorded()
		conn, err := net.Dial("tcp", strings.TrimPrefix(fe, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		go func() {
			_, _ = io.WriteString(conn, "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(n)+"\r\n\r\n"+strings.Repeat("a", n))
			_, _ = io.WriteString(conn, "GET /a2a/acme/tasks HTTP/1.1\r\nHost: x\r\n\r\n")
		}()
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		b, _ := io.ReadAll(res.Body)
		serves, _ := door.recorded()
		last := serves[len(before)] // this request's, not the next one's
		over := n > pacta2a.MaxBodyBytes
		if res.StatusCode != 400 || string(b) != "refused" || last.GetBodyTooLarge() != over || (!over && len(last.GetBody()) != n) || (over && len(last.GetBody()) != 0) {
			t.Fatalf("%d bytes: %d %q, forwarded too_large=%v len=%d", n, res.StatusCode, b, last.GetBodyTooLarge(), len(last.GetBody()))
		}
		_, err = http.ReadResponse(br, nil)
		if over && err == nil {
			t.Errorf("%d bytes: the connection served another request after the refusal", n)
		}
		if !over && err != nil {
			t.Errorf("%d bytes: the connection did not serve the next request: %v", n, err)
		}
		conn.Close()
	}
}

// fakeSessions signs in "alice" at Brand shop only.
type fakeSessions struct{}

func (fakeSessions) BrandUser(_ *http.Request, brandID string) string {
	if brandID == "shop" {
		return "alice"
	}
	return ""
}

func (fakeSessions) LoginURL(brandID, returnTo string) string {
	return "/demo/" + brandID + "/login?return_to=" + returnTo
}

// TestUserNeededAsksTheSessions: when pactd needs the trusted-frontend
// User, the frontend asks again with the signed-in User, or with its
// sign-in URL for the Brand and the return path pactd named; without
// Sessions the frontend tells pactd it signs nobody in.
func TestUserNeededAsksTheSessions(t *testing.T) {
	door := &fakeDoor{}
	door.answer = func(_ int, req *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
		if req.GetBrandUser() == "" && req.GetSignInUrl() == "" {
			brand := strings.Split(req.GetPath(), "/")[2]
			return &pactv1.ServeResponse{Outcome: &pactv1.ServeResponse_UserNeeded{UserNeeded: &pactv1.UserNeeded{
				BrandId: brand, ReturnTo: req.GetPath() + "?" + req.GetQuery()}}}, nil
		}
		return respond(303, "", "Location: "+req.GetBrandUser()+req.GetSignInUrl())(0, req)
	}
	fe := newFrontend(t, door, withAgent(nil, fakeSessions{}))
	for _, c := range []struct{ path, location string }{
		{"/a2a/shop/oauth/connected?status=x", "alice"},
		{"/a2a/mart/oauth/connected?status=x", "/demo/mart/login?return_to=/a2a/mart/oauth/connected?status=x"},
	} {
		res, _ := rawRequest(t, fe, "GET "+c.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		if res.StatusCode != 303 || res.Header.Get("Location") != c.location {
			t.Errorf("%s: %d %q; want 303 %q", c.path, res.StatusCode, res.Header.Get("Location"), c.location)
		}
	}
	serves, _ := door.recorded()
	if len(serves) != 4 || !serves[0].GetSignsInUsers() || serves[1].GetBrandUser() != "alice" || serves[3].GetSignInUrl() == "" || serves[3].GetBrandUser() != "" {
		t.Fatalf("calls %v", serves)
	}

	plain := &fakeDoor{answer: respond(404, "")}
	fe = newFrontend(t, plain, withAgent(nil, nil))
	rawRequest(t, fe, "GET /a2a/shop/oauth/connected HTTP/1.1\r\nHost: x\r\n\r\n")
	if serves, _ := plain.recorded(); serves[0].GetSignsInUsers() {
		t.Fatal("a frontend without Sessions said it signs Users in")
	}
}

// scriptedAgent answers with its reply or error, or panics, and keeps the
// turn it saw.
type scriptedAgent struct {
	reply  pacta2a.Reply
	err    error
	panics bool
	seen   chan pacta2a.Turn
}

func (a *scriptedAgent) Reply(_ context.Context, t pacta2a.Turn) (pacta2a.Reply, error) {
	a.seen <- t
	if a.panics {
		panic("the agent fell over")
	}
	return a.reply, a.err
}

// TestTurnRunsTheAgent: for a turn the agent sees pactd's turn, and
// FinishTurn gets its reply with each action's arguments as JSON and the
// metadata as a JSON object (no hash of the frontend's own); an agent
// error or panic is a failure, and the frontend goes on serving.
func TestTurnRunsTheAgent(t *testing.T) {
	agent := &scriptedAgent{seen: make(chan pacta2a.Turn, 4), reply: pacta2a.Reply{Text: "done", ScopesUsed: []string{"orders:cancel"},
		Actions:  []pacta2a.Action{{Tool: "list_orders"}, {Tool: "cancel_order", Args: map[string]any{"orderId": "1002", "n": 1.0}}},
		Metadata: map[string]any{"trace": "t-1"}}}
	door := &fakeDoor{answer: aTurn(true)}
	fe := newFrontend(t, door, withAgent(agent, nil))
	res, body := rawRequest(t, fe, "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	if res.StatusCode != 200 || body != "finished" {
		t.Fatalf("answer %d %q", res.StatusCode, body)
	}
	turn := <-agent.seen
	if turn.BrandID != "acme" || turn.ContextID != "ctx-1" || !turn.NewContext || turn.Text != "hi\nthere" ||
		turn.Caller.GetSubject() != "alice" || turn.Delegation.GetBrandUser() != "u9" {
		t.Fatalf("turn %+v", turn)
	}
	_, finishes := door.recorded()
	r := finishes[0].GetReply()
	if finishes[0].GetHandle() != "h.1" || r.GetText() != "done" || !slices.Equal(r.GetScopesUsed(), []string{"orders:cancel"}) ||
		len(r.GetActions()) != 2 || r.GetActions()[0].GetArgsJson() != "" || r.GetActions()[1].GetArgsJson() != `{"n":1,"orderId":"1002"}` ||
		r.GetActions()[1].GetArgsHash() != "" || r.GetMetadataJson() != `{"trace":"t-1"}` {
		t.Fatalf("finish %v", finishes[0])
	}

	for name, a := range map[string]*scriptedAgent{
		"error":        {err: errors.New("agent down"), seen: agent.seen},
		"panic":        {panics: true, seen: agent.seen},
		"bad metadata": {reply: pacta2a.Reply{Text: "x", Metadata: map[string]any{"f": func() {}}}, seen: agent.seen},
	} {
		door := &fakeDoor{answer: aTurn(false)}
		fe := newFrontend(t, door, withAgent(a, nil))
		if res, body := rawRequest(t, fe, "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"); res.StatusCode != 200 || body != "finished" {
			t.Fatalf("%s: answer %d %q", name, res.StatusCode, body)
		}
		<-agent.seen
		_, finishes := door.recorded()
		if f := finishes[0].GetFailure(); f == "" || finishes[0].GetReply() != nil {
			t.Errorf("%s: finish %v; want a failure", name, finishes[0])
		}
	}
}

// TestPactdUnreachableIsBadGateway: a failed call to pactd answers a bare
// 502, never a body of the frontend's making.
func TestPactdUnreachableIsBadGateway(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	h, err := pacta2a.NewHandler(pacta2a.Config{PactdURL: url, Token: frontendToken})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/a2a/acme/.well-known/agent-card.json", nil))
	if rec.Code != 502 || rec.Body.Len() != 0 || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v %q", rec.Code, rec.Header(), rec.Body)
	}
}

// panickySessions panics when asked who is signed in.
type panickySessions struct{ fakeSessions }

func (panickySessions) BrandUser(*http.Request, string) string { panic("sessions fell over") }

// TestPanicIsABare500: a panic in the frontend's own code (here its
// Sessions) answers a bare 500, logged once, and the frontend goes on
// serving.
func TestPanicIsABare500(t *testing.T) {
	door := &fakeDoor{answer: func(_ int, req *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
		if strings.Contains(req.GetPath(), "oauth") {
			return &pactv1.ServeResponse{Outcome: &pactv1.ServeResponse_UserNeeded{UserNeeded: &pactv1.UserNeeded{BrandId: "shop"}}}, nil
		}
		return respond(200, "card")(0, req)
	}}
	var logs strings.Builder
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewFrontDoorServiceHandler(door))
	pactd := httptest.NewServer(mux)
	t.Cleanup(pactd.Close)
	h, err := pacta2a.NewHandler(pacta2a.Config{PactdURL: pactd.URL, Token: frontendToken, Sessions: panickySessions{},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/a2a/shop/oauth/connected", nil))
	if rec.Code != 500 || rec.Body.Len() != 0 || strings.Count(logs.String(), "sessions fell over") != 1 {
		t.Fatalf("%d %q; log %s", rec.Code, rec.Body, logs.String())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/a2a/acme/.well-known/agent-card.json", nil))
	if rec.Code != 200 || rec.Body.String() != "card" {
		t.Fatalf("after the panic: %d %q", rec.Code, rec.Body)
	}
}

// TestNewHandlerNeedsURLAndToken: a frontend without pactd's URL or its
// credential is refused at start; the control starts.
func TestNewHandlerNeedsURLAndToken(t *testing.T) {
	for _, cfg := range []pacta2a.Config{{Token: "t"}, {PactdURL: "http://127.0.0.1:7070"}, {PactdURL: "not a url", Token: "t"}} {
		if _, err := pacta2a.NewHandler(cfg); err == nil || err.Error() != "pacta2a: need pactd's URL and a frontend token" {
			t.Errorf("%+v: err = %v", cfg, err)
		}
	}
	if _, err := pacta2a.NewHandler(pacta2a.Config{PactdURL: "http://127.0.0.1:7070", Token: "t"}); err != nil {
		t.Fatal(err)
	}
}

// decodeFinish is the SDK answer FinishTurn got, as JSON.
func decodeFinish(t *testing.T, f *pactv1.FinishTurnRequest) map[string]any {
	t.Helper()
	a := f.GetSdkAnswer()
	if a == nil {
		t.Fatalf("finish %v: no SDK answer", f)
	}
	var v map[string]any
	if err := json.Unmarshal(a.GetBody(), &v); err != nil {
		t.Fatalf("SDK answer %d %s: %v", a.GetStatus(), a.GetBody(), err)
	}
	return v
}
