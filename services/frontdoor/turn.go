package frontdoor

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/internal/jcs"
	"pactd.dev/pactd/internal/rpcerr"
)

// handleSlack is how long a turn handle outlives the turn timeout: the
// frontend's call to FinishTurn after an agent that used all its time.
const handleSlack = 30 * time.Second

// MaxHandleLife is the longest a turn handle lasts: MaxTurnTimeout plus
// the slack. The conversation service lets a turn's claim be taken over
// once it is older than its stale-claim age, so that age must be above
// this, or a run still in time could lose its turn (TestTurnTimeoutIsCapped
// checks).
const MaxHandleLife = MaxTurnTimeout + handleSlack

// maxHandleBytes bounds a turn handle FinishTurn reads.
const maxHandleBytes = 4 << 10

// turnState is what a turn handle carries: everything FinishTurn needs to
// complete, step up, sign or release the turn, under pactd's MAC.
type turnState struct {
	BrandID   string `json:"b"`
	AgentID   string `json:"a"`
	Subject   string `json:"s"`
	Issuer    string `json:"i"`
	ContextID string `json:"c"`
	MessageID string `json:"m"`
	GrantID   string `json:"g,omitempty"`
	BrandUser string `json:"u,omitempty"`
	// Claim is the conversation service's id of this run's claim of the
	// turn: FinishTurn completes or releases this run only.
	Claim   string `json:"k,omitempty"`
	Expires int64  `json:"x"`
}

func (t turnState) owner() *pactv1.Owner {
	return &pactv1.Owner{BrandId: t.BrandID, AgentId: t.AgentID, Subject: t.Subject}
}

// handles seals and opens turn handles: base64url(JSON) "." base64url(HMAC-
// SHA256), under a key every replica derives from the same secret.
type handles struct {
	key []byte
	now func() time.Time
}

const handleDomain = "pactd turn handle v1\x00"

func (h *handles) mac(payload string) []byte {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(handleDomain))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

func (h *handles) seal(t turnState) (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	p := base64.RawURLEncoding.EncodeToString(b)
	return p + "." + base64.RawURLEncoding.EncodeToString(h.mac(p)), nil
}

// errHandleExpired is open's answer for an authentic handle past its time.
var errHandleExpired = errors.New("the turn handle has expired")

