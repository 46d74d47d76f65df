package hdtp

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/jws"
	"pactd.dev/pactd/internal/rpcerr"
)

// Bounds of a completion.
const (
	maxResultBytes = 1 << 20
	maxRefusalData = 4 << 10
	maxRetryAfter  = 86400
)

// hostRefusalCodes are the codes a content tool may refuse with.
var hostRefusalCodes = map[string]bool{
	string(wire.CodeBadRequest): true, string(wire.CodeTooLarge): true, string(wire.CodeUnavailable): true,
	string(wire.CodeRateLimited): true, string(wire.CodePermissionDenied): true,
}

// CompleteInbound stores a dispatched call's outcome and returns its
// answer.
func (h *Host) CompleteInbound(ctx context.Context, req *hdtpv1.CompleteInboundRequest) (*hdtpv1.CompleteInboundResponse, error) {
	now := h.d.Now()
	callID, identityID, err := h.keys.openCall(req.GetCallHandle(), now)
	if errors.Is(err, errHandleExpired) {
		h.m.completions.WithLabelValues("handle_expired").Inc()
		return nil, precondition("the call handle has expired: the call's outcome stays unknown, and duplicates are answered unavailable",
			"refusal", "handle_expired")
	}
	if err != nil {
		h.m.completions.WithLabelValues("handle_invalid").Inc()
		return nil, rpcerr.InvalidField("call_handle", "is not a handle pactd issued")
	}
	body, isError, err := completionBody(req)
	if err != nil {
		return nil, err
	}
	st, err := h.loadIdentity(ctx, identityID, "")
	if connect.CodeOf(err) == connect.CodeNotFound {
		return nil, precondition("the identity is gone", "refusal", "identity_gone")
	} else if err != nil {
		return nil, err
	}
	var resp *hdtpv1.CompleteInboundResponse
	var audited []db.AuditKind
	err = h.d.Store.InHDTPTx(ctx, identityID, func(tx db.HDTPTx) error {
		audited = audited[:0]
		call, err := tx.Call(callID)
		if err != nil {
			return err
		}
		if call.State != db.HDTPCallDispatched {
			answer, err := h.storedAnswer(tx, st, call)
			resp = &hdtpv1.CompleteInboundResponse{Body: rpcResultBody([]byte(call.RPCID), answer), Sealed: call.ReplyLeaf != nil,
				AlreadyCompleted: true}
			return err
		}
		state := db.HDTPCallCompleted
		if isError {
			state = db.HDTPCallFailed
		}
		if ok, err := tx.FinishCall(call.ID, state, body, isError, now); err != nil || !ok {
			return errors.Join(err, errors.New("the call was finished meanwhile")) // the identity's lock makes this unreachable
		}
		call.State, call.Result, call.IsError = state, body, isError
		if !isError {
			if thread, _, ok := readArgs(body).str("thread_id"); ok && thread != "" && len(thread) <= maxThreadBytes {
				if err := tx.AddThread(thread, call.CallerRoot, now); err != nil {
					return err
				}
			}
		} else {
			ev := db.AuditEvent{Kind: db.AuditHDTPRefused, Time: now, IdentityID: identityID, Peer: call.CallerRoot, Actor: db.ActorFrontend,
				Detail: string(codeOf(body)) + " host_" + call.Tool}
			if err := tx.RecordAudit(ev); err != nil {
				return err
			}
			audited = append(audited, ev.Kind)
		}
		answer, err := h.storedAnswer(tx, st, call)
		resp = &hdtpv1.CompleteInboundResponse{Body: rpcResultBody([]byte(call.RPCID), answer), Sealed: call.ReplyLeaf != nil}
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		h.m.completions.WithLabelValues("call_gone").Inc()
		return nil, precondition("the call is no longer held", "refusal", "call_gone")
	}
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "complete hdtp call", err)
	}
	for _, k := range audited {
		h.d.OnAudit(k)
	}
	result := "completed"
	switch {
	case resp.AlreadyCompleted:
		result = "already_completed"
	case isError:
		result = "failed"
	}
	h.m.completions.WithLabelValues(result).Inc()
	h.d.Logger.InfoContext(ctx, "hdtp call completed", slog.String("identity_id", identityID), slog.String("call_id", callID),
		slog.String("result", result))
	return resp, nil
}

