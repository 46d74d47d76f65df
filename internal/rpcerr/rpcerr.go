// Package rpcerr builds pactd's RPC errors the same way in every service: a
// connect code, a client-safe message, a google.rpc.ErrorInfo whose reason
// comes from pact.v1.ErrorReason (domain "pactd"), and for invalid arguments
// a google.rpc.BadRequest listing every field violation.
package rpcerr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// Domain is the ErrorInfo domain of every pactd error.
const Domain = "pactd"

// New returns a connect error with an ErrorInfo detail.
func New(code connect.Code, reason pactv1.ErrorReason, msg string) *connect.Error {
	return withInfo(code, reason, errors.New(msg))
}

// withInfo returns a connect error of cause with an ErrorInfo detail.
func withInfo(code connect.Code, reason pactv1.ErrorReason, cause error) *connect.Error {
	err := connect.NewError(code, cause)
	if d, derr := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: reason.String(), Domain: Domain}); derr == nil {
		err.AddDetail(d)
	}
	return err
}

// Violations collects field violations of one request.
type Violations struct {
	list []*errdetails.BadRequest_FieldViolation
}

// Add records that field breaks a rule. The description names the rule.
func (v *Violations) Add(field, format string, args ...any) {
	v.list = append(v.list, &errdetails.BadRequest_FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// Empty reports whether no violation was recorded.
func (v *Violations) Empty() bool { return len(v.list) == 0 }

// Err returns nil when there are no violations, else an InvalidArgument
// error carrying ErrorInfo and BadRequest details.
func (v *Violations) Err() error {
	if v.Empty() {
		return nil
	}
	fields := make([]string, 0, len(v.list))
	for _, fv := range v.list {
		fields = append(fields, fv.Field+": "+fv.Description)
	}
	err := New(connect.CodeInvalidArgument, pactv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "invalid request: "+strings.Join(fields, "; "))
	if d, derr := connect.NewErrorDetail(&errdetails.BadRequest{FieldViolations: v.list}); derr == nil {
		err.AddDetail(d)
	}
	return err
}

// InvalidField is a one-violation InvalidArgument error.
func InvalidField(field, format string, args ...any) error {
	var v Violations
	v.Add(field, format, args...)
	return v.Err()
}

// NotFound is a NotFound error naming what was missing.
func NotFound(what string) error {
	return New(connect.CodeNotFound, pactv1.ErrorReason_ERROR_REASON_NOT_FOUND, what+" not found")
}

// AlreadyExists is an AlreadyExists error.
func AlreadyExists(msg string) error {
	return New(connect.CodeAlreadyExists, pactv1.ErrorReason_ERROR_REASON_ALREADY_EXISTS, msg)
}

// Internal is the answer to a panic in a handler, on both ports: code
// Internal and the message "internal error", nothing else; the panic value
// belongs in the log, never on the wire. It carries no ErrorInfo, unlike
// every other error here: that is the answer pactd has always sent for a
// panic, and a detail would change it.
func Internal() *connect.Error {
	return connect.NewError(connect.CodeInternal, errors.New("internal error"))
}

// Unavailable is the error for infrastructure faults the caller may retry.
func Unavailable(msg string) error {
	return New(connect.CodeUnavailable, pactv1.ErrorReason_ERROR_REASON_UNAVAILABLE, msg)
}

// Reason returns the ErrorInfo reason of a connect error, or "".
func Reason(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				return info.GetReason()
			}
		}
	}
	return ""
}

// FieldViolations returns the fields named by a BadRequest detail.
func FieldViolations(err error) []string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return nil
	}
	var out []string
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if br, ok := v.(*errdetails.BadRequest); ok {
				for _, fv := range br.GetFieldViolations() {
					out = append(out, fv.GetField())
				}
			}
		}
	}
	return out
}

// Fault reports an unexpected store or dependency failure: the cause goes to
// the log once, the client gets a retryable Unavailable whose only detail
// is ErrorInfo UNAVAILABLE.
// The error it returns says it was logged (Logged), so the RPC boundary
// does not log it a second time. Context errors are returned unchanged
// (connect maps them itself).
func Fault(ctx context.Context, log *slog.Logger, op string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	log.ErrorContext(ctx, op, slog.String("error", err.Error()))
	return withInfo(connect.CodeUnavailable, pactv1.ErrorReason_ERROR_REASON_UNAVAILABLE, loggedFault{})
}

// faultMessage is the client's whole answer to a fault.
const faultMessage = "a dependency of pactd is unavailable; retry"

// loggedFault is the cause of Fault's error: its message is the client's,
// and its type marks the fault as logged with its cause.
type loggedFault struct{}

func (loggedFault) Error() string { return faultMessage }

// Logged reports whether err is (or wraps) an error of Fault, whose cause
// is in the log already.
func Logged(err error) bool {
	var f loggedFault
	return errors.As(err, &f)
}
