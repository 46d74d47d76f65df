package hdtp

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/envelope"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/rpcerr"
)

// Bounds of OpenInbound's other fields.
const (
	maxTransportChain   = 4
	maxSourceAddress    = 64
	maxEndpointBytes    = 2048
	maxIdentityIDBytes  = 64
	replayWindowSeconds = envelope.MaxSkew
)

// identityState is what a call needs of the identity it came to.
type identityState struct {
	id      db.HDTPIdentity
	gen     wire.Generation
	leaves  []db.HDTPLeaf
	current *db.HDTPLeaf
	tools   []contentTool
}

// chainDER is the identity's current chain [leaf, root], or nil.
func (st *identityState) chainDER() [][]byte {
	if st.current == nil || st.id.RootDER == nil {
		return nil
	}
	return [][]byte{st.current.Certificate, st.id.RootDER}
}

// loadIdentity reads the identity a request names by id or endpoint.
func (h *Host) loadIdentity(ctx context.Context, identityID, endpoint string) (*identityState, error) {
	var v rpcerr.Violations
	switch {
	case (identityID == "") == (endpoint == ""):
		v.Add("identity_id", "set exactly one of identity_id and endpoint")
	case len(identityID) > maxIdentityIDBytes:
		v.Add("identity_id", "at most %d bytes", maxIdentityIDBytes)
	case len(endpoint) > maxEndpointBytes:
		v.Add("endpoint", "at most %d bytes", maxEndpointBytes)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	var id db.HDTPIdentity
	var err error
	if identityID != "" {
		id, err = h.d.Store.GetHDTPIdentity(ctx, identityID)
	} else {
		id, err = h.d.Store.GetHDTPIdentityByEndpoint(ctx, endpoint)
	}
	if errors.Is(err, db.ErrNotFound) {
		return nil, rpcerr.NotFound("identity")
	}
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "load hdtp identity", err)
	}
	leaves, err := h.d.Store.ListHDTPLeaves(ctx, id.ID)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "list hdtp leaves", err)
	}
	return &identityState{id: id, gen: generationOf(id.Generation), leaves: leaves, current: currentLeaf(leaves),
		tools: readContentTools(id.ContentTools)}, nil
}

// call is one inbound tools/list or tools/call, as far as it is known.
type call struct {
	st     *identityState
	now    time.Time
	rpcID  []byte
	method string
	name   string
	args   json.RawMessage
	source netip.Addr

	// transport is the validated TLS client chain, or nil.
	transport *cert.Chain
	// env is the opened envelope of a sealed call, or nil.
	env *envelope.Request
	// leaf is the caller's proven leaf (the envelope's sender, or the
	// transport chain's), nil for an anonymous plaintext caller; root its
	// root's fingerprint.
	leaf *cert.Certificate
	root string
	// tier is the caller's tier and pin its contact row (nil when none).
	tier tierResult
	// audited are the kinds of the audit events the call's transaction
	// recorded, for the metrics once it commits.
	audited []db.AuditKind
}

// record records an audit event about the call in its transaction.
func (h *Host) record(tx db.HDTPTx, c *call, ev db.AuditEvent) error {
	ev.Time, ev.IdentityID = c.now, c.st.id.ID
	if ev.Peer == "" {
		ev.Peer = c.root
	}
	if ev.Actor == "" {
		ev.Actor = db.ActorPeer
	}
	if err := tx.RecordAudit(ev); err != nil {
		return err
	}
	c.audited = append(c.audited, ev.Kind)
	return nil
}

func (c *call) sealed() bool { return c.env != nil }

// outcome is what OpenInbound answers.
type outcome struct {
	// result is the CallToolResult (or tools/list result) to wrap, or
	// nil when dispatch is set.
	result   []byte
	dispatch *hdtpv1.Dispatch
	code     wire.Code
	reason   string
	retry    int64
	sealed   bool
	replayed bool
	// reject answers as a refused TLS handshake would.
	reject bool
}

