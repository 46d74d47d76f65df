package hdtp

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/envelope"
	"pactd.dev/pactd/internal/hdtp/peertest"
	"pactd.dev/pactd/internal/hdtp/wire"
)

// hostFixture is the host, contact and invite services over a real store.
type hostFixture struct {
	*fixture
	host     *Host
	contacts *Contacts
	invites  *Invites
	seq      atomic.Int64
}

func newHostFixture(t testing.TB, dbURL string) *hostFixture {
	return newLoggedHostFixture(t, dbURL, nil)
}

func newLoggedHostFixture(t testing.TB, dbURL string, log *slog.Logger) *hostFixture {
	t.Helper()
	f := newFixture(t, dbURL, log)
	d := f.ids.d
	d.HandleSecret = make([]byte, 32)
	_, _ = rand.Read(d.HandleSecret)
	host, err := NewHost(d, f.ids)
	if err != nil {
		t.Fatal(err)
	}
	return &hostFixture{fixture: f, host: host, contacts: NewContacts(host), invites: NewInvites(host)}
}

// served is an identity the fixture's pactd serves, with its chain
// installed.
type served struct {
	id, endpoint string
	gen          wire.Generation
	leaf         *cert.Certificate
	w            *wallet
}

func (f *hostFixture) serve(t testing.TB, endpoint string, gen hdtpv1.Generation, seal hdtpv1.SealPolicy) *served {
	t.Helper()
	ctx := t.Context()
	created, err := f.ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: endpoint, DisplayName: "Bharat Mehta", Generation: gen, Seal: seal})
	if err != nil {
		t.Fatal(err)
	}
	w := newWallet(t, false, cert.RootTemplate{CommonName: "Bharat Mehta", NotBefore: f.clock.Now().Add(-2 * time.Hour)})
	sr := created.GetSigningRequest()
	chain := w.sign(t, sr, f.clock.Now().Add(-time.Hour), year)
	if _, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: created.GetIdentity().GetIdentityId(), Chain: chain,
		State: sr.GetState()}); err != nil {
		t.Fatal(err)
	}
	g, _ := generation(gen)
	leaf, err := cert.Parse(chain[0], cert.KindLeaf, g)
	if err != nil {
		t.Fatal(err)
	}
	return &served{id: created.GetIdentity().GetIdentityId(), endpoint: endpoint, gen: g, leaf: leaf, w: w}
}

// renew installs a fresh leaf for the served identity.
func (f *hostFixture) renew(t *testing.T, s *served) {
	t.Helper()
	ctx := t.Context()
	r, err := f.ids.CreateSigningRequest(ctx, &hdtpv1.CreateSigningRequestRequest{IdentityId: s.id})
	if err != nil {
		t.Fatal(err)
	}
	chain := s.w.sign(t, r.GetSigningRequest(), f.clock.Now().Add(-time.Minute), year)
	if _, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: s.id, Chain: chain, State: r.GetSigningRequest().GetState()}); err != nil {
		t.Fatal(err)
	}
	if s.leaf, err = cert.Parse(chain[0], cert.KindLeaf, s.gen); err != nil {
		t.Fatal(err)
	}
}

