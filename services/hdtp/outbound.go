package hdtp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/card"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/envelope"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/jws"
	"pactd.dev/pactd/internal/rpcerr"
)

// Outbound calls. pactd always sends the full form (the identity's chain
// inside): the text allows it on every call, and a peer then never needs to
// answer chain_required. A certificate_renewed answer is followed once per
// call (§14.4), if the chain validates against the pin and the address
// dialed and is the same or newer.

// maxOutboundArgs bounds SealOutbound's arguments.
const maxOutboundArgs = 7 << 20

// outTarget is whom an outbound call goes to.
type outTarget struct {
	// root is the contact's pinned root ("" for a first contact).
	root string
	// endpoint is the URL to dial; leaf the key to seal to.
	endpoint string
	leaf     *cert.Certificate
	// expectRoot is the root a first contact's answer must come from.
	expectRoot string
}

// newMsgID names an outbound envelope.
func newMsgID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return "m_" + wire.B64Encode(b)
}

// sealOut makes an outbound call from the identity to the target.
func (h *Host) sealOut(st *identityState, to outTarget, method, tool string, args json.RawMessage, rpcID string, plain bool,
	followed bool) (*hdtpv1.OutboundCall, error) {
	now := h.d.Now()
	if rpcID == "" {
		rpcID = "1"
	}
	var params bytes.Buffer
	if method == "tools/call" {
		params.WriteString(`{"name":`)
		params.Write(jsonString(tool))
		params.WriteString(`,"arguments":`)
		if args == nil {
			args = json.RawMessage("{}")
		}
		params.Write(args)
		params.WriteByte('}')
	} else {
		params.WriteString("{}")
	}
	state := outboundState{IdentityID: st.id.ID, Root: to.root, Endpoint: to.endpoint, Recipient: to.leaf.Raw, ExpectRoot: to.expectRoot,
		Sealed: !plain, Method: method, Tool: tool, RPCID: rpcID, Followed: followed, ExpiresAt: now.Add(outboundHandleLifetime).Unix()}
	if len(args) <= maxResendArgs {
		state.Args, state.ArgsKept = args, true
	}
	var argsJSON []byte
	var body bytes.Buffer
	if plain {
		argsJSON = args
		body.WriteString(`{"jsonrpc":"2.0","id":` + rpcID + `,"method":"` + method + `","params":`)
		body.Write(params.Bytes())
	} else {
		signer, err := h.currentSigner(st)
		if err != nil {
			return nil, err
		}
		pt, err := envelope.RequestPlaintext(method, params.Bytes(), envelope.Sender{Chain: st.chainDER()})
		if err != nil {
			return nil, err
		}
		state.MsgID = newMsgID()
		env, err := envelope.Seal(envelope.SealOptions{Generation: st.gen, Recipient: to.leaf, Sender: signer, MsgID: state.MsgID, Now: now,
			Lifetime: outboundHandleLifetime, Plaintext: pt})
		if err != nil {
			return nil, err
		}
		argsJSON = env.JSON()
		// A sealed call, a listing too, travels as a tools/call of
		// sealed_call.
		body.WriteString(`{"jsonrpc":"2.0","id":` + rpcID + `,"method":"tools/call","params":{"name":"sealed_call","arguments":`)
		body.Write(argsJSON)
		body.WriteByte('}')
	}
	body.WriteByte('}')
	handle, err := h.keys.sealOutbound(state)
	if err != nil {
		return nil, err
	}
	h.m.outbound.WithLabelValues("sealed").Inc()
	return &hdtpv1.OutboundCall{Endpoint: to.endpoint, RequestBody: body.Bytes(), ArgumentsJson: string(argsJSON), Sealed: !plain,
		CallHandle: handle, ExpireTime: timestamppb.New(time.Unix(state.ExpiresAt, 0))}, nil
}

