package frontdoor

import (
	"bytes"
	"encoding/json"
	"net/http"

	"connectrpc.com/connect"

	"pactd.dev/pactd/internal/a2aerr"
)

// writeError sends an A2A error (PACT 1.0 §6) in its exact envelope.
func writeError(w http.ResponseWriter, reason a2aerr.Reason, msg string) {
	status, _ := a2aerr.HTTPStatus(reason)
	writeA2A(w, status, a2aerr.Body(reason, msg))
}

// internalError sends the A2A INTERNAL error.
func internalError(w http.ResponseWriter) { writeError(w, a2aerr.Internal, "Internal error") }

// writeA2A sends an A2A response body.
func writeA2A(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", a2aerr.ContentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// bare sends a status with no body: unmatched routes, an unknown Brand and
// refused PA JWTs are not A2A errors.
func bare(w http.ResponseWriter, status int) { w.WriteHeader(status) }

// marshal encodes JSON as JavaScript's JSON.stringify does (no escaping of
// <, > and &), so bytes that echo client input read the same everywhere.
// It is for values that cannot fail to encode.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// isNotFound reports whether a service answered NotFound.
func isNotFound(err error) bool { return connect.CodeOf(err) == connect.CodeNotFound }
