package hdtp

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/cert"
)

// deliver plays the network and the peer's host: the call's body goes to
// the peer identity's OpenInbound (a dispatch is completed with result),
// and the answer to OpenOutboundResult.
func (f *hostFixture) deliver(t *testing.T, to *served, call *hdtpv1.OutboundCall, result string) *hdtpv1.OpenOutboundResultResponse {
	t.Helper()
	ctx := t.Context()
	if call.GetEndpoint() != to.endpoint {
		t.Fatalf("the call goes to %s, not %s", call.GetEndpoint(), to.endpoint)
	}
	r := f.in(t, to, call.GetRequestBody(), "", nil)
	body := r.GetRespond().GetBody()
	if d := r.GetDispatch(); d != nil {
		body = f.complete(t, d, result).GetBody()
	}
	if body == nil {
		t.Fatalf("no answer: %v", r)
	}
	out, err := f.host.OpenOutboundResult(ctx, &hdtpv1.OpenOutboundResultRequest{CallHandle: call.GetCallHandle(), HttpStatus: 200, Body: body})
	if err != nil {
		t.Fatalf("OpenOutboundResult: %v", err)
	}
	return out
}

// serveShort serves an identity whose first leaf lives span.
func (f *hostFixture) serveShort(t *testing.T, endpoint string, span time.Duration) *served {
	t.Helper()
	ctx := t.Context()
	created, err := f.ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: endpoint, DisplayName: "Chandra Iyer",
		Generation: hdtpv1.Generation_GENERATION_HDTP1})
	if err != nil {
		t.Fatal(err)
	}
	w := newWallet(t, true, cert.RootTemplate{CommonName: "Chandra Iyer", NotBefore: f.clock.Now().Add(-2 * time.Hour)})
	chain := w.sign(t, created.GetSigningRequest(), f.clock.Now().Add(-time.Hour), span)
	if _, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: created.GetIdentity().GetIdentityId(), Chain: chain,
		State: created.GetSigningRequest().GetState()}); err != nil {
		t.Fatal(err)
	}
	leaf, _ := cert.Parse(chain[0], cert.KindLeaf, 2)
	return &served{id: created.GetIdentity().GetIdentityId(), endpoint: endpoint, gen: 2, leaf: leaf, w: w}
}

