package pacta2a

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseSend: parseSend never panics, is deterministic, and accepts only
// what message:send may run: a non-empty messageId, text that is not blank,
// and a body that is a JSON object. Every refusal is an A2A error with a
// reason of the §4 order.
func FuzzParseSend(f *testing.F) {
	for _, s := range []string{
		`{`, ``, `[]`, `{"message":null}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":""},{"raw":"aGVsbG8="}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}],"taskId":"t"}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"text","text":"x"}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":" "}],"contextId":"c"}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":null}],"metadata":[]}}`,
	} {
		f.Add([]byte(s))
	}
	reasons := map[string]bool{"INVALID_PARAMS": true, "TASK_NOT_FOUND": true, "CONTENT_TYPE_NOT_SUPPORTED": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, bad := parseSend(body)
		m2, bad2 := parseSend(body)
		if !reflect.DeepEqual(m, m2) || (bad == nil) != (bad2 == nil) || bad != nil && *bad != *bad2 {
			t.Fatalf("parseSend is not deterministic")
		}
		if bad != nil {
			if !reasons[bad.reason] || bad.message == "" {
				t.Fatalf("refusal %+v is not a message:send A2A error", bad)
			}
			return
		}
		var obj map[string]json.RawMessage
		if m.messageID == "" || strings.TrimSpace(m.text) == "" || json.Unmarshal(body, &obj) != nil {
			t.Fatalf("accepted %q as %+v", body, m)
		}
		// What goes on to an SDK is the message object that was parsed,
		// and the request's metadata only when it is an object.
		var again map[string]json.RawMessage
		if json.Unmarshal(obj["message"], &again) != nil || !reflect.DeepEqual(again, m.message) {
			t.Fatalf("message %s passed on as %v", obj["message"], m.message)
		}
		if m.metadata != nil && !isObject(m.metadata) {
			t.Fatalf("request metadata %s passed on", m.metadata)
		}
	})
}

type noSessions struct{}

func (noSessions) BrandUser(*http.Request, string) string { return "" }
func (noSessions) LoginURL(string, string) string         { return "/login" }

// FuzzRoutes: any path and method get either no route (404), a 405, or one
// endpoint; only the Agent Card and the OAuth subtree (pactd's endpoints,
// which check the PA JWT themselves, and the User's pages) are public, the
// subtree has only its named endpoints, and splitting is deterministic.
func FuzzRoutes(f *testing.F) {
	for _, s := range []string{
		"/a2a/acme/message:send", "/a2a/acme/message%3Asend", "/a2a/acme/tasks/x%3acancel", "/a2a/acme/tasks/x/pushNotificationConfigs/c",
		"/a2a/acme/.well-known/agent-card.json", "/a2a//x", "/a2a/acme/tasks/", "/a2a/a%2Fb/tasks", "/a2a/acme/%zz",
		"/a2a/acme/oauth/token", "/a2a/acme/oauth/../token", "/a2a/acme/oauth/.well-known/oauth-authorization-server",
		"/a2a/acme/oauth/consent/decision", "/a2a/acme/oauth/%2e%2e/message:send",
	} {
		f.Add("GET", s)
		f.Add("POST", s)
	}
	h := &Handler{cfg: Config{Sessions: noSessions{}}}
	oauth := map[string]bool{"device_authorization": true, "token": true, "revoke": true, ".well-known/oauth-authorization-server": true,
		"jwks.json": true, "consent": true, "consent/decision": true, "connected": true, "connected/revoke": true}
	f.Fuzz(func(t *testing.T, method, path string) {
		brand, rest, ok := splitPath(path)
		if !ok {
			return
		}
		if brand == "" || len(rest) == 0 {
			t.Fatalf("splitPath(%q) = %q %q", path, brand, rest)
		}
		ep, found := h.routes(rest)[method]
		card := method == http.MethodGet && len(rest) == 2 && rest[1] == "agent-card.json"
		if found && ep.public && !card && !(rest[0] == "oauth" && oauth[strings.Join(rest[1:], "/")]) {
			t.Fatalf("%s %q is public", method, path)
		}
	})
}