// open checks a handle's MAC and returns its state; an expired handle is
// returned with errHandleExpired, so its turn can still be released. Only
// the handle exactly as sealed opens: Go's base64 decoders skip CR and LF
// even in strict mode, so both parts are checked to be base64url first.
func (h *handles) open(s string) (turnState, error) {
	p, sig, ok := strings.Cut(s, ".")
	if !ok || len(s) > maxHandleBytes || !isBase64URL(p) || !isBase64URL(sig) {
		return turnState{}, errors.New("the turn handle is not one pactd issued")
	}
	mac, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(mac, h.mac(p)) {
		return turnState{}, errors.New("the turn handle is not one pactd issued")
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(p)
	var t turnState
	if err != nil || json.Unmarshal(b, &t) != nil {
		return turnState{}, errors.New("the turn handle is not one pactd issued")
	}
	if !h.now().Before(time.Unix(t.Expires, 0)) {
		return t, errHandleExpired
	}
	return t, nil
}

// isBase64URL reports whether s is made of the base64url alphabet only
// (RFC 4648 §5, no padding).
func isBase64URL(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// reply is the agent's answer in pactd's terms.
type reply struct {
	text       string
	needScopes []string
	scopesUsed []string
	actions    []*pactv1.ReceiptAction
	metadata   map[string]json.RawMessage // canonical JSON values, no "pact." keys
}

// refusal is an SDK's A2A error that passes on to the PA in PACT's exact
// envelope (the turn is released).
type refusal struct {
	reason  a2aerr.Reason
	message string
}

func (r *refusal) Error() string {
	return "the agent refused the turn: " + string(r.reason) + ": " + r.message
}

// FinishTurn completes a turn Serve handed out with the agent's answer.
// Every answer but a stored reply releases the turn, so the PA may send
// the messageId again; a panic on the way (in a service the front door
// calls) is logged once and answers INTERNAL, and releases it too. A
// refused call (a handle pactd did not issue, no result) changes nothing.
//
// A handle finishes its turn once. Finished again, whatever the result,
// the turn keeps its first reply (the conversation refuses another, and
// refuses to release a replied turn, which is logged) and the answer is
// INTERNAL; a retry of the messageId still gets the first reply. A handle
// carries its run's claim of the turn, so it finishes that run only: after
// a finish that released the turn, or once a stale claim was taken over,
// the handle can neither complete nor release a later run of the
// messageId (the conversation refuses it, which is logged, and the answer
// is INTERNAL); that run's own handle finishes it.
func (s *Service) FinishTurn(ctx context.Context, req *pactv1.FinishTurnRequest) (*pactv1.FinishTurnResponse, error) {
	t, err := s.turns.open(req.GetHandle())
	expired := errors.Is(err, errHandleExpired)
	if err != nil && !expired {
		return nil, rpcerr.InvalidField("handle", "%s", err.Error())
	}
	if !expired && req.GetResult() == nil {
		return nil, rpcerr.InvalidField("result", "set one of reply, sdk_answer or failure")
	}
	rec := newRecorder()
	stored := false
	if s.caught(ctx, func() { stored = s.finish(ctx, rec, t, req, expired) }) {
		rec.reset()
		internalError(rec)
		stored = false
	}
	if !stored {
		// A failed or refused turn, or a step-up (which the spec does not
		// store): release the messageId, with a context of its own (the
		// caller's may be about to end).
		s.caught(ctx, func() {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if _, aerr := s.d.Turns.AbandonTurn(actx, &pactv1.AbandonTurnRequest{Owner: t.owner(), ContextId: t.ContextID, MessageId: t.MessageID, Claim: t.Claim}); aerr != nil {
				s.d.Logger.ErrorContext(ctx, "abandon turn", slog.String("error", aerr.Error()))
			}
		})
	}
	return &pactv1.FinishTurnResponse{Response: rec.response()}, nil
}

// finish writes the answer to the turn into rec: the stored reply, the
// step-up task, the SDK's refusal, or INTERNAL. It reports whether the
// reply was stored.
func (s *Service) finish(ctx context.Context, rec *recorder, t turnState, req *pactv1.FinishTurnRequest, expired bool) bool {
	var rp reply
	err := errHandleExpired
	if !expired {
		switch r := req.GetResult().(type) {
		case *pactv1.FinishTurnRequest_Reply:
			rp, err = agentReply(r.Reply)
		case *pactv1.FinishTurnRequest_SdkAnswer:
			rp, err = sdkReply(r.SdkAnswer)
		case *pactv1.FinishTurnRequest_Failure:
			// Set, even when empty: an exception's text may be.
			cause := r.Failure
			if cause == "" {
				cause = "(no cause given)"
			}
			err = errors.New("the agent failed: " + clip(cause))
		}
	}
	var out []byte
	stored := false
	if err == nil && len(rp.needScopes) > 0 {
		out, err = s.stepUp(ctx, t, rp.needScopes)
	}
	if err == nil && out == nil {
		out, err = s.complete(ctx, t, rp)
		stored = err == nil
	}
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		writeError(rec, ref.reason, ref.message)
	case err != nil:
		s.d.Logger.ErrorContext(ctx, "run turn", slog.String("brand", t.BrandID), slog.String("error", err.Error()))
		internalError(rec)
	default:
		writeA2A(rec, http.StatusOK, out)
	}
	return stored
}

// caught runs f and reports whether it panicked; the panic is logged once,
// with its stack.
func (s *Service) caught(ctx context.Context, f func()) (panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			s.d.Logger.ErrorContext(ctx, "front door panic", slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			panicked = true
		}
	}()
	f()
	return false
}

