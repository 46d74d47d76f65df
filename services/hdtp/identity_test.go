package hdtp

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/card"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/keyseal"
	"pactd.dev/pactd/internal/testclock"
	"pactd.dev/pactd/internal/urlrule"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var t0 = time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)

// fixture is the services over a real store, with a settable clock.
type fixture struct {
	ids   *Identities
	trust *Trust
	store db.Store
	clock *testclock.Clock
	kek   []byte
	// dbURL and dir locate the store for DumpTables.
	dbURL, dir string
}

func newFixture(t testing.TB, dbURL string, log *slog.Logger) *fixture {
	t.Helper()
	dir := t.TempDir()
	s := dbtest.Open(t, dbURL, dir)
	kek := make([]byte, keyseal.KEKSize)
	_, _ = rand.Read(kek)
	sealer, err := keyseal.New(kek)
	if err != nil {
		t.Fatal(err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clock := testclock.New(t0)
	d := Deps{Store: s, Sealer: sealer, IsPublic: urlrule.IsPublicAddr, Now: clock.Now, Logger: log}
	ids := NewIdentities(d)
	return &fixture{ids: ids, trust: NewTrust(d, ids), store: s, clock: clock, kek: kek, dbURL: dbURL, dir: dir}
}

// wallet plays the person's part: a root, and leaves issued from
// signing requests.
type wallet struct {
	key  crypto.Signer
	der  []byte
	root *cert.Certificate
}

func newWallet(t testing.TB, p256 bool, tmpl cert.RootTemplate) *wallet {
	t.Helper()
	var key crypto.Signer
	if p256 {
		key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		_, key, _ = ed25519.GenerateKey(rand.Reader)
	}
	if tmpl.CommonName == "" {
		tmpl = cert.RootTemplate{CommonName: "Alina Rao", NotBefore: t0.Add(-time.Hour)}
	}
	der, err := cert.NewRoot(key, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	root, err := cert.Parse(der, cert.KindRoot, wire.HDTP1)
	if err != nil {
		t.Fatal(err)
	}
	return &wallet{key: key, der: der, root: root}
}

// sign issues the leaf a signing request asks for, valid from nb for the
// span, and returns the chain.
func (w *wallet) sign(t testing.TB, sr *hdtpv1.SigningRequest, nb time.Time, span time.Duration) [][]byte {
	t.Helper()
	csrDER, ok := wire.B64Decode(sr.GetCsr())
	if !ok {
		t.Fatal("csr is not canonical base64url")
	}
	csr, err := cert.ParseCSR(csrDER)
	if err != nil {
		t.Fatal(err)
	}
	if csr.KeyID.Fingerprint() != sr.GetKid() {
		t.Fatal("the CSR's key is not the request's kid")
	}
	// Parts rather than IssueLeaf, which refuses to write a leaf over 398
	// days: the refusal tests need one.
	p, err := cert.LeafTemplate{PublicKey: csr.PublicKey, CommonName: csr.CommonName, Endpoint: csr.Endpoint,
		DNSName: true, NotBefore: nb, NotAfter: nb.Add(span)}.Parts(w.root)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := p.Sign(w.key)
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{leaf, w.der}
}

const year = 365 * 24 * time.Hour

// metadata returns the ErrorInfo metadata of a connect error.
func metadata(t *testing.T, err error) map[string]string {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("not a connect error: %v", err)
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				return info.GetMetadata()
			}
		}
	}
	t.Fatalf("no ErrorInfo in %v", err)
	return nil
}

// TestIdentityLifecycle runs an identity's whole life on both engines, in
// both generations, with every pair of key types: create (pactd makes the
// key and the signing request), the wallet signs, install, serve the card
// (checked by the trust helpers and the strict validator), renew with a
// fresh key (the old one superseded, then swept to former), delete.
func TestIdentityLifecycle(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newFixture(t, dbURL, nil)
		ctx := t.Context()
		n := 0
		for _, gen := range []hdtpv1.Generation{hdtpv1.Generation_GENERATION_PACT2, hdtpv1.Generation_GENERATION_HDTP1} {
			for _, hostAlg := range []hdtpv1.KeyAlgorithm{hdtpv1.KeyAlgorithm_KEY_ALGORITHM_ED25519, hdtpv1.KeyAlgorithm_KEY_ALGORITHM_P256} {
				for _, p256Root := range []bool{false, true} {
					n++
					endpoint := "https://agent" + string(rune('a'+n)) + ".example/mcp"
					lifecycle(t, ctx, f, gen, hostAlg, p256Root, endpoint)
				}
			}
		}
	})
}

