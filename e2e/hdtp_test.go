package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/encoding/protojson"

	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/frontends/hdtpdemo"
	"pactd.dev/pactd/frontends/hdtphost"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

// Two people's agents talking (HDTP 1.0), through the thin MCP hosts of
// frontends/: you and Maya each have an identity at pactd and a host in
// front of it; you import Maya's card and request contact, Maya approves,
// and your agent asks Maya's for check_availability and gets three free
// slots sealed back. The walk runs through each host kind, on both
// stores:
//
//   - go: frontends/hdtphost (the Go MCP SDK), two hosts in this process.
//   - ts: frontends/hdtp-js-example on @pactd/hdtp-host (the TypeScript
//     MCP SDK), two processes: PACT_E2E_HDTP_TS_CMD (default "node
//     ../frontends/hdtp-js-example/dist/src/main.js"), configured by the
//     environment both examples read; the test drives each person's agent
//     through its side door (POST /call, /deliver). It needs the built
//     npm workspace; without it the ts tests skip, except under CI=true,
//     where they fail.
//
// Each host serves plain HTTP behind a TLS edge of the test's (as a
// sealed-only host sits behind a terminating edge, HDTP §13.4): the edge
// holds a certificate for agent.you.example and agent.maya.example from a
// test authority the hosts trust, and records what crosses it, so the
// test reads the wire as a peer sees it. The hosts dial those names at the
// edges through their development routes.

// hdtpHostKind starts one person's host behind its edge.
type hdtpHostKind struct {
	name  string
	start func(t *testing.T, h *hdtpWorld, p *hdtpPerson) hdtpAgent
}

var hdtpHostKinds = []hdtpHostKind{{"go", startGoHDTPHost}, {"ts", startTSHDTPHost}}

// TestHDTPTwoPeopleAgents runs the walk through each host kind on both
// stores.
func TestHDTPTwoPeopleAgents(t *testing.T) {
	for _, kind := range hdtpHostKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			dbtest.Engines(t, func(t *testing.T, dbURL string) { hdtpWalk(t, kind, dbURL) })
		})
	}
}

// mayaBusy is Maya's calendar: one busy hour in the morning the walk asks
// about, so three one-hour slots are free between 09:00 and 13:00.
var mayaBusy = []hdtpdemo.Interval{{Start: "2026-12-08T10:00:00+01:00", End: "2026-12-08T11:00:00+01:00"}}

// availabilityArgs is what your agent asks Maya's: an hour, 09:00 to 13:00
// Berlin time.
const availabilityArgs = `{"window":{"from":"2026-12-08T09:00:00+01:00","to":"2026-12-08T13:00:00+01:00","tz":"Europe/Berlin"},"duration_min":60}`

// threeSlots is the answer, derived by hand from mayaBusy: 09-10, 11-12,
// 12-13 (the busy hour skipped), in the asked zone.
const threeSlots = `{"slots":[` +
	`{"start":"2026-12-08T09:00:00+01:00","end":"2026-12-08T10:00:00+01:00","tz":"Europe/Berlin"},` +
	`{"start":"2026-12-08T11:00:00+01:00","end":"2026-12-08T12:00:00+01:00","tz":"Europe/Berlin"},` +
	`{"start":"2026-12-08T12:00:00+01:00","end":"2026-12-08T13:00:00+01:00","tz":"Europe/Berlin"}]}`

