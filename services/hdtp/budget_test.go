package hdtp

import (
	"fmt"
	"testing"
	"time"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// TestBudgets: a contact's 11th call in a burst is rate_limited with
// retry_after 1, sealed (hostile case 92); a replay is free, so sending
// the same envelope again does not spend (73, 95); tools/list is charged
// (95); 60 chain_required answers to one source empty its budget, and its
// next sealed_call is refused in plaintext before anything is opened with
// retry_after 60 (94); another source is not touched (control).
func TestBudgets(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		f.declare(t, s, toolSendMessage)
		alina := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		f.befriend(t, s, alina, "basic")
		f.clock.Advance(10 * time.Second) // befriending spent nothing of the contact's bucket, but be sure

		first := f.send(t, s, alina, "send_message", `{"msg_id":"b0","text":"x"}`, false, "")
		if first.resp.GetDispatch() == nil {
			t.Fatalf("call 1 = %v", first.resp)
		}
		// The same envelope again, many times: replays, charged nothing.
		for range 20 {
			r := f.in(t, s, first.call.Body, "", nil)
			if r.GetRespond().GetReason() != "in_flight" {
				t.Fatalf("a replay = %v", r)
			}
		}
		for i := 2; i <= 9; i++ {
			if code := f.sealedCode(t, s, alina, "send_message", fmt.Sprintf(`{"msg_id":"b%d","text":"x"}`, i), false, ""); code != "dispatch" {
				t.Fatalf("call %d = %q", i, code)
			}
		}
		// The 10th is a tools/list: charged too.
		if _, code := f.opened(t, s, alina, f.list(t, s, alina, false)); code != "" {
			t.Fatalf("call 10 (tools/list) = %q", code)
		}
		sc := f.send(t, s, alina, "send_message", `{"msg_id":"b11","text":"x"}`, false, "")
		if r := sc.resp.GetRespond(); r.GetCode() != "rate_limited" || r.GetRetryAfterSeconds() != 1 || !r.GetSealed() {
			t.Fatalf("call 11 = %v, want a sealed rate_limited with retry_after 1", sc.resp)
		}
		if r, err := alina.Open(sc.resp.GetRespond().GetBody(), sc.call, s.leaf, s.endpoint, f.clock.Now()); err != nil ||
			string(r.Error) != `{"code":"rate_limited","retry_after":1}` {
			t.Fatalf("the sealed refusal = %v, %v", r, err)
		}
		f.clock.Advance(time.Second)
		if code := f.sealedCode(t, s, alina, "send_message", `{"msg_id":"b12","text":"x"}`, false, ""); code != "dispatch" {
			t.Fatalf("a second later = %q", code)
		}

		// The source budget: 60 chain_required answers from one address.
		stranger := f.peer(t, s, "Stranger", "https://agent.stranger.example/mcp")
		for i := range 60 {
			if code := f.sealedCode(t, s, stranger, "send_message", `{}`, true, "192.0.2.1"); code != "chain_required" {
				t.Fatalf("small form %d = %q", i+1, code)
			}
		}
		r := f.send(t, s, alina, "send_message", `{"msg_id":"b13","text":"x"}`, false, "192.0.2.1").resp.GetRespond()
		if r.GetCode() != "rate_limited" || r.GetRetryAfterSeconds() != 60 || r.GetSealed() || r.GetReason() != "source_budget" {
			t.Fatalf("a sealed_call from the spent source = %v, want a plaintext rate_limited with retry_after 60", r)
		}
		if string(r.GetBody()) != fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"isError":true,"content":[{"type":"text","text":"{\"code\":\"rate_limited\",\"retry_after\":60}"}]}}`, f.seq.Load()) {
			t.Fatalf("body = %s", r.GetBody())
		}
		f.clock.Advance(time.Second) // the contact's own bucket
		if code := f.sealedCode(t, s, alina, "send_message", `{"msg_id":"b14","text":"x"}`, false, "192.0.2.2"); code != "dispatch" {
			t.Fatalf("control: another source = %q", code)
		}
	})
}

// TestCertificateRenewed: an envelope sealed to a leaf the identity held
// and whose key is gone is answered certificate_renewed with the current
// chain, in plaintext (hostile case 58); sealed to the superseded leaf
// while its key is kept, it opens (control).
func TestCertificateRenewed(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		ctx := t.Context()
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		f.declare(t, s, toolSendMessage)
		alina := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		f.befriend(t, s, alina, "basic")
		old := *s
		f.clock.Advance(24 * time.Hour)
		f.renew(t, s)
		if code := f.sealedCode(t, &old, alina, "send_message", `{"msg_id":"r1","text":"x"}`, false, ""); code != "dispatch" {
			t.Fatalf("control: sealed to the superseded leaf with its key kept = %q", code)
		}
		// Past the old leaf's notAfter the sweep destroys its key.
		f.clock.Set(old.leaf.NotAfter.Add(time.Hour))
		if _, err := f.ids.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		sc := f.send(t, &old, alina, "send_message", `{"msg_id":"r2","text":"x"}`, false, "")
		code, data := plainRefusal(t, sc.resp)
		cr, _ := f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: s.id})
		if code != "certificate_renewed" || string(data) != `{"chain":["`+cr.GetChain()[0]+`","`+cr.GetChain()[1]+`"]}` {
			t.Fatalf("sealed to a former leaf = %s %s", code, data)
		}
	})
}