func lifecycle(t *testing.T, ctx context.Context, f *fixture, gen hdtpv1.Generation, hostAlg hdtpv1.KeyAlgorithm, p256Root bool, endpoint string) {
	t.Helper()
	f.clock.Set(t0)
	wgen, _ := generation(gen)
	created, err := f.ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: endpoint, DisplayName: "Alina Rao", Generation: gen, KeyAlgorithm: hostAlg})
	if err != nil {
		t.Fatal(err)
	}
	id, sr := created.GetIdentity(), created.GetSigningRequest()
	if id.GetSeal() != hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED || id.GetRootFingerprint() != "" || id.GetKeyAlgorithm() != hostAlg {
		t.Fatalf("created %+v", id)
	}
	if sr.GetPurpose() != "move" || len(sr.GetState()) != 43 || sr.GetExpires() != "2026-09-13T12:10:00Z" || sr.GetValidDays() != "365" || sr.GetExpectRoot() != "" {
		t.Fatalf("signing request %+v", sr)
	}
	w := newWallet(t, p256Root, cert.RootTemplate{})
	chain := w.sign(t, sr, t0.Add(-time.Hour), year)
	inst, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id.GetIdentityId(), Chain: chain, State: sr.GetState()})
	if err != nil {
		t.Fatal(err)
	}
	if inst.GetIdentity().GetRootFingerprint() != w.root.Fingerprint() || inst.GetIdentity().GetCurrentKid() != sr.GetKid() ||
		inst.GetLeaf().GetState() != hdtpv1.LeafState_LEAF_STATE_CURRENT || inst.GetComparison() != hdtpv1.LeafComparison_LEAF_COMPARISON_UNSPECIFIED {
		t.Fatalf("installed %+v", inst)
	}
	// The answer is accepted once.
	if _, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id.GetIdentityId(), Chain: chain, State: sr.GetState()}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("a second install of the same answer: %v", err)
	}

	checkCard(t, ctx, f, id.GetIdentityId(), wgen, gen, chain)

	// Renewal: a fresh key, the old leaf superseded.
	f.clock.Set(t0.Add(300 * 24 * time.Hour))
	renew, err := f.ids.CreateSigningRequest(ctx, &hdtpv1.CreateSigningRequestRequest{IdentityId: id.GetIdentityId()})
	if err != nil {
		t.Fatal(err)
	}
	sr2 := renew.GetSigningRequest()
	if sr2.GetPurpose() != "renew" || sr2.GetExpectRoot() != w.root.Fingerprint() || sr2.GetRootCert() != wire.B64Encode(w.der) || sr2.GetKid() == sr.GetKid() {
		t.Fatalf("renewal request %+v", sr2)
	}
	chain2 := w.sign(t, sr2, f.clock.Now().Add(-time.Hour), year)
	inst2, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id.GetIdentityId(), Chain: chain2, State: sr2.GetState()})
	if err != nil {
		t.Fatal(err)
	}
	if inst2.GetComparison() != hdtpv1.LeafComparison_LEAF_COMPARISON_RENEWAL || inst2.GetIdentity().GetCurrentKid() != sr2.GetKid() {
		t.Fatalf("renewed %+v", inst2)
	}
	checkCard(t, ctx, f, id.GetIdentityId(), wgen, gen, chain2)
	leaves, err := f.ids.ListLeaves(ctx, &hdtpv1.ListLeavesRequest{IdentityId: id.GetIdentityId()})
	if err != nil || len(leaves.GetLeaves()) != 2 || leaves.GetLeaves()[0].GetState() != hdtpv1.LeafState_LEAF_STATE_SUPERSEDED ||
		!leaves.GetLeaves()[0].GetKeyHeld() || leaves.GetLeaves()[1].GetState() != hdtpv1.LeafState_LEAF_STATE_CURRENT {
		t.Fatalf("ledger %+v, %v", leaves, err)
	}
	// Past the first leaf's notAfter the sweep destroys its key, keeping
	// the kid.
	f.clock.Set(t0.Add(year))
	if _, err := f.ids.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	leaves, _ = f.ids.ListLeaves(ctx, &hdtpv1.ListLeavesRequest{IdentityId: id.GetIdentityId()})
	if l := leaves.GetLeaves()[0]; l.GetState() != hdtpv1.LeafState_LEAF_STATE_FORMER || l.GetKeyHeld() || l.GetKid() != sr.GetKid() {
		t.Fatalf("after the sweep %+v", l)
	}
	if _, err := f.ids.DeleteIdentity(ctx, &hdtpv1.DeleteIdentityRequest{IdentityId: id.GetIdentityId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.GetHDTPLeaf(ctx, sr.GetKid()); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a former kid survived its identity: %v", err)
	}
	if _, err := f.ids.GetIdentity(ctx, &hdtpv1.GetIdentityRequest{IdentityId: id.GetIdentityId()}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("deleted identity: %v", err)
	}
}