func hdtpWalk(t *testing.T, kind hdtpHostKind, dbURL string) {
	ctx := t.Context()
	h := newHDTPWorld(t, dbURL)
	you := h.person(t, "You Example", "agent.you.example", nil)
	maya := h.person(t, "Maya Lin", "agent.maya.example", mayaBusy)
	you.agent = kind.start(t, h, you)
	maya.agent = kind.start(t, h, maya)
	mayaCard := h.card(t, maya)

	t.Run("a stranger's plain calls, through the Go MCP SDK client", func(t *testing.T) {
		cs := h.mcpClient(t, maya.endpoint)
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		// §5.5: a guest sees redeem_invite and request_contact, and
		// sealed_call whenever the seal policy is not none.
		if want := []string{"redeem_invite", "request_contact", "sealed_call"}; !slices.Equal(names, want) {
			t.Errorf("a guest's tools/list = %v, want %v", names, want)
		}
		// The host wrote exactly what pactd answers for that body.
		ex := maya.edge.last(t, `"tools/list"`)
		again, err := h.hosts.OpenInbound(ctx, &hdtpv1.OpenInboundRequest{Endpoint: maya.endpoint, Body: ex.request, SourceAddress: "127.0.0.1"})
		if err != nil || !bytes.Equal(again.GetRespond().GetBody(), ex.response) {
			t.Errorf("the host wrote %s; pactd answers %s (%v)", ex.response, again.GetRespond().GetBody(), err)
		}
		// §4.5: a plain substantive call with no identity proof is
		// identity_required, in plaintext.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "check_availability", Arguments: json.RawMessage(availabilityArgs)})
		if err != nil {
			t.Fatalf("tools/call: %v", err)
		}
		if text := toolText(t, res); !res.IsError || text != `{"code":"identity_required"}` {
			t.Errorf("a plain check_availability = isError %v %s, want isError true {\"code\":\"identity_required\"}", res.IsError, text)
		}
	})

	t.Run("an invite landing, served through the host", func(t *testing.T) {
		inv, err := h.invites.CreateInvite(ctx, &hdtpv1.CreateInviteRequest{IdentityId: maya.identityID, Label: "e2e"})
		if err != nil {
			t.Fatalf("CreateInvite: %v", err)
		}
		// §4: a JSON client gets {card, card_sig, chain}, the card and the
		// chain Maya's get_card serves.
		status, ctype, body := h.get(t, inv.GetUrl()+"?format=json")
		var landing struct {
			Card    string   `json:"card"`
			CardSig string   `json:"card_sig"`
			Chain   []string `json:"chain"`
		}
		if status != 200 || ctype != "application/hdtp-invite+json" || json.Unmarshal(body, &landing) != nil ||
			landing.Card != mayaCard || landing.CardSig == "" || len(landing.Chain) != 2 {
			t.Errorf("the landing: %d %s %s", status, ctype, body)
		}
		// An unknown token: the one not-found of both views.
		if status, _, _ := h.get(t, "https://"+maya.hostname+"/i/inv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA?format=json"); status != 404 {
			t.Errorf("an unknown token's landing: %d, want 404", status)
		}
	})

	t.Run("sealed calls before any request: unknown", func(t *testing.T) {
		// A stranger's sealed call binds only redeem_invite and
		// request_contact to its card (§13.2 guest binding): anything
		// else is envelope_invalid, never run.
		call := h.seal(t, &hdtpv1.SealOutboundRequest{IdentityId: you.identityID,
			Target: &hdtpv1.SealOutboundRequest_Card{Card: mayaCard}, Tool: "check_availability", ArgumentsJson: availabilityArgs})
		you.agent.deliver(t, call).refused(t, "envelope_invalid")
	})

	// You import Maya's card and request contact: pactd records Maya as
	// pending_out and seals request_contact, which your host delivers.
	req, err := h.contacts.RequestContact(ctx, &hdtpv1.RequestContactRequest{IdentityId: you.identityID, Card: mayaCard, Note: "Lunch next week?"})
	if err != nil {
		t.Fatalf("RequestContact: %v", err)
	}
	you.agent.deliver(t, req.GetCall()).ok(t, `{"status":"pending"}`)
	waiting, err := h.contacts.ListContacts(ctx, &hdtpv1.ListContactsRequest{IdentityId: maya.identityID, State: hdtpv1.ContactState_CONTACT_STATE_PENDING_IN})
	if err != nil || len(waiting.GetContacts()) != 1 || waiting.GetContacts()[0].GetRoot() != you.root || waiting.GetContacts()[0].GetNote() != "Lunch next week?" {
		t.Fatalf("Maya's waiting requests = %v (%v), want yours with its note", waiting.GetContacts(), err)
	}

	t.Run("while the request waits: unknown to Maya, pending to you", func(t *testing.T) {
		// At Maya's, you are pending_in: the guest tier (HDTP §6.1). A
		// sealed guest call binds only redeem_invite and request_contact
		// (§13.2), so this is envelope_invalid, as for a stranger. The
		// digest lists pending_in outside the binding (blocked_or_unknown
		// then); pactd binds it too, and rightly: a blocked requester's
		// request_contact is answered "pending" with nothing recorded, so
		// its later calls must get what a waiting requester's get.
		you.agent.call(t, you.identityID, maya.root, "check_availability", availabilityArgs).refused(t, "envelope_invalid")
		// At yours, Maya is pending_out: the pending tier, where anything
		// but contact_accepted and contact_rejected is pending_approval
		// (HDTP amended 10-07).
		call := h.seal(t, &hdtpv1.SealOutboundRequest{IdentityId: maya.identityID,
			Target: &hdtpv1.SealOutboundRequest_Card{Card: h.card(t, you)}, Tool: "check_availability", ArgumentsJson: availabilityArgs})
		maya.agent.deliver(t, call).refused(t, "pending_approval")
	})

	// Maya approves (the work preset: text and both calendar permissions),
	// and her host delivers contact_accepted to yours.
	approved, err := h.contacts.ApproveContact(ctx, &hdtpv1.ApproveContactRequest{IdentityId: maya.identityID, Root: you.root, Preset: "work"})
	if err != nil {
		t.Fatalf("ApproveContact: %v", err)
	}
	maya.agent.deliver(t, approved.GetCall()).ok(t, `{"status":"ok"}`)
	mine, err := h.contacts.GetContact(ctx, &hdtpv1.GetContactRequest{IdentityId: you.identityID, Root: maya.root})
	if err != nil || mine.GetContact().GetState() != hdtpv1.ContactState_CONTACT_STATE_ACTIVE {
		t.Fatalf("your contact Maya = %v (%v), want active", mine.GetContact(), err)
	}

	t.Run("after approval: three free slots, sealed", func(t *testing.T) {
		got := you.agent.call(t, you.identityID, maya.root, "check_availability", availabilityArgs)
		got.ok(t, threeSlots)
		if !got.Sealed {
			t.Error("the answer did not come sealed")
		}
		h.checkSealedResult(t, maya, you, maya.edge.last(t, `"sealed_call"`))
	})
}