// SealOutbound seals a call to a contact, a card or a landing.
func (h *Host) SealOutbound(ctx context.Context, req *hdtpv1.SealOutboundRequest) (*hdtpv1.SealOutboundResponse, error) {
	var v rpcerr.Violations
	method := req.GetMethod()
	switch method {
	case "":
		method = "tools/call"
	case "tools/call", "tools/list":
	default:
		v.Add("method", "is tools/call or tools/list")
	}
	if method == "tools/call" && !toolNameRule.MatchString(req.GetTool()) {
		v.Add("tool", "is a tool name: 1 to 64 characters of [a-z0-9_]")
	}
	switch req.GetTool() {
	case toolRequestContact, toolRedeemInvite:
		v.Add("tool", "%s is an owner action: ContactService.RequestContact or RedeemInvite", req.GetTool())
	case toolSealedCall:
		v.Add("tool", "pactd seals the call itself: name the tool inside")
	}
	var args json.RawMessage
	if a := req.GetArgumentsJson(); a != "" {
		if len(a) > maxOutboundArgs {
			v.Add("arguments_json", "at most %d bytes", maxOutboundArgs)
		} else if _, err := jws.DecodeValue([]byte(a), maxJSONDepth); err != nil || !isObject([]byte(a)) {
			v.Add("arguments_json", "must be one JSON object")
		} else {
			args = json.RawMessage(a)
		}
	}
	rpcID := req.GetJsonrpcId()
	if rpcID != "" && (len(rpcID) > 128 || !validID([]byte(rpcID)) || !json.Valid([]byte(rpcID))) {
		v.Add("jsonrpc_id", "is a JSON number or string of at most 128 bytes")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	st, err := h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	if st.chainDER() == nil {
		return nil, precondition("the identity has no chain yet", "refusal", "no_chain")
	}
	var to outTarget
	switch t := req.GetTarget().(type) {
	case *hdtpv1.SealOutboundRequest_ContactRoot:
		pin, err := h.d.Store.GetHDTPContact(ctx, st.id.ID, t.ContactRoot)
		if errors.Is(err, db.ErrNotFound) {
			return nil, rpcerr.NotFound("contact")
		} else if err != nil {
			return nil, rpcerr.Fault(ctx, h.d.Logger, "load hdtp contact", err)
		}
		if to, err = pinTarget(st, pin); err != nil {
			return nil, rpcerr.Fault(ctx, h.d.Logger, "read hdtp pin", err)
		}
	case *hdtpv1.SealOutboundRequest_Card:
		cd, err := card.Read(st.gen, t.Card)
		if err != nil {
			return nil, rpcerr.InvalidField("card", "is refused at intake (%s)", card.ReasonOf(err))
		}
		if err := h.d.guard().Check(cd.Leaf.Endpoint, nil); err != nil {
			return nil, rpcerr.InvalidField("card", "names an endpoint the address guard refuses")
		}
		to = outTarget{endpoint: cd.Leaf.Endpoint, leaf: cd.Leaf, expectRoot: cd.Leaf.AuthorityKeyID.Fingerprint()}
	case *hdtpv1.SealOutboundRequest_LandingJson:
		l, err := h.readLanding(st, t.LandingJson)
		if err != nil {
			return nil, err
		}
		to = outTarget{endpoint: l.leaf.Endpoint, leaf: l.leaf, expectRoot: l.root}
	default:
		return nil, rpcerr.InvalidField("target", "set contact_root, card or landing_json")
	}
	call, err := h.sealOut(st, to, method, req.GetTool(), args, rpcID, req.GetPlaintext(), false)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "seal hdtp outbound call", err)
	}
	return &hdtpv1.SealOutboundResponse{Call: call}, nil
}

// pinTarget is a contact's pinned endpoint and leaf.
func pinTarget(st *identityState, pin db.HDTPContact) (outTarget, error) {
	leaf, err := cert.Parse(pin.Leaf, cert.KindLeaf, st.gen)
	if err != nil {
		return outTarget{}, err
	}
	return outTarget{root: pin.Root, endpoint: pin.Endpoint, leaf: leaf}, nil
}

// landing is an invite landing's JSON, validated.
type landing struct {
	card  *card.Card
	leaf  *cert.Certificate
	root  string
	chain [][]byte
}

