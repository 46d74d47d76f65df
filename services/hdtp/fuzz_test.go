package hdtp

import (
	"bytes"
	"encoding/json"
	"testing"

	"connectrpc.com/connect"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// FuzzOpenInbound feeds OpenInbound raw request bodies, on SQLite, for an
// identity that runs no content tool (so nothing can be dispatched) and
// has one contact. Seeds: the JSON-RPC bodies of Appendix A, sealed calls
// from a guest and a contact (full and small form), and broken ones.
// Properties: OpenInbound never fails for a body within its bound; it
// answers a response (never a dispatch); the body is one JSON object of
// JSON-RPC 2.0 whose id is the request's when the request had a valid
// one; the same body gets the same answer again (refusals and replays are
// deterministic).
func FuzzOpenInbound(f *testing.F) {
	h := newHostFixture(f, "")
	s := h.serve(f, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_OPTIONAL)
	alina := h.peer(f, s, "Alina Rao", "https://agent.alina.example/mcp")
	stranger := h.peer(f, s, "Stranger", "https://agent.stranger.example/mcp")
	rc, err := alina.Seal(s.leaf, 1, "env-seed-rc", h.clock.Now(), "request_contact", `{"card":`+hdtptestQuote(alina.Card)+`}`, false)
	if err != nil {
		f.Fatal(err)
	}
	if r, err := h.host.OpenInbound(f.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: rc.Body}); err != nil || r.GetRespond() == nil {
		f.Fatalf("seed request = %v, %v", r, err)
	}
	h.approve(f, s, alina.RootFingerprint(), "friend")
	for _, seed := range []string{
		`{ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"send_message","arguments":{"msg_id":"m","text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sealed_call","arguments":{"protected":"e30","enc":"AA","ct":"AA","sig":"AA"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"a\":\"\xff\"}}",
		``, `null`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	for i, c := range []struct {
		tool, args string
		small      bool
	}{{"send_message", `{"msg_id":"m","text":"hi"}`, false}, {"send_message", `{"msg_id":"m","text":"hi"}`, true},
		{"get_card", `{}`, true}, {"request_contact", `{"card":` + hdtptestQuote(stranger.Card) + `}`, false}} {
		p := alina
		if c.tool == "request_contact" {
			p = stranger
		}
		call, err := p.Seal(s.leaf, 10+i, "env-seed-"+c.tool, h.clock.Now(), c.tool, c.args, c.small)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(call.Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > MaxInboundBodyBytes {
			return
		}
		req := &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: body, SourceAddress: "203.0.113.5"}
		r, err := h.host.OpenInbound(t.Context(), req)
		if err != nil {
			t.Fatalf("OpenInbound failed: %v", err)
		}
		if r.GetRespond() == nil {
			t.Fatalf("not a response (nothing runs content tools here): %v", r)
		}
		out := r.GetRespond().GetBody()
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || resp.JSONRPC != "2.0" || !json.Valid(out) {
			t.Fatalf("the answer is not a JSON-RPC response: %s", out)
		}
		if rpc, fail := parseRPC(body); fail == nil && !bytes.Equal(resp.ID, rpc.id) {
			t.Fatalf("id %s answered as %s", rpc.id, resp.ID)
		}
		// The same body again: the same answer (a budget may run dry in
		// between, which changes a refusal into rate_limited).
		again, err := h.host.OpenInbound(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if a := again.GetRespond(); a.GetCode() != "rate_limited" && r.GetRespond().GetCode() != "rate_limited" && !bytes.Equal(a.GetBody(), out) &&
			!r.GetRespond().GetSealed() {
			t.Fatalf("a plaintext answer changed:\n%s\n%s", out, a.GetBody())
		}
	})
}

// FuzzCompleteInbound feeds CompleteInbound handles, results and
// refusals. One real dispatched call exists; its handle is a seed.
// Properties: CompleteInbound never fails with anything but
// INVALID_ARGUMENT or FAILED_PRECONDITION; only the real handle ever
// completes (a forged one is refused before the store is read); a
// completion's answer is a JSON-RPC response to the dispatching request;
// once completed, every later completion returns the same stored bytes.
func FuzzCompleteInbound(f *testing.F) {
	h := newHostFixture(f, "")
	s := h.serve(f, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
	h.declare(f, s, toolSendMessage)
	alina := h.peer(f, s, "Alina Rao", "https://agent.alina.example/mcp")
	rc, err := alina.Seal(s.leaf, 1, "env-rc", h.clock.Now(), "request_contact", `{"card":`+hdtptestQuote(alina.Card)+`}`, false)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := h.host.OpenInbound(f.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: rc.Body}); err != nil {
		f.Fatal(err)
	}
	h.approve(f, s, alina.RootFingerprint(), "basic")
	call, err := alina.Seal(s.leaf, 2, "env-send", h.clock.Now(), "send_message", `{"msg_id":"m","text":"hi"}`, false)
	if err != nil {
		f.Fatal(err)
	}
	r, err := h.host.OpenInbound(f.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: call.Body})
	if err != nil || r.GetDispatch() == nil {
		f.Fatalf("seed dispatch = %v, %v", r, err)
	}
	handle := r.GetDispatch().GetCallHandle()
	f.Add(handle, `{"thread_id":"t","status":"delivered"}`, "", int32(0), "")
	f.Add(handle, "", "rate_limited", int32(3), `{"why":"busy"}`)
	f.Add(handle[:len(handle)-1]+"A", `{}`, "", int32(0), "")
	f.Add("hc1.", `{"a":1,"a":2}`, "", int32(0), "")
	f.Add("", "", "envelope_invalid", int32(-1), `[`)
	var stored []byte
	f.Fuzz(func(t *testing.T, h0, result, code string, retry int32, data string) {
		req := &hdtpv1.CompleteInboundRequest{CallHandle: h0}
		if code != "" || result == "" {
			req.Outcome = &hdtpv1.CompleteInboundRequest_Refusal{Refusal: &hdtpv1.ToolRefusal{Code: code, RetryAfterSeconds: retry, DataJson: data}}
		} else {
			req.Outcome = &hdtpv1.CompleteInboundRequest_ResultJson{ResultJson: result}
		}
		resp, err := h.host.CompleteInbound(t.Context(), req)
		if err != nil {
			if c := connect.CodeOf(err); c != connect.CodeInvalidArgument && c != connect.CodeFailedPrecondition {
				t.Fatalf("CompleteInbound failed with %v", err)
			}
			return
		}
		if h0 != handle {
			t.Fatalf("a handle pactd did not issue completed the call: %q", h0)
		}
		var out struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(resp.GetBody(), &out); err != nil || string(out.ID) != "2" {
			t.Fatalf("answer %s", resp.GetBody())
		}
		if stored == nil {
			stored = resp.GetBody()
		} else if !resp.GetAlreadyCompleted() || !bytes.Equal(resp.GetBody(), stored) {
			t.Fatalf("a later completion changed the answer")
		}
	})
}
