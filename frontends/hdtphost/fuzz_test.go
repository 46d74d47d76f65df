package hdtphost

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzFirstEventData reads a peer's event stream (untrusted, bounded by
// MaxBodyBytes before it gets here): it never panics, and what it takes
// out is a JSON object with a non-null id, or nothing.
func FuzzFirstEventData(f *testing.F) {
	for _, s := range []string{
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		": c\n\nevent: message\ndata: {\"method\":\"notifications/progress\"}\n\ndata: {\"id\":\"a\",\ndata: \"result\":1}\n\n",
		"data: {\"id\":null}\n\n", "data:\n\n", "data: [1,2]\n\n", "\r\n\r\ndata: {\"id\":2}", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		got := firstEventData(stream)
		if got == nil {
			return
		}
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(got, &msg); err != nil || len(msg.ID) == 0 || string(msg.ID) == "null" {
			t.Fatalf("took %q out of %q", got, stream)
		}
	})
}

// FuzzToolsRequest sorts inbound bodies (untrusted, bounded by
// MaxBodyBytes): it never panics, and every body it gives pactd is a JSON
// object naming tools/list or tools/call.
func FuzzToolsRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"method":"tools/call","params":{}}`, `{"method":"initialize"}`,
		`{"method":"ping","method":"tools/call"}`, `{"METHOD":"tools/call"}`, `[{"method":"tools/call"}]`, `{"method":"tools\/list"}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !toolsRequest(body) {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%q went to pactd but is not a JSON object", body)
		}
		found := false
		for k, v := range m {
			var s string
			if bytes.EqualFold([]byte(k), []byte("method")) && json.Unmarshal(v, &s) == nil && (s == "tools/list" || s == "tools/call") {
				found = true
			}
		}
		if !found {
			t.Fatalf("%q went to pactd without naming a tools method", body)
		}
	})
}