// readLanding validates a landing (§4): the chain validates at the card's
// endpoint, its leaf is the card's certificate, its root the card's AKI,
// and card_sig verifies over the card's bytes.
func (h *Host) readLanding(st *identityState, text string) (*landing, error) {
	if len(text) > 64<<10 {
		return nil, rpcerr.InvalidField("landing_json", "at most 64 KiB")
	}
	var l struct {
		Card    string   `json:"card"`
		CardSig string   `json:"card_sig"`
		Chain   []string `json:"chain"`
	}
	if _, err := jws.DecodeValue([]byte(text), maxJSONDepth); err != nil || json.Unmarshal([]byte(text), &l) != nil || len(l.Chain) != 2 {
		return nil, rpcerr.InvalidField("landing_json", "is not a landing {card, card_sig, chain}")
	}
	cd, err := card.Read(st.gen, l.Card)
	if err != nil {
		return nil, rpcerr.InvalidField("landing_json", "its card is refused at intake (%s)", card.ReasonOf(err))
	}
	chain := make([][]byte, 2)
	for i, c := range l.Chain {
		var ok bool
		if chain[i], ok = wire.B64Decode(c); !ok {
			return nil, rpcerr.InvalidField("landing_json", "its chain is not base64url DER")
		}
	}
	root := cd.Leaf.AuthorityKeyID
	vc, err := cert.VerifyChain(chain, cert.ChainOptions{Generation: st.gen, Now: h.d.Now(), ExpectedRoot: &root, ExpectedEndpoint: cd.Leaf.Endpoint})
	if err != nil {
		return nil, rpcerr.InvalidField("landing_json", "its chain does not validate (%s)", cert.ReasonOf(err))
	}
	if !bytes.Equal(vc.Leaf.Raw, cd.Leaf.Raw) {
		return nil, rpcerr.InvalidField("landing_json", "its chain's leaf is not the card's certificate")
	}
	sig, ok := wire.B64Decode(l.CardSig)
	if !ok || !cert.VerifySignature(vc.Leaf.PublicKey, []byte(l.Card), sig) {
		return nil, rpcerr.InvalidField("landing_json", "card_sig does not verify")
	}
	if err := h.d.guard().Check(vc.Leaf.Endpoint, nil); err != nil {
		return nil, rpcerr.InvalidField("landing_json", "its endpoint is refused by the address guard")
	}
	return &landing{card: cd, leaf: vc.Leaf, root: vc.Root.Fingerprint(), chain: chain}, nil
}

// OpenOutboundResult reads a peer's answer.
func (h *Host) OpenOutboundResult(ctx context.Context, req *hdtpv1.OpenOutboundResultRequest) (*hdtpv1.OpenOutboundResultResponse, error) {
	now := h.d.Now()
	s, err := h.keys.openOutbound(req.GetCallHandle(), now)
	if errors.Is(err, errHandleExpired) {
		return nil, precondition("the outbound handle has expired", "refusal", "handle_expired")
	}
	if err != nil {
		return nil, rpcerr.InvalidField("call_handle", "is not a handle pactd issued")
	}
	if len(req.GetBody()) > MaxInboundBodyBytes {
		return nil, rpcerr.InvalidField("body", "at most %d bytes", MaxInboundBodyBytes)
	}
	st, err := h.loadIdentity(ctx, s.IdentityID, "")
	if err != nil {
		return nil, err
	}
	resp, err := h.openAnswer(ctx, st, s, req.GetHttpStatus(), req.GetBody())
	if err != nil {
		return nil, err
	}
	step := "result"
	switch {
	case resp.GetRefusal() != nil && resp.GetRefusal().GetLocal():
		step = "invalid"
	case resp.GetRefusal() != nil:
		step = "refusal"
	case resp.GetResend() != nil:
		step = "resend"
	}
	h.m.outbound.WithLabelValues(step).Inc()
	if s.Root != "" {
		if pin, err := h.d.Store.GetHDTPContact(ctx, st.id.ID, s.Root); err == nil {
			resp.Contact = contactToProto(pin)
		}
	}
	return resp, nil
}

func localRefusal(code wire.Code, reason string) *hdtpv1.OpenOutboundResultResponse {
	return &hdtpv1.OpenOutboundResultResponse{Outcome: &hdtpv1.OpenOutboundResultResponse_Refusal{
		Refusal: &hdtpv1.OutboundRefusal{Code: string(code), Local: true, Reason: reason}}}
}

// peerError is a §12 error object as a peer sent it.
type peerError struct {
	Code       string          `json:"code"`
	RetryAfter int32           `json:"retry_after"`
	Data       json.RawMessage `json:"data"`
}

func peerRefusal(raw []byte) (*hdtpv1.OpenOutboundResultResponse, peerError) {
	var e peerError
	if json.Unmarshal(raw, &e) != nil || e.Code == "" {
		return localRefusal(wire.CodeBadRequest, "peer_error_object"), e
	}
	return &hdtpv1.OpenOutboundResultResponse{Outcome: &hdtpv1.OpenOutboundResultResponse_Refusal{
		Refusal: &hdtpv1.OutboundRefusal{Code: e.Code, RetryAfterSeconds: e.RetryAfter, DataJson: string(e.Data)}}}, e
}

