package hdtp

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/cert"
)

// lockedBuffer collects log output written concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// secretForms are the spellings a leaf key could leak in: its raw
// private bytes (Ed25519 seed, P-256 scalar) and its PKCS #8 DER, each raw,
// in hex and in every base64 alphabet.
func secretForms(t *testing.T, key crypto.Signer) [][]byte {
	t.Helper()
	var raw []byte
	switch k := key.(type) {
	case ed25519.PrivateKey:
		raw = k.Seed()
	case *ecdsa.PrivateKey:
		var err error
		if raw, err = k.Bytes(); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("a %T key", key)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, b := range [][]byte{raw, pkcs8} {
		out = append(out, b, []byte(hex.EncodeToString(b)), []byte(strings.ToUpper(hex.EncodeToString(b))))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			out = append(out, []byte(enc.EncodeToString(b)))
		}
	}
	return out
}

// TestHostKeyNeverLeaks drives every identity RPC (create, signing
// requests, installs, cards, listings, updates, a refused install, the
// sweep) on both engines with every key type, logging at debug level; then
// it unseals each key pactd made and looks for it, in every spelling, in
// every response (binary and JSON), in the log output, and in every cell
// of every table of the store. The controls: the responses do carry each
// key's public half and kid, and the store does carry each sealed key.
func TestHostKeyNeverLeaks(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		logs := &lockedBuffer{}
		f := newFixture(t, dbURL, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		ctx := t.Context()
		var responses [][]byte
		record := func(m proto.Message) {
			b, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			j, err := protojson.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			responses = append(responses, b, j)
		}
		var kids []string
		for i, alg := range []hdtpv1.KeyAlgorithm{hdtpv1.KeyAlgorithm_KEY_ALGORITHM_ED25519, hdtpv1.KeyAlgorithm_KEY_ALGORITHM_P256} {
			f.clock.Set(t0)
			created, err := f.ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: []string{"https://a.example/mcp", "https://b.example/mcp"}[i],
				DisplayName: "Alina Rao", Generation: hdtpv1.Generation_GENERATION_HDTP1, KeyAlgorithm: alg})
			if err != nil {
				t.Fatal(err)
			}
			record(created)
			id, sr := created.GetIdentity().GetIdentityId(), created.GetSigningRequest()
			kids = append(kids, sr.GetKid())
			w := newWallet(t, i == 1, cert.RootTemplate{})
			// A refused install (wrong state) logs nothing of the key either.
			if _, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: w.sign(t, sr, t0.Add(-time.Hour), year), State: "x"}); err == nil {
				t.Fatal("installed with a wrong state")
			}
			inst, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: w.sign(t, sr, t0.Add(-time.Hour), year), State: sr.GetState()})
			if err != nil {
				t.Fatal(err)
			}
			record(inst)
			for range 2 {
				c, err := f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: id})
				if err != nil {
					t.Fatal(err)
				}
				record(c)
			}
			f.clock.Set(t0.Add(200 * 24 * time.Hour))
			renew, err := f.ids.CreateSigningRequest(ctx, &hdtpv1.CreateSigningRequestRequest{IdentityId: id})
			if err != nil {
				t.Fatal(err)
			}
			record(renew)
			kids = append(kids, renew.GetSigningRequest().GetKid())
			inst2, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: w.sign(t, renew.GetSigningRequest(), f.clock.Now(), year),
				State: renew.GetSigningRequest().GetState()})
			if err != nil {
				t.Fatal(err)
			}
			record(inst2)
			// A pending request that stays pending.
			pending, err := f.ids.CreateSigningRequest(ctx, &hdtpv1.CreateSigningRequestRequest{IdentityId: id})
			if err != nil {
				t.Fatal(err)
			}
			record(pending)
			kids = append(kids, pending.GetSigningRequest().GetKid())
			for _, m := range []func() (proto.Message, error){
				func() (proto.Message, error) { return f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: id}) },
				func() (proto.Message, error) {
					return f.ids.GetIdentity(ctx, &hdtpv1.GetIdentityRequest{IdentityId: id})
				},
				func() (proto.Message, error) { return f.ids.ListLeaves(ctx, &hdtpv1.ListLeavesRequest{IdentityId: id}) },
				func() (proto.Message, error) { return f.ids.ListIdentities(ctx, &hdtpv1.ListIdentitiesRequest{}) },
			} {
				resp, err := m()
				if err != nil {
					t.Fatal(err)
				}
				record(resp)
			}
		}
		if _, err := f.ids.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		dump := dbtest.DumpTables(t, f.dbURL, f.dir)
		all := bytes.Join(responses, nil)
		logged := logs.Bytes()
		if !bytes.Contains(logged, []byte("hdtp chain installed")) {
			t.Fatal("no log line: the logger is not the one the service writes to")
		}
		for _, kid := range kids {
			l, err := f.store.GetHDTPLeaf(ctx, kid)
			if err != nil {
				t.Fatal(err)
			}
			key, err := f.ids.openKey(l)
			if err != nil {
				t.Fatal(err)
			}
			// Controls: what is public and what is sealed is where it should be.
			spki, _ := cert.SPKIOf(key.Public())
			if !bytes.Contains(all, []byte(kid)) || !bytes.Contains(dump, l.SealedKey) || !bytes.Contains(dump, []byte(kid)) {
				t.Fatalf("%s: the scan does not see the kid in the responses or the sealed key in the store", kid)
			}
			if l.Certificate != nil && !bytes.Contains(all, spki) {
				t.Fatalf("%s: the responses do not carry the public key (in the certificate)", kid)
			}
			for _, secret := range secretForms(t, key) {
				for where, hay := range map[string][]byte{"a response": all, "the log": logged, "the store": dump} {
					if bytes.Contains(hay, secret) {
						t.Fatalf("%s: the private key appears in %s", kid, where)
					}
				}
			}
		}
	})
}