// OpenInbound sorts one incoming JSON-RPC request.
func (h *Host) OpenInbound(ctx context.Context, req *hdtpv1.OpenInboundRequest) (*hdtpv1.OpenInboundResponse, error) {
	var v rpcerr.Violations
	if len(req.GetBody()) > MaxInboundBodyBytes {
		v.Add("body", "at most %d bytes: answer a larger body with HTTP 413", MaxInboundBodyBytes)
	}
	if len(req.GetTransportChain()) > maxTransportChain {
		v.Add("transport_chain", "at most %d certificates", maxTransportChain)
	}
	for _, c := range req.GetTransportChain() {
		if len(c) > 2*cert.MaxBytes {
			v.Add("transport_chain", "a certificate is at most %d bytes", 2*cert.MaxBytes)
			break
		}
	}
	var source netip.Addr
	if s := req.GetSourceAddress(); s != "" {
		a, err := netip.ParseAddr(s)
		if len(s) > maxSourceAddress || err != nil || a.Zone() != "" {
			v.Add("source_address", "must be an IPv4 or IPv6 address without port or zone")
		}
		source = a
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	st, err := h.loadIdentity(ctx, req.GetIdentityId(), req.GetEndpoint())
	if err != nil {
		return nil, err
	}
	c := &call{st: st, now: h.d.Now(), source: source}
	rpc, fail := parseRPC(req.GetBody())
	if fail != nil {
		h.m.inbound(fail.reason, "")
		return respond(&hdtpv1.Respond{Body: fail.body, Reason: fail.reason}), nil
	}
	c.rpcID, c.method, c.name, c.args = rpc.id, rpc.method, rpc.name, rpc.args
	if chain := req.GetTransportChain(); len(chain) > 0 {
		tc, err := cert.VerifyChain(chain, cert.ChainOptions{Generation: st.gen, Now: c.now})
		if err != nil {
			reason := "transport_chain_" + string(cert.ReasonOf(err))
			h.m.inbound(reason, "")
			h.d.Logger.InfoContext(ctx, "hdtp transport chain refused", slog.String("identity_id", st.id.ID), slog.String("reason", reason))
			return &hdtpv1.OpenInboundResponse{Outcome: &hdtpv1.OpenInboundResponse_Reject{Reject: &hdtpv1.Reject{Reason: reason}}}, nil
		}
		c.transport = tc
	}
	out, err := h.open(ctx, c)
	if err != nil {
		return nil, err
	}
	return h.finish(ctx, c, out), nil
}

// finish turns an outcome into the response, with its metrics and log.
func (h *Host) finish(ctx context.Context, c *call, out *outcome) *hdtpv1.OpenInboundResponse {
	tool := c.name
	if c.env != nil {
		tool = envelopeTool(c.env)
	}
	h.m.inbound(out.reason, string(out.code))
	if out.code != "" {
		h.d.Logger.InfoContext(ctx, "hdtp call refused", slog.String("identity_id", c.st.id.ID), slog.String("code", string(out.code)),
			slog.String("reason", out.reason), slog.String("tool", boundedName(tool)), slog.String("caller_root", c.root))
	}
	if out.dispatch != nil {
		return &hdtpv1.OpenInboundResponse{Outcome: &hdtpv1.OpenInboundResponse_Dispatch{Dispatch: out.dispatch}}
	}
	if out.reject {
		return &hdtpv1.OpenInboundResponse{Outcome: &hdtpv1.OpenInboundResponse_Reject{Reject: &hdtpv1.Reject{Reason: out.reason}}}
	}
	return respond(&hdtpv1.Respond{Body: rpcResultBody(c.rpcID, out.result), Code: string(out.code), Reason: out.reason,
		RetryAfterSeconds: int32(out.retry), Sealed: out.sealed, Replayed: out.replayed, Tier: c.tier.tier, CallerRoot: c.root})
}

func respond(r *hdtpv1.Respond) *hdtpv1.OpenInboundResponse {
	return &hdtpv1.OpenInboundResponse{Outcome: &hdtpv1.OpenInboundResponse_Respond{Respond: r}}
}

// boundedName keeps a peer-chosen tool name short in a log line.
func boundedName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// envelopeTool is the tool a sealed request names ("tools/list" for a
// listing).
func envelopeTool(r *envelope.Request) string {
	if r.Method == "tools/list" {
		return "tools/list"
	}
	name, _, _ := callParams(r.Params)
	return name
}

// plaintext is a refusal answered in plaintext, before the caller is
// admitted (P1, P2, §13.3 steps 1 to 9, the guest binding).
func plaintext(code wire.Code, reason string, data []byte) *outcome {
	return &outcome{result: toolRefusal(refusal{code: code, data: data}.object()), code: code, reason: reason}
}

// open runs the order up to admission: the plaintext checks, the
// envelope, the caller's proof; then admit runs the rest in one
// transaction.
func (h *Host) open(ctx context.Context, c *call) (*outcome, error) {
	st := c.st
	if c.method == "tools/call" && c.name == toolSealedCall {
		// P1: the seal policy, then the client-certificate posture.
		if st.id.Seal == "none" {
			return plaintext(wire.CodeSealNotAccepted, "seal_none", nil), nil
		}
		if st.id.ClientCert == "required" && c.transport == nil {
			return plaintext(wire.CodeIdentityRequired, "client_cert_required", nil), nil
		}
		// P2: the source address's budget, before anything is opened.
		if b := h.budgets(st).source(st.id.ID, c.source); b != nil {
			ok, wait, err := h.d.Store.PeekHDTPBucket(ctx, *b, c.now)
			if err != nil {
				return nil, rpcerr.Fault(ctx, h.d.Logger, "peek hdtp source budget", err)
			}
			if !ok {
				r := retryAfter(wait)
				return &outcome{result: toolRefusal(refusal{code: wire.CodeRateLimited, retryAfter: r}.object()), code: wire.CodeRateLimited,
					reason: "source_budget", retry: r}, nil
			}
		}
		return h.openSealed(ctx, c)
	}
	// A plaintext call: the transport chain is the only proof.
	if c.transport != nil {
		c.leaf, c.root = c.transport.Leaf, c.transport.Root.Fingerprint()
	}
	if c.method == "tools/call" {
		if c.transport == nil {
			return plaintext(wire.CodeIdentityRequired, "no_identity", nil), nil
		}
		if st.id.Seal == "required" {
			return plaintext(wire.CodeSealRequired, "seal_required", nil), nil
		}
	}
	return h.admit(ctx, c)
}

// openSealed opens a sealed_call's envelope (§13.3 steps 1 to 9) and
// checks the guest binding.
func (h *Host) openSealed(ctx context.Context, c *call) (*outcome, error) {
	st := c.st
	oi := &openIdentity{h: h, ctx: ctx, st: st, now: c.now}
	var transportLeaf *cert.Certificate
	if c.transport != nil {
		transportLeaf = c.transport.Leaf
	}
	r, err := envelope.OpenRequest(c.args, envelope.OpenOptions{Generation: st.gen, Now: c.now, Identity: oi, TransportLeaf: transportLeaf})
	if oi.err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "open hdtp envelope", oi.err)
	}
	if err != nil {
		ref := envelope.RefusalOf(err)
		if ref == nil {
			return nil, rpcerr.Fault(ctx, h.d.Logger, "open hdtp envelope", err)
		}
		reason := "envelope_" + string(ref.Reason)
		switch ref.Code {
		case wire.CodeChainRequired:
			// Charged to the source's budget (§12); the answer is the same
			// whether or not a token was there.
			if b := h.budgets(st).source(st.id.ID, c.source); b != nil {
				if err := h.d.Store.InHDTPTx(ctx, st.id.ID, func(tx db.HDTPTx) error {
					_, _, err := tx.Take(c.now, *b)
					return err
				}); err != nil {
					return nil, rpcerr.Fault(ctx, h.d.Logger, "charge hdtp source budget", err)
				}
			}
			return plaintext(wire.CodeChainRequired, reason, nil), nil
		case wire.CodeCertificateRenewed:
			return plaintext(wire.CodeCertificateRenewed, reason, chainData(ref.Chain)), nil
		}
		return plaintext(ref.Code, reason, nil), nil
	}
	c.env, c.leaf = r, r.SenderLeaf
	if r.SenderChain != nil {
		c.root = r.SenderChain.Root.Fingerprint()
	} else {
		c.root = r.SenderLeaf.AuthorityKeyID.Fingerprint()
	}
	c.method = r.Method
	if r.Method == "tools/call" {
		name, args, ok := callParams(r.Params)
		if !ok {
			return plaintext(wire.CodeEnvelopeInvalid, "envelope_params", nil), nil
		}
		c.name, c.args = name, args
	} else {
		c.name, c.args = "", nil
	}
	return h.admit(ctx, c)
}