func (f *hostFixture) peer(t testing.TB, s *served, name, endpoint string) *peertest.Peer {
	t.Helper()
	p, err := peertest.NewPeer(s.gen, name, endpoint, f.clock.Now().Add(-time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// in sends a body to OpenInbound.
func (f *hostFixture) in(t *testing.T, s *served, body []byte, source string, transport [][]byte) *hdtpv1.OpenInboundResponse {
	t.Helper()
	r, err := f.host.OpenInbound(t.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: body, SourceAddress: source, TransportChain: transport})
	if err != nil {
		t.Fatalf("OpenInbound: %v", err)
	}
	return r
}

// sealed is a sealed call sent and its answer.
type sealed struct {
	call *peertest.Call
	resp *hdtpv1.OpenInboundResponse
}

// send seals a tools/call from p to s and sends it.
func (f *hostFixture) send(t *testing.T, s *served, p *peertest.Peer, tool, args string, small bool, source string) sealed {
	t.Helper()
	n := f.seq.Add(1)
	c, err := p.Seal(s.leaf, int(n), fmt.Sprintf("env-%d", n), f.clock.Now(), tool, args, small)
	if err != nil {
		t.Fatal(err)
	}
	return sealed{call: c, resp: f.in(t, s, c.Body, source, nil)}
}

// list seals a tools/list from p to s and sends it.
func (f *hostFixture) list(t *testing.T, s *served, p *peertest.Peer, small bool) sealed {
	t.Helper()
	n := f.seq.Add(1)
	c, err := p.SealList(s.leaf, int(n), fmt.Sprintf("env-%d", n), f.clock.Now(), small)
	if err != nil {
		t.Fatal(err)
	}
	return sealed{call: c, resp: f.in(t, s, c.Body, "", nil)}
}

// plainRefusal is the code of a plaintext refusal answer (failing the test
// for anything else).
func plainRefusal(t *testing.T, r *hdtpv1.OpenInboundResponse) (code string, data json.RawMessage) {
	t.Helper()
	if r.GetRespond() == nil {
		t.Fatalf("not a respond: %v", r)
	}
	isError, text, err := peertest.ToolResult(r.GetRespond().GetBody())
	if err != nil || !isError || r.GetRespond().GetSealed() {
		t.Fatalf("not a plaintext refusal: %s (%v)", r.GetRespond().GetBody(), err)
	}
	var e struct {
		Code string          `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(text, &e); err != nil {
		t.Fatal(err)
	}
	if e.Code != r.GetRespond().GetCode() {
		t.Fatalf("body code %q, Respond.code %q", e.Code, r.GetRespond().GetCode())
	}
	return e.Code, e.Data
}

// opened opens a sealed answer from s to p: the result, or the error
// object's code.
func (f *hostFixture) opened(t *testing.T, s *served, p *peertest.Peer, sc sealed) (result json.RawMessage, code string) {
	t.Helper()
	body := sc.resp.GetRespond().GetBody()
	if body == nil {
		t.Fatalf("no body: %v", sc.resp)
	}
	return f.openBody(t, s, p, sc.call, body)
}

func (f *hostFixture) openBody(t *testing.T, s *served, p *peertest.Peer, c *peertest.Call, body []byte) (json.RawMessage, string) {
	t.Helper()
	r, err := p.Open(body, c, s.leaf, s.endpoint, f.clock.Now())
	if err != nil {
		t.Fatalf("open the answer: %v (%s)", err, body)
	}
	if r.Error != nil {
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(r.Error, &e)
		return nil, e.Code
	}
	return r.Result, ""
}

func (f *hostFixture) approve(t testing.TB, s *served, root, preset string) *hdtpv1.ApproveContactResponse {
	t.Helper()
	r, err := f.contacts.ApproveContact(t.Context(), &hdtpv1.ApproveContactRequest{IdentityId: s.id, Root: root, Preset: preset})
	if err != nil {
		t.Fatalf("ApproveContact: %v", err)
	}
	return r
}

// befriend makes p an active contact of s with the preset, as a person
// would: request_contact, then the owner's approval.
func (f *hostFixture) befriend(t *testing.T, s *served, p *peertest.Peer, preset string) {
	t.Helper()
	sc := f.send(t, s, p, "request_contact", `{"card":`+hdtptestQuote(p.Card)+`}`, false, "")
	if res, code := f.opened(t, s, p, sc); code != "" || string(res) != `{"status":"pending"}` {
		t.Fatalf("request_contact = %s %s", res, code)
	}
	f.approve(t, s, p.RootFingerprint(), preset)
}

func hdtptestQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (f *hostFixture) declare(t testing.TB, s *served, tools ...*hdtpv1.ContentTool) {
	t.Helper()
	if _, err := f.host.SetContentTools(t.Context(), &hdtpv1.SetContentToolsRequest{IdentityId: s.id, Tools: tools}); err != nil {
		t.Fatalf("SetContentTools: %v", err)
	}
}

var (
	toolSendMessage = &hdtpv1.ContentTool{Name: "send_message", Permission: "message.text", Description: "Send a text message."}
	toolSendMedia   = &hdtpv1.ContentTool{Name: "send_media", Permission: "message.media"}
)

// complete completes a dispatched call with a result.
func (f *hostFixture) complete(t *testing.T, d *hdtpv1.Dispatch, result string) *hdtpv1.CompleteInboundResponse {
	t.Helper()
	r, err := f.host.CompleteInbound(t.Context(), &hdtpv1.CompleteInboundRequest{CallHandle: d.GetCallHandle(),
		Outcome: &hdtpv1.CompleteInboundRequest_ResultJson{ResultJson: result}})
	if err != nil {
		t.Fatalf("CompleteInbound: %v", err)
	}
	return r
}

// The guest tools/list of HDTP Appendix A (with sealed_call), byte for
// byte once whitespace is gone: the tier's tools, minimal schemas, and
// sealed_call's schema.
const appendixAGuestList = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"redeem_invite","inputSchema":{"type":"object"}},` +
	`{"name":"request_contact","inputSchema":{"type":"object"}},{"name":"sealed_call","inputSchema":{"type":"object",` +
	`"required":["protected","enc","ct","sig"],"properties":{"protected":{"type":"string"},"enc":{"type":"string"},` +
	`"ct":{"type":"string"},"sig":{"type":"string"}},"additionalProperties":false}}]}}`

// TestInboundContactFlow runs the tiers end to end on both engines: a
// stranger lists the guest tools (Appendix A's bytes) and asks to be a
// contact; a repeat waits (pending_approval); a guest's sealed tools/list
// is envelope_invalid; the owner approves and the contact_accepted call
// opens at the peer; the contact's list shows the permitted content tools;
// send_message is dispatched with its caller and permissions and its
// completion sealed back; a hidden tool and a nonexistent one are
// permission_denied; a spec tool the host does not run is unavailable to
// a contact allowed it; get_card answers the card; a thread belongs to the
// contact that first used it; the small form works once the contact
// holds the leaf; remove_contact makes the caller a guest again.
func TestInboundContactFlow(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		ctx := t.Context()
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		alina := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")

		// Appendix A: the guest's plaintext tools/list.
		r := f.in(t, s, []byte(`{ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }`), "198.51.100.7", nil)
		if got := string(r.GetRespond().GetBody()); got != appendixAGuestList {
			t.Fatalf("guest tools/list:\n got %s\nwant %s", got, appendixAGuestList)
		}
		if r.GetRespond().GetTier() != hdtpv1.Tier_TIER_GUEST {
			t.Fatalf("tier %v", r.GetRespond().GetTier())
		}
		// request_contact, then a repeat while it waits.
		cardArg := `{"card":` + hdtptestQuote(alina.Card) + `,"note":"We met at the conference."}`
		sc := f.send(t, s, alina, "request_contact", cardArg, false, "")
		if res, code := f.opened(t, s, alina, sc); code != "" || string(res) != `{"status":"pending"}` {
			t.Fatalf("request_contact = %s %s", res, code)
		}
		if r, err := alina.Open(sc.resp.GetRespond().GetBody(), sc.call, s.leaf, s.endpoint, f.clock.Now()); err != nil || r.ResponderChain == nil {
			t.Fatalf("the answer to a first contact is not in the full form (%v)", err)
		}
		if _, code := f.opened(t, s, alina, f.send(t, s, alina, "request_contact", cardArg, false, "")); code != "pending_approval" {
			t.Fatalf("a repeated request_contact = %q, want pending_approval", code)
		}
		// Hostile case 64: a guest's sealed tools/list.
		if code, _ := plainRefusal(t, f.list(t, s, alina, false).resp); code != "envelope_invalid" {
			t.Fatalf("a guest's sealed tools/list = %q, want envelope_invalid", code)
		}
		c, err := f.contacts.GetContact(ctx, &hdtpv1.GetContactRequest{IdentityId: s.id, Root: alina.RootFingerprint()})
		if err != nil || c.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_PENDING_IN || c.GetContact().GetNote() != "We met at the conference." ||
			c.GetContact().GetDisplayName() != "Alina Rao" || c.GetContact().GetEndpoint() != alina.Leaf.Endpoint {
			t.Fatalf("the waiting request = %v, %v", c, err)
		}
		// The owner approves; the answer carries the contact_accepted call.
		ap := f.approve(t, s, alina.RootFingerprint(), "basic")
		if ap.GetCall().GetEndpoint() != alina.Leaf.Endpoint || !ap.GetCall().GetSealed() {
			t.Fatalf("approve call = %v", ap.GetCall())
		}
		if ap.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_ACTIVE || strings.Join(ap.GetContact().GetPermissions(), " ") != "message.text" {
			t.Fatalf("approved = %v", ap.GetContact())
		}
		checkNotification(t, f, s, alina, ap.GetCall(), "contact_accepted", `"permissions":["message.text"]`)

		f.declare(t, s, toolSendMessage, toolSendMedia)
		// The contact's list: the three contact tools, the permitted
		// content tool, sealed_call.
		res, code := f.opened(t, s, alina, f.list(t, s, alina, false))
		want := `{"tools":[{"name":"update_contact","inputSchema":{"type":"object"}},{"name":"remove_contact","inputSchema":{"type":"object"}},` +
			`{"name":"get_card","inputSchema":{"type":"object"}},{"name":"send_message","description":"Send a text message.","inputSchema":` +
			`{"type":"object"}},{"name":"sealed_call","inputSchema":` + sealedCallSchema + `}]}`
		if code != "" || string(res) != want {
			t.Fatalf("the contact's tools/list:\n got %s\nwant %s (%s)", res, want, code)
		}
		// send_message is dispatched.
		sm := f.send(t, s, alina, "send_message", `{"msg_id":"m-1","text":"hello","thread_id":"t-1","sender":"agent"}`, false, "")
		d := sm.resp.GetDispatch()
		if d == nil || d.GetTool() != "send_message" || d.GetCallerRoot() != alina.RootFingerprint() || d.GetMsgId() != "m-1" || !d.GetSealed() ||
			d.GetTier() != hdtpv1.Tier_TIER_CONTACT || d.GetCallerEndpoint() != alina.Leaf.Endpoint || d.GetCallerDisplayName() != "Alina Rao" ||
			strings.Join(d.GetPermissions(), " ") != "message.text" || d.GetCallerKid() != alina.Leaf.Fingerprint() ||
			d.GetArgumentsJson() != `{"msg_id":"m-1","text":"hello","thread_id":"t-1","sender":"agent"}` {
			t.Fatalf("dispatch = %v", sm.resp)
		}
		done := f.complete(t, d, `{"thread_id":"t-1","status":"delivered"}`)
		if res, code := f.openBody(t, s, alina, sm.call, done.GetBody()); code != "" || string(res) != `{"thread_id":"t-1","status":"delivered"}` {
			t.Fatalf("completion = %s %s", res, code)
		}
		// Hostile case 81: ungranted and nonexistent tools.
		for _, tool := range []string{"send_media", "no_such_tool"} {
			if _, code := f.opened(t, s, alina, f.send(t, s, alina, tool, `{"msg_id":"x","data":"AAAA"}`, false, "")); code != "permission_denied" {
				t.Fatalf("%s = %q, want permission_denied", tool, code)
			}
		}
		// Hostile case 91: a calendar tool the host does not run, to a
		// contact allowed it; positive control: without the grant it is
		// hidden (permission_denied).
		if _, code := f.opened(t, s, alina, f.send(t, s, alina, "check_availability", `{}`, false, "")); code != "permission_denied" {
			t.Fatalf("check_availability without the grant = %q", code)
		}
		if _, err := f.contacts.SetContactPermissions(ctx, &hdtpv1.SetContactPermissionsRequest{IdentityId: s.id, Root: alina.RootFingerprint(),
			Preset: "work"}); err != nil {
			t.Fatal(err)
		}
		if _, code := f.opened(t, s, alina, f.send(t, s, alina, "check_availability", `{}`, false, "")); code != "unavailable" {
			t.Fatalf("check_availability the host does not run = %q, want unavailable", code)
		}
		// get_card.
		gc, code := f.opened(t, s, alina, f.send(t, s, alina, "get_card", `{}`, false, ""))
		var got struct {
			Card, CardSig string
			Chain         []string
			Limits        map[string]int64
		}
		if err := json.Unmarshal(gc, &got); code != "" || err != nil || len(got.Chain) != 2 || got.Limits["text_bytes"] != 16384 {
			t.Fatalf("get_card = %s %s", gc, code)
		}
		// Hostile case 88: another contact using Alina's thread.
		chandra := f.peer(t, s, "Chandra Iyer", "https://agent.chandra.example/mcp")
		f.befriend(t, s, chandra, "basic")
		if _, code := f.opened(t, s, chandra, f.send(t, s, chandra, "send_message", `{"msg_id":"m-1","text":"hi","thread_id":"t-1"}`, false, "")); code != "bad_request" {
			t.Fatalf("another contact's thread = %q, want bad_request", code)
		}
		// Hostile case 75 as its positive control: the same inner msg_id
		// from another contact runs on its own.
		if d := f.send(t, s, chandra, "send_message", `{"msg_id":"m-1","text":"hi"}`, false, "").resp.GetDispatch(); d == nil {
			t.Fatal("the same msg_id from another contact was not dispatched")
		}
		// The small form, now that Alina holds Bharat's leaf and is pinned.
		small := f.send(t, s, alina, "send_message", `{"msg_id":"m-2","text":"again"}`, true, "")
		if small.resp.GetDispatch() == nil {
			t.Fatalf("small form = %v", small.resp)
		}
		done = f.complete(t, small.resp.GetDispatch(), `{"thread_id":"t-2","status":"delivered"}`)
		if res, code := f.openBody(t, s, alina, small.call, done.GetBody()); code != "" || string(res) != `{"thread_id":"t-2","status":"delivered"}` {
			t.Fatalf("small form's completion = %s %s", res, code)
		}
		// Sealed to the current leaf by a contact: the answer names the
		// responder by its leaf alone (the small form).
		if r, err := alina.Open(done.GetBody(), small.call, s.leaf, s.endpoint, f.clock.Now()); err != nil || r.ResponderChain != nil {
			t.Fatalf("the answer to a contact that sealed to the current leaf is in the full form (%v)", err)
		}

		// remove_contact: a guest again.
		if res, code := f.opened(t, s, alina, f.send(t, s, alina, "remove_contact", `{}`, false, "")); code != "" || string(res) != `{"status":"ok"}` {
			t.Fatalf("remove_contact = %s %s", res, code)
		}
		if code, _ := plainRefusal(t, f.list(t, s, alina, false).resp); code != "envelope_invalid" {
			t.Fatalf("a removed contact's sealed tools/list = %q, want envelope_invalid", code)
		}
		// The audit trail holds the trust changes and the refusals to the
		// contact, in order, with the identity and the peer.
		events, err := f.store.ListAuditEvents(ctx, db.AuditFilter{IdentityID: s.id}, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range events {
			if e.Peer == alina.RootFingerprint() {
				kinds = append(kinds, string(e.Kind)+" "+e.Actor+" "+e.Detail)
			}
		}
		wantEvents := []string{"hdtp.contact.requested peer ", "hdtp.contact.approved admin ", "hdtp.call.refused peer permission_denied tool_not_granted",
			"hdtp.call.refused peer permission_denied tool_unknown", "hdtp.call.refused peer permission_denied tool_unknown",
			"hdtp.contact.permissions admin ", "hdtp.call.refused peer unavailable tool_not_run", "hdtp.contact.removed peer "}
		if strings.Join(kinds, "\n") != strings.Join(wantEvents, "\n") {
			t.Fatalf("audit events:\n%s\nwant\n%s", strings.Join(kinds, "\n"), strings.Join(wantEvents, "\n"))
		}
	})
}

// checkNotification opens an outbound call pactd sealed to a peer, as the
// peer's host would, and checks its tool and arguments.
func checkNotification(t *testing.T, f *hostFixture, s *served, p *peertest.Peer, call *hdtpv1.OutboundCall, tool, wantArg string) {
	t.Helper()
	req, err := envelope.OpenRequest([]byte(call.GetArgumentsJson()), envelope.OpenOptions{Generation: s.gen, Now: f.clock.Now(),
		Identity: peerIdentity{p: p}})
	if err != nil {
		t.Fatalf("the peer cannot open the %s call: %v", tool, err)
	}
	name, args, _ := callParams(req.Params)
	if name != tool || !strings.Contains(string(args), wantArg) || req.SenderChain == nil || req.SenderChain.Leaf.Fingerprint() != s.leaf.Fingerprint() {
		t.Fatalf("call %s %s from %v", name, args, req.SenderChain)
	}
	if !strings.Contains(string(call.GetRequestBody()), `"method":"tools/call","params":{"name":"sealed_call","arguments":`) {
		t.Fatalf("request body %s", call.GetRequestBody())
	}
}

// peerIdentity is a peer's own key as the open order asks of it.
type peerIdentity struct{ p *peertest.Peer }

func (i peerIdentity) ResolveKid(kid wire.KeyID) (envelope.KidState, *envelope.Recipient, [][]byte) {
	if kid != i.p.Leaf.KeyID {
		return envelope.KidUnknown, nil, nil
	}
	key, _ := envelope.RecipientPrivateKey(i.p.Key)
	return envelope.KidHeld, &envelope.Recipient{Leaf: i.p.Leaf, Key: key}, nil
}

func (i peerIdentity) PinnedLeaf(wire.KeyID) *cert.Certificate { return nil }