// TestHostWireKeyNeverLeaks drives the host wire (a stranger's request,
// the approval and its sealed call, dispatch and sealed completion, an
// outbound call and its answer, an invite and its landing, a refusal) on
// both engines with debug logging, then looks for each leaf key pactd made
// and for the handle secret in every response, the log and every cell of
// the store. Controls: the kids are in the responses, the sealed keys in
// the store.
func TestHostWireKeyNeverLeaks(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		logs := &lockedBuffer{}
		f := newLoggedHostFixture(t, dbURL, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		ctx := t.Context()
		var responses [][]byte
		record := func(m proto.Message) {
			b, _ := proto.Marshal(m)
			j, _ := protojson.Marshal(m)
			responses = append(responses, b, j)
		}
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		other := f.serve(t, "https://agent.other.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		f.declare(t, s, toolSendMessage)
		alina := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		rc := f.send(t, s, alina, "request_contact", `{"card":`+hdtptestQuote(alina.Card)+`}`, false, "192.0.2.1")
		record(rc.resp)
		ap := f.approve(t, s, alina.RootFingerprint(), "basic")
		record(ap)
		sm := f.send(t, s, alina, "send_message", `{"msg_id":"m","text":"hi"}`, false, "")
		record(sm.resp)
		record(f.complete(t, sm.resp.GetDispatch(), `{"status":"delivered"}`))
		record(f.send(t, s, alina, "no_such_tool", `{}`, true, "").resp)
		card, err := f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: s.id})
		if err != nil {
			t.Fatal(err)
		}
		rq, err := f.contacts.RequestContact(ctx, &hdtpv1.RequestContactRequest{IdentityId: other.id, Card: card.GetCard()})
		if err != nil {
			t.Fatal(err)
		}
		record(rq)
		record(f.deliver(t, s, rq.GetCall(), ""))
		inv, err := f.invites.CreateInvite(ctx, &hdtpv1.CreateInviteRequest{IdentityId: s.id})
		if err != nil {
			t.Fatal(err)
		}
		record(inv)
		land, err := f.host.ServeInvite(ctx, &hdtpv1.ServeInviteRequest{Host: "agent.bharat.example", Path: "/i/" + inv.GetToken(), Method: "GET",
			Accept: "application/json"})
		if err != nil {
			t.Fatal(err)
		}
		record(land)
		for _, id := range []*served{s, other} {
			g, err := f.ids.GetIdentity(ctx, &hdtpv1.GetIdentityRequest{IdentityId: id.id})
			if err != nil {
				t.Fatal(err)
			}
			record(g)
		}
		dump := dbtest.DumpTables(t, f.dbURL, f.dir)
		all := bytes.Join(responses, nil)
		logged := logs.Bytes()
		if !bytes.Contains(logged, []byte("hdtp call completed")) {
			t.Fatal("no log line: the logger is not the one the service writes to")
		}
		for _, secret := range [][]byte{f.host.d.HandleSecret, f.host.keys.mac, f.host.keys.box} {
			for where, hay := range map[string][]byte{"a response": all, "the log": logged, "the store": dump} {
				if bytes.Contains(hay, secret) || bytes.Contains(hay, []byte(base64.RawURLEncoding.EncodeToString(secret))) {
					t.Fatalf("a handle key appears in %s", where)
				}
			}
		}
		for _, id := range []*served{s, other} {
			leaves, err := f.store.ListHDTPLeaves(ctx, id.id)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range leaves {
				key, err := f.ids.openKey(l)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(all, []byte(l.KID)) || !bytes.Contains(dump, l.SealedKey) {
					t.Fatalf("%s: the scan does not see the kid in the responses or the sealed key in the store", l.KID)
				}
				for _, secret := range secretForms(t, key) {
					for where, hay := range map[string][]byte{"a response": all, "the log": logged, "the store": dump} {
						if bytes.Contains(hay, secret) {
							t.Fatalf("%s: the private key appears in %s", l.KID, where)
						}
					}
				}
			}
		}
	})
}
