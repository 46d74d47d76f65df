package pacta2a

import (
	"bytes"
	"context"
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
)

// userMessage is what message:send needs from a valid request.
type userMessage struct {
	messageID, contextID, text string
	// message is the message object as the PA sent it; metadata the
	// request's metadata object, or nil (both go on to an SDK, see Wrap).
	message  map[string]json.RawMessage
	metadata json.RawMessage
}

// send serves POST message:send (PACT §4). The request's Content-Type and
// A2A-Version are not checked: the body is parsed as JSON whatever they say.
func (h *Handler) send(w http.ResponseWriter, r *http.Request, c *call) {
	body, ok := readBody(w, r, h.cfg.MaxBodyBytes)
	if !ok {
		invalidParams("The request body is unreadable or too large").write(w)
		return
	}
	msg, bad := parseSend(body)
	if bad != nil {
		bad.write(w)
		return
	}
	owner := &pactv1.Owner{BrandId: c.brandID, AgentId: c.caller.GetAgentId(), Subject: c.caller.GetSubject()}
	begun, err := h.conv.BeginTurn(r.Context(), &pactv1.BeginTurnRequest{
		Owner: owner, ContextId: msg.contextID, MessageId: msg.messageID,
		BrandUser: c.delegation.GetBrandUser(),
	})
	if err != nil {
		h.fail(w, r, "begin turn", err)
		return
	}
	switch begun.GetOutcome() {
	case pactv1.TurnOutcome_TURN_OUTCOME_ERROR:
		e := begun.GetError()
		if e.GetHttpStatus() < 400 || e.GetHttpStatus() > 599 {
			h.fail(w, r, "begin turn", errors.New("A2A error without an error status"))
			return
		}
		writeA2A(w, int(e.GetHttpStatus()), []byte(e.GetBodyJson()))
		return
	case pactv1.TurnOutcome_TURN_OUTCOME_REPLAY:
		writeA2A(w, http.StatusOK, []byte(begun.GetReplyJson()))
		return
	case pactv1.TurnOutcome_TURN_OUTCOME_RUN:
	default:
		h.fail(w, r, "begin turn", errors.New("unknown outcome "+begun.GetOutcome().String()))
		return
	}

	// The turn is ours. Run it to the end even if the PA hangs up, so a
	// retry of the messageId finds the stored reply.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), h.cfg.TurnTimeout)
	defer cancel()
	ctxID := begun.GetContextId()
	reply, err := h.runAgent(ctx, Turn{
		BrandID: c.brandID, ContextID: ctxID, NewContext: begun.GetContextCreated(),
		Text: msg.text, Caller: c.caller, Delegation: c.delegation,
		message: msg.message, metadata: msg.metadata, header: r.Header,
	})
	var out []byte
	stored := false
	if err == nil && len(reply.NeedScopes) > 0 {
		out, err = h.stepUp(ctx, c, ctxID, reply.NeedScopes)
	}
	if err == nil && out == nil {
		out, err = h.complete(ctx, c, owner, ctxID, msg.messageID, reply)
		stored = err == nil
	}
	if !stored {
		// A failed or refused turn, or a step-up (which the spec does not
		// store): release the messageId so the PA may send it again.
		// With a context of its own: the turn's may have run out (a slow
		// agent), and a messageId left pending could never be sent again.
		actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
		if _, aerr := h.conv.AbandonTurn(actx, &pactv1.AbandonTurnRequest{Owner: owner, ContextId: ctxID, MessageId: msg.messageID}); aerr != nil {
			h.cfg.Logger.ErrorContext(ctx, "abandon turn", slog.String("error", aerr.Error()))
		}
		acancel()
	}
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		ref.e.write(w)
	case err != nil:
		h.fail(w, r, "run turn", err)
	default:
		writeA2A(w, http.StatusOK, out)
	}
}

// abandonTimeout bounds releasing a turn's messageId.
const abandonTimeout = 10 * time.Second