// chainData is certificate_renewed's data: {"chain":[leaf, root]}.
func chainData(chain [][]byte) []byte {
	return []byte(`{"chain":["` + wire.B64Encode(chain[0]) + `","` + wire.B64Encode(chain[1]) + `"]}`)
}

// openIdentity is the identity as the open order asks of it.
type openIdentity struct {
	h   *Host
	ctx context.Context
	st  *identityState
	now time.Time
	// err is a store or key fault met on the way (the open order has no
	// place for one): the call fails with it.
	err error
}

// ResolveKid finds the kid in the identity's own ledger: a sibling
// identity's kid is not there, and answers as one never held.
func (o *openIdentity) ResolveKid(kid wire.KeyID) (envelope.KidState, *envelope.Recipient, [][]byte) {
	fp := kid.Fingerprint()
	for _, l := range o.st.leaves {
		if l.KID != fp || l.State == db.HDTPLeafPending {
			continue
		}
		held := l.SealedKey != nil && (l.State == db.HDTPLeafCurrent || l.State == db.HDTPLeafSuperseded) && !o.now.After(l.NotAfter)
		if !held {
			return envelope.KidFormer, nil, o.st.chainDER()
		}
		leaf, err := cert.Parse(l.Certificate, cert.KindLeaf, o.st.gen)
		if err != nil {
			o.err = err
			return envelope.KidUnknown, nil, nil
		}
		signer, err := o.h.ids.openKey(l)
		if err != nil {
			o.err = err
			return envelope.KidUnknown, nil, nil
		}
		key, err := envelope.RecipientPrivateKey(signer)
		if err != nil {
			o.err = err
			return envelope.KidUnknown, nil, nil
		}
		return envelope.KidHeld, &envelope.Recipient{Leaf: leaf, Key: key}, nil
	}
	return envelope.KidUnknown, nil, nil
}

