package envelope

import (
	"bytes"
	"encoding/hex"
	"testing"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/hdtptest"
	"pactd.dev/pactd/hdtp/wire"
)

// fakeIdentity holds keys and pins for the open order.
type fakeIdentity struct {
	held    map[wire.KeyID]*Recipient
	former  map[wire.KeyID]bool
	current [][]byte
	pins    map[wire.KeyID]*cert.Certificate
}

func (f *fakeIdentity) ResolveKid(kid wire.KeyID) (KidState, *Recipient, [][]byte) {
	if r, ok := f.held[kid]; ok {
		return KidHeld, r, nil
	}
	if f.former[kid] {
		return KidFormer, nil, f.current
	}
	return KidUnknown, nil, nil
}

func (f *fakeIdentity) PinnedLeaf(kid wire.KeyID) *cert.Certificate { return f.pins[kid] }

func loadVectors(t testing.TB, gen wire.Generation) *hdtptest.Vectors {
	t.Helper()
	v, err := hdtptest.Load(gen)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustLeaf(t testing.TB, v *hdtptest.Vectors, name string) *cert.Certificate {
	t.Helper()
	c, err := cert.Parse(v.Certificates[name].DER, cert.KindLeaf, v.Generation)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recipientOf is the held key of a vector leaf.
func recipientOf(t testing.TB, v *hdtptest.Vectors, name string) *Recipient {
	t.Helper()
	k, err := RecipientPrivateKey(v.LeafKeys[name])
	if err != nil {
		t.Fatal(err)
	}
	return &Recipient{Leaf: mustLeaf(t, v, name), Key: k}
}

// TestVectorEnvelopes opens every published envelope of both generations
// through the whole open order (steps 1 to 9) with the vector keys at the
// vectors' now: the plaintext is the published one, the embedded chain
// validates, sig verifies under the sender's leaf (the chain's, or for the
// small form the pinned leaf_a), and the header re-marshals to the exact
// protected bytes (the vectors' headers are JCS).
func TestVectorEnvelopes(t *testing.T) {
	for _, gen := range []wire.Generation{wire.PACT2, wire.HDTP1} {
		v := loadVectors(t, gen)
		if len(v.Envelopes) != 3 {
			t.Fatalf("%s: %d envelopes, want 3", gen, len(v.Envelopes))
		}
		for _, e := range v.Envelopes {
			t.Run(gen.String()+"/"+e.Name, func(t *testing.T) {
				rcpt := recipientOf(t, v, e.RecipientChain[0])
				sender := mustLeaf(t, v, e.SenderChain[0])
				id := &fakeIdentity{held: map[wire.KeyID]*Recipient{rcpt.Leaf.KeyID: rcpt},
					pins: map[wire.KeyID]*cert.Certificate{sender.KeyID: sender}}
				args := Envelope{Protected: e.Protected, Enc: e.Enc, Ct: e.Ct, Sig: e.Sig}.JSON()
				req, err := OpenRequest(args, OpenOptions{Generation: gen, Now: v.Now, Identity: id})
				if err != nil {
					t.Fatal(err)
				}
				want, _ := hex.DecodeString(e.PlaintextHex)
				if !bytes.Equal(req.Plaintext, want) {
					t.Fatalf("plaintext %s, published %s", req.Plaintext, want)
				}
				if req.Header.Suite != e.Suite || SuiteName(rcpt.Leaf, gen) != e.Suite {
					t.Fatalf("suite %s, published %s", req.Header.Suite, e.Suite)
				}
				if !bytes.Equal(req.SenderLeaf.Raw, v.Certificates[e.SenderChain[0]].DER) {
					t.Fatal("the proven sender is not the sender's leaf")
				}
				switch e.Form {
				case "chain":
					if req.Form != FormChain || !bytes.Equal(req.SenderChain.Root.Raw, v.Certificates[e.SenderChain[1]].DER) {
						t.Fatal("full form without the sender's chain")
					}
				case "leaf":
					if req.Form != FormLeaf || req.SenderChain != nil {
						t.Fatal("small form read as full")
					}
				default:
					t.Fatalf("form %q", e.Form)
				}
				protected, _ := wire.B64Decode(e.Protected)
				if got := req.Header.Marshal(); !bytes.Equal(got, protected) {
					t.Fatalf("header re-marshals to %s, published %s", got, protected)
				}
				if req.Header.Ts != v.Now.Unix() || req.Header.Exp != req.Header.Ts+600 || req.Method != "tools/call" {
					t.Fatalf("header %+v", req.Header)
				}
			})
		}
	}
}
