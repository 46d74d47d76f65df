package server_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/peertest"
	"pactd.dev/pactd/internal/hdtp/wire"
)

func hostClient(inst *instance) hdtpv1connect.HostServiceClient {
	return hdtpv1connect.NewHostServiceClient(h2c(), inst.url, withToken(frontendToken))
}

func contactClient(inst *instance) hdtpv1connect.ContactServiceClient {
	return hdtpv1connect.NewContactServiceClient(h2c(), inst.url, withToken(adminToken))
}

// servedIdentity is an identity made and installed over the wire, as a
// host's owner UI and the person's wallet would.
type servedIdentity struct {
	id, endpoint string
	leaf         *cert.Certificate
}

func serveIdentity(t *testing.T, inst *instance, endpoint string) servedIdentity {
	t.Helper()
	ctx := t.Context()
	ids := hdtpv1connect.NewIdentityServiceClient(h2c(), inst.url, withToken(adminToken))
	created, err := ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: endpoint, DisplayName: "Bharat Mehta",
		Generation: hdtpv1.Generation_GENERATION_HDTP1})
	if err != nil {
		t.Fatal(err)
	}
	_, rootKey, _ := ed25519.GenerateKey(rand.Reader)
	rootDER, err := cert.NewRoot(rootKey, cert.RootTemplate{CommonName: "Bharat Mehta", NotBefore: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := cert.Parse(rootDER, cert.KindRoot, wire.HDTP1)
	sr := created.GetSigningRequest()
	csrDER, _ := wire.B64Decode(sr.GetCsr())
	csr, err := cert.ParseCSR(csrDER)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := cert.IssueLeaf(root, rootKey, cert.LeafTemplate{PublicKey: csr.PublicKey, CommonName: csr.CommonName, Endpoint: csr.Endpoint,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetIdentity().GetIdentityId()
	if _, err := ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: [][]byte{leafDER, rootDER}, State: sr.GetState()}); err != nil {
		t.Fatal(err)
	}
	leaf, _ := cert.Parse(leafDER, cert.KindLeaf, wire.HDTP1)
	return servedIdentity{id: id, endpoint: endpoint, leaf: leaf}
}

func inbound(t *testing.T, inst *instance, s servedIdentity, body []byte, source string) *hdtpv1.OpenInboundResponse {
	t.Helper()
	r, err := hostClient(inst).OpenInbound(t.Context(), &hdtpv1.OpenInboundRequest{Endpoint: s.endpoint, Body: body, SourceAddress: source})
	if err != nil {
		t.Fatalf("OpenInbound: %v", err)
	}
	return r
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// openResult opens a sealed answer at the peer and returns its result or
// its error object.
func openResult(t *testing.T, p *peertest.Peer, c *peertest.Call, s servedIdentity, body []byte) (result, errObj string) {
	t.Helper()
	r, err := p.Open(body, c, s.leaf, s.endpoint, time.Now())
	if err != nil {
		t.Fatalf("open the answer: %v (%s)", err, body)
	}
	return string(r.Result), string(r.Error)
}

// TestHDTPReplicaKilledBetweenDispatchAndCompletion: two replicas on one
// PostgreSQL. Replica A dispatches a send_message and is closed before the
// host completes it. The same envelope sent to replica B is not dispatched
// again: it gets "unavailable" (the call is in flight; its outcome is
// unknown until the host reports), and so does a fresh envelope reusing the
// inner msg_id. The host's completion, arriving later at B with A's
// handle, is stored; the duplicate then gets the stored answer byte for
// byte, and the fresh envelope the original result.
func TestHDTPReplicaKilledBetweenDispatchAndCompletion(t *testing.T) {
	dbURL := dbtest.PostgresURL(t)
	a := start(t, testConfig(t, dbURL, t.TempDir()))
	b := start(t, testConfig(t, dbURL, t.TempDir()))
	ctx := t.Context()
	s := serveIdentity(t, a, "https://agent.bharat.example/mcp")
	if _, err := hostClient(a).SetContentTools(ctx, &hdtpv1.SetContentToolsRequest{IdentityId: s.id,
		Tools: []*hdtpv1.ContentTool{{Name: "send_message", Permission: "message.text"}}}); err != nil {
		t.Fatal(err)
	}
	alina, err := peertest.NewPeer(wire.HDTP1, "Alina Rao", "https://agent.alina.example/mcp", time.Now().Add(-time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := alina.Seal(s.leaf, 1, "env-request", time.Now(), "request_contact", `{"card":`+quoteJSON(alina.Card)+`}`, false)
	if err != nil {
		t.Fatal(err)
	}
	if res, e := openResult(t, alina, rc, s, inbound(t, a, s, rc.Body, "").GetRespond().GetBody()); res != `{"status":"pending"}` {
		t.Fatalf("request_contact = %s %s", res, e)
	}
	if _, err := contactClient(a).ApproveContact(ctx, &hdtpv1.ApproveContactRequest{IdentityId: s.id, Root: alina.RootFingerprint(), Preset: "basic"}); err != nil {
		t.Fatal(err)
	}

	call, err := alina.Seal(s.leaf, 2, "env-send", time.Now(), "send_message", `{"msg_id":"m-1","text":"hello"}`, false)
	if err != nil {
		t.Fatal(err)
	}
	d := inbound(t, a, s, call.Body, "").GetDispatch()
	if d == nil {
		t.Fatal("replica A did not dispatch")
	}
	a.stop() // killed between dispatch and completion

	dup := inbound(t, b, s, call.Body, "")
	if dup.GetDispatch() != nil {
		t.Fatal("replica B dispatched the same envelope again")
	}
	if r := dup.GetRespond(); r.GetCode() != "unavailable" || r.GetReason() != "in_flight" || !r.GetSealed() || !r.GetReplayed() {
		t.Fatalf("the duplicate on B = %v, want unavailable (in flight)", r)
	}
	if _, e := openResult(t, alina, call, s, dup.GetRespond().GetBody()); e != `{"code":"unavailable"}` {
		t.Fatalf("the duplicate's sealed answer = %s", e)
	}
	fresh, err := alina.Seal(s.leaf, 3, "env-send-again", time.Now(), "send_message", `{"msg_id":"m-1","text":"hello"}`, false)
	if err != nil {
		t.Fatal(err)
	}
	fr := inbound(t, b, s, fresh.Body, "")
	if fr.GetDispatch() != nil || fr.GetRespond().GetCode() != "unavailable" || fr.GetRespond().GetReason() != "msg_id_in_flight" {
		t.Fatalf("a fresh envelope with the same inner msg_id on B = %v", fr)
	}

	done, err := hostClient(b).CompleteInbound(ctx, &hdtpv1.CompleteInboundRequest{CallHandle: d.GetCallHandle(),
		Outcome: &hdtpv1.CompleteInboundRequest_ResultJson{ResultJson: `{"thread_id":"t-1","status":"delivered"}`}})
	if err != nil || done.GetAlreadyCompleted() {
		t.Fatalf("the late completion on B = %v, %v", done, err)
	}
	if res, _ := openResult(t, alina, call, s, done.GetBody()); res != `{"thread_id":"t-1","status":"delivered"}` {
		t.Fatalf("completion = %s", res)
	}
	again := inbound(t, b, s, call.Body, "")
	if !bytes.Equal(again.GetRespond().GetBody(), done.GetBody()) || !again.GetRespond().GetReplayed() {
		t.Fatalf("the duplicate after completion is not the stored answer:\n%s\n%s", again.GetRespond().GetBody(), done.GetBody())
	}
	fr = inbound(t, b, s, fresh.Body, "")
	if res, _ := openResult(t, alina, fresh, s, fr.GetRespond().GetBody()); res != `{"thread_id":"t-1","status":"delivered"}` {
		t.Fatalf("the fresh envelope after completion = %s, want the original result", res)
	}
	// A second completion changes nothing and answers the stored bytes.
	second, err := hostClient(b).CompleteInbound(ctx, &hdtpv1.CompleteInboundRequest{CallHandle: d.GetCallHandle(),
		Outcome: &hdtpv1.CompleteInboundRequest_ResultJson{ResultJson: `{"status":"other"}`}})
	if err != nil || !second.GetAlreadyCompleted() || !bytes.Equal(second.GetBody(), done.GetBody()) {
		t.Fatalf("a second completion = %v, %v", second, err)
	}
}

// TestHDTPGuestBudgetSharedByReplicas: a guest (one address, one root)
// spends its budget of 10 calls an hour on replica A; its 11th call, on
// replica B, is refused rate_limited with retry_after 360 (hostile case
// 93), sealed since the envelope opened. Positive controls: the same root
// from another address still passes on B, and so does another root from
// the first address (each has its own bucket).
func TestHDTPGuestBudgetSharedByReplicas(t *testing.T) {
	dbURL := dbtest.PostgresURL(t)
	a := start(t, testConfig(t, dbURL, t.TempDir()))
	b := start(t, testConfig(t, dbURL, t.TempDir()))
	s := serveIdentity(t, a, "https://agent.bharat.example/mcp")
	guest, err := peertest.NewPeer(wire.HDTP1, "Guest", "https://agent.guest.example/mcp", time.Now().Add(-time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	send := func(inst *instance, p *peertest.Peer, n int, source string) (*peertest.Call, *hdtpv1.Respond) {
		t.Helper()
		c, err := p.Seal(s.leaf, n, fmt.Sprintf("env-%s-%d", source, n), time.Now(), "request_contact", `{"card":`+quoteJSON(p.Card)+`}`, false)
		if err != nil {
			t.Fatal(err)
		}
		return c, inbound(t, inst, s, c.Body, source).GetRespond()
	}
	for i := range 10 {
		if _, r := send(a, guest, i, "198.51.100.7"); r.GetCode() == "rate_limited" {
			t.Fatalf("call %d on A refused: %v", i+1, r)
		}
	}
	c, r := send(b, guest, 10, "198.51.100.7")
	if r.GetCode() != "rate_limited" || r.GetRetryAfterSeconds() != 360 || !r.GetSealed() {
		t.Fatalf("the 11th call, on B = %v, want rate_limited with retry_after 360", r)
	}
	if _, e := openResult(t, guest, c, s, r.GetBody()); e != `{"code":"rate_limited","retry_after":360}` {
		t.Fatalf("the sealed refusal = %s", e)
	}
	if _, r := send(b, guest, 11, "198.51.100.8"); r.GetCode() == "rate_limited" {
		t.Fatalf("control: another address was refused: %v", r)
	}
	other, err := peertest.NewPeer(wire.HDTP1, "Other", "https://agent.other.example/mcp", time.Now().Add(-time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, r := send(b, other, 12, "198.51.100.7"); r.GetCode() == "rate_limited" {
		t.Fatalf("control: another root from the first address was refused: %v", r)
	}
	// The role table: the host service is a frontend's, contacts an
	// owner's.
	if _, err := hdtpv1connect.NewContactServiceClient(h2c(), b.url, withToken(frontendToken)).ListContacts(t.Context(),
		&hdtpv1.ListContactsRequest{IdentityId: s.id}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("a frontend listed contacts: %v", err)
	}
}