// openAnswer reads the JSON-RPC response, its CallToolResult, and a sealed
// result inside.
func (h *Host) openAnswer(ctx context.Context, st *identityState, s outboundState, status int32, body []byte) (*hdtpv1.OpenOutboundResultResponse, error) {
	if status != 200 {
		return localRefusal("", "http_status"), nil
	}
	m, ok := jws.Members(body)
	if !ok {
		return localRefusal("", "jsonrpc_parse"), nil
	}
	if _, isErr := m["error"]; isErr {
		return localRefusal("", "jsonrpc_error"), nil
	}
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Tools json.RawMessage `json:"tools"`
	}
	if _, err := jws.DecodeValue(m["result"], maxJSONDepth); err != nil || json.Unmarshal(m["result"], &res) != nil {
		return localRefusal("", "jsonrpc_result"), nil
	}
	if !s.Sealed && s.Method == "tools/list" {
		return resultOut(m["result"], false), nil
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		return localRefusal("", "tool_result"), nil
	}
	text := []byte(res.Content[0].Text)
	if res.IsError {
		out, e := peerRefusal(text)
		if e.Code == string(wire.CodeCertificateRenewed) {
			return h.followRenewed(ctx, st, s, e.Data)
		}
		return out, nil
	}
	if !s.Sealed {
		return resultOut(text, false), h.applyAnswer(ctx, st, s, text)
	}
	return h.openSealedAnswer(ctx, st, s, text)
}

func resultOut(raw []byte, sealed bool) *hdtpv1.OpenOutboundResultResponse {
	return &hdtpv1.OpenOutboundResultResponse{Outcome: &hdtpv1.OpenOutboundResultResponse_Result{
		Result: &hdtpv1.OutboundResult{ResultJson: string(raw), Sealed: sealed}}}
}

// openSealedAnswer opens a result envelope (§13.2, §14.3) and applies it.
func (h *Host) openSealedAnswer(ctx context.Context, st *identityState, s outboundState, text []byte) (*hdtpv1.OpenOutboundResultResponse, error) {
	signer, err := h.currentSigner(st)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "open hdtp leaf key", err)
	}
	key, err := envelope.RecipientPrivateKey(signer)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "open hdtp leaf key", err)
	}
	own, err := cert.Parse(st.current.Certificate, cert.KindLeaf, st.gen)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "read hdtp leaf", err)
	}
	o := envelope.ResultOptions{Generation: st.gen, Now: h.d.Now(), Caller: &envelope.Recipient{Leaf: own, Key: key}, MsgID: s.MsgID,
		Dialed: s.Endpoint}
	var pin *db.HDTPContact
	if s.Root != "" {
		p, err := h.d.Store.GetHDTPContact(ctx, st.id.ID, s.Root)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return nil, rpcerr.Fault(ctx, h.d.Logger, "load hdtp contact", err)
		}
		if err == nil {
			pin = &p
			if o.PinnedLeaf, err = cert.Parse(p.Leaf, cert.KindLeaf, st.gen); err != nil {
				return nil, rpcerr.Fault(ctx, h.d.Logger, "read hdtp pin", err)
			}
		}
	}
	if o.PinnedLeaf == nil {
		if root, ok := wire.ParseFingerprint(s.ExpectRoot); ok {
			o.ExpectedRoot = &root
		}
	}
	r, err := envelope.OpenResult(text, o)
	if err != nil {
		reason := "result_invalid"
		if ref := envelope.RefusalOf(err); ref != nil {
			reason = "result_" + string(ref.Reason)
		}
		return localRefusal(wire.CodeEnvelopeInvalid, reason), nil
	}
	// The newest leaf wins (§14.3): a renewed responder leaf is pinned as
	// it passes.
	if pin != nil && r.ResponderChain != nil && cert.Compare(o.PinnedLeaf, r.ResponderLeaf) == cert.Renewal {
		if err := h.d.Store.InHDTPTx(ctx, st.id.ID, func(tx db.HDTPTx) error {
			cur, err := tx.Contact(pin.Root)
			if err != nil || cur.LeafKID != pin.LeafKID {
				return err
			}
			cur.Leaf, cur.LeafKID, cur.LeafNotBefore, cur.UpdateTime = r.ResponderLeaf.Raw, r.ResponderLeaf.Fingerprint(), r.ResponderLeaf.NotBefore, h.d.Now()
			if err := tx.PutContact(cur); err != nil {
				return err
			}
			return tx.RecordAudit(db.AuditEvent{Kind: db.AuditHDTPLeafRenewed, Time: h.d.Now(), IdentityID: st.id.ID, Peer: pin.Root,
				Actor: db.ActorPeer, Detail: cur.LeafKID})
		}); err != nil {
			return nil, rpcerr.Fault(ctx, h.d.Logger, "pin renewed hdtp leaf", err)
		}
		h.d.OnAudit(db.AuditHDTPLeafRenewed)
	}
	if r.Error != nil {
		out, _ := peerRefusal(r.Error)
		return out, nil
	}
	return resultOut(r.Result, true), h.applyAnswer(ctx, st, s, r.Result)
}