// FuzzDecodeAnswer: whatever an SDK answers (status and body, untrusted as
// far as the frontend is concerned), decodeAnswer never panics, is
// deterministic, accepts only a 200 answer, never lets a "pact." key
// through as metadata, gives the receipt only non-empty scope ids and
// tools, gives a step-up at least one scope, yields metadata that encodes
// again, and turns only PACT's three reasons into a refusal with a message.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"message":{"messageId":"m","parts":[{"text":"hi \u003cb\u003e"}],"role":"ROLE_AGENT"}}`,
		`{"message":{"messageId":"m","parts":[{"text":"a"},{"text":"b"}],"role":"ROLE_AGENT","metadata":{"pact.scopesUsed":["orders:read"],` +
			`"pact.actions":[{"tool":"cancel_order","args":{"orderId":"1002","n":12345678901234567890}}],"trace":"t","pact.receipt":"x"}}}`,
		`{"message":{"messageId":"m","parts":[{"data":{"a":1}}],"role":"ROLE_AGENT"}}`,
		`{"message":{"messageId":"m","parts":[{"text":"x"}],"role":"ROLE_USER"}}`,
		`{"task":{"id":"t","contextId":"c","metadata":{"pact.missingScopes":["a"]},"status":{"state":"TASK_STATE_AUTH_REQUIRED",` +
			`"message":{"messageId":"s","parts":[{"text":"not here"}],"role":"ROLE_AGENT"}}}}`,
		`{"task":{"id":"t","contextId":"c","metadata":{"pact.missingScopes":[]},"status":{"state":"TASK_STATE_AUTH_REQUIRED"}}}`,
		`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`,
		`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`,
		`{"message":{},"task":{}}`, `{}`, `null`, `[]`, ``, `{"message":null}`,
	} {
		f.Add(200, []byte(s))
	}
	for _, reason := range []string{"INVALID_PARAMS", "CONTENT_TYPE_NOT_SUPPORTED", "UNSUPPORTED_OPERATION", "UNAUTHENTICATED", "INTERNAL_ERROR"} {
		f.Add(400, []byte(`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"no images: incompatible content types","details":`+
			`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","metadata":{"timestamp":"x"},"reason":"`+reason+`"}]}}`))
	}
	f.Add(401, []byte(`{"error":{"message":"","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"other.org","reason":"INVALID_PARAMS"}]}}`))
	passOn := map[string]bool{"INVALID_PARAMS": true, "CONTENT_TYPE_NOT_SUPPORTED": true, "UNSUPPORTED_OPERATION": true}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		r, err := decodeAnswer(status, body)
		r2, err2 := decodeAnswer(status, body)
		if !reflect.DeepEqual(r, r2) || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("decodeAnswer is not deterministic")
		}
		if err != nil {
			var ref *refusal
			if errors.As(err, &ref) && (status == http.StatusOK || !passOn[ref.e.reason] || strings.TrimSpace(ref.e.message) == "") {
				t.Fatalf("refusal %+v for %d %q", ref.e, status, body)
			}
			return
		}
		if status != http.StatusOK {
			t.Fatalf("accepted a %d answer: %+v", status, r)
		}
		for k, v := range r.Metadata {
			if strings.HasPrefix(k, "pact.") {
				t.Fatalf("metadata %q passed on", k)
			}
			if _, err := marshalErr(v); err != nil {
				t.Fatalf("metadata %q does not encode: %v", k, err)
			}
		}
		for _, s := range append(append([]string(nil), r.ScopesUsed...), r.NeedScopes...) {
			if s == "" {
				t.Fatalf("an empty scope id in %+v", r)
			}
		}
		for _, a := range r.Actions {
			if a.Tool == "" {
				t.Fatalf("an action without a tool in %+v", r)
			}
			if _, err := marshalErr(a.Args); err != nil {
				t.Fatalf("action args do not encode: %v", err)
			}
		}
		if r.NeedScopes != nil && (len(r.NeedScopes) == 0 || r.ScopesUsed != nil || r.Actions != nil || r.Metadata != nil) {
			t.Fatalf("a step-up that is also a reply: %+v", r)
		}
	})
}