// runAgent runs the agent; a panic fails the turn like an error does, so
// its messageId is released and the cause is logged once, with the stack.
func (h *Handler) runAgent(ctx context.Context, t Turn) (reply Reply, err error) {
	defer func() {
		if v := recover(); v != nil {
			reply, err = Reply{}, fmt.Errorf("the agent panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return h.cfg.Agent.Reply(ctx, t)
}

// refusal is an agent's answer that is an A2A error of PACT's own (an
// SDK's INVALID_PARAMS, CONTENT_TYPE_NOT_SUPPORTED or UNSUPPORTED_OPERATION):
// the turn is released and the error sent, in PACT's exact envelope.
type refusal struct{ e a2aError }

func (r *refusal) Error() string {
	return "the agent refused the turn: " + r.e.reason + ": " + r.e.message
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

// stepUp builds the AUTH_REQUIRED task of PACT §5.5 for scopes the turn
// needs. It returns nil, nil when the Brand offers no delegation, so the
// agent's Text answers instead.
func (h *Handler) stepUp(ctx context.Context, c *call, contextID string, need []string) ([]byte, error) {
	su, err := h.deleg.StartStepUp(ctx, &pactv1.StartStepUpRequest{
		BrandId: c.brandID, AgentId: c.caller.GetAgentId(), ContextId: contextID, MissingScopes: need,
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
	}{task{su.GetTaskId(), contextID,
		status{"TASK_STATE_AUTH_REQUIRED", message{h.cfg.NewMessageID(), contextID, "ROLE_AGENT", []part{{text}}, nil}},
		map[string]any{"pact.missingScopes": su.GetMissingScopes(), "pact.verificationUriComplete": su.GetVerificationUriComplete()},
	}}), nil
}

// complete builds the reply body, with the signed receipt of PACT §5.6 when
// the turn is delegated, and stores it in pactd so a retry of the
// messageId gets it back unchanged.
func (h *Handler) complete(ctx context.Context, c *call, owner *pactv1.Owner, contextID, messageID string, reply Reply) ([]byte, error) {
	m := message{h.cfg.NewMessageID(), contextID, "ROLE_AGENT", []part{{reply.Text}}, nil}
	for k, v := range reply.Metadata {
		if strings.HasPrefix(k, "pact.") {
			continue // the frontend's own keys
		}
		b, err := marshalErr(v)
		if err != nil {
			return nil, fmt.Errorf("reply metadata %q: %w", k, err)
		}
		if m.Metadata == nil {
			m.Metadata = map[string]json.RawMessage{}
		}
		m.Metadata[k] = b
	}
	if d := c.delegation; d != nil {
		req := &pactv1.SignReceiptRequest{
			BrandId: c.brandID, GrantId: d.GetGrantId(), ScopesUsed: reply.ScopesUsed,
			PaIssuer: c.caller.GetIssuer(), BrandUser: d.GetBrandUser(),
		}
		for _, a := range reply.Actions {
			ra := &pactv1.ReceiptAction{Tool: a.Tool}
			if a.Args != nil {
				args, err := marshalErr(a.Args)
				if err != nil {
					return nil, fmt.Errorf("receipt action %q: %w", a.Tool, err)
				}
				sum := sha256.Sum256(args)
				ra.ArgsHash = base64.RawURLEncoding.EncodeToString(sum[:])
			}
			req.Actions = append(req.Actions, ra)
		}
		receipt, err := h.tokens.SignReceipt(ctx, req)
		if err != nil {
			return nil, err
		}
		if m.Metadata == nil {
			m.Metadata = map[string]json.RawMessage{}
		}
		m.Metadata["pact.receipt"] = json.RawMessage(receipt.GetReceiptJson())
	}
	out := marshal(struct {
		Message message `json:"message"`
	}{m})
	_, err := h.conv.CompleteTurn(ctx, &pactv1.CompleteTurnRequest{
		Owner: owner, ContextId: contextID, MessageId: messageID, ReplyMessageId: m.MessageID, ReplyJson: string(out),
	})
	return out, err
}

// parseSend validates a SendMessageRequest in the order of PACT §4: JSON
// and schema, taskId, role, content types, blank text.
func parseSend(body []byte) (userMessage, *a2aError) {
	fail := func(e a2aError) (userMessage, *a2aError) { return userMessage{}, &e }
	var req, m map[string]json.RawMessage // exact keys: encoding/json's struct matching ignores case
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(req["message"], &m) != nil || m == nil {
		return fail(invalidParams("The body must be JSON: {\"message\": Message}"))
	}
	id, hasID := stringField(m, "messageId")
	role, _ := stringField(m, "role")
	contextID, hasContext := stringField(m, "contextId")
	_, hasTask := stringField(m, "taskId")
	var parts []map[string]json.RawMessage
	switch {
	case !hasID || id == "":
		return fail(invalidParams("message.messageId must be a non-empty string"))
	case role != "ROLE_USER" && role != "ROLE_AGENT" && role != "ROLE_UNSPECIFIED":
		return fail(invalidParams("message.role must be ROLE_USER"))
	case json.Unmarshal(m["parts"], &parts) != nil || len(parts) == 0:
		return fail(invalidParams("message.parts must be a non-empty array of parts"))
	case m["contextId"] != nil && !hasContext, m["taskId"] != nil && !hasTask:
		return fail(invalidParams("message.contextId and message.taskId must be strings"))
	case m["metadata"] != nil && !isObject(m["metadata"]):
		return fail(invalidParams("message.metadata must be an object"))
	}
	texts := make([]string, 0, len(parts))
	nonText := false
	for _, p := range parts {
		kind, ok := partKind(p)
		if !ok {
			return fail(invalidParams("Each part must be an object with exactly one of text, raw, url or data"))
		}
		if kind == "text" {
			t, _ := stringField(p, "text")
			texts = append(texts, t)
		} else {
			nonText = true
		}
	}
	text := strings.Join(texts, "\n")
	switch {
	case hasTask:
		return fail(taskNotFound("Task not found"))
	case role != "ROLE_USER":
		return fail(invalidParams("message.role must be ROLE_USER"))
	case nonText:
		return fail(contentTypeNotSupported("Only text parts are supported"))
	case strings.TrimSpace(text) == "":
		return fail(invalidParams("The message text is empty"))
	}
	var metadata json.RawMessage
	if isObject(req["metadata"]) {
		metadata = req["metadata"] // passed on to an SDK only as an object, which its types expect
	}
	return userMessage{messageID: id, contextID: contextID, text: text, message: m, metadata: metadata}, nil
}

// partKind checks a part as the strict A2A schema does: exactly one of
// text, raw (base64), url or data, plus optional metadata, filename and
// mediaType, and nothing else.
func partKind(p map[string]json.RawMessage) (string, bool) {
	kind := ""
	for k, v := range p {
		switch k {
		case "text", "raw", "url", "filename", "mediaType":
			if _, ok := stringField(p, k); !ok {
				return "", false
			}
		case "data":
			if bytes.Equal(v, []byte("null")) {
				return "", false
			}
		case "metadata":
			if !isObject(v) {
				return "", false
			}
		default:
			return "", false
		}
		if k == "text" || k == "raw" || k == "url" || k == "data" {
			if kind != "" {
				return "", false
			}
			kind = k
		}
	}
	return kind, kind != ""
}

// stringField returns m[key] when it is a JSON string.
func stringField(m map[string]json.RawMessage, key string) (string, bool) {
	var s *string
	if json.Unmarshal(m[key], &s) != nil || s == nil {
		return "", false
	}
	return *s, true
}

func isObject(v json.RawMessage) bool {
	var o map[string]json.RawMessage
	return json.Unmarshal(v, &o) == nil && o != nil
}
