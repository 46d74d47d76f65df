// Package envelope seals and opens the sealed envelope of HDTP/PACT §13:
// sealed_call's four members (protected, enc, ct, sig), the JCS header
// that is also the HPKE AAD, HPKE Base mode to the recipient leaf's key
// (both suites, with Go's crypto/hpke), the sender leaf's detached
// signature over protected ‖ enc ‖ ct, and the plaintext in its full form
// (the sender's chain inside) or small form (the sender's leaf by
// fingerprint).
//
// OpenRequest runs the normative open order of §13.3, steps 1 to 9, and
// returns the protocol's code at each step: envelope_invalid for every
// failure except a kid this identity once held (certificate_renewed, with
// the current chain) and a small form that cannot be verified
// (chain_required, one answer for every reason). Replay (step 10) and
// dispatch (step 11) are the caller's, with its store.
package envelope

import (
	"bytes"
	"crypto"
	"crypto/hpke"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
	"pactd.dev/pactd/token/jws"
)

// MaxArgumentsBytes bounds sealed_call's arguments: room for send_media's
// largest inline data (5 MiB decoded, base64 inside the plaintext, then
// base64url again as ct) and nothing much more.
const MaxArgumentsBytes = 10 << 20

// MaxSkew is how far ts may be from now: 300 s, both ways (§13.3).
const MaxSkew = 300

// Reason names why an envelope was refused.
type Reason string

// The reasons, with the §13.3 step each belongs to.
const (
	ReasonTooLarge      Reason = "too_large"      // 1: over MaxArgumentsBytes
	ReasonMembers       Reason = "members"        // 1: not exactly protected, enc, ct, sig, each a string
	ReasonEncoding      Reason = "encoding"       // 1: a member that is not canonical base64url (=, +, /, whitespace, CR/LF, non-zero trailing bits, an escape)
	ReasonHeaderJSON    Reason = "header_json"    // 2: protected is not one JSON object
	ReasonHeaderMembers Reason = "header_members" // 2: not exactly the seven members, or one twice
	ReasonHeaderType    Reason = "header_type"    // 2: a member of the wrong JSON type, an integer not written as one
	ReasonVersion       Reason = "version"        // 2: v is not the generation's
	ReasonSuite         Reason = "suite"          // 2: a suite the generation does not name
	ReasonMsgID         Reason = "msg_id"         // 2: an empty (or over-long) msg_id
	ReasonLifetime      Reason = "lifetime"       // 2: exp <= ts, or exp − ts over 30 days
	ReasonCty           Reason = "cty"            // 2: not this position's cty (a result type on a request, the other generation's)
	ReasonKid           Reason = "kid"            // 2: a kid that is not a fingerprint
	ReasonKidUnknown    Reason = "kid_unknown"    // 3: a kid never held for this identity (or held for a sibling)
	ReasonKidFormer     Reason = "kid_former"     // 3: a kid once held whose key is gone: certificate_renewed
	ReasonSuiteMismatch Reason = "suite_mismatch" // 4: not the suite the held key takes
	ReasonEncLength     Reason = "enc_length"     // 4: enc is not 65 (P-256) or 32 (X25519) bytes
	ReasonOpen          Reason = "open"           // 5: HPKE open failed (wrong key, info, AAD or ciphertext; a low-order enc)
	ReasonPlaintext     Reason = "plaintext"      // 6: not exactly method, params and one of chain or leaf
	ReasonMethod        Reason = "method"         // 6: a method other than tools/call and tools/list
	ReasonSmallForm     Reason = "small_form"     // 7: chain_required, whatever the cause
	ReasonChain         Reason = "chain"          // 8: the chain fails §14.2 (CertError says how)
	ReasonSignature     Reason = "signature"      // 8 (7 for the small form): sig does not verify
	ReasonTransportKey  Reason = "transport_key"  // 8: the TLS client chain's leaf key is not the envelope's
	ReasonTime          Reason = "time"           // 9: now >= exp, or |now − ts| > 300
	ReasonResult        Reason = "result"         // result plaintext: not exactly result or error, and chain or leaf
	ReasonResultSender  Reason = "result_sender"  // result: the responder is not the pinned root at the dialed address, or its leaf is older than the pin
	ReasonResultMsgID   Reason = "result_msg_id"  // result: not the msg_id of the request
	ReasonResultKid     Reason = "result_kid"     // result: not sealed to the caller's leaf
)