// hdtpAnswer is what a delivered call came to, as both hosts report it.
type hdtpAnswer struct {
	Result  json.RawMessage `json:"result"`
	Sealed  bool            `json:"sealed"`
	Refusal *struct {
		Code       string `json:"code"`
		RetryAfter int    `json:"retry_after"`
		Local      bool   `json:"local"`
		Reason     string `json:"reason"`
	} `json:"refusal"`
}

func (a hdtpAnswer) ok(t *testing.T, want string) {
	t.Helper()
	if a.Refusal != nil {
		t.Fatalf("refused %+v, want %s", *a.Refusal, want)
	}
	var got, exp any
	if json.Unmarshal(a.Result, &got) != nil || json.Unmarshal([]byte(want), &exp) != nil || !jsonEqual(got, exp) {
		t.Fatalf("result %s, want %s", a.Result, want)
	}
}

// refused checks the peer refused with code (its answer, not pactd's
// verdict on a bad answer).
func (a hdtpAnswer) refused(t *testing.T, code string) {
	t.Helper()
	if a.Refusal == nil || a.Refusal.Code != code || a.Refusal.Local {
		t.Fatalf("answer %s %+v, want the peer's refusal %s", a.Result, a.Refusal, code)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// hdtpAgent is a person's agent using its host: delivering calls owner
// actions return, and calling a contact's tool.
type hdtpAgent interface {
	deliver(t *testing.T, call *hdtpv1.OutboundCall) hdtpAnswer
	call(t *testing.T, identityID, root, tool, args string) hdtpAnswer
}

// hdtpWorld is pactd, the test authority and the two edges' routes.
type hdtpWorld struct {
	pactdURL   string
	identities hdtpv1connect.IdentityServiceClient
	contacts   hdtpv1connect.ContactServiceClient
	invites    hdtpv1connect.InviteServiceClient
	hosts      hdtpv1connect.HostServiceClient // frontend role, as a host calls it
	caPEM      []byte
	caPool     *x509.CertPool
	edgeCert   tls.Certificate
	dir        string

	mu     sync.Mutex
	routes map[string]string // "name:443" -> the edge's address
}

func newHDTPWorld(t *testing.T, dbURL string) *hdtpWorld {
	t.Helper()
	kek := make([]byte, 32)
	_, _ = rand.Read(kek)
	cfg, err := config.Load(nil, []string{
		"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + frontendToken,
		"PACT_DATA_DIR=" + t.TempDir(), "PACT_DATABASE_URL=" + dbURL, "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off",
		"PACT_KEY_ENCRYPTION_KEY=" + base64.StdEncoding.EncodeToString(kek), // the leaf keys are sealed under it
	}, io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	srv, err := server.Build(t.Context(), cfg, server.Deps{})
	if err != nil {
		t.Fatalf("server.Build: %v", err)
	}
	pactd := httptest.NewUnstartedServer(srv.Handler())
	pactd.Config.Protocols = new(http.Protocols)
	pactd.Config.Protocols.SetHTTP1(true)
	pactd.Config.Protocols.SetUnencryptedHTTP2(true)
	pactd.Start()
	t.Cleanup(func() { pactd.Close(); _ = srv.Close() })
	h := &hdtpWorld{pactdURL: pactd.URL, dir: t.TempDir(), routes: map[string]string{},
		identities: hdtpv1connect.NewIdentityServiceClient(pactd.Client(), pactd.URL, bearer(adminToken)),
		contacts:   hdtpv1connect.NewContactServiceClient(pactd.Client(), pactd.URL, bearer(adminToken)),
		invites:    hdtpv1connect.NewInviteServiceClient(pactd.Client(), pactd.URL, bearer(adminToken)),
		hosts:      hdtpv1connect.NewHostServiceClient(pactd.Client(), pactd.URL, bearer(frontendToken))}
	h.newAuthority(t, "agent.you.example", "agent.maya.example")
	return h
}

// newAuthority makes the test authority and the edges' certificate for
// names (the WebPKI certificate a sealed-only host's edge has).
func (h *hdtpWorld) newAuthority(t *testing.T, names ...string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e authority"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	h.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	h.caPool = x509.NewCertPool()
	h.caPool.AddCert(ca)
	h.edgeCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// hdtpPerson is one person: an identity at pactd, a host, an edge.
type hdtpPerson struct {
	name, hostname, endpoint string
	identityID, root         string
	busy                     []hdtpdemo.Interval
	edge                     *recordingEdge
	agent                    hdtpAgent
}

// person creates the identity at https://<hostname>/mcp, plays the
// person's wallet (a fresh Ed25519 root issuing the leaf pactd's signing
// request asks for) and installs the chain; then starts the edge.
func (h *hdtpWorld) person(t *testing.T, name, hostname string, busy []hdtpdemo.Interval) *hdtpPerson {
	t.Helper()
	ctx := t.Context()
	p := &hdtpPerson{name: name, hostname: hostname, endpoint: "https://" + hostname + "/mcp", busy: busy}
	created, err := h.identities.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: p.endpoint, DisplayName: name,
		Generation: hdtpv1.Generation_GENERATION_HDTP1})
	if err != nil {
		t.Fatalf("CreateIdentity %s: %v", p.endpoint, err)
	}
	p.identityID = created.GetIdentity().GetIdentityId()
	sr := created.GetSigningRequest()
	_, rootKey, _ := ed25519.GenerateKey(rand.Reader)
	now := time.Now().UTC().Truncate(time.Second)
	rootDER, err := cert.NewRoot(rootKey, cert.RootTemplate{CommonName: name, NotBefore: now.Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	root, err := cert.Parse(rootDER, cert.KindRoot, wire.HDTP1)
	if err != nil {
		t.Fatal(err)
	}
	csrDER, _ := wire.B64Decode(sr.GetCsr())
	csr, err := cert.ParseCSR(csrDER)
	if err != nil {
		t.Fatalf("pactd's signing request: %v", err)
	}
	leaf, err := cert.IssueLeaf(root, rootKey, cert.LeafTemplate{PublicKey: csr.PublicKey, CommonName: csr.CommonName, Endpoint: csr.Endpoint,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.identities.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: p.identityID, Chain: [][]byte{leaf, rootDER}, State: sr.GetState()}); err != nil {
		t.Fatalf("InstallChain: %v", err)
	}
	p.root = root.Fingerprint()
	p.edge = h.startEdge(t, hostname)
	return p
}

// card is the person's card, as a contact receives it.
func (h *hdtpWorld) card(t *testing.T, p *hdtpPerson) string {
	t.Helper()
	c, err := h.identities.GetCard(t.Context(), &hdtpv1.GetCardRequest{IdentityId: p.identityID})
	if err != nil {
		t.Fatalf("GetCard: %v", err)
	}
	return c.GetCard()
}

// seal has pactd seal a call (as an agent's host would).
func (h *hdtpWorld) seal(t *testing.T, req *hdtpv1.SealOutboundRequest) *hdtpv1.OutboundCall {
	t.Helper()
	res, err := h.hosts.SealOutbound(t.Context(), req)
	if err != nil {
		t.Fatalf("SealOutbound: %v", err)
	}
	return res.GetCall()
}

// dial routes the two names to their edges: the hosts' development
// routes, and the test's MCP client's.
func (h *hdtpWorld) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	h.mu.Lock()
	to, ok := h.routes[addr]
	h.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no route to %s", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, to)
}

func (h *hdtpWorld) routesEnv() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var kv []string
	for name, to := range h.routes {
		kv = append(kv, strings.TrimSuffix(name, ":443")+"="+to)
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}

// get fetches url through its edge: status, media type and body.
func (h *hdtpWorld) get(t *testing.T, url string) (int, string, []byte) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: h.dial, TLSClientConfig: &tls.Config{RootCAs: h.caPool}}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	return res.StatusCode, mt, b
}

// mcpClient is the official Go MCP SDK's client, connected to endpoint
// through its edge.
func (h *hdtpWorld) mcpClient(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: h.dial, TLSClientConfig: &tls.Config{RootCAs: h.caPool}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("MCP connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toolText is a CallToolResult's one text item.
func toolText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content items, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T, want text", res.Content[0])
	}
	return tc.Text
}

// checkSealedResult reads the answer to the last sealed_call as it crossed
// the responder's edge: a CallToolResult whose text is a result envelope
// (exactly protected, enc, ct, sig), its header the result cty of HDTP
// 1.0, sealed to the caller's current leaf, signed by the responder's
// leaf over protected ‖ enc ‖ ct; the slots never in the clear.
func (h *hdtpWorld) checkSealedResult(t *testing.T, responder, caller *hdtpPerson, ex exchange) {
	t.Helper()
	var rpc struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct{ Type, Text string }
		} `json:"result"`
	}
	if err := json.Unmarshal(ex.response, &rpc); err != nil || rpc.Result.IsError || len(rpc.Result.Content) != 1 {
		t.Fatalf("the answer on the wire is not one text CallToolResult: %s", ex.response)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(rpc.Result.Content[0].Text), &env); err != nil || len(env) != 4 {
		t.Fatalf("the text is not an envelope of four members: %s", rpc.Result.Content[0].Text)
	}
	protected, ok1 := wire.B64Decode(env["protected"])
	enc, ok2 := wire.B64Decode(env["enc"])
	ct, ok3 := wire.B64Decode(env["ct"])
	sig, ok4 := wire.B64Decode(env["sig"])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("an envelope member is not canonical base64url: %v", env)
	}
	var hdr struct {
		Cty, Kid, Suite string
		V               int
	}
	if err := json.Unmarshal(protected, &hdr); err != nil {
		t.Fatal(err)
	}
	callerID, err := h.identities.GetIdentity(t.Context(), &hdtpv1.GetIdentityRequest{IdentityId: caller.identityID})
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Cty != "application/hdtp-result+json" || hdr.V != 1 || hdr.Kid != callerID.GetIdentity().GetCurrentKid() {
		t.Errorf("result header %s: want cty application/hdtp-result+json, v 1, kid %s", protected, callerID.GetIdentity().GetCurrentKid())
	}
	card, err := h.identities.GetCard(t.Context(), &hdtpv1.GetCardRequest{IdentityId: responder.identityID})
	if err != nil || len(card.GetChain()) != 2 {
		t.Fatalf("GetCard: %v", err)
	}
	leafDER, _ := wire.B64Decode(card.GetChain()[0])
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		t.Fatal(err)
	}
	signed := slices.Concat(protected, enc, ct)
	if !cert.VerifySignature(leaf.PublicKey.(crypto.PublicKey), signed, sig) {
		t.Error("the result envelope's sig does not verify under the responder's leaf")
	}
	signed[len(signed)-1] ^= 1
	if cert.VerifySignature(leaf.PublicKey.(crypto.PublicKey), signed, sig) {
		t.Error("the check verifies a changed ciphertext too: it checks nothing")
	}
	for _, clear := range []string{"slots", "Europe/Berlin", "09:00:00"} {
		if bytes.Contains(ex.response, []byte(clear)) || bytes.Contains(ex.request, []byte("check_availability")) {
			t.Errorf("%q crossed the edge in the clear", clear)
		}
	}
}

