package hdtp

import (
	"encoding/base64"

	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/peertest"
)

// sealedCode sends a sealed call and returns the code of its answer: a
// plaintext refusal's, or the sealed error's ("" for a result, "dispatch"
// for a dispatch).
func (f *hostFixture) sealedCode(t *testing.T, s *served, p *peertest.Peer, tool, args string, small bool, source string) string {
	t.Helper()
	sc := f.send(t, s, p, tool, args, small, source)
	return f.codeOf(t, s, p, sc)
}

func (f *hostFixture) codeOf(t *testing.T, s *served, p *peertest.Peer, sc sealed) string {
	t.Helper()
	if sc.resp.GetDispatch() != nil {
		return "dispatch"
	}
	if !sc.resp.GetRespond().GetSealed() {
		code, _ := plainRefusal(t, sc.resp)
		return code
	}
	_, code := f.opened(t, s, p, sc)
	return code
}

// TestInboundRefusals: the order's refusals before and at the envelope,
// each named by its exact code, each with a positive control beside it
// (hostile cases 52, 57, 65, 66, 68, 70, 71, 72).
func TestInboundRefusals(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		ctx := t.Context()
		hd := hdtpv1.Generation_GENERATION_HDTP1
		s := f.serve(t, "https://agent.bharat.example/mcp", hd, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		sibling := f.serve(t, "https://agent.bharat.example/other", hd, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		none := f.serve(t, "https://none.example/mcp", hd, hdtpv1.SealPolicy_SEAL_POLICY_NONE)
		certReq := f.serve(t, "https://cert.example/mcp", hd, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		if _, err := f.ids.UpdateIdentity(ctx, &hdtpv1.UpdateIdentityRequest{Identity: &hdtpv1.Identity{IdentityId: certReq.id,
			ClientCert: hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_REQUIRED}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"client_cert"}}}); err != nil {
			t.Fatal(err)
		}
		f.declare(t, s, toolSendMessage)
		friend := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		stranger := f.peer(t, s, "Stranger", "https://agent.stranger.example/mcp")
		f.befriend(t, s, friend, "basic")
		msg := `{"msg_id":"m","text":"hi"}`

		// P1: seal policy none (68); control: its plaintext tools/list
		// answers, without sealed_call.
		if code := f.sealedCode(t, none, friend, "request_contact", `{}`, false, ""); code != "seal_not_accepted" {
			t.Fatalf("fail/seal-none = %q", code)
		}
		if b := string(f.in(t, none, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "", nil).GetRespond().GetBody()); strings.Contains(b, "sealed_call") || !strings.Contains(b, "request_contact") {
			t.Fatalf("ok/seal-none-list = %s", b)
		}
		// P1: client_cert required without a client chain (70); control:
		// with one the envelope opens (a stranger's request_contact).
		if code := f.sealedCode(t, certReq, stranger, "request_contact", `{"card":`+hdtptestQuote(stranger.Card)+`}`, false, ""); code != "identity_required" {
			t.Fatalf("fail/client-cert-required = %q", code)
		}
		c, _ := stranger.Seal(certReq.leaf, 3, "env-cert", f.clock.Now(), "request_contact", `{"card":`+hdtptestQuote(stranger.Card)+`}`, false)
		if r := f.in(t, certReq, c.Body, "", stranger.Chain()); !r.GetRespond().GetSealed() {
			t.Fatalf("ok/client-cert-given = %v", r)
		}
		// Plaintext calls (71): no identity proof, then seal required with
		// one; control: tools/list needs neither.
		sendPlain := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_message","arguments":` + msg + `}}`)
		if code, _ := plainRefusal(t, f.in(t, s, sendPlain, "", nil)); code != "identity_required" {
			t.Fatalf("fail/plain-no-identity = %q", code)
		}
		if code, _ := plainRefusal(t, f.in(t, s, sendPlain, "", friend.Chain())); code != "seal_required" {
			t.Fatalf("fail/plain-seal-required = %q", code)
		}
		// A client chain that does not validate is a refused handshake.
		if r := f.in(t, s, sendPlain, "", [][]byte{friend.Leaf.Raw}); r.GetReject() == nil || r.GetReject().GetReason() != "transport_chain_chain_length" {
			t.Fatalf("fail/transport-chain = %v", r)
		}
		// Kids (57): never held, a sibling's; control: the right one.
		other := f.peer(t, s, "Other", "https://x.example/mcp")
		if code := f.sealedCode(t, &served{id: s.id, leaf: other.Leaf, gen: s.gen}, friend, "send_message", msg, false, ""); code != "envelope_invalid" {
			t.Fatalf("fail/kid-never-held = %q", code)
		}
		if code := f.sealedCode(t, &served{id: s.id, leaf: sibling.leaf, gen: s.gen}, friend, "send_message", msg, false, ""); code != "envelope_invalid" {
			t.Fatalf("fail/kid-sibling = %q", code)
		}
		if code := f.sealedCode(t, s, friend, "send_message", `{"msg_id":"m-ok","text":"hi"}`, false, ""); code != "dispatch" {
			t.Fatalf("ok/kid = %q", code)
		}
		// Time (72): ts 301 s old; control: 299 s.
		for _, tc := range []struct {
			age  time.Duration
			want string
		}{{301 * time.Second, "envelope_invalid"}, {299 * time.Second, "dispatch"}} {
			c, _ := friend.Seal(s.leaf, 4, "env-age-"+tc.age.String(), f.clock.Now().Add(-tc.age), "send_message", `{"msg_id":"m-`+tc.age.String()+`","text":"x"}`, false)
			if code := f.codeOf(t, s, friend, sealed{call: c, resp: f.in(t, s, c.Body, "", nil)}); code != tc.want {
				t.Fatalf("ts %v old = %q, want %q", tc.age, code, tc.want)
			}
		}
		// A fifth member (52).
		c, _ = friend.Seal(s.leaf, 5, "env-fifth", f.clock.Now(), "send_message", msg, false)
		body := strings.Replace(string(c.Body), `"protected":`, `"extra":"AA","protected":`, 1)
		if code, _ := plainRefusal(t, f.in(t, s, []byte(body), "", nil)); code != "envelope_invalid" {
			t.Fatalf("fail/fifth-member = %q", code)
		}
		// Guests (65, 66): a stranger's send_message; a request_contact
		// carrying another leaf's card; control: its own card.
		if code := f.sealedCode(t, s, stranger, "send_message", msg, false, ""); code != "envelope_invalid" {
			t.Fatalf("fail/guest-send-message = %q", code)
		}
		if code := f.sealedCode(t, s, stranger, "request_contact", `{"card":`+hdtptestQuote(other.Card)+`}`, false, ""); code != "envelope_invalid" {
			t.Fatalf("fail/guest-other-card = %q", code)
		}
		if code := f.sealedCode(t, s, stranger, "request_contact", `{"card":`+hdtptestQuote(stranger.Card)+`}`, false, ""); code != "" {
			t.Fatalf("ok/guest-own-card = %q", code)
		}
		// The JSON-RPC layer: exact error bodies.
		for _, tc := range []struct{ body, want string }{
			{`{"jsonrpc":"2.0","id":1,`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
			{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
			{`{"jsonrpc":"2.0","method":"tools/list"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
			{`{"jsonrpc":"2.0","id":"a","method":"initialize"}`, `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}`},
			{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[]}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`},
			{`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
			{`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request"}}`},
		} {
			if got := string(f.in(t, s, []byte(tc.body), "", nil).GetRespond().GetBody()); got != tc.want {
				t.Errorf("%s:\n got %s\nwant %s", tc.body, got, tc.want)
			}
		}
	})
}

// TestTiersAndArguments: the pending tier (80), contact_rejected, an
// active contact's contact_accepted (unknown_contact, §10.5), argument
// bounds (89, 90), a leaf conflict (85), a superseded leaf (84), a new
// address under "ask" (86) and "auto", a tombstoned root back (87); each
// with its control.
func TestTiersAndArguments(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		ctx := t.Context()
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		f.declare(t, s, toolSendMessage, toolSendMedia)
		friend := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		f.befriend(t, s, friend, "friend")

		// The pending tier: the identity asked Chandra.
		chandra := f.peer(t, s, "Chandra Iyer", "https://agent.chandra.example/mcp")
		rq, err := f.contacts.RequestContact(ctx, &hdtpv1.RequestContactRequest{IdentityId: s.id, Card: chandra.Card, Note: "Hello"})
		if err != nil {
			t.Fatal(err)
		}
		checkNotification(t, f, s, chandra, rq.GetCall(), "request_contact", `"note":"Hello"`)
		if code := f.sealedCode(t, s, chandra, "send_message", `{"msg_id":"m","text":"x"}`, false, ""); code != "pending_approval" {
			t.Fatalf("fail/pending-tier-send = %q", code)
		}
		res, code := f.opened(t, s, chandra, f.send(t, s, chandra, "contact_accepted", `{"permissions":["message.text","bogus"]}`, false, ""))
		if code != "" || string(res) != `{"status":"ok"}` {
			t.Fatalf("ok/contact-accepted = %s %s", res, code)
		}
		got, _ := f.store.GetHDTPContact(ctx, s.id, chandra.RootFingerprint())
		if got.State != "active" || strings.Join(got.TheirPermissions, " ") != "message.text" {
			t.Fatalf("after contact_accepted: %+v", got)
		}
		if code := f.sealedCode(t, s, chandra, "contact_accepted", `{}`, false, ""); code != "unknown_contact" {
			t.Fatalf("fail/accepted-twice = %q, want unknown_contact", code)
		}
		// contact_rejected: a reason past note_bytes, then one within.
		dev := f.peer(t, s, "Dev", "https://agent.dev.example/mcp")
		if _, err := f.contacts.RequestContact(ctx, &hdtpv1.RequestContactRequest{IdentityId: s.id, Card: dev.Card}); err != nil {
			t.Fatal(err)
		}
		if code := f.sealedCode(t, s, dev, "contact_rejected", `{"reason":"`+strings.Repeat("x", 1025)+`"}`, false, ""); code != "too_large" {
			t.Fatalf("fail/rejected-reason = %q", code)
		}
		if code := f.sealedCode(t, s, dev, "contact_rejected", `{"reason":"`+strings.Repeat("x", 1024)+`"}`, false, ""); code != "" {
			t.Fatalf("ok/rejected = %q", code)
		}
		if got, _ := f.store.GetHDTPContact(ctx, s.id, dev.RootFingerprint()); got.State != "blocked" {
			t.Fatalf("after contact_rejected: %s", got.State)
		}
		// Arguments (89, 90).
		big := base64.StdEncoding.EncodeToString(make([]byte, 5242881))
		for _, tc := range []struct{ name, tool, args, want string }{
			{"fail/text-16385", "send_message", `{"msg_id":"a1","text":"` + strings.Repeat("x", 16385) + `"}`, "too_large"},
			{"ok/text-16384", "send_message", `{"msg_id":"a2","text":"` + strings.Repeat("x", 16384) + `"}`, "dispatch"},
			{"fail/sender-robot", "send_message", `{"msg_id":"a3","text":"x","sender":"robot"}`, "bad_request"},
			{"ok/sender-human", "send_message", `{"msg_id":"a4","text":"x","sender":"human"}`, "dispatch"},
			{"fail/no-msg-id", "send_message", `{"text":"x"}`, "bad_request"},
			{"fail/msg-id-empty", "send_message", `{"msg_id":"","text":"x"}`, "bad_request"},
			{"fail/data-5242881", "send_media", `{"msg_id":"a5","data":"` + big + `"}`, "too_large"},
			{"fail/data-unpadded", "send_media", `{"msg_id":"a6","data":"AAA"}`, "bad_request"},
			{"fail/data-and-url", "send_media", `{"msg_id":"a7","data":"AAAA","url":"https://x.example/a"}`, "bad_request"},
			{"ok/data", "send_media", `{"msg_id":"a8","data":"AAAA","filename":"a.bin"}`, "dispatch"},
			{"fail/thread-wrong-type", "send_message", `{"msg_id":"a9","text":"x","thread_id":7}`, "bad_request"},
		} {
			f.clock.Advance(time.Second) // the contact's budget: 1 a second
			if code := f.sealedCode(t, s, friend, tc.tool, tc.args, false, ""); code != tc.want {
				t.Errorf("%s = %q, want %q", tc.name, code, tc.want)
			}
		}
		// A note past note_bytes on request_contact.
		eve := f.peer(t, s, "Eve", "https://agent.eve.example/mcp")
		if code := f.sealedCode(t, s, eve, "request_contact", `{"card":`+hdtptestQuote(eve.Card)+`,"note":"`+strings.Repeat("n", 1025)+`"}`, false, ""); code != "too_large" {
			t.Fatalf("fail/note-1025 = %q", code)
		}

		f.clock.Advance(10 * time.Second) // a full budget again
		// A conflict (85): the same notBefore, another key.
		twin, err := friend.Renew(friend.Leaf.Endpoint, friend.Leaf.NotBefore)
		if err != nil {
			t.Fatal(err)
		}
		if code := f.sealedCode(t, s, twin, "send_message", `{"msg_id":"c1","text":"x"}`, false, ""); code != "envelope_invalid" {
			t.Fatalf("fail/leaf-conflict = %q", code)
		}
		// A renewal passes and is pinned; the older leaf is then a guest
		// (84).
		renewed, err := friend.Renew(friend.Leaf.Endpoint, f.clock.Now().Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if code := f.sealedCode(t, s, renewed, "send_message", `{"msg_id":"r1","text":"x"}`, false, ""); code != "dispatch" {
			t.Fatalf("ok/renewal = %q", code)
		}
		if got, _ := f.store.GetHDTPContact(ctx, s.id, friend.RootFingerprint()); got.LeafKID != renewed.Leaf.Fingerprint() {
			t.Fatal("the renewed leaf was not pinned")
		}
		if code := f.sealedCode(t, s, friend, "send_message", `{"msg_id":"r2","text":"x"}`, false, ""); code != "envelope_invalid" {
			t.Fatalf("fail/superseded = %q (a guest's send_message)", code)
		}

		// A new address under "auto": re-pinned as it passes.
		moved, err := renewed.Renew("https://moved.alina.example/mcp", f.clock.Now().Add(-30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if code := f.sealedCode(t, s, moved, "send_message", `{"msg_id":"n1","text":"x"}`, false, ""); code != "dispatch" {
			t.Fatalf("ok/new-address-auto = %q", code)
		}
		if got, _ := f.store.GetHDTPContact(ctx, s.id, friend.RootFingerprint()); got.Endpoint != "https://moved.alina.example/mcp" {
			t.Fatalf("the move was not pinned: %s", got.Endpoint)
		}
		// Under "ask" (86): update_contact waits, other calls
		// pending_approval, until the owner approves.
		if _, err := f.ids.UpdateIdentity(ctx, &hdtpv1.UpdateIdentityRequest{Identity: &hdtpv1.Identity{IdentityId: s.id,
			AcceptNewHosts: hdtpv1.AcceptNewHosts_ACCEPT_NEW_HOSTS_ASK}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"accept_new_hosts"}}}); err != nil {
			t.Fatal(err)
		}
		again, err := moved.Renew("https://third.alina.example/mcp", f.clock.Now().Add(-20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if code := f.sealedCode(t, s, again, "send_message", `{"msg_id":"n2","text":"x"}`, false, ""); code != "pending_approval" {
			t.Fatalf("fail/new-address-ask-send = %q", code)
		}
		res, code = f.opened(t, s, again, f.send(t, s, again, "update_contact", `{"card":`+hdtptestQuote(again.Card)+`}`, false, ""))
		if code != "" || string(res) != `{"status":"pending"}` {
			t.Fatalf("update_contact from a new address under ask = %s %s", res, code)
		}
		pa, err := f.contacts.ListPendingAddresses(ctx, &hdtpv1.ListPendingAddressesRequest{IdentityId: s.id})
		if err != nil || len(pa.GetContacts()) != 1 || pa.GetContacts()[0].GetPendingAddress().GetEndpoint() != "https://third.alina.example/mcp" {
			t.Fatalf("pending addresses = %v, %v", pa, err)
		}
		if _, err := f.contacts.DecidePendingAddress(ctx, &hdtpv1.DecidePendingAddressRequest{IdentityId: s.id, Root: friend.RootFingerprint(),
			Approve: true}); err != nil {
			t.Fatal(err)
		}
		if code := f.sealedCode(t, s, again, "send_message", `{"msg_id":"n3","text":"x"}`, false, ""); code != "dispatch" {
			t.Fatalf("ok/new-address-approved = %q", code)
		}
		// A tombstoned root back within 30 days (87), under "auto".
		if _, err := f.ids.UpdateIdentity(ctx, &hdtpv1.UpdateIdentityRequest{Identity: &hdtpv1.Identity{IdentityId: s.id,
			AcceptNewHosts: hdtpv1.AcceptNewHosts_ACCEPT_NEW_HOSTS_AUTO}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"accept_new_hosts"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.contacts.RemoveContact(ctx, &hdtpv1.RemoveContactRequest{IdentityId: s.id, Root: friend.RootFingerprint()}); err != nil {
			t.Fatal(err)
		}
		back, err := again.Renew("https://back.alina.example/mcp", f.clock.Now().Add(-10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		res, code = f.opened(t, s, back, f.send(t, s, back, "update_contact", `{"card":`+hdtptestQuote(back.Card)+`}`, false, ""))
		if code != "" || string(res) != `{"status":"pending"}` {
			t.Fatalf("a tombstoned root back under auto = %s %s, want pending", res, code)
		}
		if code := f.sealedCode(t, s, back, "send_message", `{"msg_id":"n4","text":"x"}`, false, ""); code != "pending_approval" {
			t.Fatalf("fail/tombstone-send = %q", code)
		}
		var perms []string
		if _, err := f.contacts.DecidePendingAddress(ctx, &hdtpv1.DecidePendingAddressRequest{IdentityId: s.id, Root: friend.RootFingerprint(),
			Approve: true}); err != nil {
			t.Fatal(err)
		}
		gc, _ := f.contacts.GetContact(ctx, &hdtpv1.GetContactRequest{IdentityId: s.id, Root: friend.RootFingerprint()})
		perms = gc.GetContact().GetPermissions()
		if gc.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_ACTIVE || len(perms) != 5 {
			t.Fatalf("the returned root approved: %v", gc.GetContact())
		}

	})
}
