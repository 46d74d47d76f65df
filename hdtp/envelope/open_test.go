package envelope

import (
	"bytes"
	"crypto"
	"crypto/hpke"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/hdtptest"
	"pactd.dev/pactd/hdtp/wire"
)

// kit is one sender and one recipient from the vectors, and an identity
// that holds the recipient's key and pins the sender.
type kit struct {
	gen       wire.Generation
	v         *hdtptest.Vectors
	rcpt      *Recipient
	senderKey crypto.Signer
	sender    *cert.Certificate
	chain     [][]byte
	id        *fakeIdentity
	now       time.Time
}

// newKit: alina (Ed25519) calls bharat (P-256), or the reverse.
func newKit(t testing.TB, gen wire.Generation, toEd25519 bool) *kit {
	v := loadVectors(t, gen)
	from, to := "a", "b"
	if toEd25519 {
		from, to = "b", "a"
	}
	k := &kit{gen: gen, v: v, rcpt: recipientOf(t, v, "leaf_"+to), senderKey: v.LeafKeys["leaf_"+from],
		sender: mustLeaf(t, v, "leaf_"+from), chain: v.Chain("leaf_"+from, "root_"+from), now: v.Now}
	k.id = &fakeIdentity{held: map[wire.KeyID]*Recipient{k.rcpt.Leaf.KeyID: k.rcpt},
		pins: map[wire.KeyID]*cert.Certificate{k.sender.KeyID: k.sender}}
	return k
}

func (k *kit) header() Header {
	s := k.gen.Strings()
	return Header{Cty: s.CallType, Exp: k.now.Unix() + 600, Kid: k.rcpt.Leaf.KeyID, MsgID: "m-1",
		Suite: suiteFor(k.rcpt.Leaf.KeyAlg, s).name, Ts: k.now.Unix(), V: s.EnvelopeVersion}
}

func (k *kit) plaintext(t testing.TB, small bool) []byte {
	from := Sender{Chain: k.chain}
	if small {
		from = Sender{Leaf: &k.sender.KeyID}
	}
	pt, err := RequestPlaintext("tools/call", json.RawMessage(`{"name":"send_message","arguments":{"msg_id":"x","text":"hi"}}`), from)
	if err != nil {
		t.Fatal(err)
	}
	return pt
}

// raw is an envelope before encoding, for tests to change.
type raw struct {
	protected, enc, ct, sig []byte
}

