package frontdoor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
)

// The metadata keys an A2A SDK's executor answers PACT with.
const (
	metaScopesUsed    = "pact.scopesUsed"    // Message: the scopes the reply relied on
	metaActions       = "pact.actions"       // Message: the tools it ran, [{"tool","args"?}]
	metaMissingScopes = "pact.missingScopes" // AUTH_REQUIRED Task: the scopes to step up to
)

// maxSDKAnswerBytes bounds an SDK's answer.
const maxSDKAnswerBytes = 1 << 20

// sdkReply reads an A2A SDK handler's HTTP+JSON answer to message:send
// (A2A 1.0: {"message": Message} or {"task": Task}, or an AIP-193 error)
// into the reply pactd sends; anything else fails the turn.
func sdkReply(a *pactv1.SdkAnswer) (reply, error) {
	body := a.GetBody()
	if len(body) > maxSDKAnswerBytes {
		return reply{}, fmt.Errorf("the SDK's answer is larger than %d bytes", maxSDKAnswerBytes)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return reply{}, fmt.Errorf("the SDK answered %d with a body that is not a JSON object", a.GetStatus())
	}
	if a.GetStatus() != http.StatusOK {
		return reply{}, sdkError(int(a.GetStatus()), top)
	}
	if len(top) != 1 {
		return reply{}, errors.New("the SDK's answer is not one Message or Task")
	}
	if m, ok := top["message"]; ok {
		return sdkMessage(m)
	}
	if t, ok := top["task"]; ok {
		return sdkTask(t)
	}
	return reply{}, errors.New("the SDK's answer is neither a Message nor a Task")
}

// sdkMessage is the reply of an agent Message: its text, the receipt's
// scopes and actions, and the metadata to pass on.
func sdkMessage(raw json.RawMessage) (reply, error) {
	var m struct {
		Role     string            `json:"role"`
		Parts    []json.RawMessage `json:"parts"`
		Metadata json.RawMessage   `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return reply{}, errors.New("the SDK's Message is not a Message object")
	}
	if m.Role != "ROLE_AGENT" {
		return reply{}, fmt.Errorf("the SDK answered a message with role %q, not ROLE_AGENT", m.Role)
	}
	text, err := texts(m.Parts)
	if err != nil {
		return reply{}, err
	}
	r := reply{text: text}
	if len(m.Metadata) == 0 || bytes.Equal(m.Metadata, []byte("null")) {
		return r, nil
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(m.Metadata, &meta) != nil || meta == nil {
		return reply{}, errors.New("the SDK's Message metadata is not an object")
	}
	if v, ok := meta[metaScopesUsed]; ok {
		if r.scopesUsed, err = stringList(v, metaScopesUsed); err != nil {
			return reply{}, err
		}
	}
	if v, ok := meta[metaActions]; ok {
		if r.actions, err = actionList(v); err != nil {
			return reply{}, err
		}
	}
	rest := map[string]json.RawMessage{}
	for k, v := range meta {
		if !strings.HasPrefix(k, "pact.") {
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		if r.metadata, err = metadataObject(marshal(rest)); err != nil {
			return reply{}, fmt.Errorf("the SDK's Message metadata: %w", err)
		}
	}
	return r, nil
}

// sdkTask is the reply of a step-up Task: the scopes it needs, and the
// text of its status message for a Brand that offers no delegation.
func sdkTask(raw json.RawMessage) (reply, error) {
	var t struct {
		Status struct {
			State   string `json:"state"`
			Message *struct {
				Parts []json.RawMessage `json:"parts"`
			} `json:"message"`
		} `json:"status"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return reply{}, errors.New("the SDK's Task is not a Task object")
	}
	if t.Status.State != "TASK_STATE_AUTH_REQUIRED" {
		return reply{}, fmt.Errorf("the SDK answered a task in state %q; only a step-up (TASK_STATE_AUTH_REQUIRED) is a PACT answer", t.Status.State)
	}
	need, err := stringList(t.Metadata[metaMissingScopes], metaMissingScopes)
	if err != nil {
		return reply{}, err
	}
	if len(need) == 0 {
		return reply{}, fmt.Errorf("the SDK's step-up task has no %s", metaMissingScopes)
	}
	r := reply{needScopes: need}
	if m := t.Status.Message; m != nil {
		if r.text, err = texts(m.Parts); err != nil {
			return reply{}, err
		}
	}
	return r, nil
}

