// Package a2aerr builds A2A errors (PACT 1.0 §6) byte for byte: the AIP-193
// envelope
//
//	{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"…",
//	  "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"}]}}
//
// with each reason's HTTP status and google.rpc status name, and the
// messages clients compare exactly. pactd returns these bodies in
// pact.v1.A2AError so every frontend sends identical bytes.
package a2aerr

import (
	"bytes"
	"encoding/json"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// ContentType is the exact Content-Type of every A2A response.
const ContentType = "application/a2a+json"

// Reason is an A2A error reason (details[0].reason).
type Reason string

// The A2A error reasons PACT 1.0 uses.
const (
	InvalidParams                Reason = "INVALID_PARAMS"
	ContentTypeNotSupported      Reason = "CONTENT_TYPE_NOT_SUPPORTED"
	UnsupportedOperation         Reason = "UNSUPPORTED_OPERATION"
	PushNotificationNotSupported Reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"
	TaskNotFound                 Reason = "TASK_NOT_FOUND"
	Internal                     Reason = "INTERNAL"
)

// Messages that clients or the conformance suite compare exactly.
const (
	// MsgUnknownContextID answers an unknown, foreign or malformed
	// contextId, identically in every case (no existence oracle).
	MsgUnknownContextID = "Unknown contextId"
	// MsgContextClosed answers a turn in a closed context.
	MsgContextClosed = "contextId is closed; start a new conversation without contextId"
	// MsgOtherBrandUser answers a delegated turn whose Brand user differs
	// from the one the context runs as.
	MsgOtherBrandUser = "contextId already runs as a different Brand user"
	// MsgPendingDuplicate answers a repeated messageId whose first turn has
	// no stored reply yet.
	MsgPendingDuplicate = "messageId was already received in this context and has no reply yet"
	// MsgReplyIDCollision answers a messageId equal to an agent message's id.
	MsgReplyIDCollision = "messageId is the id of an agent message in this context"
	// MsgMessageIDTooLong answers a messageId longer than pactd stores.
	MsgMessageIDTooLong = "messageId must be at most 256 bytes"
)

// Domain is the ErrorInfo domain of every A2A error.
const Domain = "a2a-protocol.org"

// errorInfoType is the @type of the ErrorInfo detail.
const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// HTTPStatus returns the reason's HTTP status and google.rpc status name.
func HTTPStatus(r Reason) (code int, status string) {
	switch r {
	case InvalidParams, ContentTypeNotSupported:
		return 400, "INVALID_ARGUMENT"
	case UnsupportedOperation, PushNotificationNotSupported:
		return 400, "FAILED_PRECONDITION"
	case TaskNotFound:
		return 404, "NOT_FOUND"
	default:
		return 500, "INTERNAL"
	}
}

// The envelope's JSON shape; field order is the wire order.
type envelope struct {
	Error body `json:"error"`
}

type body struct {
	Code    int      `json:"code"`
	Status  string   `json:"status"`
	Message string   `json:"message"`
	Details []detail `json:"details"`
}

type detail struct {
	Type   string `json:"@type"`
	Reason Reason `json:"reason"`
	Domain string `json:"domain"`
}

// Body returns the complete JSON response body of an A2A error. Like
// JavaScript's JSON.stringify it does not escape <, > and &, so a message
// that echoes client input (a task id) has the same bytes in every
// frontend.
func Body(r Reason, message string) []byte {
	code, status := HTTPStatus(r)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Encoding strings and ints cannot fail.
	_ = enc.Encode(envelope{Error: body{Code: code, Status: status, Message: message,
		Details: []detail{{Type: errorInfoType, Reason: r, Domain: Domain}}}})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Proto returns the error as the pact.v1.A2AError a frontend sends as is.
func Proto(r Reason, message string) *pactv1.A2AError {
	code, status := HTTPStatus(r)
	return &pactv1.A2AError{
		HttpStatus: int32(code), Status: status, Reason: string(r), Message: message,
		BodyJson: string(Body(r, message)),
	}
}