// Refusal is an envelope refused at a step of the open order, with the
// code the answer carries.
type Refusal struct {
	// Code is envelope_invalid, certificate_renewed or chain_required.
	Code wire.Code
	// Step is the §13.3 step, 1 to 9.
	Step int
	// Reason says why, for logs and metrics: never shown to the sender
	// (chain_required is one answer for every reason).
	Reason Reason
	// CertError is the chain's refusal for ReasonChain.
	CertError error
	// Chain is the current chain [leaf, root] for certificate_renewed.
	Chain [][]byte
}

func (r *Refusal) Error() string {
	s := string(r.Code) + " (step " + strconv.Itoa(r.Step) + ": " + string(r.Reason)
	if r.CertError != nil {
		s += ": " + r.CertError.Error()
	}
	return s + ")"
}

// RefusalOf returns the *Refusal in err, or nil.
func RefusalOf(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	return nil
}

func invalid(step int, r Reason) *Refusal {
	return &Refusal{Code: wire.CodeEnvelopeInvalid, Step: step, Reason: r}
}

// Envelope is sealed_call's four members, as they travel.
type Envelope struct {
	Protected string `json:"protected"`
	Enc       string `json:"enc"`
	Ct        string `json:"ct"`
	Sig       string `json:"sig"`
}

// JSON writes the envelope as sealed_call's arguments object.
func (e Envelope) JSON() []byte {
	b, _ := json.Marshal(e) // four strings of the base64url alphabet cannot fail
	return b
}

// decoded is an envelope after steps 1 and 2.
type decoded struct {
	protected, enc, ct, sig []byte
	header                  Header
}

// signed returns protected ‖ enc ‖ ct, what sig signs.
func (d *decoded) signed() []byte {
	return bytes.Join([][]byte{d.protected, d.enc, d.ct}, nil)
}

// decode runs steps 1 and 2: exactly four string members, each canonical
// base64url, and the header.
func decode(args []byte, s *wire.Strings, cty string) (*decoded, *Refusal) {
	if len(args) > MaxArgumentsBytes {
		return nil, invalid(1, ReasonTooLarge)
	}
	o := jws.NewObject(args)
	var raw [4]string
	n := 0
	for {
		name, v, ok := o.Next()
		if !ok {
			break
		}
		i := -1
		for j, m := range [...]string{"protected", "enc", "ct", "sig"} {
			if name.Is(m) {
				i = j
			}
		}
		if i < 0 || v.Kind != jws.KindString {
			return nil, invalid(1, ReasonMembers)
		}
		if v.Escaped {
			return nil, invalid(1, ReasonEncoding)
		}
		raw[i] = string(v.Raw)
		n++
	}
	if o.Duplicate() || !o.Valid() || n != 4 {
		return nil, invalid(1, ReasonMembers)
	}
	d := &decoded{}
	var ok bool
	for i, dst := range []*[]byte{&d.protected, &d.enc, &d.ct, &d.sig} {
		if *dst, ok = wire.B64Decode(raw[i]); !ok || len(*dst) == 0 {
			return nil, invalid(1, ReasonEncoding)
		}
	}
	var r Reason
	if d.header, r = parseHeader(d.protected, s, cty); r != "" {
		return nil, invalid(2, r)
	}
	return d, nil
}

// SealOptions are what Seal needs.
type SealOptions struct {
	// Generation is the sender's (and the recipient's) generation.
	Generation wire.Generation
	// Recipient is the recipient's leaf: possibly a card's, unvalidated
	// and even expired, for a first call (§14.2).
	Recipient *cert.Certificate
	// Sender is the sender's leaf key; it signs.
	Sender crypto.Signer
	// Result makes a result envelope (the result cty).
	Result bool
	// MsgID names the envelope.
	MsgID string
	// Now is ts; Lifetime is exp − ts (at most 30 days; 0 means 600 s).
	Now      time.Time
	Lifetime time.Duration
	// Plaintext is the bare plaintext object (RequestPlaintext,
	// ResultPlaintext).
	Plaintext []byte
}