// texts joins text parts by newlines; PACT replies carry text only.
func texts(parts []json.RawMessage) (string, error) {
	if len(parts) == 0 {
		return "", errors.New("the SDK's message has no parts")
	}
	out := make([]string, 0, len(parts))
	for _, raw := range parts {
		var p map[string]json.RawMessage
		if json.Unmarshal(raw, &p) != nil || p == nil {
			return "", errors.New("the SDK's message has a part that is not an object")
		}
		t, ok := stringField(p, "text")
		if !ok || p["raw"] != nil || p["url"] != nil || p["data"] != nil {
			return "", errors.New("the SDK's message has a part that is not text; PACT replies carry text only")
		}
		out = append(out, t)
	}
	return strings.Join(out, "\n"), nil
}

// stringList reads null or an array of non-empty strings.
func stringList(v json.RawMessage, name string) ([]string, error) {
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return nil, nil
	}
	var arr []*string
	if json.Unmarshal(v, &arr) != nil {
		return nil, fmt.Errorf("metadata %s must be an array of strings", name)
	}
	out := make([]string, 0, len(arr))
	for _, s := range arr {
		if s == nil || *s == "" {
			return nil, fmt.Errorf("metadata %s must be an array of non-empty strings", name)
		}
		out = append(out, *s)
	}
	return out, nil
}

// actionList reads pact.actions: null, or [{"tool": string, "args"?: any}];
// each action's args go to SignReceipt as JSON, which pactd hashes.
func actionList(v json.RawMessage) ([]*pactv1.ReceiptAction, error) {
	if bytes.Equal(v, []byte("null")) {
		return nil, nil
	}
	var arr []map[string]json.RawMessage
	if json.Unmarshal(v, &arr) != nil {
		return nil, fmt.Errorf("metadata %s must be an array of {\"tool\", \"args\"?}", metaActions)
	}
	out := make([]*pactv1.ReceiptAction, 0, len(arr))
	for _, a := range arr {
		tool, ok := stringField(a, "tool")
		if a == nil || !ok || tool == "" {
			return nil, fmt.Errorf("metadata %s: each action needs a tool", metaActions)
		}
		ra := &pactv1.ReceiptAction{Tool: tool}
		if args := a["args"]; len(args) > 0 && !bytes.Equal(args, []byte("null")) {
			ra.ArgsJson = string(args)
		}
		out = append(out, ra)
	}
	return out, nil
}

// sdkError reads an A2A error the SDK answered (AIP-193, reason in the
// ErrorInfo of domain a2a-protocol.org). The reasons a PA may see pass on
// as a refusal in PACT's exact envelope; anything else is a failure.
func sdkError(status int, top map[string]json.RawMessage) error {
	var e struct {
		Message string `json:"message"`
		Details []struct {
			Type   string `json:"@type"`
			Reason string `json:"reason"`
			Domain string `json:"domain"`
		} `json:"details"`
	}
	_ = json.Unmarshal(top["error"], &e)
	reason := ""
	for _, d := range e.Details {
		if d.Type == "type.googleapis.com/google.rpc.ErrorInfo" && d.Domain == a2aerr.Domain {
			reason = d.Reason
			break
		}
	}
	msg := e.Message
	withDefault := func(def string) string {
		if strings.TrimSpace(msg) == "" {
			return def
		}
		return msg
	}
	switch reason {
	case string(a2aerr.InvalidParams):
		return &refusal{a2aerr.InvalidParams, withDefault("Invalid params")}
	case string(a2aerr.ContentTypeNotSupported):
		return &refusal{a2aerr.ContentTypeNotSupported, withDefault("Only text parts are supported")}
	case string(a2aerr.UnsupportedOperation):
		return &refusal{a2aerr.UnsupportedOperation, withDefault("This operation is not supported")}
	}
	return fmt.Errorf("the SDK answered %d %s: %q", status, reason, clip(msg))
}
