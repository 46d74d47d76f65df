// Package rpcerr is the one builder of pactd's refusals, the same in every
// service: a connect code, a client-safe message, a google.rpc.ErrorInfo
// whose reason names the refusal (domain "pactd", optional metadata), and
// for invalid arguments a google.rpc.BadRequest listing every field
// violation.
//
// Each kind of refusal is a Refusal value that knows its code and its
// reason, declared once (the pact.v1.ErrorReason ones here; a service's own
// refusal enums beside the enum's mapping), so a reason is always sent with
// the same code and no service builds a connect error by hand.
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

// Refusal is one kind of refusal: the connect code it is sent with and
// the ErrorInfo reason a client reads (an enum value's name).
type Refusal struct {
	Code   connect.Code
	Reason string
}

// Of returns the refusal of a pact.v1.ErrorReason sent with code.
func Of(code connect.Code, reason pactv1.ErrorReason) Refusal {
	return Refusal{Code: code, Reason: reason.String()}
}

// The refusals of pact.v1.ErrorReason, each with its one code.
var (
	// Unauthenticated: no credential, or one pactd does not accept.
	Unauthenticated = Of(connect.CodeUnauthenticated, pactv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED)
	// PermissionDenied: the caller's credential may not make this call.
	PermissionDenied = Of(connect.CodePermissionDenied, pactv1.ErrorReason_ERROR_REASON_PERMISSION_DENIED)
	// InvalidArgument: a malformed request (see Violations for fields).
	InvalidArgument = Of(connect.CodeInvalidArgument, pactv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	// notFound: what the call names does not exist (NotFound builds it).
	notFound = Of(connect.CodeNotFound, pactv1.ErrorReason_ERROR_REASON_NOT_FOUND)
	// alreadyExists: what the call creates exists already (AlreadyExists).
	alreadyExists = Of(connect.CodeAlreadyExists, pactv1.ErrorReason_ERROR_REASON_ALREADY_EXISTS)
	// unavailable: an infrastructure fault the caller may retry
	// (Unavailable, Fault).
	unavailable = Of(connect.CodeUnavailable, pactv1.ErrorReason_ERROR_REASON_UNAVAILABLE)
	// FailedPrecondition: the state does not allow the call.
	FailedPrecondition = Of(connect.CodeFailedPrecondition, pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION)
	// AtLimit: the state does not allow the call because a count is at its
	// limit (a Brand's agents); retrying will not help until one goes.
	AtLimit = Of(connect.CodeResourceExhausted, pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION)
	// Conflict: a concurrent change won; the caller may read and retry.
	Conflict = Of(connect.CodeAborted, pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION)
	// Throttled: too many attempts from this source for now (user-code
	// guessing limits); retry later.
	Throttled = Of(connect.CodeResourceExhausted, pactv1.ErrorReason_ERROR_REASON_UNAVAILABLE)
)

// Err returns the refusal as an RPC error with a client-safe message and
// an ErrorInfo detail; kv are metadata key, value pairs.
func (r Refusal) Err(msg string, kv ...string) *connect.Error {
	return r.errOf(errors.New(msg), kv)
}

// FieldErr is Err with a BadRequest detail naming field and msg, for a
// refusal of one field's value.
func (r Refusal) FieldErr(field, msg string, kv ...string) *connect.Error {
	err := r.Err(msg, kv...)
	br := &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: msg}}}
	if d, derr := connect.NewErrorDetail(br); derr == nil {
		err.AddDetail(d)
	}
	return err
}

// errOf returns a connect error of cause with the refusal's ErrorInfo.
func (r Refusal) errOf(cause error, kv []string) *connect.Error {
	err := connect.NewError(r.Code, cause)
	info := &errdetails.ErrorInfo{Reason: r.Reason, Domain: Domain}
	if len(kv) > 0 {
		info.Metadata = make(map[string]string, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			info.Metadata[kv[i]] = kv[i+1]
		}
	}
	if d, derr := connect.NewErrorDetail(info); derr == nil {
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
	err := InvalidArgument.Err("invalid request: " + strings.Join(fields, "; "))
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
	return notFound.Err(what + " not found")
}

// AlreadyExists is an AlreadyExists error.
func AlreadyExists(msg string) error {
	return alreadyExists.Err(msg)
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
	return unavailable.Err(msg)
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
	return unavailable.errOf(loggedFault{}, nil)
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
