package frontdoor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
)

// userMessage is what message:send needs from a valid request.
type userMessage struct {
	messageID, contextID, text string
	// message is the message object as the PA sent it; metadata the
	// request's metadata object, or nil (both go on to an SDK).
	message  map[string]json.RawMessage
	metadata json.RawMessage
}

// msgTooLarge answers a body past MaxBodyBytes (or one that cannot be read).
const msgTooLarge = "The request body is unreadable or too large"

// send serves POST message:send (PACT §4). The request's Content-Type and
// A2A-Version are not checked: the body is parsed as JSON whatever they
// say. When the turn is to run, the exchange carries it back to the
// frontend; FinishTurn completes it.
func (s *Service) send(w http.ResponseWriter, r *http.Request, x *exchange, c *call) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		// What is left of the body must never be read as the next request.
		w.Header().Set("Connection", "close")
		writeError(w, a2aerr.InvalidParams, msgTooLarge)
		return
	}
	msg, bad := parseSend(body)
	if bad != nil {
		writeError(w, bad.reason, bad.message)
		return
	}
	owner := &pactv1.Owner{BrandId: c.brandID, AgentId: c.caller.GetAgentId(), Subject: c.caller.GetSubject()}
	begun, err := s.d.Turns.BeginTurn(r.Context(), &pactv1.BeginTurnRequest{
		Owner: owner, ContextId: msg.contextID, MessageId: msg.messageID,
		BrandUser: c.delegation.GetBrandUser(),
	})
	if err != nil {
		s.fail(w, r, "begin turn", err)
		return
	}
	switch begun.GetOutcome() {
	case pactv1.TurnOutcome_TURN_OUTCOME_ERROR:
		e := begun.GetError()
		if e.GetHttpStatus() < 400 || e.GetHttpStatus() > 599 {
			s.fail(w, r, "begin turn", errors.New("an A2A error without an error status"))
			return
		}
		writeA2A(w, int(e.GetHttpStatus()), []byte(e.GetBodyJson()))
		return
	case pactv1.TurnOutcome_TURN_OUTCOME_REPLAY:
		writeA2A(w, http.StatusOK, []byte(begun.GetReplyJson()))
		return
	case pactv1.TurnOutcome_TURN_OUTCOME_RUN:
	default:
		s.fail(w, r, "begin turn", errors.New("unknown outcome "+begun.GetOutcome().String()))
		return
	}
	ctxID := begun.GetContextId()
	handle, err := s.turns.seal(turnState{
		BrandID: c.brandID, AgentID: c.caller.GetAgentId(), Subject: c.caller.GetSubject(), Issuer: c.caller.GetIssuer(),
		ContextID: ctxID, MessageID: msg.messageID, GrantID: c.delegation.GetGrantId(), BrandUser: c.delegation.GetBrandUser(),
		Claim: begun.GetClaim(), Expires: s.d.Now().Add(s.d.TurnTimeout + handleSlack).Unix(),
	})
	if err != nil {
		s.fail(w, r, "seal turn handle", err)
		return
	}
	m := maps.Clone(msg.message)
	m["contextId"] = marshal(ctxID) // pactd's: minted or checked
	sdkBody := marshal(struct {
		Message  map[string]json.RawMessage `json:"message"`
		Metadata json.RawMessage            `json:"metadata,omitempty"`
	}{m, msg.metadata})
	x.turn = &pactv1.Turn{
		Handle: handle, BrandId: c.brandID, ContextId: ctxID, NewContext: begun.GetContextCreated(), Text: msg.text,
		Caller: c.caller, Delegation: c.delegation, SdkRequestJson: string(sdkBody),
		SdkPath:            "/a2a/" + url.PathEscape(c.brandID) + "/message:send",
		TurnTimeoutSeconds: int32(s.d.TurnTimeout.Seconds()),
	}
}

// badRequest is a refusal of message:send's request.
type badRequest struct {
	reason  a2aerr.Reason
	message string
}

// parseSend validates a SendMessageRequest in the order of PACT §4: JSON
// and schema, taskId, role, content types, blank text. A body that is not
// UTF-8 is not JSON (RFC 8259 §8.1): encoding/json would read it, but the
// message goes on to an SDK as it was sent, in a protobuf string.
func parseSend(body []byte) (userMessage, *badRequest) {
	fail := func(r a2aerr.Reason, msg string) (userMessage, *badRequest) {
		return userMessage{}, &badRequest{r, msg}
	}
	var req, m map[string]json.RawMessage // exact keys: encoding/json's struct matching ignores case
	if !utf8.Valid(body) || json.Unmarshal(body, &req) != nil || json.Unmarshal(req["message"], &m) != nil || m == nil {
		return fail(a2aerr.InvalidParams, `The body must be JSON: {"message": Message}`)
	}
	id, hasID := stringField(m, "messageId")
	role, _ := stringField(m, "role")
	contextID, hasContext := stringField(m, "contextId")
	_, hasTask := stringField(m, "taskId")
	var parts []map[string]json.RawMessage
	switch {
	case !hasID || id == "":
		return fail(a2aerr.InvalidParams, "message.messageId must be a non-empty string")
	case role != "ROLE_USER" && role != "ROLE_AGENT" && role != "ROLE_UNSPECIFIED":
		return fail(a2aerr.InvalidParams, "message.role must be ROLE_USER")
	case json.Unmarshal(m["parts"], &parts) != nil || len(parts) == 0:
		return fail(a2aerr.InvalidParams, "message.parts must be a non-empty array of parts")
	case m["contextId"] != nil && !hasContext, m["taskId"] != nil && !hasTask:
		return fail(a2aerr.InvalidParams, "message.contextId and message.taskId must be strings")
	case m["metadata"] != nil && !isObject(m["metadata"]):
		return fail(a2aerr.InvalidParams, "message.metadata must be an object")
	}
	texts := make([]string, 0, len(parts))
	nonText := false
	for _, p := range parts {
		kind, ok := partKind(p)
		if !ok {
			return fail(a2aerr.InvalidParams, "Each part must be an object with exactly one of text, raw, url or data")
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
		return fail(a2aerr.TaskNotFound, "Task not found")
	case role != "ROLE_USER":
		return fail(a2aerr.InvalidParams, "message.role must be ROLE_USER")
	case nonText:
		return fail(a2aerr.ContentTypeNotSupported, "Only text parts are supported")
	case strings.TrimSpace(text) == "":
		return fail(a2aerr.InvalidParams, "The message text is empty")
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