// clip shortens a text for the log: a panic's message may hold a stack.
func clip(s string) string {
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

// agentReply checks an AgentReply.
func agentReply(a *pactv1.AgentReply) (reply, error) {
	r := reply{text: a.GetText(), needScopes: a.GetNeedScopes(), scopesUsed: a.GetScopesUsed(), actions: a.GetActions()}
	if a.GetMetadataJson() == "" {
		return r, nil
	}
	meta, err := metadataObject([]byte(a.GetMetadataJson()))
	if err != nil {
		return reply{}, fmt.Errorf("the agent's metadata_json: %w", err)
	}
	r.metadata = meta
	return r, nil
}

// metadataObject reads a JSON object of reply metadata: each value in its
// RFC 8785 canonical form (so the bytes do not depend on the language that
// wrote them), keys starting with "pact." dropped.
func metadataObject(b []byte) (map[string]json.RawMessage, error) {
	canon, err := jcs.Canonicalize(b)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(canon, &raw); err != nil || raw == nil {
		return nil, errors.New("metadata must be a JSON object")
	}
	out := map[string]json.RawMessage{}
	for k, v := range raw {
		if !strings.HasPrefix(k, "pact.") {
			out[k] = v
		}
	}
	return out, nil
}

// stepUp builds the AUTH_REQUIRED task of PACT §5.5 for scopes the turn
// needs. It returns nil, nil when the Brand offers no delegation, so the
// agent's text answers instead.
func (s *Service) stepUp(ctx context.Context, t turnState, need []string) ([]byte, error) {
	su, err := s.d.Delegation.StartStepUp(ctx, &pactv1.StartStepUpRequest{
		BrandId: t.BrandID, AgentId: t.AgentID, ContextId: t.ContextID, MissingScopes: need,
	})
	if connect.CodeOf(err) == connect.CodeFailedPrecondition {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	wants := make([]string, 0, len(su.GetScopes()))
	for _, sc := range su.GetScopes() {
		wants = append(wants, sc.GetDescription())
	}
	type status struct {
		State   string  `json:"state"`
		Message message `json:"message"`
	}
	type task struct {
		ID        string         `json:"id"`
		ContextID string         `json:"contextId"`
		Status    status         `json:"status"`
		Metadata  map[string]any `json:"metadata"`
	}
	text := "I need your permission first: " + strings.Join(wants, "; ") + ". Please approve it at the link your assistant shows you."
	return marshal(struct {
		Task task `json:"task"`
	}{task{su.GetTaskId(), t.ContextID,
		status{"TASK_STATE_AUTH_REQUIRED", message{s.d.NewMessageID(), t.ContextID, "ROLE_AGENT", []part{{text}}, nil}},
		map[string]any{"pact.missingScopes": su.GetMissingScopes(), "pact.verificationUriComplete": su.GetVerificationUriComplete()},
	}}), nil
}

type part struct {
	Text string `json:"text"`
}

type message struct {
	MessageID string                     `json:"messageId"`
	ContextID string                     `json:"contextId"`
	Role      string                     `json:"role"`
	Parts     []part                     `json:"parts"`
	Metadata  map[string]json.RawMessage `json:"metadata,omitempty"`
}

// complete builds the reply body, with the signed receipt of PACT §5.6
// when the turn is delegated, and stores it, so a retry of the messageId
// gets it back unchanged.
func (s *Service) complete(ctx context.Context, t turnState, rp reply) ([]byte, error) {
	m := message{s.d.NewMessageID(), t.ContextID, "ROLE_AGENT", []part{{rp.text}}, nil}
	if len(rp.metadata) > 0 {
		m.Metadata = rp.metadata
	}
	if t.GrantID != "" {
		receipt, err := s.d.Receipts.SignReceipt(ctx, &pactv1.SignReceiptRequest{
			BrandId: t.BrandID, GrantId: t.GrantID, ScopesUsed: rp.scopesUsed, Actions: rp.actions,
			PaIssuer: t.Issuer, BrandUser: t.BrandUser,
		})
		if err != nil {
			return nil, fmt.Errorf("sign receipt: %w", err)
		}
		if m.Metadata == nil {
			m.Metadata = map[string]json.RawMessage{}
		}
		m.Metadata["pact.receipt"] = json.RawMessage(receipt.GetReceiptJson())
	}
	out := marshal(struct {
		Message message `json:"message"`
	}{m})
	_, err := s.d.Turns.CompleteTurn(ctx, &pactv1.CompleteTurnRequest{
		Owner: t.owner(), ContextId: t.ContextID, MessageId: t.MessageID, Claim: t.Claim, ReplyMessageId: m.MessageID, ReplyJson: string(out),
	})
	return out, err
}
