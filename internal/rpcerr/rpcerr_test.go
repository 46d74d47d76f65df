package rpcerr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// details decodes an error's ErrorInfo and BadRequest details.
func details(t *testing.T, err error) (*errdetails.ErrorInfo, *errdetails.BadRequest, int) {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("%v is not a connect error", err)
	}
	var info *errdetails.ErrorInfo
	var br *errdetails.BadRequest
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if derr != nil {
			t.Fatal(derr)
		}
		switch v := v.(type) {
		case *errdetails.ErrorInfo:
			info = v
		case *errdetails.BadRequest:
			br = v
		}
	}
	return info, br, len(ce.Details())
}

// Each refusal of pact.v1.ErrorReason is sent with its one code and
// reason, in pactd's domain.
func TestEachRefusalKnowsItsCode(t *testing.T) {
	for _, tc := range []struct {
		r      Refusal
		code   connect.Code
		reason pactv1.ErrorReason
	}{
		{Unauthenticated, connect.CodeUnauthenticated, pactv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED},
		{PermissionDenied, connect.CodePermissionDenied, pactv1.ErrorReason_ERROR_REASON_PERMISSION_DENIED},
		{InvalidArgument, connect.CodeInvalidArgument, pactv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT},
		{notFound, connect.CodeNotFound, pactv1.ErrorReason_ERROR_REASON_NOT_FOUND},
		{alreadyExists, connect.CodeAlreadyExists, pactv1.ErrorReason_ERROR_REASON_ALREADY_EXISTS},
		{unavailable, connect.CodeUnavailable, pactv1.ErrorReason_ERROR_REASON_UNAVAILABLE},
		{FailedPrecondition, connect.CodeFailedPrecondition, pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION},
		{AtLimit, connect.CodeResourceExhausted, pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION},
		{Conflict, connect.CodeAborted, pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION},
		{Throttled, connect.CodeResourceExhausted, pactv1.ErrorReason_ERROR_REASON_UNAVAILABLE},
	} {
		err := tc.r.Err("no")
		info, br, n := details(t, err)
		if connect.CodeOf(err) != tc.code || err.Message() != "no" || info.GetReason() != tc.reason.String() ||
			info.GetDomain() != Domain || len(info.GetMetadata()) != 0 || br != nil || n != 1 {
			t.Errorf("%v: %v, info %v, %d details; want %v %v", tc.r, err, info, n, tc.code, tc.reason)
		}
	}
}

func TestErrMetadataAndFieldErr(t *testing.T) {
	r := Refusal{Code: connect.CodeInvalidArgument, Reason: "CONSENT_SESSION_REFUSAL_MALFORMED"}
	err := r.FieldErr("consent_session", "not a session", "brand_id", "acme")
	info, br, n := details(t, err)
	if connect.CodeOf(err) != connect.CodeInvalidArgument || info.GetReason() != r.Reason || info.GetMetadata()["brand_id"] != "acme" ||
		len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != "consent_session" || n != 2 {
		t.Fatalf("%v: info %v, bad request %v", err, info, br)
	}
	if got := Reason(err); got != r.Reason {
		t.Errorf("Reason = %q", got)
	}
	if got := FieldViolations(err); len(got) != 1 || got[0] != "consent_session" {
		t.Errorf("FieldViolations = %v", got)
	}
}

// Fault logs the cause once and answers UNAVAILABLE without it; its
// error, and only its error, says it was logged.
func TestFaultIsLoggedOnceAndMarked(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	err := Fault(t.Context(), log, "load brand", errors.New("db: connection refused"))
	if connect.CodeOf(err) != connect.CodeUnavailable || Reason(err) != pactv1.ErrorReason_ERROR_REASON_UNAVAILABLE.String() {
		t.Fatalf("Fault = %v", err)
	}
	var ce *connect.Error
	if errors.As(err, &ce); strings.Contains(ce.Message(), "connection refused") {
		t.Errorf("the cause reached the client: %q", ce.Message())
	}
	if strings.Count(buf.String(), "connection refused") != 1 {
		t.Errorf("log %q: want the cause once", buf.String())
	}
	if !Logged(err) || !Logged(fmt.Errorf("wrapped: %w", err)) {
		t.Error("Fault's error is not marked logged")
	}
	for _, other := range []error{Unavailable("x"), FailedPrecondition.Err("x"), errors.New("x"), nil} {
		if Logged(other) {
			t.Errorf("Logged(%v) = true", other)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Fault(ctx, log, "op", errors.New("y")); !errors.Is(err, context.Canceled) || Logged(err) {
		t.Errorf("a canceled context: %v", err)
	}
}
