package hdtphost_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/frontends/hdtphost"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
)

const token = "frontend-secret"

// fakePactd answers HostService and TrustService.CheckAddress with the
// test's functions and records what it was asked.
type fakePactd struct {
	hdtpv1connect.UnimplementedHostServiceHandler
	hdtpv1connect.UnimplementedTrustServiceHandler
	mu        sync.Mutex
	opened    []*hdtpv1.OpenInboundRequest
	completed []*hdtpv1.CompleteInboundRequest
	results   []*hdtpv1.OpenOutboundResultRequest
	auth      []string
	open      func(*hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error)
	outcome   func(*hdtpv1.OpenOutboundResultRequest) *hdtpv1.OpenOutboundResultResponse
	valid     bool
}

func (f *fakePactd) OpenInbound(ctx context.Context, req *hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error) {
	f.mu.Lock()
	f.opened = append(f.opened, req)
	if info, ok := connect.CallInfoForHandlerContext(ctx); ok {
		f.auth = append(f.auth, info.RequestHeader().Get("Authorization"))
	}
	f.mu.Unlock()
	return f.open(req)
}

func (f *fakePactd) CompleteInbound(_ context.Context, req *hdtpv1.CompleteInboundRequest) (*hdtpv1.CompleteInboundResponse, error) {
	f.mu.Lock()
	f.completed = append(f.completed, req)
	f.mu.Unlock()
	return &hdtpv1.CompleteInboundResponse{Body: []byte(`{"completed":"` + req.GetCallHandle() + `"}`)}, nil
}

func (f *fakePactd) OpenOutboundResult(_ context.Context, req *hdtpv1.OpenOutboundResultRequest) (*hdtpv1.OpenOutboundResultResponse, error) {
	f.mu.Lock()
	f.results = append(f.results, req)
	f.mu.Unlock()
	return f.outcome(req), nil
}

func (f *fakePactd) CheckAddress(_ context.Context, req *hdtpv1.CheckAddressRequest) (*hdtpv1.CheckAddressResponse, error) {
	if !f.valid {
		return &hdtpv1.CheckAddressResponse{Code: "bad_request", Reason: "not_public"}, nil
	}
	return &hdtpv1.CheckAddressResponse{Valid: true}, nil
}

// start runs the fake pactd and a host in front of it.
func start(t *testing.T, f *fakePactd, cfg hdtphost.Config) (*hdtphost.Host, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(hdtpv1connect.NewHostServiceHandler(f))
	mux.Handle(hdtpv1connect.NewTrustServiceHandler(f))
	pactd := httptest.NewServer(mux)
	t.Cleanup(pactd.Close)
	cfg.PactdURL, cfg.Token = pactd.URL, token
	host, err := hdtphost.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(host)
	t.Cleanup(front.Close)
	return host, front.URL
}

func respond(body string) func(*hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error) {
	return func(*hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error) {
		return &hdtpv1.OpenInboundResponse{Outcome: &hdtpv1.OpenInboundResponse_Respond{Respond: &hdtpv1.Respond{Body: []byte(body)}}}, nil
	}
}

// post sends body as an MCP client would, to the Host the identity is
// served at.
func post(t *testing.T, url string, body []byte) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/mcp", bytes.NewReader(body))
	req.Host = "agent.maya.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

func TestInitializeGoesToTheSDK(t *testing.T) {
	f := &fakePactd{open: func(*hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error) {
		t.Error("pactd was asked")
		return nil, errors.New("no")
	}}
	_, url := start(t, f, hdtphost.Config{Name: "maya-host"})
	res, body, err := post(t, url, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("initialize: %v %v %s", err, res, body)
	}
	var msg struct {
		ID     int
		Result struct {
			ProtocolVersion string
			Capabilities    struct{ Tools *struct{ ListChanged bool } }
			ServerInfo      struct{ Name string }
		}
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.ID != 1 || msg.Result.ProtocolVersion != "2025-11-25" ||
		msg.Result.Capabilities.Tools == nil || msg.Result.Capabilities.Tools.ListChanged || msg.Result.ServerInfo.Name != "maya-host" {
		t.Errorf("initialize answered %s", body)
	}
	if sid := res.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("a stateless host set Mcp-Session-Id %q", sid)
	}
}

