package hdtp

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/peertest"
	"pactd.dev/pactd/internal/hdtp/wire"
)

func header(r *hdtpv1.ServeInviteResponse, name string) string {
	for _, h := range r.GetHeaders() {
		if strings.EqualFold(h.GetName(), name) {
			return h.GetValue()
		}
	}
	return ""
}

// TestInvites: an invite is made (its URL on the endpoint's host, its
// token shown once), its landing serves the HTML page and the JSON form
// whose chain, card and card_sig a redeemer validates; redeem_invite
// answers pending (a waiting request with the invite's label) or, for
// auto_accept, accepted with the preset's permissions; a token unknown,
// expired, revoked or used up is invite_invalid, one answer, and the
// landing's one not-found on both views, byte for byte (hostile case 46);
// two concurrent redeems of a one-use invite, one wins (47); an
// auto_accept redeem from an endpoint pinned for another root waits (48).
func TestInvites(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		ctx := t.Context()
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		mk := func(req *hdtpv1.CreateInviteRequest) *hdtpv1.CreateInviteResponse {
			t.Helper()
			req.IdentityId = s.id
			r, err := f.invites.CreateInvite(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		inv := mk(&hdtpv1.CreateInviteRequest{Label: "conference"})
		if !strings.HasPrefix(inv.GetUrl(), "https://agent.bharat.example/i/inv_") || inv.GetInvite().GetMaxUses() != 1 ||
			inv.GetInvite().GetPreset() != "basic" || !inv.GetInvite().GetExpireTime().AsTime().Equal(f.clock.Now().Add(14*24*time.Hour)) {
			t.Fatalf("CreateInvite = %v", inv)
		}
		path := strings.TrimPrefix(inv.GetUrl(), "https://agent.bharat.example")
		land := func(path, accept, query string) *hdtpv1.ServeInviteResponse {
			t.Helper()
			r, err := f.host.ServeInvite(ctx, &hdtpv1.ServeInviteRequest{Host: "agent.bharat.example", Path: path, Accept: accept, Query: query, Method: "GET"})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		page := land(path, "text/html", "")
		if page.GetStatus() != 200 || !strings.HasPrefix(header(page, "Content-Security-Policy"), "default-src 'none'; style-src 'sha256-") ||
			!bytes.Contains(page.GetBody(), []byte("Bharat Mehta invites you")) || header(page, "Cache-Control") != "no-store" {
			t.Fatalf("landing page = %d %v", page.GetStatus(), page.GetHeaders())
		}
		js := land(path, "application/hdtp-invite+json", "")
		if js.GetStatus() != 200 || header(js, "Content-Type") != "application/hdtp-invite+json" {
			t.Fatalf("landing JSON = %d %s", js.GetStatus(), js.GetBody())
		}
		if !bytes.Equal(land(path, "", "format=json").GetBody(), js.GetBody()) || !bytes.Equal(land(path, "application/json", "").GetBody(), js.GetBody()) {
			t.Fatal("?format=json and Accept: application/json do not give the JSON landing")
		}
		// The redeemer's checks, with the trust helpers: the chain, the
		// card = chain leaf, card_sig.
		var l struct {
			Card    string   `json:"card"`
			CardSig string   `json:"card_sig"`
			Chain   []string `json:"chain"`
		}
		if err := json.Unmarshal(js.GetBody(), &l); err != nil {
			t.Fatal(err)
		}
		chain := [][]byte{}
		for _, c := range l.Chain {
			d, _ := wire.B64Decode(c)
			chain = append(chain, d)
		}
		v, err := f.trust.VerifyCardSignature(ctx, &hdtpv1.VerifyCardSignatureRequest{Generation: hdtpv1.Generation_GENERATION_HDTP1, Card: l.Card,
			CardSig: l.CardSig, Chain: chain, ExpectedEndpoint: s.endpoint})
		if err != nil || !v.GetValid() {
			t.Fatalf("the landing does not verify: %v %v", v, err)
		}
		// Viewing consumed nothing; a redeem answers pending with the card.
		token := strings.TrimPrefix(path, "/i/")
		alina := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		redeem := func(p *peertest.Peer, tok string) (json.RawMessage, string) {
			t.Helper()
			return f.opened(t, s, p, f.send(t, s, p, "redeem_invite", `{"token":`+hdtptestQuote(tok)+`,"card":`+hdtptestQuote(p.Card)+`}`, false, ""))
		}
		res, code := redeem(alina, token)
		var rr struct {
			Status      string   `json:"status"`
			Chain       []string `json:"chain"`
			Permissions []string `json:"permissions"`
		}
		if err := json.Unmarshal(res, &rr); code != "" || err != nil || rr.Status != "pending" || len(rr.Chain) != 2 || rr.Permissions != nil ||
			!bytes.HasPrefix(res, []byte(`{"status":"pending","card":"BEGIN:VCARD\r\n`)) {
			t.Fatalf("redeem = %s %s", res, code)
		}
		c, _ := f.contacts.GetContact(ctx, &hdtpv1.GetContactRequest{IdentityId: s.id, Root: alina.RootFingerprint()})
		if c.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_PENDING_IN || c.GetContact().GetInviteLabel() != "conference" {
			t.Fatalf("the waiting request = %v", c.GetContact())
		}
		// Used up, revoked, expired, unknown: one answer each way.
		used := land(path, "application/json", "")
		bob := f.peer(t, s, "Bob", "https://agent.bob.example/mcp")
		revoked := mk(&hdtpv1.CreateInviteRequest{})
		if _, err := f.invites.RevokeInvite(ctx, &hdtpv1.RevokeInviteRequest{IdentityId: s.id, InviteId: revoked.GetInvite().GetInviteId()}); err != nil {
			t.Fatal(err)
		}
		expiring := mk(&hdtpv1.CreateInviteRequest{TtlDays: 1})
		f.clock.Advance(24*time.Hour + time.Second)
		tokens := map[string]string{"used-up": token, "revoked": revoked.GetToken(), "expired": expiring.GetToken(),
			"unknown": "inv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "malformed": "inv_x"}
		for name, tok := range tokens {
			if _, code := redeem(bob, tok); code != "invite_invalid" {
				t.Errorf("fail/%s redeem = %q, want invite_invalid", name, code)
			}
			f.clock.Advance(time.Second)
			if r := land("/i/"+tok, "application/json", ""); r.GetStatus() != 404 || !bytes.Equal(r.GetBody(), used.GetBody()) {
				t.Errorf("fail/%s landing JSON = %d %s", name, r.GetStatus(), r.GetBody())
			}
			if r := land("/i/"+tok, "text/html", ""); r.GetStatus() != 404 || !bytes.Contains(r.GetBody(), []byte("Invite not found")) {
				t.Errorf("fail/%s landing page = %d", name, r.GetStatus())
			}
		}
		if string(used.GetBody()) != notFoundJSON || used.GetStatus() != 404 {
			t.Fatalf("not found = %d %s", used.GetStatus(), used.GetBody())
		}
		// Another host's request for the token: not found.
		live := mk(&hdtpv1.CreateInviteRequest{AutoAccept: true, Preset: "work", MaxUses: 1})
		livePath := "/i/" + live.GetToken()
		if r, _ := f.host.ServeInvite(ctx, &hdtpv1.ServeInviteRequest{Host: "other.example", Path: livePath, Method: "GET"}); r.GetStatus() != 404 {
			t.Fatalf("another host's landing = %d", r.GetStatus())
		}
		// Two concurrent redeems of the one-use auto_accept invite.
		carol := f.peer(t, s, "Carol", "https://agent.carol.example/mcp")
		dave := f.peer(t, s, "Dave", "https://agent.dave.example/mcp")
		var wg sync.WaitGroup
		codes := make([]string, 2)
		for i, p := range []*peertest.Peer{carol, dave} {
			c, err := p.Seal(s.leaf, 90+i, "env-race-"+p.Name, f.clock.Now(), "redeem_invite", `{"token":`+hdtptestQuote(live.GetToken())+`,"card":`+hdtptestQuote(p.Card)+`}`, false)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				r, err := f.host.OpenInbound(ctx, &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: c.Body})
				if err != nil {
					t.Error(err)
					return
				}
				res, err := p.Open(r.GetRespond().GetBody(), c, s.leaf, s.endpoint, f.clock.Now())
				if err != nil {
					t.Error(err)
					return
				}
				if res.Error != nil {
					codes[i] = string(res.Error)
				} else {
					codes[i] = string(res.Result[:min(len(res.Result), 21)])
				}
			})
		}
		wg.Wait()
		winners := 0
		for _, c := range codes {
			switch c {
			case `{"status":"accepted",`:
				winners++
			case `{"code":"invite_invalid"}`:
			default:
				t.Fatalf("a concurrent redeem = %s", c)
			}
		}
		if winners != 1 {
			t.Fatalf("%d redeems won, want 1: %v", winners, codes)
		}
		// A borrowed address: an auto_accept redeem from an endpoint pinned
		// for another root waits.
		auto := mk(&hdtpv1.CreateInviteRequest{AutoAccept: true, MaxUses: 5})
		impostor, err := peertest.NewPeer(s.gen, "Alina Rao", alina.Leaf.Endpoint, f.clock.Now().Add(-time.Minute), false)
		if err != nil {
			t.Fatal(err)
		}
		if res, code := redeem(impostor, auto.GetToken()); code != "" || !bytes.HasPrefix(res, []byte(`{"status":"pending"`)) {
			t.Fatalf("fail/borrowed-address = %s %s, want pending", res, code)
		}
		ic, _ := f.contacts.GetContact(ctx, &hdtpv1.GetContactRequest{IdentityId: s.id, Root: impostor.RootFingerprint()})
		if ic.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_PENDING_IN || ic.GetContact().GetBorrowedFromRoot() != alina.RootFingerprint() {
			t.Fatalf("the borrowed address's row = %v", ic.GetContact())
		}
		// Control: an auto_accept redeem from an address nobody holds.
		erin := f.peer(t, s, "Erin", "https://agent.erin.example/mcp")
		res, code = redeem(erin, auto.GetToken())
		if err := json.Unmarshal(res, &rr); code != "" || err != nil || rr.Status != "accepted" || strings.Join(rr.Permissions, " ") != "message.text" {
			t.Fatalf("ok/auto-accept = %s %s", res, code)
		}
		// Listing never shows a token; bad requests are INVALID_ARGUMENT.
		list, err := f.invites.ListInvites(ctx, &hdtpv1.ListInvitesRequest{IdentityId: s.id})
		if err != nil || len(list.GetInvites()) != 4 {
			t.Fatalf("ListInvites = %v, %v", list, err)
		}
		for _, bad := range []*hdtpv1.CreateInviteRequest{{TtlDays: 91}, {MaxUses: 1001}, {Preset: "all"}, {Label: "a\nb"}} {
			bad.IdentityId = s.id
			if _, err := f.invites.CreateInvite(ctx, bad); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("CreateInvite(%v) = %v, want INVALID_ARGUMENT", bad, err)
			}
		}
	})
}