// completionBody reads the host's outcome: a result object, or a refusal
// as the §12 error object.
func completionBody(req *hdtpv1.CompleteInboundRequest) (body []byte, isError bool, err error) {
	switch o := req.GetOutcome().(type) {
	case *hdtpv1.CompleteInboundRequest_ResultJson:
		if len(o.ResultJson) > maxResultBytes {
			return nil, false, rpcerr.InvalidField("result_json", "at most %d bytes", maxResultBytes)
		}
		c, err := jws.Canonical([]byte(o.ResultJson), maxJSONDepth)
		if err != nil || !isObject(c) {
			return nil, false, rpcerr.InvalidField("result_json", "must be one JSON object (unique member names, valid UTF-8)")
		}
		// The host's own text, as it wrote it: members in its order.
		return []byte(o.ResultJson), false, nil
	case *hdtpv1.CompleteInboundRequest_Refusal:
		r := o.Refusal
		var v rpcerr.Violations
		if !hostRefusalCodes[r.GetCode()] {
			v.Add("refusal.code", "is bad_request, too_large, unavailable, rate_limited or permission_denied")
		}
		ref := refusal{code: wire.Code(r.GetCode())}
		if r.GetCode() == string(wire.CodeRateLimited) {
			if n := r.GetRetryAfterSeconds(); n < 1 || n > maxRetryAfter {
				v.Add("refusal.retry_after_seconds", "rate_limited needs 1 to %d", maxRetryAfter)
			}
			ref.retryAfter = int64(r.GetRetryAfterSeconds())
		} else if r.GetRetryAfterSeconds() != 0 {
			v.Add("refusal.retry_after_seconds", "only rate_limited carries retry_after")
		}
		if d := r.GetDataJson(); d != "" {
			c, err := jws.Canonical([]byte(d), maxJSONDepth)
			if len(d) > maxRefusalData || err != nil || !isObject(c) {
				v.Add("refusal.data_json", "must be one JSON object of at most %d bytes", maxRefusalData)
			}
			ref.data = c
		}
		if err := v.Err(); err != nil {
			return nil, false, err
		}
		return ref.object(), true, nil
	}
	return nil, false, rpcerr.InvalidField("outcome", "set result_json or refusal")
}

// storedAnswer is a finished call's answer to the request that dispatched
// it: its envelope replay record's answer when sealed (written now if it
// is the first, so every later duplicate gets these bytes), else the
// plaintext CallToolResult.
func (h *Host) storedAnswer(tx db.HDTPTx, st *identityState, call db.HDTPCall) ([]byte, error) {
	if call.ReplyLeaf == nil {
		if call.IsError {
			return toolRefusal(call.Result), nil
		}
		return toolResult(call.Result), nil
	}
	key := db.HDTPReplayKey{SenderRoot: call.CallerRoot, MsgID: call.EnvMsgID}
	if r, err := tx.Replay(key); err == nil && r.Answer != nil {
		return r.Answer, nil
	}
	leaf, err := cert.Parse(call.ReplyLeaf, cert.KindLeaf, st.gen)
	if err != nil {
		return nil, err
	}
	answer, err := h.sealAnswer(st, leaf, call.EnvMsgID, call.ReplyChain, call.Result, call.IsError, h.d.Now())
	if err != nil {
		return nil, err
	}
	stored, err := tx.SetReplayAnswer(key, answer)
	if errors.Is(err, db.ErrNotFound) {
		return answer, nil // the record's window has passed: no duplicate can come
	}
	return stored, err
}
