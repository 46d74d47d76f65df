package envelope

import (
	"bytes"
	"crypto/hpke"
	"encoding/json"
	"time"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
	"pactd.dev/pactd/token/jws"
)

// KidState is what an identity knows of a kid (§14.4).
type KidState uint8

// The kid states.
const (
	// KidUnknown: never held for this identity (or held for a sibling on
	// the same origin): envelope_invalid, never opened, never answered
	// with a chain.
	KidUnknown KidState = iota
	// KidHeld: a key held now (the current leaf, or a superseded one not
	// past its notAfter).
	KidHeld
	// KidFormer: once held, key destroyed: certificate_renewed with the
	// current chain, in plaintext.
	KidFormer
)

// Recipient is a held key: its leaf and its HPKE private key. The private
// key never leaves the process that holds it.
type Recipient struct {
	Leaf *cert.Certificate
	Key  hpke.PrivateKey
}

// Identity is what the open order asks of the identity the envelope
// came to.
type Identity interface {
	// ResolveKid looks the kid up among the keys held for this identity.
	// For KidHeld it returns the key; for KidFormer the current chain
	// [leaf, root] (nil if the identity has none, which answers as
	// KidUnknown).
	ResolveKid(kid wire.KeyID) (KidState, *Recipient, [][]byte)
	// PinnedLeaf finds a sender leaf by key id among the pins of active
	// and pending contacts (never a blocked one), or nil.
	PinnedLeaf(kid wire.KeyID) *cert.Certificate
}

// OpenOptions are what OpenRequest needs.
type OpenOptions struct {
	Generation wire.Generation
	Now        time.Time
	Identity   Identity
	// TransportLeaf is the leaf of a TLS client chain on the same
	// request, already validated, or nil; the envelope's sender must have
	// the same key.
	TransportLeaf *cert.Certificate
}

// Form is how a request named its sender.
type Form uint8

// The forms.
const (
	// FormChain: the full form, the sender's chain inside.
	FormChain Form = 1
	// FormLeaf: the small form, the sender's leaf by fingerprint.
	FormLeaf Form = 2
)

// Request is an opened request envelope, ready for the replay check and
// dispatch.
type Request struct {
	Header Header
	// Method is tools/call or tools/list.
	Method string
	// Params is the params object's JSON.
	Params json.RawMessage
	// Plaintext is the whole plaintext.
	Plaintext []byte
	// Form says how the sender was named.
	Form Form
	// SenderLeaf is the sender's proven leaf: the validated chain's leaf
	// (full form) or the pinned leaf (small form).
	SenderLeaf *cert.Certificate
	// SenderChain is the validated chain of the full form; nil for the
	// small form.
	SenderChain *cert.Chain
	// Recipient is the held key the envelope was sealed to.
	Recipient *Recipient
}

// OpenRequest opens a request envelope (sealed_call's arguments, as JSON)
// by the normative order of §13.3, steps 1 to 9:
//
//  1. exactly four members, each canonical base64url;
//  2. the header: the seven members and their types, v, a known suite, a
//     non-empty msg_id, exp − ts at most 30 days, the call cty;
//  3. the kid among the keys held for this identity: a former key answers
//     certificate_renewed with the current chain, an unknown one
//     envelope_invalid;
//  4. the suite the held key takes, and enc of that suite's length;
//  5. HPKE open with the generation's info and the header as AAD;
//  6. the plaintext: exactly method (tools/call or tools/list), params and
//     one of chain or leaf;
//  7. small form: the leaf among active and pending pins, within its
//     validity now, and sig verifying under it; any failure answers
//     chain_required, the same in every case;
//  8. full form: the chain validates (§14.2, no expected endpoint) and
//     sig verifies under its leaf, else envelope_invalid (never
//     chain_required); a TLS client chain on the request carries the same
//     leaf key;
//  9. now < exp and |now − ts| <= 300.
//
// Every refusal is a *Refusal; all are answered in plaintext.
func OpenRequest(args []byte, o OpenOptions) (*Request, error) {
	r, ref := openRequest(args, o)
	if ref != nil {
		return nil, ref
	}
	return r, nil
}