// checkCard fetches the card and checks it as a peer would.
func checkCard(t *testing.T, ctx context.Context, f *fixture, id string, wgen wire.Generation, gen hdtpv1.Generation, chain [][]byte) {
	t.Helper()
	got, err := f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: id})
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Read(wgen, got.GetCard())
	if err != nil || !bytes.Equal(c.Leaf.Raw, chain[0]) || c.Seal != card.SealRequired || c.Name != "Alina Rao" {
		t.Fatalf("card reads as %+v, %v", c, err)
	}
	if !strings.Contains(got.GetCard(), wgen.Strings().CertProp+":") || got.GetChain()[0] != wire.B64Encode(chain[0]) || got.GetChain()[1] != wire.B64Encode(chain[1]) {
		t.Fatal("card or chain not of the generation")
	}
	if got.GetLimitsJson() != wire.DefaultLimits().JSON(wgen) || !strings.HasPrefix(got.GetGetCardResultJson(), `{"card":"BEGIN:VCARD\r\nVERSION:4.0\r\n`) ||
		!strings.HasSuffix(got.GetGetCardResultJson(), `"limits":`+got.GetLimitsJson()+`}`) {
		t.Fatalf("get_card result %s", got.GetGetCardResultJson())
	}
	v, err := f.trust.VerifyCardSignature(ctx, &hdtpv1.VerifyCardSignatureRequest{Generation: gen, Card: got.GetCard(), CardSig: got.GetCardSig(),
		Chain: chain, ExpectedEndpoint: c.Leaf.Endpoint})
	if err != nil || !v.GetValid() {
		t.Fatalf("VerifyCardSignature = %+v, %v", v, err)
	}
	// The strict validator, as the vectors' rules run it, accepts the chain
	// pactd's request produced.
	if _, err := cert.VerifyChain(chain, cert.ChainOptions{Generation: wgen, Now: f.clock.Now(), ExpectedRoot: &c.Leaf.AuthorityKeyID,
		ExpectedEndpoint: c.Leaf.Endpoint}); err != nil {
		t.Fatal(err)
	}
}