// TestOutboundBetweenIdentities: two identities on one pactd talk as any
// two hosts would, through the outbound RPCs and OpenInbound only. A asks
// B (RequestContact: pending_out, the request_contact call, {"status":
// "pending"} opened); B's owner approves (contact_accepted reaches A, whose
// pin becomes active with what B granted); A sends B a message (sealed to
// B's pinned leaf, dispatched and completed at B, the result opened at A);
// B renews and its old key is destroyed, so A's next call is answered
// certificate_renewed, which A follows once (the pin takes the new leaf)
// and resends; C redeems B's auto-accept invite from its landing and its
// pin becomes active. A result that does not verify is envelope_invalid,
// pactd's own verdict (control for the opening).
func TestOutboundBetweenIdentities(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		ctx := t.Context()
		a := f.serve(t, "https://agent.alina.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		b := f.serveShort(t, "https://agent.bharat.example/mcp", 3*24*time.Hour)
		f.declare(t, b, toolSendMessage)
		bCard, err := f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: b.id})
		if err != nil {
			t.Fatal(err)
		}
		rq, err := f.contacts.RequestContact(ctx, &hdtpv1.RequestContactRequest{IdentityId: a.id, Card: bCard.GetCard(), Note: "Hi from Alina"})
		if err != nil {
			t.Fatal(err)
		}
		if rq.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_PENDING_OUT {
			t.Fatalf("the request = %v", rq.GetContact())
		}
		if out := f.deliver(t, b, rq.GetCall(), ""); out.GetResult().GetResultJson() != `{"status":"pending"}` || !out.GetResult().GetSealed() {
			t.Fatalf("request_contact answer = %v", out)
		}
		aRoot := a.w.root.Fingerprint()
		bRoot := b.w.root.Fingerprint()
		ap, err := f.contacts.ApproveContact(ctx, &hdtpv1.ApproveContactRequest{IdentityId: b.id, Root: aRoot, Preset: "basic"})
		if err != nil {
			t.Fatal(err)
		}
		if out := f.deliver(t, a, ap.GetCall(), ""); out.GetResult().GetResultJson() != `{"status":"ok"}` {
			t.Fatalf("contact_accepted answer = %v", out)
		}
		pin, _ := f.contacts.GetContact(ctx, &hdtpv1.GetContactRequest{IdentityId: a.id, Root: bRoot})
		if pin.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_ACTIVE || strings.Join(pin.GetContact().GetTheirPermissions(), " ") != "message.text" {
			t.Fatalf("A's pin of B = %v", pin.GetContact())
		}
		send := func(msgID string) *hdtpv1.OutboundCall {
			t.Helper()
			r, err := f.host.SealOutbound(ctx, &hdtpv1.SealOutboundRequest{IdentityId: a.id, Target: &hdtpv1.SealOutboundRequest_ContactRoot{ContactRoot: bRoot},
				Tool: "send_message", ArgumentsJson: `{"msg_id":"` + msgID + `","text":"hello"}`, JsonrpcId: `"x-1"`})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(r.GetCall().GetRequestBody(), []byte(`{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"sealed_call",`)) {
				t.Fatalf("request body %s", r.GetCall().GetRequestBody())
			}
			return r.GetCall()
		}
		if out := f.deliver(t, b, send("o-1"), `{"thread_id":"t-1","status":"delivered"}`); out.GetResult().GetResultJson() != `{"thread_id":"t-1","status":"delivered"}` {
			t.Fatalf("send_message answer = %v", out)
		}
		// A result that does not verify: another call's answer given with
		// this handle.
		c1, c2 := send("o-2"), send("o-3")
		r := f.in(t, b, c1.GetRequestBody(), "", nil)
		body := f.complete(t, r.GetDispatch(), `{"status":"delivered"}`).GetBody()
		if out, err := f.host.OpenOutboundResult(ctx, &hdtpv1.OpenOutboundResultRequest{CallHandle: c2.GetCallHandle(), HttpStatus: 200,
			Body: body}); err != nil || out.GetRefusal().GetCode() != "envelope_invalid" || !out.GetRefusal().GetLocal() {
			t.Fatalf("another call's answer = %v, %v", out, err)
		}

		// B renews; its first leaf's key goes.
		f.clock.Advance(24 * time.Hour)
		oldB := *b
		f.renew(t, b)
		f.clock.Set(oldB.leaf.NotAfter.Add(time.Minute))
		if _, err := f.ids.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		call := send("o-4")
		r = f.in(t, b, call.GetRequestBody(), "", nil)
		if code, _ := plainRefusal(t, r); code != "certificate_renewed" {
			t.Fatalf("sealed to B's former leaf = %q", code)
		}
		out, err := f.host.OpenOutboundResult(ctx, &hdtpv1.OpenOutboundResultRequest{CallHandle: call.GetCallHandle(), HttpStatus: 200,
			Body: r.GetRespond().GetBody()})
		if err != nil || out.GetResend() == nil {
			t.Fatalf("certificate_renewed was not followed: %v, %v", out, err)
		}
		if out.GetContact().GetLeafKid() != b.leaf.Fingerprint() {
			t.Fatalf("A's pin did not take B's new leaf: %v", out.GetContact())
		}
		if res := f.deliver(t, b, out.GetResend(), `{"thread_id":"t-1","status":"delivered"}`); res.GetResult().GetResultJson() != `{"thread_id":"t-1","status":"delivered"}` {
			t.Fatalf("the resent call = %v", res)
		}

		// C redeems B's auto-accept invite.
		cIdent := f.serve(t, "https://agent.chandra.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		inv, err := f.invites.CreateInvite(ctx, &hdtpv1.CreateInviteRequest{IdentityId: b.id, AutoAccept: true, Preset: "work"})
		if err != nil {
			t.Fatal(err)
		}
		land, err := f.host.ServeInvite(ctx, &hdtpv1.ServeInviteRequest{Host: "agent.bharat.example", Path: "/i/" + inv.GetToken(),
			Accept: "application/hdtp-invite+json", Method: "GET"})
		if err != nil || land.GetStatus() != 200 {
			t.Fatalf("landing = %v, %v", land, err)
		}
		rd, err := f.contacts.RedeemInvite(ctx, &hdtpv1.RedeemInviteRequest{IdentityId: cIdent.id, InviteUrl: inv.GetUrl(), LandingJson: string(land.GetBody())})
		if err != nil {
			t.Fatal(err)
		}
		res := f.deliver(t, b, rd.GetCall(), "")
		if !strings.HasPrefix(res.GetResult().GetResultJson(), `{"status":"accepted"`) || res.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_ACTIVE ||
			strings.Join(res.GetContact().GetTheirPermissions(), " ") != "message.text calendar.availability calendar.book" {
			t.Fatalf("redeem answer = %v", res)
		}
		// A landing whose card_sig does not verify is refused.
		bad := strings.Replace(string(land.GetBody()), `"card_sig":"`, `"card_sig":"A`, 1)
		if _, err := f.contacts.RedeemInvite(ctx, &hdtpv1.RedeemInviteRequest{IdentityId: a.id, InviteUrl: inv.GetUrl(), LandingJson: bad}); err == nil {
			t.Fatal("a landing with a bad card_sig was accepted")
		}
	})
}