// exchange is one request and answer that crossed an edge.
type exchange struct{ request, response []byte }

// recordingEdge is a TLS-terminating reverse proxy in front of a host,
// keeping what crosses it.
type recordingEdge struct {
	mu     sync.Mutex
	target *url.URL
	seen   []exchange
}

// startEdge serves TLS for hostname on loopback and routes the name there.
func (h *hdtpWorld) startEdge(t *testing.T, hostname string) *recordingEdge {
	t.Helper()
	e := &recordingEdge{}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		e.mu.Lock()
		r.SetURL(e.target)
		e.mu.Unlock()
		r.Out.Host = r.In.Host // the host names the identity by the Host it was called at
	}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, hdtphost.MaxBodyBytes+1))
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		e.mu.Lock()
		e.seen = append(e.seen, exchange{request: body, response: rec.Body.Bytes()})
		e.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{h.edgeCert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	h.mu.Lock()
	h.routes[hostname+":443"] = srv.Listener.Addr().String()
	h.mu.Unlock()
	return e
}

func (e *recordingEdge) setTarget(t *testing.T, hostURL string) {
	u, err := url.Parse(hostURL)
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.target = u
	e.mu.Unlock()
}

// last is the last exchange whose request holds marker.
func (e *recordingEdge) last(t *testing.T, marker string) exchange {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.seen) - 1; i >= 0; i-- {
		if bytes.Contains(e.seen[i].request, []byte(marker)) {
			return e.seen[i]
		}
	}
	t.Fatalf("no request with %s crossed the edge", marker)
	return exchange{}
}