// TestInstallChainRefusals: each wrong answer is refused with its rule and
// reason (or its refusal), changes nothing, and the right answer still
// installs afterwards (the positive control).
func TestInstallChainRefusals(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newFixture(t, dbURL, nil)
		ctx := t.Context()
		for _, gen := range []hdtpv1.Generation{hdtpv1.Generation_GENERATION_PACT2, hdtpv1.Generation_GENERATION_HDTP1} {
			endpoint := "https://agent." + strings.ToLower(gen.String()[11:]) + ".example/mcp"
			created, err := f.ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: endpoint, DisplayName: "A", Generation: gen,
				KeyAlgorithm: hdtpv1.KeyAlgorithm_KEY_ALGORITHM_P256})
			if err != nil {
				t.Fatal(err)
			}
			id, sr := created.GetIdentity().GetIdentityId(), created.GetSigningRequest()
			w := newWallet(t, true, cert.RootTemplate{})
			good := w.sign(t, sr, t0.Add(-time.Hour), year)

			other, err := f.ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: endpoint + "2", DisplayName: "B", Generation: gen})
			if err != nil {
				t.Fatal(err)
			}
			otherKey := w.sign(t, other.GetSigningRequest(), t0.Add(-time.Hour), year) // the other identity's key and endpoint
			tooLong := w.sign(t, sr, t0.Add(-time.Hour), 399*24*time.Hour)
			expired := w.sign(t, sr, t0.Add(-2*year), year)
			twin := func() [][]byte {
				leaf, _ := cert.Parse(good[0], cert.KindLeaf, wire.HDTP1)
				sig, err := cert.HighSTwin(leaf.Signature)
				if err != nil {
					t.Fatal(err)
				}
				// The same TBS, under the other twin of the P-256 root's signature.
				der, err := (&cert.Parts{SigAlg: cert.SigAlgElement(cert.P256)}).Assemble(leaf.RawTBS, sig)
				if err != nil {
					t.Fatal(err)
				}
				return [][]byte{der, good[1]}
			}()
			endDated := newWallet(t, false, cert.RootTemplate{CommonName: "Alina Rao", NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(2 * year)})
			endDatedChain := endDated.sign(t, sr, t0.Add(-time.Hour), year)

			type tc struct {
				name  string
				chain [][]byte
				state string
				md    map[string]string
			}
			cases := []tc{
				{"a state that is not the request's", good, strings.Repeat("A", 43), map[string]string{"refusal": "no_pending_request"}},
				{"no state", good, "", map[string]string{"refusal": "no_pending_request"}},
				{"the other identity's key and endpoint", otherKey, sr.GetState(), map[string]string{"rule": "5", "cert_reason": "endpoint_mismatch"}},
				{"a chain of one", good[:1], sr.GetState(), map[string]string{"rule": "1", "cert_reason": "chain_length"}},
				{"a leaf of 399 days", tooLong, sr.GetState(), map[string]string{"rule": "4", "cert_reason": "leaf_span"}},
				{"an expired leaf", expired, sr.GetState(), map[string]string{"rule": "4", "cert_reason": "leaf_expired"}},
				{"the high-S twin", twin, sr.GetState(), map[string]string{"rule": "1", "cert_reason": "high_s"}},
			}
			if gen == hdtpv1.Generation_GENERATION_PACT2 {
				cases = append(cases, tc{"a root with an end date (PACT)", endDatedChain, sr.GetState(), map[string]string{"rule": "1", "cert_reason": "root_end_date"}})
			}
			for _, c := range cases {
				_, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: c.chain, State: c.state})
				if connect.CodeOf(err) != connect.CodeFailedPrecondition {
					t.Fatalf("%s: %v", c.name, err)
				}
				md := metadata(t, err)
				for k, v := range c.md {
					if md[k] != v {
						t.Fatalf("%s: metadata %v, want %s=%s", c.name, md, k, v)
					}
				}
			}
			// Control: the right answer installs.
			if _, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: good, State: sr.GetState()}); err != nil {
				t.Fatalf("control: %v", err)
			}
			// After the first chain: another root, an older leaf.
			sr2, _ := f.ids.CreateSigningRequest(ctx, &hdtpv1.CreateSigningRequestRequest{IdentityId: id})
			another := newWallet(t, true, cert.RootTemplate{})
			for _, c := range []tc{
				{"another root", another.sign(t, sr2.GetSigningRequest(), t0, year), sr2.GetSigningRequest().GetState(), map[string]string{"rule": "2", "cert_reason": "root_mismatch"}},
				{"a leaf older than the current one", w.sign(t, sr2.GetSigningRequest(), t0.Add(-2*time.Hour), year), sr2.GetSigningRequest().GetState(),
					map[string]string{"rule": "0", "cert_reason": "not_newer", "comparison": "superseded"}},
			} {
				_, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: c.chain, State: c.state})
				md := metadata(t, err)
				for k, v := range c.md {
					if md[k] != v {
						t.Fatalf("%s: metadata %v, want %s=%s", c.name, md, k, v)
					}
				}
			}
			if _, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: w.sign(t, sr2.GetSigningRequest(), t0, year),
				State: sr2.GetSigningRequest().GetState()}); err != nil {
				t.Fatalf("control renewal: %v", err)
			}
		}
	})
}

