package pacta2a

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// contentType is the exact Content-Type of every A2A response (PACT §4).
const contentType = "application/a2a+json"

// The A2A errors this frontend writes itself, before or without pactd.
// Errors about conversations come from pactd ready-made (A2AError.body_json);
// this is the small copy any frontend needs for the rest (PACT §6).
type a2aError struct {
	httpStatus int
	status     string // google.rpc status name
	reason     string // details[0].reason
	message    string
}

func invalidParams(msg string) a2aError {
	return a2aError{400, "INVALID_ARGUMENT", "INVALID_PARAMS", msg}
}

func contentTypeNotSupported(msg string) a2aError {
	return a2aError{400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", msg}
}

func unsupportedOperation(msg string) a2aError {
	return a2aError{400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", msg}
}

func pushNotSupported() a2aError {
	return a2aError{400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notifications are not supported"}
}

func taskNotFound(msg string) a2aError {
	return a2aError{404, "NOT_FOUND", "TASK_NOT_FOUND", msg}
}

func internalError() a2aError {
	return a2aError{500, "INTERNAL", "INTERNAL", "Internal error"}
}

// write sends the AIP-193 envelope.
func (e a2aError) write(w http.ResponseWriter) {
	type detail struct {
		Type   string `json:"@type"`
		Reason string `json:"reason"`
		Domain string `json:"domain"`
	}
	type body struct {
		Code    int      `json:"code"`
		Status  string   `json:"status"`
		Message string   `json:"message"`
		Details []detail `json:"details"`
	}
	b := marshal(struct {
		Error body `json:"error"`
	}{body{e.httpStatus, e.status, e.message, []detail{{"type.googleapis.com/google.rpc.ErrorInfo", e.reason, "a2a-protocol.org"}}}})
	writeA2A(w, e.httpStatus, b)
}

// writeA2A sends an A2A response body.
func writeA2A(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// bare sends a status with no body: unmatched routes, an unknown Brand and
// refused PA JWTs are not A2A errors.
func bare(w http.ResponseWriter, status int) {
	w.WriteHeader(status)
}

// marshal encodes JSON as JavaScript's JSON.stringify does (no escaping of
// <, > and &), so bytes that echo client input match other frontends. It is
// for plain data and pactd's own JSON, which cannot fail to encode.
func marshal(v any) []byte {
	b, _ := marshalErr(v)
	return b
}

// marshalErr is marshal for values an agent made, which may not encode.
func marshalErr(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