// ---------------------------------------------------------------------------
// The Go host, in this process.

type goHDTPAgent struct{ host *hdtphost.Host }

func startGoHDTPHost(t *testing.T, h *hdtpWorld, p *hdtpPerson) hdtpAgent {
	host, err := hdtphost.New(hdtphost.Config{PactdURL: h.pactdURL, Token: frontendToken, RootCAs: h.caPool, Dial: h.dial,
		Tools: []hdtphost.Tool{hdtpdemo.AvailabilityTool(hdtpdemo.Calendars{p.endpoint: p.busy})}})
	if err != nil {
		t.Fatal(err)
	}
	if err := host.DeclareTools(t.Context(), p.identityID); err != nil {
		t.Fatalf("DeclareTools: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/i/", host.InviteHandler())
	mux.Handle("/", host)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.edge.setTarget(t, srv.URL)
	return goHDTPAgent{host}
}

func (a goHDTPAgent) deliver(t *testing.T, call *hdtpv1.OutboundCall) hdtpAnswer {
	t.Helper()
	res, err := a.host.Deliver(t.Context(), call)
	return goAnswer(t, res, err)
}

func (a goHDTPAgent) call(t *testing.T, identityID, root, tool, args string) hdtpAnswer {
	t.Helper()
	res, err := a.host.Call(t.Context(), identityID, root, tool, json.RawMessage(args))
	return goAnswer(t, res, err)
}

func goAnswer(t *testing.T, res *hdtphost.Result, err error) hdtpAnswer {
	t.Helper()
	if err != nil {
		t.Fatalf("the call was not delivered: %v", err)
	}
	a := hdtpAnswer{Result: res.JSON, Sealed: res.Sealed}
	if f := res.Refusal; f != nil {
		a.Refusal = &struct {
			Code       string `json:"code"`
			RetryAfter int    `json:"retry_after"`
			Local      bool   `json:"local"`
			Reason     string `json:"reason"`
		}{f.Code, f.RetryAfter, f.Local, f.Reason}
	}
	return a
}

// ---------------------------------------------------------------------------
// The TypeScript host, as a command.

type tsHDTPAgent struct{ side, token string }

// hdtpTSCommand is the TypeScript example's command line, or why it cannot
// run here.
func hdtpTSCommand() ([]string, string) {
	if c := strings.Fields(os.Getenv("PACT_E2E_HDTP_TS_CMD")); len(c) > 0 {
		return c, ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return nil, "node is not on PATH (Node 20 runs frontends/hdtp-js-example)"
	}
	main := filepath.Join("..", "frontends", "hdtp-js-example", "dist", "src", "main.js")
	if _, err := os.Stat(main); err != nil {
		return nil, "frontends/hdtp-js-example is not built: run npm ci && npm run build --workspaces in frontends/"
	}
	return []string{"node", main}, ""
}

var (
	servingRE = regexp.MustCompile(`hdtp-js-example serving on (\S+)`)
	sideRE    = regexp.MustCompile(`agent side door on (http://\S+)`)
)

func startTSHDTPHost(t *testing.T, h *hdtpWorld, p *hdtpPerson) hdtpAgent {
	cmdline, missing := hdtpTSCommand()
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the TypeScript host cannot run: %s", missing)
		}
		t.Skipf("the TypeScript host cannot run: %s", missing)
	}
	caFile := filepath.Join(h.dir, "ca.pem")
	if err := os.WriteFile(caFile, h.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cal, _ := json.Marshal(hdtpdemo.Calendars{p.endpoint: p.busy})
	agentToken := "agent-" + p.hostname
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Env = append(os.Environ(), "HDTP_LISTEN=127.0.0.1:0", "PACTD_URL="+h.pactdURL, "PACT_FRONTEND_TOKEN="+frontendToken,
		"HDTP_IDENTITIES="+p.identityID, "HDTP_CALENDAR="+string(cal), "HDTP_CA_FILE="+caFile, "HDTP_ROUTES="+h.routesEnv(),
		"AGENT_LISTEN=127.0.0.1:0", "AGENT_TOKEN="+agentToken)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	cmd.Stderr = &lockedWriter{w: &logs, mu: &logMu}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", cmdline, err)
	}
	addrs := make(chan [2]string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var serving, side string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				serving = m[1]
			}
			if m := sideRE.FindStringSubmatch(sc.Text()); m != nil {
				side = m[1]
			}
			if serving != "" && side != "" {
				addrs <- [2]string{serving, side}
				serving, side = "", ""
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
		if t.Failed() {
			logMu.Lock()
			t.Logf("TypeScript host log (%s):\n%s", p.hostname, logs.String())
			logMu.Unlock()
		}
	})
	select {
	case a := <-addrs:
		p.edge.setTarget(t, "http://"+a[0])
		return tsHDTPAgent{side: a[1], token: agentToken}
	case <-done:
		t.Fatalf("the TypeScript host exited before serving:\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the TypeScript host did not serve within 30 s:\n%s", logs.String())
	}
	return nil
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (a tsHDTPAgent) post(t *testing.T, path string, body []byte) hdtpAnswer {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, a.side+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("side door %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("side door %s: %d %s", path, res.StatusCode, b)
	}
	var ans hdtpAnswer
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatalf("side door %s: %s", path, b)
	}
	return ans
}

func (a tsHDTPAgent) deliver(t *testing.T, call *hdtpv1.OutboundCall) hdtpAnswer {
	t.Helper()
	b, err := protojson.Marshal(call)
	if err != nil {
		t.Fatal(err)
	}
	return a.post(t, "/deliver", b)
}

func (a tsHDTPAgent) call(t *testing.T, identityID, root, tool, args string) hdtpAnswer {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"identity_id": identityID, "contact_root": root, "tool": tool, "arguments": json.RawMessage(args)})
	return a.post(t, "/call", b)
}
