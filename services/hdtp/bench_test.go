package hdtp

import (
	"fmt"
	"testing"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/peertest"
)

// The inbound path in process, on both engines: the host's half of a call
// (OpenInbound and, for a dispatch, CompleteInbound), with the peer's
// envelopes sealed before the clock starts. Budgets are raised so that
// they never refuse.
//
//	go test ./services/hdtp/ -run '^$' -bench Inbound -count 6

func benchFixture(b *testing.B, dbURL string) (*hostFixture, *served, *peertest.Peer) {
	f := newHostFixture(b, dbURL)
	f.host.d.Limits.ContactBurst, f.host.d.Limits.ContactCallsPerSecond, f.host.d.Limits.ContactCap = 1<<30, 1000, 1<<20
	f.host.d.Limits.GuestCallsPerHour = 1 << 30
	s := f.serve(b, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
	f.declare(b, s, toolSendMessage)
	p := f.peer(b, s, "Alina Rao", "https://agent.alina.example/mcp")
	c, err := p.Seal(s.leaf, 1, "env-bench-rc", f.clock.Now(), "request_contact", `{"card":`+hdtptestQuote(p.Card)+`}`, false)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.host.OpenInbound(b.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: c.Body}); err != nil {
		b.Fatal(err)
	}
	f.approve(b, s, p.RootFingerprint(), "basic")
	return f, s, p
}

func benchEngines(b *testing.B, run func(b *testing.B, dbURL string)) {
	b.Run("sqlite", func(b *testing.B) { run(b, "") })
	b.Run("postgres", func(b *testing.B) { run(b, dbtest.PostgresURL(b)) })
}

// BenchmarkInboundSealedMessage: a contact's sealed send_message, small
// form (the steady state), opened, admitted, dispatched and completed with
// its answer sealed back: two transactions.
func BenchmarkInboundSealedMessage(b *testing.B) {
	benchEngines(b, func(b *testing.B, dbURL string) {
		f, s, p := benchFixture(b, dbURL)
		bodies := make([][]byte, b.N)
		for i := range bodies {
			c, err := p.Seal(s.leaf, i, fmt.Sprintf("env-%d", i), f.clock.Now(), "send_message", fmt.Sprintf(`{"msg_id":"m-%d","text":"hello"}`, i), true)
			if err != nil {
				b.Fatal(err)
			}
			bodies[i] = c.Body
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			r, err := f.host.OpenInbound(b.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: bodies[i]})
			if err != nil || r.GetDispatch() == nil {
				b.Fatalf("%v %v", r, err)
			}
			if _, err := f.host.CompleteInbound(b.Context(), &hdtpv1.CompleteInboundRequest{CallHandle: r.GetDispatch().GetCallHandle(),
				Outcome: &hdtpv1.CompleteInboundRequest_ResultJson{ResultJson: `{"status":"delivered"}`}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInboundGuestList: a stranger's plaintext tools/list: the JSON-RPC
// layer, the identity, the guest budget's transaction, the list.
func BenchmarkInboundGuestList(b *testing.B) {
	benchEngines(b, func(b *testing.B, dbURL string) {
		f, s, _ := benchFixture(b, dbURL)
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if r, err := f.host.OpenInbound(b.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: body, SourceAddress: "192.0.2.1"}); err != nil ||
				r.GetRespond().GetCode() != "" {
				b.Fatalf("%v %v", r, err)
			}
		}
	})
}

// BenchmarkInboundEnvelopeInvalid: a refusal before any transaction (a
// tampered envelope): the floor of the sealed path.
func BenchmarkInboundEnvelopeInvalid(b *testing.B) {
	f, s, p := benchFixture(b, "")
	c, err := p.Seal(s.leaf, 1, "env-x", f.clock.Now(), "send_message", `{"msg_id":"m","text":"hello"}`, true)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(string(c.Body[:len(c.Body)-8]) + "AAAA\"}}}")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if r, err := f.host.OpenInbound(b.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: body}); err != nil || r.GetRespond().GetCode() == "" {
			b.Fatalf("%v %v", r, err)
		}
	}
}
