package hdtp

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/peertest"
)

// TestBlockedLooksUnknown: a blocked caller gets exactly the bytes a
// stranger gets (§5.2, §13.3, digest §6.4), compared body to body with the
// same JSON-RPC id, and a blocked request_contact records nothing:
//
//   - over a client chain (seal optional): tools/list is the guest list;
//     send_message and a nonexistent tool are blocked_or_unknown (case 79);
//     request_contact is {"status":"pending"} (case 82);
//   - sealed: the small form of a blocked contact, of an unknown leaf, of
//     a pinned leaf past its notAfter and with a bad signature is one
//     chain_required (case 62); a full-form send_message and a tools/list
//     are envelope_invalid (case 64).
//
// Positive controls: an active contact gets the contact tier on the same
// paths, and the blocked contact's row is unchanged.
func TestBlockedLooksUnknown(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		ctx := t.Context()
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_OPTIONAL)
		f.declare(t, s, toolSendMessage)
		blocked := f.peer(t, s, "Mallory", "https://agent.mallory.example/mcp")
		stranger := f.peer(t, s, "Stranger", "https://agent.stranger.example/mcp")
		friend := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		// Expires a minute from now: pinned, then past its notAfter.
		expiring, err := peertest.NewPeer(s.gen, "Soon Gone", "https://agent.soon.example/mcp", f.clock.Now().Add(-365*24*time.Hour+time.Minute), false)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*peertest.Peer{blocked, friend, expiring} {
			f.befriend(t, s, p, "basic")
		}
		if _, err := f.contacts.BlockContact(ctx, &hdtpv1.BlockContactRequest{IdentityId: s.id, Root: blocked.RootFingerprint()}); err != nil {
			t.Fatal(err)
		}
		before, err := f.store.GetHDTPContact(ctx, s.id, blocked.RootFingerprint())
		if err != nil || before.State != db.HDTPContactBlocked {
			t.Fatalf("blocked row = %+v, %v", before, err)
		}

		plain := func(p *peertest.Peer, body string) []byte {
			t.Helper()
			r := f.in(t, s, []byte(body), "203.0.113.9", p.Chain())
			if r.GetRespond() == nil {
				t.Fatalf("%s: %v", body, r)
			}
			return r.GetRespond().GetBody()
		}
		same := func(what string, a, b []byte) {
			t.Helper()
			if !bytes.Equal(a, b) {
				t.Fatalf("%s differs:\nblocked  %s\nstranger %s", what, a, b)
			}
		}
		list := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
		same("plaintext tools/list", plain(blocked, list), plain(stranger, list))
		if bytes.Equal(plain(friend, list), plain(stranger, list)) {
			t.Fatal("control: the active contact got the guest list")
		}
		sendMsg := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_message","arguments":{"msg_id":"m","text":"hi"}}}`
		noTool := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"no_such_tool","arguments":{"msg_id":"m","text":"hi"}}}`
		b := plain(blocked, sendMsg)
		same("plaintext send_message", b, plain(stranger, sendMsg))
		same("plaintext nonexistent tool", b, plain(stranger, noTool))
		if want := `{"jsonrpc":"2.0","id":7,"result":{"isError":true,"content":[{"type":"text","text":"{\"code\":\"blocked_or_unknown\"}"}]}}`; string(b) != want {
			t.Fatalf("blocked_or_unknown = %s", b)
		}
		if r := f.in(t, s, []byte(sendMsg), "203.0.113.9", friend.Chain()); r.GetDispatch() == nil {
			t.Fatalf("control: the contact's plaintext send_message was not dispatched: %v", r)
		}
		reqBody := func(p *peertest.Peer) string {
			return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"request_contact","arguments":{"card":` + hdtptestQuote(p.Card) + `}}}`
		}
		rb, rs := plain(blocked, reqBody(blocked)), plain(stranger, reqBody(stranger))
		same("plaintext request_contact", rb, rs)
		if want := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"status\":\"pending\"}"}]}}`; string(rb) != want {
			t.Fatalf("request_contact = %s", rb)
		}
		after, err := f.store.GetHDTPContact(ctx, s.id, blocked.RootFingerprint())
		if err != nil || after.State != db.HDTPContactBlocked || !after.UpdateTime.Equal(before.UpdateTime) || after.Note != before.Note {
			t.Fatalf("a blocked request_contact changed the row: %+v", after)
		}

		// Sealed: the small form's one chain_required.
		small := func(p *peertest.Peer, tool string) []byte {
			t.Helper()
			c, err := p.Seal(s.leaf, 7, "env-small-"+p.Name+tool, f.clock.Now(), tool, `{"msg_id":"m","text":"hi"}`, true)
			if err != nil {
				t.Fatal(err)
			}
			return f.in(t, s, c.Body, "", nil).GetRespond().GetBody()
		}
		forged := *friend
		_, forged.Key, _ = ed25519.GenerateKey(rand.Reader) // the friend's leaf named, another key signing
		f.clock.Advance(2 * time.Minute)                    // the expiring contact's pinned leaf is past its notAfter
		// A stranger never met (the one above asked, and waits).
		unknown := f.peer(t, s, "Unknown", "https://agent.unknown.example/mcp")
		cr := small(blocked, "send_message")
		same("small form: blocked and unknown", cr, small(unknown, "send_message"))
		same("small form: blocked and expired", cr, small(expiring, "send_message"))
		same("small form: blocked and a bad signature", cr, small(&forged, "send_message"))
		if want := `{"jsonrpc":"2.0","id":7,"result":{"isError":true,"content":[{"type":"text","text":"{\"code\":\"chain_required\"}"}]}}`; string(cr) != want {
			t.Fatalf("chain_required = %s", cr)
		}
		if r := f.in(t, s, mustSeal(t, friend, s, f.clock.Now(), true), "", nil); r.GetDispatch() == nil {
			t.Fatalf("control: the friend's small form was not admitted: %v", r)
		}
		// Sealed full form: envelope_invalid for both.
		full := func(p *peertest.Peer, list bool) []byte {
			t.Helper()
			var c *peertest.Call
			var err error
			if list {
				c, err = p.SealList(s.leaf, 7, "env-list-"+p.Name, f.clock.Now(), false)
			} else {
				c, err = p.Seal(s.leaf, 7, "env-full-"+p.Name, f.clock.Now(), "send_message", `{"msg_id":"m","text":"hi"}`, false)
			}
			if err != nil {
				t.Fatal(err)
			}
			return f.in(t, s, c.Body, "", nil).GetRespond().GetBody()
		}
		ei := full(blocked, false)
		same("sealed send_message", ei, full(unknown, false))
		same("sealed tools/list", full(blocked, true), full(unknown, true))
		if want := `{"jsonrpc":"2.0","id":7,"result":{"isError":true,"content":[{"type":"text","text":"{\"code\":\"envelope_invalid\"}"}]}}`; string(ei) != want {
			t.Fatalf("envelope_invalid = %s", ei)
		}
	})
}

// mustSeal seals a send_message from p to s with a fresh msg_id.
func mustSeal(t *testing.T, p *peertest.Peer, s *served, now time.Time, small bool) []byte {
	t.Helper()
	c, err := p.Seal(s.leaf, 7, "env-"+now.String()+p.Name, now, "send_message", `{"msg_id":"m-control","text":"hi"}`, small)
	if err != nil {
		t.Fatal(err)
	}
	return c.Body
}
