package hdtp

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// TestCompleteInbound: the completion's refusals, each with its exact
// code: a handle not pactd's (forged MAC, another secret's, truncated) is
// INVALID_ARGUMENT, an expired one FAILED_PRECONDITION handle_expired; a
// result that is not one JSON object, or has a member twice, and a refusal
// with a code a tool may not answer, a retry_after without rate_limited, or
// rate_limited without one, are INVALID_ARGUMENT and change nothing (the
// call stays dispatched: the same handle then completes). A host's refusal
// is sealed back as the error, stored at the envelope, and frees the inner
// msg_id for a new attempt (§10.3); a result's thread_id becomes the
// caller's.
func TestCompleteInbound(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		ctx := t.Context()
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		f.declare(t, s, toolSendMessage)
		alina := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		f.befriend(t, s, alina, "basic")
		sc := f.send(t, s, alina, "send_message", `{"msg_id":"c-1","text":"x"}`, false, "")
		d := sc.resp.GetDispatch()
		if d == nil {
			t.Fatal("not dispatched")
		}
		result := func(h, r string) error {
			_, err := f.host.CompleteInbound(ctx, &hdtpv1.CompleteInboundRequest{CallHandle: h, Outcome: &hdtpv1.CompleteInboundRequest_ResultJson{ResultJson: r}})
			return err
		}
		refusal := func(h string, r *hdtpv1.ToolRefusal) (*hdtpv1.CompleteInboundResponse, error) {
			return f.host.CompleteInbound(ctx, &hdtpv1.CompleteInboundRequest{CallHandle: h, Outcome: &hdtpv1.CompleteInboundRequest_Refusal{Refusal: r}})
		}
		h := d.GetCallHandle()
		other, _ := NewHost(func() Deps { dd := f.ids.d; dd.HandleSecret = make([]byte, 32); return dd }(), f.ids)
		for name, bad := range map[string]string{
			"forged-mac":     h[:len(h)-2] + "AA",
			"other-secret":   other.keys.sealCall("hcl_x", s.id, f.clock.Now().Add(time.Hour)),
			"truncated":      h[:20],
			"empty":          "",
			"another-prefix": "ho1." + strings.TrimPrefix(h, "hc1."),
		} {
			if err := result(bad, `{"status":"delivered"}`); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("fail/%s = %v, want INVALID_ARGUMENT", name, err)
			}
		}
		for name, r := range map[string]string{"array": `[]`, "twice": `{"a":1,"a":2}`, "not-json": `{`, "string": `"x"`} {
			if err := result(h, r); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("fail/result-%s = %v", name, err)
			}
		}
		for name, r := range map[string]*hdtpv1.ToolRefusal{
			"code-envelope-invalid": {Code: "envelope_invalid"},
			"retry-without-rate":    {Code: "unavailable", RetryAfterSeconds: 5},
			"rate-without-retry":    {Code: "rate_limited"},
			"data-array":            {Code: "bad_request", DataJson: `[1]`},
		} {
			if _, err := refusal(h, r); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("fail/refusal-%s = %v", name, err)
			}
		}
		// Nothing changed: the call is still in flight.
		if r := f.in(t, s, sc.call.Body, "", nil); r.GetRespond().GetReason() != "in_flight" {
			t.Fatalf("after refused completions = %v", r)
		}
		// The host refuses: sealed back, and the msg_id is free again.
		done, err := refusal(h, &hdtpv1.ToolRefusal{Code: "rate_limited", RetryAfterSeconds: 7})
		if err != nil {
			t.Fatal(err)
		}
		if _, code := f.openBody(t, s, alina, sc.call, done.GetBody()); code != "rate_limited" {
			t.Fatalf("the host's refusal = %q", code)
		}
		if r := f.in(t, s, sc.call.Body, "", nil); string(r.GetRespond().GetBody()) != string(done.GetBody()) {
			t.Fatal("the refused envelope's replay is not the stored answer")
		}
		f.clock.Advance(time.Second)
		retry := f.send(t, s, alina, "send_message", `{"msg_id":"c-1","text":"x"}`, false, "")
		if retry.resp.GetDispatch() == nil {
			t.Fatalf("a new envelope with a refused call's msg_id = %v, want a dispatch", retry.resp)
		}
		f.complete(t, retry.resp.GetDispatch(), `{"thread_id":"t-7","status":"delivered"}`)
		owner, err := func() (string, error) {
			var root string
			err := f.store.InHDTPTx(ctx, s.id, func(tx db.HDTPTx) error {
				var err error
				root, err = tx.ThreadOwner("t-7")
				return err
			})
			return root, err
		}()
		if err != nil || owner != alina.RootFingerprint() {
			t.Fatalf("thread t-7 belongs to %q (%v)", owner, err)
		}
		// Expired: past the handle's hour.
		late := f.send(t, s, alina, "send_message", `{"msg_id":"c-2","text":"x"}`, false, "").resp.GetDispatch()
		f.clock.Advance(callHandleLifetime)
		err = result(late.GetCallHandle(), `{"status":"delivered"}`)
		if connect.CodeOf(err) != connect.CodeFailedPrecondition || metadata(t, err)["refusal"] != "handle_expired" {
			t.Fatalf("fail/expired = %v", err)
		}
	})
}
