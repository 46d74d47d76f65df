package pacta2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The metadata keys of the SDK bridge (docs/frontends.md).
const (
	metaScopesUsed    = "pact.scopesUsed"    // Message: the scopes the reply relied on
	metaActions       = "pact.actions"       // Message: the tools it ran, [{"tool","args"?}]
	metaMissingScopes = "pact.missingScopes" // AUTH_REQUIRED Task: the scopes to step up to
)

// decodeAnswer turns the SDK's HTTP+JSON answer to message:send into the
// Reply the send flow sends, as Wrap says; any other answer is an error.
// The events are read with a2a-go's own types; the metadata a second time,
// with numbers kept as written, so a receipt's argsHash covers the bytes
// the agent's values encode to, as in the standalone frontend.
func decodeAnswer(status int, body []byte) (Reply, error) {
	if status != http.StatusOK {
		return Reply{}, sdkError(status, body)
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		return Reply{}, fmt.Errorf("the A2A handler's answer is not a SendMessageResponse: %w", err)
	}
	var meta struct {
		Message, Task *struct {
			Metadata map[string]any `json:"metadata"`
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&meta); err != nil {
		return Reply{}, fmt.Errorf("the A2A handler's answer has unreadable metadata: %w", err)
	}
	switch ev := sr.Event.(type) {
	case *a2a.Message:
		if meta.Message == nil {
			return Reply{}, fmt.Errorf("the A2A handler's answer is not one message")
		}
		return messageReply(ev, meta.Message.Metadata)
	case *a2a.Task:
		if meta.Task == nil {
			return Reply{}, fmt.Errorf("the A2A handler's answer is not one task")
		}
		return stepUpReply(ev, meta.Task.Metadata)
	default:
		return Reply{}, fmt.Errorf("the A2A handler answered a %T; PACT replies are a Message or a step-up Task", sr.Event)
	}
}

// messageReply is the Reply of an agent Message: its text, the receipt's
// scopes and actions, and the metadata to pass on.
func messageReply(m *a2a.Message, meta map[string]any) (Reply, error) {
	if m.Role != a2a.MessageRoleAgent {
		return Reply{}, fmt.Errorf("the A2A handler answered a message with role %s, not ROLE_AGENT", m.Role)
	}
	text, err := texts(m.Parts)
	if err != nil {
		return Reply{}, err
	}
	r := Reply{Text: text}
	if r.ScopesUsed, err = stringList(meta[metaScopesUsed], metaScopesUsed); err != nil {
		return Reply{}, err
	}
	if r.Actions, err = actionList(meta[metaActions]); err != nil {
		return Reply{}, err
	}
	for k, v := range meta {
		if !strings.HasPrefix(k, "pact.") {
			if r.Metadata == nil {
				r.Metadata = map[string]any{}
			}
			r.Metadata[k] = v
		}
	}
	return r, nil
}

// stepUpReply is the Reply of a step-up Task: the scopes it needs, and the
// text of its status message for a Brand that offers no delegation.
func stepUpReply(t *a2a.Task, meta map[string]any) (Reply, error) {
	if t.Status.State != a2a.TaskStateAuthRequired {
		return Reply{}, fmt.Errorf("the A2A handler answered a task in state %s; only a step-up (TASK_STATE_AUTH_REQUIRED) is a PACT answer", t.Status.State)
	}
	need, err := stringList(meta[metaMissingScopes], metaMissingScopes)
	if err != nil {
		return Reply{}, err
	}
	if len(need) == 0 {
		return Reply{}, fmt.Errorf("the A2A handler's step-up task has no %s", metaMissingScopes)
	}
	r := Reply{NeedScopes: need}
	if m := t.Status.Message; m != nil {
		if r.Text, err = texts(m.Parts); err != nil {
			return Reply{}, err
		}
	}
	return r, nil
}

// texts joins text parts by newlines; PACT replies carry text only.
func texts(parts a2a.ContentParts) (string, error) {
	if len(parts) == 0 {
		return "", fmt.Errorf("the A2A handler's message has no parts")
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		t, ok := p.Content.(a2a.Text)
		if !ok {
			return "", fmt.Errorf("the A2A handler's message has a %T part; PACT replies carry text only", p.Content)
		}
		out = append(out, string(t))
	}
	return strings.Join(out, "\n"), nil
}

// stringList reads an absent value or an array of non-empty strings.
func stringList(v any, name string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("metadata %s must be an array of strings", name)
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("metadata %s must be an array of non-empty strings", name)
		}
		out = append(out, s)
	}
	return out, nil
}

// actionList reads pact.actions: absent, or [{"tool": string, "args"?: any}].
func actionList(v any) ([]Action, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("metadata %s must be an array", metaActions)
	}
	out := make([]Action, 0, len(arr))
	for _, e := range arr {
		o, ok := e.(map[string]any)
		tool, _ := o["tool"].(string)
		if !ok || tool == "" {
			return nil, fmt.Errorf("metadata %s: each action needs a tool", metaActions)
		}
		out = append(out, Action{Tool: tool, Args: o["args"]})
	}
	return out, nil
}

// sdkError reads an A2A error the SDK answered (AIP-193, reason in the
// ErrorInfo of domain a2a-protocol.org). The reasons a PA may see pass on
// as a refusal in PACT's exact envelope; anything else is a failure.
func sdkError(status int, body []byte) error {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Details []struct {
				Type   string `json:"@type"`
				Reason string `json:"reason"`
				Domain string `json:"domain"`
			} `json:"details"`
		} `json:"error"`
	}
	reason := ""
	if json.Unmarshal(body, &e) == nil {
		for _, d := range e.Error.Details {
			if d.Type == "type.googleapis.com/google.rpc.ErrorInfo" && d.Domain == a2a.ProtocolDomain {
				reason = d.Reason
				break
			}
		}
	}
	msg := e.Error.Message
	withDefault := func(def string) string {
		if strings.TrimSpace(msg) == "" {
			return def
		}
		return msg
	}
	switch reason {
	case "INVALID_PARAMS":
		return &refusal{invalidParams(withDefault("Invalid params"))}
	case "CONTENT_TYPE_NOT_SUPPORTED":
		return &refusal{contentTypeNotSupported(withDefault("Only text parts are supported"))}
	case "UNSUPPORTED_OPERATION":
		return &refusal{unsupportedOperation(withDefault("This operation is not supported"))}
	}
	if len(msg) > 200 { // for the log: a panic's message holds its whole stack
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	return fmt.Errorf("the A2A handler answered %d %s: %q", status, reason, msg)
}