func openRequest(args []byte, o OpenOptions) (*Request, *Refusal) {
	s := o.Generation.Strings()
	d, ref := decode(args, s, s.CallType)
	if ref != nil {
		return nil, ref
	}
	// Step 3.
	state, rcpt, current := o.Identity.ResolveKid(d.header.Kid)
	switch {
	case state == KidFormer && len(current) == 2:
		return nil, &Refusal{Code: wire.CodeCertificateRenewed, Step: 3, Reason: ReasonKidFormer, Chain: current}
	case state != KidHeld || rcpt == nil:
		return nil, invalid(3, ReasonKidUnknown)
	}
	// Steps 4 and 5.
	pt, ref := open(d, rcpt, s)
	if ref != nil {
		return nil, ref
	}
	// Step 6.
	req := &Request{Header: d.header, Plaintext: pt, Recipient: rcpt}
	var from sender
	if ref := req.readPlaintext(pt, &from); ref != nil {
		return nil, ref
	}
	// Steps 7 and 8.
	signed := d.signed()
	if from.leaf != nil {
		req.Form = FormLeaf
		leaf := o.Identity.PinnedLeaf(*from.leaf)
		key := leaf
		if key == nil {
			// Do the same work whether or not the leaf is known: verify
			// against the recipient's own leaf, which cannot have signed.
			key = rcpt.Leaf
		}
		verified := cert.VerifySignature(key.PublicKey, signed, d.sig)
		if leaf == nil || !verified || o.Now.Before(leaf.NotBefore) || o.Now.After(leaf.NotAfter) {
			return nil, &Refusal{Code: wire.CodeChainRequired, Step: 7, Reason: ReasonSmallForm}
		}
		req.SenderLeaf = leaf
	} else {
		req.Form = FormChain
		c, err := cert.VerifyChain(from.chain, cert.ChainOptions{Generation: o.Generation, Now: o.Now})
		if err != nil {
			return nil, &Refusal{Code: wire.CodeEnvelopeInvalid, Step: 8, Reason: ReasonChain, CertError: err}
		}
		if !cert.VerifySignature(c.Leaf.PublicKey, signed, d.sig) {
			return nil, invalid(8, ReasonSignature)
		}
		req.SenderLeaf, req.SenderChain = c.Leaf, c
	}
	if o.TransportLeaf != nil && !bytes.Equal(o.TransportLeaf.RawSPKI, req.SenderLeaf.RawSPKI) {
		return nil, invalid(8, ReasonTransportKey)
	}
	// Step 9.
	if ref := checkTime(d.header, o.Now); ref != nil {
		return nil, ref
	}
	return req, nil
}

// open runs steps 4 and 5.
func open(d *decoded, rcpt *Recipient, s *wire.Strings) ([]byte, *Refusal) {
	su := suiteFor(rcpt.Leaf.KeyAlg, s)
	if d.header.Suite != su.name {
		return nil, invalid(4, ReasonSuiteMismatch)
	}
	if len(d.enc) != su.encLen || su.encLen == 65 && d.enc[0] != 4 {
		return nil, invalid(4, ReasonEncLength)
	}
	r, err := hpke.NewRecipient(d.enc, rcpt.Key, su.kdf, su.aead, []byte(s.HPKEInfo))
	if err != nil {
		return nil, invalid(5, ReasonOpen)
	}
	pt, err := r.Open(d.protected, d.ct)
	if err != nil {
		return nil, invalid(5, ReasonOpen)
	}
	return pt, nil
}

func checkTime(h Header, now time.Time) *Refusal {
	n := now.Unix()
	if n >= h.Exp || n-h.Ts > MaxSkew || h.Ts-n > MaxSkew {
		return invalid(9, ReasonTime)
	}
	return nil
}

// sender is a plaintext's chain or leaf, decoded.
type sender struct {
	chain [][]byte
	leaf  *wire.KeyID
}

// readSender reads "chain" (an array of canonical base64url strings) or
// "leaf" (a fingerprint), whichever v is.
func readSender(name string, v any, from *sender) bool {
	switch name {
	case "leaf":
		s, ok := v.(string)
		if !ok {
			return false
		}
		k, ok := wire.ParseFingerprint(s)
		if !ok {
			return false
		}
		from.leaf = &k
		return true
	case "chain":
		arr, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				return false
			}
			der, ok := wire.B64Decode(s)
			if !ok {
				return false
			}
			from.chain = append(from.chain, der)
		}
		return true
	}
	return false
}