// Seal makes an envelope: a fresh HPKE encapsulation to the recipient's
// key with the generation's info and the JCS header as AAD, and the
// sender's signature over protected ‖ enc ‖ ct.
func Seal(o SealOptions) (Envelope, error) {
	s := o.Generation.Strings()
	if s == nil {
		return Envelope{}, errors.New("envelope: no generation")
	}
	life := int64(o.Lifetime / time.Second)
	if life == 0 {
		life = 600
	}
	if life < 1 || life > MaxLifetime {
		return Envelope{}, errors.New("envelope: a lifetime of 1 s to 30 days")
	}
	if o.MsgID == "" || len(o.MsgID) > MaxMsgIDBytes {
		return Envelope{}, errors.New("envelope: msg_id must be 1 to 256 bytes")
	}
	su := suiteFor(o.Recipient.KeyAlg, s)
	cty := s.CallType
	if o.Result {
		cty = s.ResultType
	}
	h := Header{Cty: cty, Exp: o.Now.Unix() + life, Kid: o.Recipient.KeyID, MsgID: o.MsgID, Suite: su.name, Ts: o.Now.Unix(), V: s.EnvelopeVersion}
	protected := h.Marshal()
	pub, err := RecipientPublicKey(o.Recipient)
	if err != nil {
		return Envelope{}, err
	}
	enc, sender, err := hpke.NewSender(pub, su.kdf, su.aead, []byte(s.HPKEInfo))
	if err != nil {
		return Envelope{}, err
	}
	ct, err := sender.Seal(protected, o.Plaintext)
	if err != nil {
		return Envelope{}, err
	}
	d := decoded{protected: protected, enc: enc, ct: ct}
	sig, err := cert.Sign(o.Sender, d.signed(), false)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{Protected: wire.B64Encode(protected), Enc: wire.B64Encode(enc), Ct: wire.B64Encode(ct), Sig: wire.B64Encode(sig)}, nil
}

// Sender is how a plaintext names its sender: the chain (full form) or
// the leaf's fingerprint (small form). Exactly one is set.
type Sender struct {
	// Chain is [leaf, root], DER.
	Chain [][]byte
	// Leaf is the sender leaf's key id.
	Leaf *wire.KeyID
}

func (s Sender) write(b *bytes.Buffer) {
	if s.Leaf != nil {
		b.WriteString(`"leaf":"` + s.Leaf.Fingerprint() + `"`)
		return
	}
	b.WriteString(`"chain":[`)
	for i, c := range s.Chain {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + wire.B64Encode(c) + `"`)
	}
	b.WriteByte(']')
}

// RequestPlaintext writes a request's plaintext: {"method","params", and
// "chain" or "leaf"} in that order. params must be one JSON object.
func RequestPlaintext(method string, params json.RawMessage, from Sender) ([]byte, error) {
	if method != "tools/call" && method != "tools/list" {
		return nil, errors.New("envelope: method is tools/call or tools/list")
	}
	if v, err := jws.DecodeValue(params, maxDepth); err != nil {
		return nil, err
	} else if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("envelope: params is one JSON object")
	}
	var b bytes.Buffer
	b.WriteString(`{"method":"` + method + `","params":`)
	b.Write(params)
	b.WriteByte(',')
	from.write(&b)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ResultPlaintext writes a result's plaintext: {"result" or "error", and
// "chain" or "leaf"}. isError writes body as the error member (an object
// {"code", ...}, §12), else as the result.
func ResultPlaintext(body json.RawMessage, isError bool, from Sender) ([]byte, error) {
	if _, err := jws.DecodeValue(body, maxDepth); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if isError {
		b.WriteString(`{"error":`)
	} else {
		b.WriteString(`{"result":`)
	}
	b.Write(body)
	b.WriteByte(',')
	from.write(&b)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// maxDepth bounds the nesting of a plaintext.
const maxDepth = 64
