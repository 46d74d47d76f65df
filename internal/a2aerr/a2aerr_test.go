package a2aerr_test

import (
	"encoding/json"
	"testing"

	"pactd.dev/pactd/internal/a2aerr"
)

// The bodies clients compare byte for byte (PACT 1.0 §6).
func TestBodyIsTheExactEnvelope(t *testing.T) {
	cases := []struct {
		name   string
		reason a2aerr.Reason
		msg    string
		want   string
	}{
		{"ok/invalid-params", a2aerr.InvalidParams, a2aerr.MsgUnknownContextID,
			`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Unknown contextId","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"}]}}`},
		{"ok/content-type", a2aerr.ContentTypeNotSupported, "m",
			`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"CONTENT_TYPE_NOT_SUPPORTED","domain":"a2a-protocol.org"}]}}`},
		{"ok/unsupported", a2aerr.UnsupportedOperation, "m",
			`{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}]}}`},
		{"ok/push", a2aerr.PushNotificationNotSupported, "m",
			`{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"PUSH_NOTIFICATION_NOT_SUPPORTED","domain":"a2a-protocol.org"}]}}`},
		{"ok/task-not-found-no-html-escaping", a2aerr.TaskNotFound, `Task not found: <a&b>"`,
			`{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found: <a&b>\"","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`},
		{"ok/internal", a2aerr.Internal, "m",
			`{"error":{"code":500,"status":"INTERNAL","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL","domain":"a2a-protocol.org"}]}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(a2aerr.Body(c.reason, c.msg)); got != c.want {
				t.Fatalf("Body =\n%s\nwant\n%s", got, c.want)
			}
			p := a2aerr.Proto(c.reason, c.msg)
			var env struct {
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal([]byte(p.GetBodyJson()), &env); err != nil || p.GetBodyJson() != c.want ||
				int(p.GetHttpStatus()) != env.Error.Code || p.GetReason() != string(c.reason) || p.GetMessage() != c.msg {
				t.Fatalf("Proto = %v (%v)", p, err)
			}
		})
	}
}