// PinnedLeaf finds a sender leaf among the pins of active and pending
// contacts, never a blocked one.
func (o *openIdentity) PinnedLeaf(kid wire.KeyID) *cert.Certificate {
	c, err := o.h.d.Store.GetHDTPContactByLeaf(o.ctx, o.st.id.ID, kid.Fingerprint())
	if errors.Is(err, db.ErrNotFound) || err == nil && c.State == db.HDTPContactBlocked {
		return nil
	}
	if err != nil {
		o.err = err
		return nil
	}
	leaf, err := cert.Parse(c.Leaf, cert.KindLeaf, o.st.gen)
	if err != nil {
		return nil
	}
	return leaf
}

// currentSigner opens the identity's current leaf key.
func (h *Host) currentSigner(st *identityState) (crypto.Signer, error) {
	if st.current == nil {
		return nil, errors.New("the identity has no current leaf")
	}
	return h.ids.openKey(*st.current)
}

// answer makes the CallToolResult of a result (or error object when
// isError) to the call: plaintext, or sealed back to the caller's leaf
// with the request envelope's msg_id.
func (h *Host) answer(c *call, body []byte, isError bool) ([]byte, error) {
	if !c.sealed() {
		if isError {
			return toolRefusal(body), nil
		}
		return toolResult(body), nil
	}
	return h.sealAnswer(c.st, c.leaf, c.env.Header.MsgID, h.fullForm(c), body, isError, c.now)
}

// fullForm is whether an answer carries the identity's chain: unless the
// caller is a contact that sealed to the current leaf (so it holds it).
func (h *Host) fullForm(c *call) bool {
	return c.tier.tier != hdtpv1.Tier_TIER_CONTACT || c.st.current == nil || c.env.Header.Kid.Fingerprint() != c.st.current.KID
}

// sealAnswer seals a result plaintext to recipient.
func (h *Host) sealAnswer(st *identityState, recipient *cert.Certificate, msgID string, full bool, body []byte, isError bool,
	now time.Time) ([]byte, error) {
	signer, err := h.currentSigner(st)
	if err != nil {
		return nil, err
	}
	from := envelope.Sender{Chain: st.chainDER()}
	if !full {
		k := wire.KeyIDOf(mustSPKI(signer))
		from = envelope.Sender{Leaf: &k}
	}
	pt, err := envelope.ResultPlaintext(body, isError, from)
	if err != nil {
		return nil, err
	}
	env, err := envelope.Seal(envelope.SealOptions{Generation: st.gen, Recipient: recipient, Sender: signer, Result: true, MsgID: msgID,
		Now: now, Plaintext: pt})
	if err != nil {
		return nil, err
	}
	return toolResult(env.JSON()), nil
}

func mustSPKI(s crypto.Signer) []byte {
	spki, _ := cert.SPKIOf(s.Public()) // a key openKey returned always encodes
	return spki
}