// TestRequestValidation: malformed owner requests are INVALID_ARGUMENT,
// a second identity at an endpoint ALREADY_EXISTS, a card before any
// chain FAILED_PRECONDITION, an unknown identity NOT_FOUND; a generation
// change a root cannot make is refused.
func TestRequestValidation(t *testing.T) {
	f := newFixture(t, "", nil)
	ctx := t.Context()
	for name, req := range map[string]*hdtpv1.CreateIdentityRequest{
		"endpoint not normal":      {Endpoint: "https://a.example/mcp/", DisplayName: "A", Generation: hdtpv1.Generation_GENERATION_HDTP1},
		"no generation":            {Endpoint: "https://a.example/mcp", DisplayName: "A"},
		"no name":                  {Endpoint: "https://a.example/mcp", Generation: hdtpv1.Generation_GENERATION_HDTP1},
		"a line break in the name": {Endpoint: "https://a.example/mcp", DisplayName: "A\r\nX-HDTP-SEAL:none", Generation: hdtpv1.Generation_GENERATION_HDTP1},
	} {
		if _, err := f.ids.CreateIdentity(ctx, req); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	created, err := f.ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: "https://a.example/mcp", DisplayName: "A", Generation: hdtpv1.Generation_GENERATION_HDTP1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ids.CreateIdentity(ctx, &hdtpv1.CreateIdentityRequest{Endpoint: "https://a.example/mcp", DisplayName: "B", Generation: hdtpv1.Generation_GENERATION_PACT2}); connect.CodeOf(err) != connect.CodeAlreadyExists {
		t.Errorf("same endpoint: %v", err)
	}
	id := created.GetIdentity().GetIdentityId()
	if _, err := f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: id}); connect.CodeOf(err) != connect.CodeFailedPrecondition || metadata(t, err)["refusal"] != "no_chain" {
		t.Errorf("card before a chain: %v", err)
	}
	if _, err := f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: "hid_nope"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("unknown identity: %v", err)
	}
	// A root with an end date, then the move to PACT is refused.
	w := newWallet(t, false, cert.RootTemplate{CommonName: "A", NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(2 * year)})
	sr := created.GetSigningRequest()
	if _, err := f.ids.InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: w.sign(t, sr, t0.Add(-time.Hour), year), State: sr.GetState()}); err != nil {
		t.Fatal(err)
	}
	_, err = f.ids.UpdateIdentity(ctx, &hdtpv1.UpdateIdentityRequest{Identity: &hdtpv1.Identity{IdentityId: id, Generation: hdtpv1.Generation_GENERATION_PACT2},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"generation"}}})
	if connect.CodeOf(err) != connect.CodeFailedPrecondition || metadata(t, err)["cert_reason"] != "root_end_date" {
		t.Errorf("generation change: %v", err)
	}
	up, err := f.ids.UpdateIdentity(ctx, &hdtpv1.UpdateIdentityRequest{Identity: &hdtpv1.Identity{IdentityId: id, Seal: hdtpv1.SealPolicy_SEAL_POLICY_OPTIONAL, DisplayName: "Alina"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"seal", "display_name"}}})
	if err != nil || up.GetIdentity().GetSeal() != hdtpv1.SealPolicy_SEAL_POLICY_OPTIONAL || up.GetIdentity().GetDisplayName() != "Alina" {
		t.Fatalf("update: %+v, %v", up, err)
	}
	if _, err := f.ids.UpdateIdentity(ctx, &hdtpv1.UpdateIdentityRequest{Identity: &hdtpv1.Identity{IdentityId: id, Endpoint: "https://b.example/mcp"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"endpoint"}}}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("endpoint change: %v", err)
	}
	if c, err := f.ids.GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: id}); err != nil || !strings.Contains(c.GetCard(), "X-HDTP-SEAL:optional\r\n") || !strings.Contains(c.GetCard(), "FN:Alina\r\n") {
		t.Errorf("card after the update: %v", err)
	}
}