// sealRaw seals pt with the protected bytes given, to the recipient's key
// with info, and signs with signer.
func (k *kit) sealRaw(t testing.TB, protected []byte, info string, pt []byte, signer crypto.Signer) raw {
	t.Helper()
	su := suiteFor(k.rcpt.Leaf.KeyAlg, k.gen.Strings())
	pub, err := RecipientPublicKey(k.rcpt.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	enc, s, err := hpke.NewSender(pub, su.kdf, su.aead, []byte(info))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := s.Seal(protected, pt)
	if err != nil {
		t.Fatal(err)
	}
	r := raw{protected: protected, enc: enc, ct: ct}
	r.resign(t, signer)
	return r
}

func (r *raw) resign(t testing.TB, signer crypto.Signer) {
	sig, err := cert.Sign(signer, bytes.Join([][]byte{r.protected, r.enc, r.ct}, nil), false)
	if err != nil {
		t.Fatal(err)
	}
	r.sig = sig
}

func (r raw) args() []byte {
	return Envelope{Protected: wire.B64Encode(r.protected), Enc: wire.B64Encode(r.enc), Ct: wire.B64Encode(r.ct), Sig: wire.B64Encode(r.sig)}.JSON()
}

func (k *kit) open(args []byte) (*Request, error) {
	return OpenRequest(args, OpenOptions{Generation: k.gen, Now: k.now, Identity: k.id})
}

func (k *kit) good(t testing.TB, small bool) raw {
	return k.sealRaw(t, k.header().Marshal(), k.gen.Strings().HPKEInfo, k.plaintext(t, small), k.senderKey)
}

// withHeader returns a valid envelope whose header JSON is changed.
func (k *kit) withHeader(t testing.TB, f func(string) string) []byte {
	return k.sealRaw(t, []byte(f(string(k.header().Marshal()))), k.gen.Strings().HPKEInfo, k.plaintext(t, false), k.senderKey).args()
}

func (k *kit) withPlaintext(t testing.TB, pt string) []byte {
	return k.sealRaw(t, k.header().Marshal(), k.gen.Strings().HPKEInfo, []byte(pt), k.senderKey).args()
}

func replaceMember(args []byte, member, value string) []byte {
	var e Envelope
	_ = json.Unmarshal(args, &e)
	m := map[string]string{"protected": e.Protected, "enc": e.Enc, "ct": e.Ct, "sig": e.Sig}
	m[member] = value
	return []byte(`{"protected":"` + m["protected"] + `","enc":"` + m["enc"] + `","ct":"` + m["ct"] + `","sig":"` + m["sig"] + `"}`)
}

func memberOf(args []byte, member string) string {
	var e Envelope
	_ = json.Unmarshal(args, &e)
	return map[string]string{"protected": e.Protected, "enc": e.Enc, "ct": e.Ct, "sig": e.Sig}[member]
}

// TestOpenOrderRefusals runs the envelope cases of hdtp.md §8 (items 51 to
// 72 that an envelope alone decides, numbered in the names), each refused
// with its code, step and reason, beside the controls of each group, for
// both suites.
func TestOpenOrderRefusals(t *testing.T) {
	for _, toEd := range []bool{false, true} {
		k := newKit(t, wire.HDTP1, toEd)
		good := k.good(t, false).args()
		s := k.gen.Strings()
		type tc struct {
			name string
			args []byte
			code wire.Code
			step int
			r    Reason
		}
		cases := []tc{
			{name: "control: full form", args: good},
			{name: "control: small form", args: k.good(t, true).args()},
			{name: "control: whitespace and member order in the arguments", args: []byte(" {\"sig\" : \"" + memberOf(good, "sig") + "\",\n\"ct\":\"" + memberOf(good, "ct") +
				"\",\"enc\":\"" + memberOf(good, "enc") + "\",\"protected\":\"" + memberOf(good, "protected") + "\"} ")},
			{name: "control: a header that is not JCS", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `{"cty"`, `{ "cty"`, 1) })},
		}
		for _, m := range []string{"protected", "enc", "ct", "sig"} {
			v := memberOf(good, m)
			cases = append(cases,
				tc{name: "51 " + m + " with =", args: replaceMember(good, m, v+"="), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonEncoding},
				tc{name: "51 " + m + " with +", args: replaceMember(good, m, "+"+v[1:]), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonEncoding},
				tc{name: "51 " + m + " with /", args: replaceMember(good, m, "/"+v[1:]), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonEncoding},
				tc{name: "51 " + m + " with a space", args: replaceMember(good, m, v[:4]+" "+v[4:]), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonEncoding},
				tc{name: "51 " + m + " with an escaped LF", args: replaceMember(good, m, v[:4]+`\n`+v[4:]), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonEncoding},
				tc{name: "51 " + m + " with an escaped letter", args: replaceMember(good, m, `\u0041`+v[1:]), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonEncoding},
			)
		}
		// Non-zero trailing bits: change the last character within its
		// group so the unused bits become 1.
		sig := memberOf(good, "sig")
		if tail := len(sig) % 4; tail != 0 {
			last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", sig[len(sig)-1])
			bad := sig[:len(sig)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last|1])
			cases = append(cases, tc{name: "51 sig with non-zero trailing bits", args: replaceMember(good, "sig", bad), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonEncoding})
		}
		cases = append(cases,
			tc{name: "51 a raw LF inside a member", args: bytes.Replace(good, []byte(`"ct":"`), []byte("\"ct\":\"A\n"), 1), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonMembers},
			tc{name: "52 a fifth member", args: bytes.Replace(good, []byte(`{`), []byte(`{"x":"AAAA",`), 1), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonMembers},
			tc{name: "52 a member twice", args: bytes.Replace(good, []byte(`{`), []byte(`{"sig":"AAAA",`), 1), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonMembers},
			tc{name: "52 three members", args: []byte(`{"protected":"AAAA","enc":"AAAA","ct":"AAAA"}`), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonMembers},
			tc{name: "52 a member that is not a string", args: bytes.Replace(good, []byte(`"sig":"`), []byte(`"sig":1,"x":"`), 1), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonMembers},
			tc{name: "not JSON", args: []byte(`protected`), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonMembers},
			tc{name: "over the size bound", args: append(bytes.Repeat([]byte(" "), MaxArgumentsBytes), good...), code: wire.CodeEnvelopeInvalid, step: 1, r: ReasonTooLarge},
			tc{name: "53 a from member", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `{`, `{"from":"x",`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonHeaderMembers},
			tc{name: "53 a member missing", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `,"v":1`, ``, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonHeaderMembers},
			tc{name: "53 a member twice", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `{`, `{"v":1,`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonHeaderMembers},
			tc{name: "53 ts as a string", args: k.withHeader(t, func(h string) string {
				return strings.Replace(h, `"ts":`+itoa(k.now.Unix()), `"ts":"`+itoa(k.now.Unix())+`"`, 1)
			}),
				code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonHeaderType},
			tc{name: "53 v as 1.0", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `"v":1`, `"v":1.0`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonHeaderType},
			tc{name: "53 exp as 1e9", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `"exp":`+itoa(k.now.Unix()+600), `"exp":1e10`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonHeaderType},
			tc{name: "53 v:2 to HDTP", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `"v":1`, `"v":2`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonVersion},
			tc{name: "53 v:3", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `"v":1`, `"v":3`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonVersion},
			tc{name: `53 msg_id ""`, args: k.withHeader(t, func(h string) string { return strings.Replace(h, `"msg_id":"m-1"`, `"msg_id":""`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonMsgID},
			tc{name: "53 exp − ts = 2592001", args: k.withHeader(t, func(h string) string {
				return strings.Replace(h, `"exp":`+itoa(k.now.Unix()+600), `"exp":`+itoa(k.now.Unix()+2592001), 1)
			}), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonLifetime},
			tc{name: "53 control: exp − ts = 2592000", args: k.withHeader(t, func(h string) string {
				return strings.Replace(h, `"exp":`+itoa(k.now.Unix()+600), `"exp":`+itoa(k.now.Unix()+2592000), 1)
			})},
			tc{name: "53 exp before ts", args: k.withHeader(t, func(h string) string {
				return strings.Replace(h, `"exp":`+itoa(k.now.Unix()+600), `"exp":`+itoa(k.now.Unix()-1), 1)
			}), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonLifetime},
			tc{name: "54 the result cty on a request", args: k.withHeader(t, func(h string) string { return strings.Replace(h, s.CallType, s.ResultType, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonCty},
			tc{name: "54 PACT's cty", args: k.withHeader(t, func(h string) string { return strings.Replace(h, s.CallType, "application/pact-call+json", 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonCty},
			tc{name: "55 an unknown suite", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `"suite":"HDTP-SEAL-`, `"suite":"HDTP-SEAL-Q`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonSuite},
			tc{name: "55 PACT's suite name", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `"suite":"HDTP-`, `"suite":"PACT-`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonSuite},
			tc{name: "55 the other suite to this key", args: k.withHeader(t, func(h string) string {
				other := map[bool]string{false: s.SuiteX25519, true: s.SuiteP256}[toEd]
				return strings.Replace(h, suiteFor(k.rcpt.Leaf.KeyAlg, s).name, other, 1)
			}), code: wire.CodeEnvelopeInvalid, step: 4, r: ReasonSuiteMismatch},
			tc{name: "kid not a fingerprint", args: k.withHeader(t, func(h string) string { return strings.Replace(h, `"kid":"sha256:`, `"kid":"sha384:`, 1) }), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonKid},
		)
		// 56. enc lengths.
		g := k.good(t, false)
		short := g
		short.enc = g.enc[:len(g.enc)-1]
		short.resign(t, k.senderKey)
		long := g
		long.enc = append(append([]byte(nil), g.enc...), 0)
		long.resign(t, k.senderKey)
		slid := g
		slid.enc, slid.ct = g.enc[:len(g.enc)-1], append([]byte{g.enc[len(g.enc)-1]}, g.ct...)
		slid.resign(t, k.senderKey)
		cases = append(cases,
			tc{name: "56 enc a byte short", args: short.args(), code: wire.CodeEnvelopeInvalid, step: 4, r: ReasonEncLength},
			tc{name: "56 enc a byte long", args: long.args(), code: wire.CodeEnvelopeInvalid, step: 4, r: ReasonEncLength},
			tc{name: "56 the last enc byte slid into ct", args: slid.args(), code: wire.CodeEnvelopeInvalid, step: 4, r: ReasonEncLength},
		)
		// 57-58. kids.
		unknown := k.withHeader(t, func(h string) string {
			return strings.Replace(h, k.rcpt.Leaf.KeyID.Fingerprint(), wire.KeyIDOf([]byte("another key")).Fingerprint(), 1)
		})
		formerKid := wire.KeyIDOf([]byte("a former key"))
		k.id.former = map[wire.KeyID]bool{formerKid: true}
		k.id.current = k.v.Chain("leaf_a", "root_a")
		former := k.withHeader(t, func(h string) string {
			return strings.Replace(h, k.rcpt.Leaf.KeyID.Fingerprint(), formerKid.Fingerprint(), 1)
		})
		cases = append(cases,
			tc{name: "57 a kid never held", args: unknown, code: wire.CodeEnvelopeInvalid, step: 3, r: ReasonKidUnknown},
			tc{name: "58 a former kid", args: former, code: wire.CodeCertificateRenewed, step: 3, r: ReasonKidFormer},
			tc{name: "59 the other generation's info", args: k.sealRaw(t, k.header().Marshal(), "PACT-SEAL-v2", k.plaintext(t, false), k.senderKey).args(),
				code: wire.CodeEnvelopeInvalid, step: 5, r: ReasonOpen},
			tc{name: "5 ct altered", args: func() []byte { r := k.good(t, false); r.ct[0] ^= 1; r.resign(t, k.senderKey); return r.args() }(),
				code: wire.CodeEnvelopeInvalid, step: 5, r: ReasonOpen},
			tc{name: "5 header altered after sealing (AAD)", args: func() []byte {
				r := k.good(t, false)
				r.protected = bytes.Replace(r.protected, []byte(`"msg_id":"m-1"`), []byte(`"msg_id":"m-2"`), 1)
				r.resign(t, k.senderKey)
				return r.args()
			}(), code: wire.CodeEnvelopeInvalid, step: 5, r: ReasonOpen},
		)
		if toEd {
			low := k.good(t, false)
			low.enc = make([]byte, 32) // u = 0: a low-order point, all-zero DH output
			low.resign(t, k.senderKey)
			cases = append(cases, tc{name: "69 a low-order X25519 enc", args: low.args(), code: wire.CodeEnvelopeInvalid, step: 5, r: ReasonOpen})
		}
		// 60. Plaintexts.
		chainJSON := `"chain":["` + wire.B64Encode(k.chain[0]) + `","` + wire.B64Encode(k.chain[1]) + `"]`
		leafJSON := `"leaf":"` + k.sender.KeyID.Fingerprint() + `"`
		params := `"params":{"name":"send_message","arguments":{}}`
		cases = append(cases,
			tc{name: "60 chain and leaf", args: k.withPlaintext(t, `{"method":"tools/call",`+params+`,`+chainJSON+`,`+leafJSON+`}`), code: wire.CodeEnvelopeInvalid, step: 6, r: ReasonPlaintext},
			tc{name: "60 neither chain nor leaf", args: k.withPlaintext(t, `{"method":"tools/call",`+params+`}`), code: wire.CodeEnvelopeInvalid, step: 6, r: ReasonPlaintext},
			tc{name: "60 an extra member", args: k.withPlaintext(t, `{"method":"tools/call",`+params+`,`+chainJSON+`,"x":1}`), code: wire.CodeEnvelopeInvalid, step: 6, r: ReasonPlaintext},
			tc{name: "60 resources/list", args: k.withPlaintext(t, `{"method":"resources/list","params":{},`+chainJSON+`}`), code: wire.CodeEnvelopeInvalid, step: 6, r: ReasonMethod},
			tc{name: "60 JSON-RPC framing", args: k.withPlaintext(t, `{"jsonrpc":"2.0","method":"tools/call",`+params+`}`), code: wire.CodeEnvelopeInvalid, step: 6, r: ReasonPlaintext},
			tc{name: "60 a duplicate member", args: k.withPlaintext(t, `{"method":"tools/call","method":"tools/call",`+params+`,`+chainJSON+`}`), code: wire.CodeEnvelopeInvalid, step: 6, r: ReasonPlaintext},
			tc{name: "60 a call without a name", args: k.withPlaintext(t, `{"method":"tools/call","params":{},`+chainJSON+`}`), code: wire.CodeEnvelopeInvalid, step: 6, r: ReasonPlaintext},
			tc{name: "60 a chain member that is not base64url", args: k.withPlaintext(t, `{"method":"tools/call",`+params+`,"chain":["MIIB+x==","AAAA"]}`), code: wire.CodeEnvelopeInvalid, step: 6, r: ReasonPlaintext},
			tc{name: "60 control: tools/list", args: k.withPlaintext(t, `{"method":"tools/list","params":{},`+chainJSON+`}`)},
		)
		// 61, 63, 67. The full form's proofs.
		threeByte := k.good(t, false)
		threeByte.sig = []byte{1, 2, 3}
		otherKey := k.good(t, false)
		otherKey.resign(t, k.v.LeafKeys["leaf_a_next"]) // a key that is not the sender's, whichever way the kit goes
		badChain := k.sealRaw(t, k.header().Marshal(), s.HPKEInfo, func() []byte {
			pt, _ := RequestPlaintext("tools/call", json.RawMessage(`{"name":"x"}`), Sender{Chain: [][]byte{k.chain[0], k.v.Certificates["root_c"].DER}})
			return pt
		}(), k.senderKey)
		cases = append(cases,
			tc{name: "61 a 3-byte sig", args: threeByte.args(), code: wire.CodeEnvelopeInvalid, step: 8, r: ReasonSignature},
			tc{name: "61 a full-form sig by another key", args: otherKey.args(), code: wire.CodeEnvelopeInvalid, step: 8, r: ReasonSignature},
			tc{name: "63 a full form with a failing chain", args: badChain.args(), code: wire.CodeEnvelopeInvalid, step: 8, r: ReasonChain},
		)
		// 72. Time.
		cases = append(cases,
			tc{name: "72 ts 301 s ahead", args: k.withHeader(t, func(h string) string {
				return strings.Replace(h, `"ts":`+itoa(k.now.Unix()), `"ts":`+itoa(k.now.Unix()+301), 1)
			}), code: wire.CodeEnvelopeInvalid, step: 9, r: ReasonTime},
			tc{name: "72 ts 301 s behind", args: k.withHeader(t, func(h string) string {
				return strings.Replace(h, `"ts":`+itoa(k.now.Unix()), `"ts":`+itoa(k.now.Unix()-301), 1)
			}), code: wire.CodeEnvelopeInvalid, step: 9, r: ReasonTime},
			tc{name: "72 control: ts 300 s behind", args: k.withHeader(t, func(h string) string {
				return strings.Replace(h, `"ts":`+itoa(k.now.Unix()), `"ts":`+itoa(k.now.Unix()-300), 1)
			})},
			tc{name: "exp equal to ts", args: k.withHeader(t, func(h string) string {
				return strings.Replace(h, `"exp":`+itoa(k.now.Unix()+600), `"exp":`+itoa(k.now.Unix()), 1)
			}), code: wire.CodeEnvelopeInvalid, step: 2, r: ReasonLifetime},
		)
		for _, c := range cases {
			t.Run(map[bool]string{false: "to P-256/", true: "to Ed25519/"}[toEd]+c.name, func(t *testing.T) {
				req, err := k.open(c.args)
				if c.code == "" {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					if req.SenderLeaf.KeyID != k.sender.KeyID {
						t.Fatal("another sender")
					}
					return
				}
				r := RefusalOf(err)
				if r == nil || r.Code != c.code || r.Step != c.step || r.Reason != c.r {
					t.Fatalf("err = %v, want %s at step %d (%s)", err, c.code, c.step, c.r)
				}
				if c.code == wire.CodeCertificateRenewed && len(r.Chain) != 2 {
					t.Fatal("certificate_renewed without the current chain")
				}
			})
		}
	}
}

// TestNowAtExp: with a valid lifetime, the envelope is refused at step 9
// from the second exp is reached.
func TestNowAtExp(t *testing.T) {
	k := newKit(t, wire.HDTP1, false)
	args := k.good(t, false).args()
	k.now = k.now.Add(599 * time.Second)
	if _, err := k.open(args); RefusalOf(err) == nil || RefusalOf(err).Reason != ReasonTime {
		// 599 s after ts is past the 300 s skew: also a time refusal.
		t.Fatalf("err = %v", err)
	}
	k2 := newKit(t, wire.HDTP1, false)
	h := k2.header()
	h.Exp = h.Ts + 200
	r := k2.sealRaw(t, h.Marshal(), k2.gen.Strings().HPKEInfo, k2.plaintext(t, false), k2.senderKey)
	k2.now = k2.now.Add(199 * time.Second)
	if _, err := k2.open(r.args()); err != nil {
		t.Fatalf("a second before exp: %v", err)
	}
	k2.now = k2.now.Add(time.Second)
	if _, err := k2.open(r.args()); RefusalOf(err) == nil || RefusalOf(err).Step != 9 {
		t.Fatalf("now = exp: %v", err)
	}
}

// TestSmallFormUniform runs hdtp.md §8 item 62: an unknown fingerprint, a
// leaf the identity does not pin (a blocked contact's), an expired held
// leaf and a bad sig all answer chain_required, identically; the control
// opens.
func TestSmallFormUniform(t *testing.T) {
	k := newKit(t, wire.HDTP1, false)
	control := k.good(t, true)
	if _, err := k.open(control.args()); err != nil {
		t.Fatal(err)
	}
	unknownLeaf := wire.KeyIDOf([]byte("nobody"))
	unknown := k.sealRaw(t, k.header().Marshal(), k.gen.Strings().HPKEInfo, func() []byte {
		pt, _ := RequestPlaintext("tools/call", json.RawMessage(`{"name":"x"}`), Sender{Leaf: &unknownLeaf})
		return pt
	}(), k.senderKey)
	badSig := k.good(t, true)
	badSig.resign(t, k.v.LeafKeys["leaf_a_next"])
	var answers []*Refusal
	for name, run := range map[string]func() error{
		"unknown fingerprint": func() error { _, err := k.open(unknown.args()); return err },
		"bad sig":             func() error { _, err := k.open(badSig.args()); return err },
		"blocked (not pinned)": func() error {
			saved := k.id.pins
			k.id.pins = nil
			defer func() { k.id.pins = saved }()
			_, err := k.open(control.args())
			return err
		},
		"expired held leaf": func() error {
			saved := k.id.pins
			k.id.pins = map[wire.KeyID]*cert.Certificate{k.sender.KeyID: mustLeaf(t, k.v, "leaf_a_expired")}
			defer func() { k.id.pins = saved }()
			_, err := k.open(control.args())
			return err
		},
	} {
		r := RefusalOf(run())
		if r == nil || r.Code != wire.CodeChainRequired || r.Step != 7 || r.Reason != ReasonSmallForm || r.CertError != nil || r.Chain != nil {
			t.Errorf("%s: %v", name, r)
		}
		answers = append(answers, r)
	}
	for _, a := range answers[1:] {
		if a.Error() != answers[0].Error() || a.Code != answers[0].Code {
			t.Fatalf("answers differ: %+v vs %+v", a, answers[0])
		}
	}
}

// TestTransportKey: item 67, a TLS client leaf that is not the envelope's
// sender is refused; the sender's own leaf passes.
func TestTransportKey(t *testing.T) {
	k := newKit(t, wire.HDTP1, false)
	args := k.good(t, false).args()
	if _, err := OpenRequest(args, OpenOptions{Generation: k.gen, Now: k.now, Identity: k.id, TransportLeaf: k.sender}); err != nil {
		t.Fatal(err)
	}
	_, err := OpenRequest(args, OpenOptions{Generation: k.gen, Now: k.now, Identity: k.id, TransportLeaf: mustLeaf(t, k.v, "leaf_a_next")})
	if r := RefusalOf(err); r == nil || r.Reason != ReasonTransportKey || r.Code != wire.CodeEnvelopeInvalid {
		t.Fatalf("err = %v", err)
	}
}

// TestSealOpenRoundTrip: Seal's envelopes open in both generations, both
// suites and both forms, and not in the other generation.
func TestSealOpenRoundTrip(t *testing.T) {
	for _, gen := range []wire.Generation{wire.PACT2, wire.HDTP1} {
		for _, toEd := range []bool{false, true} {
			for _, small := range []bool{false, true} {
				k := newKit(t, gen, toEd)
				env, err := Seal(SealOptions{Generation: gen, Recipient: k.rcpt.Leaf, Sender: k.senderKey, MsgID: "m-<&>\u2028", Now: k.now, Plaintext: k.plaintext(t, small)})
				if err != nil {
					t.Fatal(err)
				}
				req, err := k.open(env.JSON())
				if err != nil {
					t.Fatalf("%s toEd=%v small=%v: %v", gen, toEd, small, err)
				}
				if req.Header.MsgID != "m-<&>\u2028" || !strings.Contains(string(wireDecode(env.Protected)), "m-<&>\u2028") {
					t.Fatal("msg_id not written as JCS writes it")
				}
				other := newKit(t, gen.Other(), toEd)
				other.rcpt, other.id = k.rcpt, k.id
				if _, err := other.open(env.JSON()); RefusalOf(err) == nil || RefusalOf(err).Step != 2 {
					t.Fatalf("opened in the other generation: %v", err)
				}
			}
		}
	}
}

func wireDecode(s string) []byte { b, _ := wire.B64Decode(s); return b }

// TestOpenResult: the caller opens the responder's result envelope (chain
// and leaf forms, result and error); a result for another msg_id, from
// another root, another address, an older leaf, or with both result and
// error is refused.
func TestOpenResult(t *testing.T) {
	v := loadVectors(t, wire.HDTP1)
	caller := recipientOf(t, v, "leaf_a")
	responderKey := v.LeafKeys["leaf_b"]
	pinned := mustLeaf(t, v, "leaf_b")
	result := func(t *testing.T, body string, isErr bool, from Sender, msgID string) []byte {
		pt, err := ResultPlaintext(json.RawMessage(body), isErr, from)
		if err != nil {
			t.Fatal(err)
		}
		env, err := Seal(SealOptions{Generation: wire.HDTP1, Recipient: caller.Leaf, Sender: responderKey, Result: true, MsgID: msgID, Now: v.Now, Plaintext: pt})
		if err != nil {
			t.Fatal(err)
		}
		return env.JSON()
	}
	chain := Sender{Chain: v.Chain("leaf_b", "root_b")}
	o := ResultOptions{Generation: wire.HDTP1, Now: v.Now, Caller: caller, MsgID: "m-1", PinnedLeaf: pinned, Dialed: "https://agent.bharat.example/mcp"}
	r, err := OpenResult(result(t, `{"thread_id":"t","status":"delivered"}`, false, chain, "m-1"), o)
	if err != nil || string(r.Result) != `{"thread_id":"t","status":"delivered"}` || r.Error != nil {
		t.Fatalf("chain form: %v %+v", err, r)
	}
	r, err = OpenResult(result(t, `{"code":"permission_denied"}`, true, Sender{Leaf: &pinned.KeyID}, "m-1"), o)
	if err != nil || string(r.Error) != `{"code":"permission_denied"}` {
		t.Fatalf("leaf form: %v", err)
	}
	firstContact := o
	firstContact.PinnedLeaf, firstContact.ExpectedRoot = nil, &pinned.AuthorityKeyID
	if _, err := OpenResult(result(t, `{}`, false, chain, "m-1"), firstContact); err != nil {
		t.Fatalf("first contact: %v", err)
	}
	for name, c := range map[string]struct {
		args []byte
		o    ResultOptions
		r    Reason
	}{
		"another msg_id":          {result(t, `{}`, false, chain, "m-2"), o, ReasonResultMsgID},
		"another address":         {result(t, `{}`, false, chain, "m-1"), func() ResultOptions { x := o; x.Dialed = "https://agent.bharat.example/other"; return x }(), ReasonChain},
		"another root":            {result(t, `{}`, false, chain, "m-1"), func() ResultOptions { x := o; x.PinnedLeaf = mustLeaf(t, v, "leaf_a"); return x }(), ReasonChain},
		"an unpinned leaf":        {result(t, `{}`, false, Sender{Leaf: &caller.Leaf.KeyID}, "m-1"), o, ReasonResultSender},
		"an error without a code": {result(t, `{"message":"x"}`, true, chain, "m-1"), o, ReasonResult},
		"an older leaf than the pin": {result(t, `{}`, false, chain, "m-1"), func() ResultOptions {
			x := o
			newer := *pinned
			newer.NotBefore = pinned.NotBefore.Add(time.Hour)
			x.PinnedLeaf = &newer
			return x
		}(), ReasonResultSender},
	} {
		_, err := OpenResult(c.args, c.o)
		if r := RefusalOf(err); r == nil || r.Reason != c.r || r.Code != wire.CodeEnvelopeInvalid {
			t.Errorf("%s: %v, want %s", name, err, c.r)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// FuzzOpenRequest: no input stops the open order, and every refusal
// carries one of its three codes and a step.
func FuzzOpenRequest(f *testing.F) {
	k := newKit(f, wire.HDTP1, false)
	f.Add(k.good(f, false).args())
	f.Add(k.good(f, true).args())
	v := k.v
	for _, e := range v.Envelopes {
		f.Add(Envelope{Protected: e.Protected, Enc: e.Enc, Ct: e.Ct, Sig: e.Sig}.JSON())
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		_, err := k.open(args)
		if err == nil {
			return
		}
		r := RefusalOf(err)
		if r == nil || r.Step < 1 || r.Step > 9 {
			t.Fatalf("not a refusal of the open order: %v", err)
		}
		switch r.Code {
		case wire.CodeEnvelopeInvalid, wire.CodeChainRequired, wire.CodeCertificateRenewed:
		default:
			t.Fatalf("code %s", r.Code)
		}
	})
}

// FuzzPlaintext: no sealed plaintext stops step 6 and after.
func FuzzPlaintext(f *testing.F) {
	k := newKit(f, wire.HDTP1, false)
	f.Add(k.plaintext(f, false))
	f.Add(k.plaintext(f, true))
	f.Fuzz(func(t *testing.T, pt []byte) {
		r := k.sealRaw(t, k.header().Marshal(), k.gen.Strings().HPKEInfo, pt, k.senderKey)
		_, err := k.open(r.args())
		if err != nil && RefusalOf(err) == nil {
			t.Fatalf("not a refusal: %v", err)
		}
	})
}
