package pacta2a

import (
	"encoding/json"
	"net/http"
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
		if m != m2 || (bad == nil) != (bad2 == nil) || bad != nil && *bad != *bad2 {
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