// followRenewed follows a certificate_renewed once (§14.4): the chain
// must validate against the pinned root and the dialed address and be
// the same or newer than the pin; then the pin takes it and the call is
// sealed again to it.
func (h *Host) followRenewed(ctx context.Context, st *identityState, s outboundState, data json.RawMessage) (*hdtpv1.OpenOutboundResultResponse, error) {
	if s.Followed || s.Root == "" {
		return localRefusal(wire.CodeCertificateRenewed, "renewed_not_followed"), nil
	}
	var d struct {
		Chain []string `json:"chain"`
	}
	if json.Unmarshal(data, &d) != nil || len(d.Chain) != 2 {
		return localRefusal(wire.CodeCertificateRenewed, "renewed_no_chain"), nil
	}
	chain := make([][]byte, 2)
	for i, c := range d.Chain {
		var ok bool
		if chain[i], ok = wire.B64Decode(c); !ok {
			return localRefusal(wire.CodeCertificateRenewed, "renewed_no_chain"), nil
		}
	}
	pin, err := h.d.Store.GetHDTPContact(ctx, st.id.ID, s.Root)
	if err != nil {
		return localRefusal(wire.CodeCertificateRenewed, "renewed_no_pin"), nil
	}
	pinned, err := cert.Parse(pin.Leaf, cert.KindLeaf, st.gen)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "read hdtp pin", err)
	}
	vc, err := cert.FollowRenewed(pinned, s.Endpoint, chain, st.gen, h.d.Now())
	if err != nil {
		return localRefusal(wire.CodeCertificateRenewed, "renewed_chain_"+string(cert.ReasonOf(err))), nil
	}
	if cert.Compare(pinned, vc.Leaf) == cert.Renewal {
		if err := h.d.Store.InHDTPTx(ctx, st.id.ID, func(tx db.HDTPTx) error {
			cur, err := tx.Contact(pin.Root)
			if err != nil || cur.LeafKID != pin.LeafKID {
				return err
			}
			cur.Leaf, cur.LeafKID, cur.LeafNotBefore, cur.UpdateTime = vc.Leaf.Raw, vc.Leaf.Fingerprint(), vc.Leaf.NotBefore, h.d.Now()
			return tx.PutContact(cur)
		}); err != nil {
			return nil, rpcerr.Fault(ctx, h.d.Logger, "pin renewed hdtp leaf", err)
		}
	}
	if !s.ArgsKept {
		return localRefusal(wire.CodeCertificateRenewed, "renewed_seal_again"), nil
	}
	call, err := h.sealOut(st, outTarget{root: s.Root, endpoint: s.Endpoint, leaf: vc.Leaf}, s.Method, s.Tool, s.Args, s.RPCID, false, true)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "seal hdtp outbound call", err)
	}
	return &hdtpv1.OpenOutboundResultResponse{Outcome: &hdtpv1.OpenOutboundResultResponse_Resend{Resend: call}}, nil
}

// applyAnswer applies a trust tool's answer to the contact: a redeemed
// invite accepted makes the pin active with what the issuer granted.
func (h *Host) applyAnswer(ctx context.Context, st *identityState, s outboundState, result []byte) error {
	if s.Tool != toolRedeemInvite || s.Root == "" {
		return nil
	}
	var r struct {
		Status      string   `json:"status"`
		Permissions []string `json:"permissions"`
	}
	if json.Unmarshal(result, &r) != nil || r.Status != "accepted" {
		return nil
	}
	var theirs []string
	for _, p := range r.Permissions {
		if validPermission(p) && !slices.Contains(theirs, p) && len(theirs) < maxTheirPerms {
			theirs = append(theirs, p)
		}
	}
	if theirs == nil {
		theirs = []string{}
	}
	err := h.d.Store.InHDTPTx(ctx, st.id.ID, func(tx db.HDTPTx) error {
		pin, err := tx.Contact(s.Root)
		if errors.Is(err, db.ErrNotFound) || err == nil && pin.State != db.HDTPContactPendingOut {
			return nil
		}
		if err != nil {
			return err
		}
		pin.State, pin.TheirPermissions, pin.UpdateTime = db.HDTPContactActive, theirs, h.d.Now()
		if err := tx.PutContact(pin); err != nil {
			return err
		}
		return tx.RecordAudit(db.AuditEvent{Kind: db.AuditHDTPContactAccepted, Time: h.d.Now(), IdentityID: st.id.ID, Peer: s.Root,
			Actor: db.ActorPeer, Scopes: theirs})
	})
	if err != nil {
		return rpcerr.Fault(ctx, h.d.Logger, "apply hdtp redeem answer", err)
	}
	return nil
}
