package demo

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// remote serves the RemoteAgent protocol with a fixed answer and keeps the
// request bodies it got.
func remote(t *testing.T, status int, answer string) (*RemoteAgent, *[]string) {
	t.Helper()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("remote agent called with %s %q", r.Method, r.Header.Get("Content-Type"))
		}
		got = append(got, string(b))
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return NewRemoteAgent(srv.URL), &got
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestRemoteAgentProtocol: the turn goes out as docs/frontends.md's
// RemoteAgent request (arrays never null, delegation null when there is
// none), and the answer comes back as the Reply, action arguments with
// their numbers as written.
func TestRemoteAgentProtocol(t *testing.T) {
	agent, got := remote(t, 200, `{"text":"Done","needScopes":null,"scopesUsed":["orders:cancel"],`+
		`"actions":[{"tool":"cancel_order","args":{"orderId":"1002","n":12345678901234567890}},{"tool":"list_orders","args":null}]}`)
	turn := pacta2a.Turn{BrandID: "shop", ContextID: "c-1", NewContext: true, Text: "cancel order 1002",
		Caller: &pactv1.Caller{AgentId: "agt_1", Issuer: "https://pa.example", Subject: "u", AgentDisplayName: "PA"},
		Delegation: &pactv1.DelegationInfo{GrantId: "g", BrandUser: "alice", Scopes: []string{"orders:cancel"},
			AuthorizationDetailsJson: `[{"x":1}]`, AuthorizationDetails: []*pactv1.AuthorizationDetail{{Type: OrderCancelType, Json: `{"x":1}`,
				Members: []*pactv1.AuthorizationDetailMember{{Name: "order_id", Values: []string{"1002"}}, {Name: "actions"}}}}}}
	r, err := agent.Reply(t.Context(), turn)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, (*got)[0], `{"brandId":"shop","contextId":"c-1","newContext":true,"text":"cancel order 1002",
		"caller":{"agentId":"agt_1","issuer":"https://pa.example","subject":"u","agentDisplayName":"PA"},
		"delegation":{"grantId":"g","brandUser":"alice","scopes":["orders:cancel"],"authorizationDetailsJson":"[{\"x\":1}]",
		"authorizationDetails":[{"type":"`+OrderCancelType+`","json":"{\"x\":1}","members":[{"name":"order_id","values":["1002"],"array":false},
		{"name":"actions","values":[],"array":false}]}]}}`)
	want := pacta2a.Reply{Text: "Done", ScopesUsed: []string{"orders:cancel"}, Actions: []pacta2a.Action{
		{Tool: "cancel_order", Args: map[string]any{"orderId": "1002", "n": json.Number("12345678901234567890")}}, {Tool: "list_orders"}}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("reply = %#v\nwant %#v", r, want)
	}
	// An identity-only turn: no delegation, and a step-up answer.
	agent, got = remote(t, 200, `{"text":"I cannot","needScopes":["orders:read"]}`)
	r, err = agent.Reply(t.Context(), pacta2a.Turn{BrandID: "acme", ContextID: "c-2", Text: "orders",
		Caller: &pactv1.Caller{AgentId: "agt_1", Issuer: "https://pa.example", Subject: "u"}})
	if err != nil || !reflect.DeepEqual(r, pacta2a.Reply{Text: "I cannot", NeedScopes: []string{"orders:read"}}) {
		t.Fatalf("reply = %#v, %v", r, err)
	}
	jsonEqual(t, (*got)[0], `{"brandId":"acme","contextId":"c-2","newContext":false,"text":"orders",
		"caller":{"agentId":"agt_1","issuer":"https://pa.example","subject":"u","agentDisplayName":""},"delegation":null}`)
}

// TestRemoteAgentRefusesBadAnswers: every answer outside the protocol fails
// the turn; the control (a minimal answer) passes.
func TestRemoteAgentRefusesBadAnswers(t *testing.T) {
	cases := []struct {
		name   string
		status int
		answer string
		want   string // in the error
	}{
		{"fail/status", 500, `{"text":"x"}`, "answered 500"},
		{"fail/too-large", 200, `{"text":"` + strings.Repeat("a", MaxRemoteAnswerBytes) + `"}`, "too large"},
		{"fail/not-json", 200, `{"text":`, "not one JSON value"},
		{"fail/trailing", 200, `{"text":"x"} {}`, "not one JSON value"},
		{"fail/trailing-brace", 200, `{"text":"x"} }`, "not one JSON value"},
		{"fail/array", 200, `[]`, "must be an object"},
		{"fail/text-number", 200, `{"text":5}`, "text must be a string"},
		{"fail/no-text", 200, `{"needScopes":["a"]}`, "text must be a string"},
		{"fail/need-not-array", 200, `{"text":"x","needScopes":"a"}`, "needScopes must be an array"},
		{"fail/used-not-strings", 200, `{"text":"x","scopesUsed":["a",1]}`, "scopesUsed must be an array"},
		{"fail/actions-object", 200, `{"text":"x","actions":{}}`, "actions must be an array"},
		{"fail/action-without-tool", 200, `{"text":"x","actions":[{"args":1}]}`, "needs a tool"},
		{"fail/action-not-object", 200, `{"text":"x","actions":["t"]}`, "needs a tool"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agent, _ := remote(t, c.status, c.answer)
			if _, err := agent.Reply(t.Context(), pacta2a.Turn{BrandID: "acme"}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want one saying %q", err, c.want)
			}
		})
	}
	agent, _ := remote(t, 200, `{"text":""}`)
	if r, err := agent.Reply(t.Context(), pacta2a.Turn{BrandID: "acme"}); err != nil || !reflect.DeepEqual(r, pacta2a.Reply{}) {
		t.Fatalf("minimal answer: %#v, %v", r, err)
	}
}

// TestRemoteAgentHonoursTheTurnsContext: a remote agent that never answers
// fails the turn when the turn's context ends (the frontend's TurnTimeout).
func TestRemoteAgentHonoursTheTurnsContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := NewRemoteAgent(srv.URL).Reply(ctx, pacta2a.Turn{}); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("error = %v, want the context's deadline", err)
	}
}

// FuzzParseRemoteReply: any answer a remote process sends is either
// refused or a Reply whose every list entry and action tool is a string
// from the answer; it never panics and is deterministic.
func FuzzParseRemoteReply(f *testing.F) {
	for _, s := range []string{`{"text":"x"}`, `{"text":"x","needScopes":["a"],"scopesUsed":[],"actions":[{"tool":"t","args":{"n":1e400}}]}`,
		`{"text":null}`, `{"text":"x","actions":[null]}`, `{"text":"x"}x`, `{"text":"0"} }`, `"x"`, ``, `{"text":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRemoteReply(b)
		r2, err2 := ParseRemoteReply(b)
		if !reflect.DeepEqual(r, r2) || (err == nil) != (err2 == nil) {
			t.Fatalf("not deterministic")
		}
		if err != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		for _, a := range r.Actions {
			if _, err := json.Marshal(a.Args); err != nil {
				t.Fatalf("args of %q do not encode: %v", a.Tool, err)
			}
		}
	})
}