// admit runs the rest of the order in one transaction: the tier (§6.1),
// the envelope replay record (step 10), the budget, tier gating, the
// arguments and the inner idempotency key (step 11), and the trust tool's
// effects.
func (h *Host) admit(ctx context.Context, c *call) (*outcome, error) {
	var out *outcome
	err := h.d.Store.InHDTPTx(ctx, c.st.id.ID, func(tx db.HDTPTx) error {
		c.audited = c.audited[:0]
		var err error
		out, err = h.admitTx(ctx, tx, c)
		return err
	})
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "admit hdtp call", err)
	}
	for _, k := range c.audited {
		h.d.OnAudit(k)
	}
	return out, nil
}

func (h *Host) admitTx(ctx context.Context, tx db.HDTPTx, c *call) (*outcome, error) {
	st := c.st
	// The tier, and (in an envelope) the guest binding: plaintext
	// refusals, nothing recorded.
	t, err := h.resolveTier(tx, c)
	if err != nil {
		return nil, err
	}
	c.tier = t
	if t.refuse != nil {
		return t.refuse, nil
	}
	if ref := h.guestBinding(c); ref != nil {
		return ref, nil
	}
	// Step 10: the envelope replay record.
	var key db.HDTPReplayKey
	if c.sealed() {
		key = db.HDTPReplayKey{SenderRoot: c.root, MsgID: c.env.Header.MsgID}
		expire := time.Unix(min(c.env.Header.Exp, c.env.Header.Ts+replayWindowSeconds), 0)
		r, claimed, err := tx.ClaimReplay(key, expire)
		if err != nil {
			return nil, err
		}
		if !claimed {
			return h.replayed(tx, c, key, r)
		}
	}
	// The tier's effects: a renewed leaf re-pinned as it passes, a move
	// accepted under "auto".
	if err := h.applyTier(tx, c); err != nil {
		return nil, err
	}
	// Step 11: the budget.
	var buckets []db.HDTPBucket
	if t.tier == hdtpv1.Tier_TIER_CONTACT {
		buckets = h.budgets(st).contact(st.id.ID, c.root)
	} else {
		buckets = []db.HDTPBucket{h.budgets(st).guest(st.id.ID, c.source, c.root)}
	}
	ok, wait, err := tx.Take(c.now, buckets...)
	if err != nil {
		return nil, err
	}
	var res toolOutcome
	if !ok {
		r := retryAfter(wait)
		res = toolOutcome{ref: &refusal{code: wire.CodeRateLimited, retryAfter: r, reason: "budget"}}
	} else if c.method == "tools/list" {
		res = toolOutcome{list: toolsList(t.tier, st.id.Seal, t.permissions(), st.tools)}
	} else {
		res, err = h.runTool(ctx, tx, c)
		if err != nil {
			return nil, err
		}
	}
	if res.dispatch != nil {
		if c.sealed() {
			if err := tx.SetReplayCall(key, res.dispatch.callID); err != nil {
				return nil, err
			}
		}
		return h.dispatchOutcome(c, res.dispatch), nil
	}
	if res.callID != "" && c.sealed() {
		// The inner msg_id's call is in flight: this envelope follows it.
		if err := tx.SetReplayCall(key, res.callID); err != nil {
			return nil, err
		}
	}
	out, err := h.toolAnswer(c, res)
	if err != nil {
		return nil, err
	}
	if c.sealed() && !res.inFlight {
		if out.result, err = tx.SetReplayAnswer(key, out.result); err != nil {
			return nil, err
		}
	}
	switch {
	case res.audit != nil:
		if err := h.record(tx, c, *res.audit); err != nil {
			return nil, err
		}
	case res.ref != nil && res.ref.code != wire.CodeRateLimited && c.tier.pin != nil && c.tier.tier != hdtpv1.Tier_TIER_GUEST:
		// A refusal to a pinned caller (contact, pending, new address).
		// A guest's refusals and budget refusals are counted in metrics
		// and logs only: fresh roots cost a stranger nothing, so rows per
		// guest refusal would let anyone grow the trail.
		if err := h.record(tx, c, db.AuditEvent{Kind: db.AuditHDTPRefused, Detail: string(res.ref.code) + " " + out.reason}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// toolOutcome is what a tool (or tools/list) came to.
type toolOutcome struct {
	// result is a trust tool's result object; list a tools/list result.
	result []byte
	list   []byte
	// ref is a refusal.
	ref *refusal
	// dispatch is a content tool to hand to the host.
	dispatch *dispatchCall
	// callID is an in-flight call an inner msg_id is bound to (with ref
	// unavailable, inFlight true); stored answers come through result.
	callID   string
	inFlight bool
	// stored is a stored inner result being answered again (result or
	// error object, by storedIsError).
	stored        []byte
	storedIsError bool
	// reason names what answered, for logs and metrics.
	reason string
	// audit is the trust change to record, if any.
	audit *db.AuditEvent
}

// dispatchCall is a content tool call admitted for dispatch.
type dispatchCall struct {
	callID string
	msgID  string
	tool   string
	args   json.RawMessage
}

// toolAnswer turns a tool outcome into the answer.
func (h *Host) toolAnswer(c *call, res toolOutcome) (*outcome, error) {
	out := &outcome{sealed: c.sealed(), reason: res.reason}
	var body []byte
	isError := false
	switch {
	case res.list != nil:
		if !c.sealed() {
			out.result = res.list
			out.reason = "tools_list"
			return out, nil
		}
		body, out.reason = res.list, "tools_list"
	case res.ref != nil:
		body, isError = res.ref.object(), true
		out.code, out.retry = res.ref.code, res.ref.retryAfter
		if out.reason == "" {
			out.reason = res.ref.reason
		}
	case res.stored != nil:
		body, isError = res.stored, res.storedIsError
		out.replayed = true
		if isError {
			out.code = codeOf(res.stored)
		}
	default:
		body = res.result
	}
	var err error
	out.result, err = h.answer(c, body, isError)
	return out, err
}

// codeOf reads an error object's code.
func codeOf(obj []byte) wire.Code {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(obj, &e)
	return wire.Code(e.Code)
}

// replayed answers a duplicate envelope (step 10): its stored answer, the
// answer of the call it led to once completed (stored then, so every later
// duplicate gets the same bytes), or "unavailable" while that call is in
// flight (never a second dispatch). Nothing is charged.
func (h *Host) replayed(tx db.HDTPTx, c *call, key db.HDTPReplayKey, r db.HDTPReplay) (*outcome, error) {
	if r.Answer != nil {
		return &outcome{result: r.Answer, sealed: true, replayed: true, reason: "replay", code: answerCode(r.Answer)}, nil
	}
	if r.CallID != "" {
		call, err := tx.Call(r.CallID)
		if err != nil {
			return nil, err
		}
		if call.State != db.HDTPCallDispatched {
			res, err := h.answer(c, call.Result, call.IsError)
			if err != nil {
				return nil, err
			}
			stored, err := tx.SetReplayAnswer(key, res)
			if err != nil {
				return nil, err
			}
			out := &outcome{result: stored, sealed: true, replayed: true, reason: "replay"}
			if call.IsError {
				out.code = codeOf(call.Result)
			}
			return out, nil
		}
	}
	res, err := h.answer(c, refusal{code: wire.CodeUnavailable}.object(), true)
	if err != nil {
		return nil, err
	}
	return &outcome{result: res, sealed: true, replayed: true, code: wire.CodeUnavailable, reason: "in_flight"}, nil
}

// answerCode is the code of a stored plaintext refusal, "" otherwise
// (a sealed answer's code is inside the envelope).
func answerCode(result []byte) wire.Code {
	if !bytes.HasPrefix(result, []byte(`{"isError":true`)) {
		return ""
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || len(r.Content) != 1 {
		return ""
	}
	return codeOf([]byte(r.Content[0].Text))
}

// dispatchOutcome is the dispatch of an admitted content tool call.
func (h *Host) dispatchOutcome(c *call, d *dispatchCall) *outcome {
	exp := c.now.Add(callHandleLifetime)
	pin := c.tier.pin
	out := &hdtpv1.Dispatch{CallHandle: h.keys.sealCall(d.callID, c.st.id.ID, exp), HandleExpireTime: timestamppb.New(exp),
		Tier: c.tier.tier, CallerRoot: c.root, CallerKid: c.leaf.Fingerprint(), Tool: d.tool, ArgumentsJson: string(d.args),
		Permissions: c.tier.permissions(), MsgId: d.msgID, Sealed: c.sealed()}
	if pin != nil {
		out.CallerEndpoint, out.CallerDisplayName = pin.Endpoint, pin.DisplayName
	}
	return &outcome{dispatch: out, reason: "dispatch"}
}

// newCallID names a dispatched call.
func newCallID(now time.Time) string { return ids.New("hcl_", now) }
