package hdtp

import (
	"fmt"
	"strings"
	"testing"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// TestInboundPACT2: a PACT 2.2 identity speaks its own generation end to
// end (envelope v 2, PACT-SEAL suites, PACT-SEAL-v2): a stranger's
// request, the owner's approval, a dispatched and completed message;
// get_card advertises PACT 2.2.1's hourly budgets; the contact budget is
// hourly (60 an hour: the 61st call waits a minute); an HDTP envelope to
// it is envelope_invalid (control of the generation check).
func TestInboundPACT2(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_PACT2, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		f.declare(t, s, toolSendMessage)
		alina := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		if !strings.Contains(alina.Card, "X-PACT-VERSION:2") {
			t.Fatalf("not a PACT card: %q", alina.Card)
		}
		f.befriend(t, s, alina, "basic")
		sc := f.send(t, s, alina, "send_message", `{"msg_id":"p-0","text":"hi"}`, false, "")
		d := sc.resp.GetDispatch()
		if d == nil {
			t.Fatalf("not dispatched: %v", sc.resp)
		}
		if res, code := f.openBody(t, s, alina, sc.call, f.complete(t, d, `{"status":"delivered"}`).GetBody()); code != "" || string(res) != `{"status":"delivered"}` {
			t.Fatalf("completion = %s %s", res, code)
		}
		gc, code := f.opened(t, s, alina, f.send(t, s, alina, "get_card", `{}`, false, ""))
		if code != "" || !strings.Contains(string(gc), `"limits":{"text_bytes":16384,"note_bytes":1024,"media_inline_bytes":5242880,"availability_slots":5,`+
			`"invite_ttl_days":90,"contact_calls_per_hour":60,"guest_calls_per_hour":10}`) {
			t.Fatalf("get_card = %s %s", gc, code)
		}
		for i := 3; i <= 60; i++ {
			if code := f.sealedCode(t, s, alina, "send_message", fmt.Sprintf(`{"msg_id":"p-%d","text":"x"}`, i), false, ""); code != "dispatch" {
				t.Fatalf("call %d = %q", i, code)
			}
		}
		r := f.send(t, s, alina, "send_message", `{"msg_id":"p-61","text":"x"}`, false, "").resp.GetRespond()
		if r.GetCode() != "rate_limited" || r.GetRetryAfterSeconds() != 60 {
			t.Fatalf("call 61 = %v, want rate_limited with retry_after 60", r)
		}
		// An HDTP peer's envelope to the PACT identity.
		hdtpPeer := f.peer(t, &served{gen: 2}, "H", "https://h.example/mcp")
		c, err := hdtpPeer.Seal(s.leaf, 9, "env-hdtp", f.clock.Now(), "request_contact", `{}`, false)
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := plainRefusal(t, f.in(t, s, c.Body, "", nil)); code != "envelope_invalid" {
			t.Fatalf("an HDTP envelope to a PACT identity = %q", code)
		}
	})
}