func TestToolsRequestsGoToPactdByteForByte(t *testing.T) {
	// A body no JSON encoder writes: spacing and member order kept.
	const answer = `{"result": {"tools":[]} ,"id":7,  "jsonrpc":"2.0"}`
	f := &fakePactd{open: respond(answer)}
	_, url := start(t, f, hdtphost.Config{})
	for i, body := range []string{`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`} {
		res, got, err := post(t, url, []byte(body))
		if err != nil || res.StatusCode != 200 || string(got) != answer || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %v %v %q", body, err, res.StatusCode, got)
		}
		req := f.opened[i]
		if string(req.GetBody()) != body || req.GetEndpoint() != "https://agent.maya.example/mcp" || req.GetSourceAddress() != "127.0.0.1" ||
			len(req.GetTransportChain()) != 0 || f.auth[i] != "Bearer "+token {
			t.Errorf("pactd was asked %v (auth %q)", req, f.auth[i])
		}
	}
}

func TestDispatchRunsTheToolAndWritesTheCompletion(t *testing.T) {
	var seen *hdtphost.Call
	run := func(result any, err error) func(context.Context, *hdtphost.Call) (any, error) {
		return func(_ context.Context, c *hdtphost.Call) (any, error) { seen = c; return result, err }
	}
	tools := []hdtphost.Tool{
		{Name: "ok_tool", Permission: "calendar.availability", Run: run(map[string]any{"slots": []any{}}, nil)},
		{Name: "refusing", Permission: "calendar.availability", Run: run(nil, &hdtphost.Refusal{Code: "rate_limited", RetryAfter: 3})},
		{Name: "failing", Permission: "calendar.availability", Run: run(nil, errors.New("disk full"))},
		{Name: "not_object", Permission: "calendar.availability", Run: run([]int{1}, nil)},
		{Name: "panicking", Permission: "calendar.availability", Run: func(context.Context, *hdtphost.Call) (any, error) { panic("boom") }},
	}
	f := &fakePactd{open: func(req *hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error) {
		var m struct{ Params struct{ Name string } }
		_ = json.Unmarshal(req.GetBody(), &m)
		return &hdtpv1.OpenInboundResponse{Outcome: &hdtpv1.OpenInboundResponse_Dispatch{Dispatch: &hdtpv1.Dispatch{
			CallHandle: "h-" + m.Params.Name, Tool: m.Params.Name, ArgumentsJson: `{"a":1}`, CallerRoot: "sha256:r", MsgId: "m1", Sealed: true}}}, nil
	}}
	_, url := start(t, f, hdtphost.Config{Tools: tools})
	call := func(name string) *hdtpv1.CompleteInboundRequest {
		t.Helper()
		_, body, err := post(t, url, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`"}}`))
		if err != nil || string(body) != `{"completed":"h-`+name+`"}` {
			t.Fatalf("%s: %v %s", name, err, body)
		}
		return f.completed[len(f.completed)-1]
	}
	if done := call("ok_tool"); done.GetResultJson() != `{"slots":[]}` {
		t.Errorf("ok_tool completed with %v", done)
	}
	if seen.Endpoint != "https://agent.maya.example/mcp" || seen.Handle != "h-ok_tool" || string(seen.Arguments) != `{"a":1}` ||
		seen.CallerRoot != "sha256:r" || seen.MsgID != "m1" || !seen.Sealed {
		t.Errorf("the tool saw %+v", seen)
	}
	if r := call("refusing").GetRefusal(); r.GetCode() != "rate_limited" || r.GetRetryAfterSeconds() != 3 {
		t.Errorf("refusing completed with %v", r)
	}
	for _, name := range []string{"failing", "not_object", "panicking", "no_such_tool"} {
		if r := call(name).GetRefusal(); r.GetCode() != "unavailable" {
			t.Errorf("%s completed with %v, want unavailable", name, r)
		}
	}
}

func TestBodyBound(t *testing.T) {
	f := &fakePactd{open: respond(`{}`)}
	_, url := start(t, f, hdtphost.Config{})
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	atBound := append(append([]byte{}, body...), bytes.Repeat([]byte(" "), hdtphost.MaxBodyBytes-len(body))...)
	if res, _, err := post(t, url, atBound); err != nil || res.StatusCode != 200 || len(f.opened) != 1 {
		t.Fatalf("a body at the bound: %v %v, pactd asked %d times", err, res, len(f.opened))
	}
	res, _, err := post(t, url, append(atBound, ' '))
	if err == nil && res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body past the bound: %d, want 413", res.StatusCode)
	}
	if len(f.opened) != 1 {
		t.Errorf("pactd was asked about a body past the bound")
	}
}

func TestNotFoundAndReject(t *testing.T) {
	f := &fakePactd{open: func(req *hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error) {
		if !strings.Contains(req.GetEndpoint(), "/other/") {
			return nil, connect.NewError(connect.CodeNotFound, errors.New("no identity"))
		}
		return &hdtpv1.OpenInboundResponse{Outcome: &hdtpv1.OpenInboundResponse_Reject{Reject: &hdtpv1.Reject{Reason: "chain"}}}, nil
	}}
	_, url := start(t, f, hdtphost.Config{})
	if res, _, err := post(t, url, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); err != nil || res.StatusCode != 404 {
		t.Errorf("no identity: %v %v, want 404", err, res)
	}
	if _, _, err := post(t, url+"/other", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); err == nil {
		t.Error("a rejected request got an answer; want the connection closed")
	}
}