// readPlaintext runs step 6.
func (req *Request) readPlaintext(pt []byte, from *sender) *Refusal {
	v, err := jws.DecodeValue(pt, maxDepth)
	if err != nil {
		return invalid(6, ReasonPlaintext)
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != 3 {
		return invalid(6, ReasonPlaintext)
	}
	method, ok := m["method"].(string)
	if !ok {
		return invalid(6, ReasonPlaintext)
	}
	if method != "tools/call" && method != "tools/list" {
		return invalid(6, ReasonMethod)
	}
	params, ok := m["params"].(map[string]any)
	if !ok {
		return invalid(6, ReasonPlaintext)
	}
	if method == "tools/call" {
		name, ok := params["name"].(string)
		if !ok || name == "" {
			return invalid(6, ReasonPlaintext)
		}
		if a, present := params["arguments"]; present {
			if _, ok := a.(map[string]any); !ok {
				return invalid(6, ReasonPlaintext)
			}
		}
	}
	_, hasChain := m["chain"]
	_, hasLeaf := m["leaf"]
	if hasChain == hasLeaf {
		return invalid(6, ReasonPlaintext)
	}
	name := "leaf"
	if hasChain {
		name = "chain"
	}
	if !readSender(name, m[name], from) {
		return invalid(6, ReasonPlaintext)
	}
	raw, _ := jws.Members(pt) // the same text DecodeValue judged
	req.Method, req.Params = method, raw["params"]
	return nil
}

// ResultOptions are what OpenResult needs: the caller's own key and what
// it knows of the contact it called.
type ResultOptions struct {
	Generation wire.Generation
	Now        time.Time
	// Caller is the caller's held key, the one the result is sealed to.
	Caller *Recipient
	// MsgID is the request envelope's msg_id.
	MsgID string
	// PinnedLeaf is the contact's pinned leaf (its root is the leaf's
	// issuer), or nil before the first exchange.
	PinnedLeaf *cert.Certificate
	// ExpectedRoot is the root the responder must be, when no leaf is
	// pinned yet (a card's AKI); ignored when PinnedLeaf is set.
	ExpectedRoot *wire.KeyID
	// Dialed is the URL the call went to.
	Dialed string
}

// Result is an opened result envelope.
type Result struct {
	Header Header
	// Result is the result member's JSON, or nil.
	Result json.RawMessage
	// Error is the error member's JSON ({"code", ...}), or nil.
	Error json.RawMessage
	// ResponderLeaf is the responder's proven leaf; ResponderChain its
	// chain in the full form.
	ResponderLeaf  *cert.Certificate
	ResponderChain *cert.Chain
}

// OpenResult opens a result envelope on the caller's side (§13.2, §4.7 of
// the digest): the four members and header with the result cty, sealed to
// the caller's key, the caller's msg_id, exactly one of result or error
// and one of chain or leaf; a chain validates against the pinned root and
// the dialed address, a leaf is the pinned one; a responder leaf older
// than the pin is refused; sig verifies; the ±300 s skew applies too.
// Every failure is envelope_invalid, the caller's own verdict.
func OpenResult(body []byte, o ResultOptions) (*Result, error) {
	r, ref := openResult(body, o)
	if ref != nil {
		return nil, ref
	}
	return r, nil
}

func openResult(body []byte, o ResultOptions) (*Result, *Refusal) {
	s := o.Generation.Strings()
	d, ref := decode(body, s, s.ResultType)
	if ref != nil {
		return nil, ref
	}
	if d.header.Kid != o.Caller.Leaf.KeyID {
		return nil, invalid(3, ReasonResultKid)
	}
	if d.header.MsgID != o.MsgID {
		return nil, invalid(2, ReasonResultMsgID)
	}
	pt, ref := open(d, o.Caller, s)
	if ref != nil {
		return nil, ref
	}
	v, err := jws.DecodeValue(pt, maxDepth)
	m, ok := v.(map[string]any)
	if err != nil || !ok || len(m) != 2 {
		return nil, invalid(6, ReasonResult)
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	_, hasChain := m["chain"]
	_, hasLeaf := m["leaf"]
	if hasResult == hasError || hasChain == hasLeaf {
		return nil, invalid(6, ReasonResult)
	}
	if e, ok := m["error"]; ok {
		if eo, ok := e.(map[string]any); !ok {
			return nil, invalid(6, ReasonResult)
		} else if _, ok := eo["code"].(string); !ok {
			return nil, invalid(6, ReasonResult)
		}
	}
	var from sender
	name := "leaf"
	if hasChain {
		name = "chain"
	}
	if !readSender(name, m[name], &from) {
		return nil, invalid(6, ReasonResult)
	}
	res := &Result{Header: d.header}
	raw, _ := jws.Members(pt)
	res.Result, res.Error = raw["result"], raw["error"]
	if from.leaf != nil {
		if o.PinnedLeaf == nil || *from.leaf != o.PinnedLeaf.KeyID {
			return nil, invalid(7, ReasonResultSender)
		}
		res.ResponderLeaf = o.PinnedLeaf
	} else {
		root := o.ExpectedRoot
		if o.PinnedLeaf != nil {
			root = &o.PinnedLeaf.AuthorityKeyID
		}
		if root == nil {
			return nil, invalid(8, ReasonResultSender)
		}
		c, err := cert.VerifyChain(from.chain, cert.ChainOptions{Generation: o.Generation, Now: o.Now, ExpectedRoot: root, ExpectedEndpoint: o.Dialed})
		if err != nil {
			return nil, &Refusal{Code: wire.CodeEnvelopeInvalid, Step: 8, Reason: ReasonChain, CertError: err}
		}
		if o.PinnedLeaf != nil {
			if cmp := cert.Compare(o.PinnedLeaf, c.Leaf); cmp != cert.Same && cmp != cert.Renewal {
				return nil, invalid(8, ReasonResultSender)
			}
		}
		res.ResponderLeaf, res.ResponderChain = c.Leaf, c
	}
	if !cert.VerifySignature(res.ResponderLeaf.PublicKey, d.signed(), d.sig) {
		return nil, invalid(8, ReasonSignature)
	}
	if ref := checkTime(d.header, o.Now); ref != nil {
		return nil, ref
	}
	return res, nil
}