// TestDeliver (to a name httptest's certificate covers) posts pactd's exact bytes to the peer, follows a resend, and
// takes the answer out of an event stream; the address guard's refusal
// means no dial at all.
func TestDeliver(t *testing.T) {
	var got [][]byte
	peer := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, b)
		if r.Host != "you.example.com" || r.Header.Get("Accept") != "application/json, text/event-stream" {
			t.Errorf("the peer got Host %q, Accept %q", r.Host, r.Header.Get("Accept"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": hi\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":"+string(rune('0'+len(got)))+"}}\n\n")
	}))
	t.Cleanup(peer.Close)
	pool := x509.NewCertPool()
	pool.AddCert(peer.Certificate())
	f := &fakePactd{valid: true, outcome: func(req *hdtpv1.OpenOutboundResultRequest) *hdtpv1.OpenOutboundResultResponse {
		if req.GetCallHandle() == "first" {
			return &hdtpv1.OpenOutboundResultResponse{Outcome: &hdtpv1.OpenOutboundResultResponse_Resend{Resend: &hdtpv1.OutboundCall{
				Endpoint: "https://you.example.com/mcp", RequestBody: []byte(`{"second": true}`), CallHandle: "second"}}}
		}
		return &hdtpv1.OpenOutboundResultResponse{Outcome: &hdtpv1.OpenOutboundResultResponse_Result{Result: &hdtpv1.OutboundResult{ResultJson: `{"ok":1}`, Sealed: true}}}
	}}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != "you.example.com:443" {
			return nil, errors.New("no route to " + addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, peer.Listener.Addr().String())
	}
	host, _ := start(t, f, hdtphost.Config{RootCAs: pool, Dial: dial})
	first := &hdtpv1.OutboundCall{Endpoint: "https://you.example.com/mcp", RequestBody: []byte(` {"first" : 1} `), CallHandle: "first"}
	res, err := host.Deliver(t.Context(), first)
	if err != nil || string(res.JSON) != `{"ok":1}` || !res.Sealed {
		t.Fatalf("Deliver = %+v, %v", res, err)
	}
	if len(got) != 2 || string(got[0]) != ` {"first" : 1} ` || string(got[1]) != `{"second": true}` {
		t.Errorf("the peer got %q", got)
	}
	if len(f.results) != 2 || string(f.results[0].GetBody()) != `{"jsonrpc":"2.0","id":1,"result":{"n":1}}` || f.results[1].GetHttpStatus() != 200 {
		t.Errorf("pactd was given %v", f.results)
	}
	f.valid = false
	if _, err := host.Deliver(t.Context(), first); err == nil || !strings.Contains(err.Error(), "not_public") || len(got) != 2 {
		t.Errorf("a refused address: %v, peer asked %d times (want 2: never dialed)", err, len(got))
	}
}

// TestCallerHangsUp: a dispatched call whose caller hangs up mid-tool still
// runs to its end and is completed, so pactd stores its answer for the
// caller's retry instead of holding it in flight.
func TestCallerHangsUp(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	tool := hdtphost.Tool{Name: "slow", Permission: "calendar.availability", Run: func(ctx context.Context, _ *hdtphost.Call) (any, error) {
		close(entered)
		<-release
		return map[string]any{"ok": true}, ctx.Err()
	}}
	f := &fakePactd{open: func(*hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error) {
		return &hdtpv1.OpenInboundResponse{Outcome: &hdtpv1.OpenInboundResponse_Dispatch{Dispatch: &hdtpv1.Dispatch{CallHandle: "h", Tool: "slow"}}}, nil
	}}
	host, _ := start(t, f, hdtphost.Config{Tools: []hdtphost.Tool{tool}})
	gone := make(chan struct{}) // the server saw the caller hang up
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		go func() { <-r.Context().Done(); close(gone) }()
		host.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, front.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`))
	go func() { <-entered; cancel(); <-gone; close(release) }()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the request was answered; want it cut by the caller")
	}
	for range 200 {
		f.mu.Lock()
		n := len(f.completed)
		f.mu.Unlock()
		if n == 1 {
			if got := f.completed[0].GetResultJson(); got != `{"ok":true}` {
				t.Fatalf("completed with %v, want the tool's result", f.completed[0])
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the call was never completed after the caller hung up")
}
