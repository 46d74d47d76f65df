package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// marshalJSON is the -o json form of a response: protojson with every field
// present (zero values included, so a script reads the same shape every
// time), re-indented by encoding/json because protojson's own whitespace
// deliberately varies between builds.
func marshalJSON(m proto.Message) ([]byte, error) {
	raw, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, err
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// emit prints a response: as JSON with -o json, else with table.
func (s *session) emit(m proto.Message, table func(w io.Writer)) error {
	if s.json {
		b, err := marshalJSON(m)
		if err != nil {
			return failure("%s: encode the response: %v", s.op, err)
		}
		_, err = s.out.Write(b)
		return err
	}
	tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	table(tw)
	return tw.Flush()
}

// row writes one tab-separated table row. Tabs and line breaks inside a
// value would break the columns, so they become spaces; an empty value
// is "-", so every column of every row holds something.
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		c = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, c)
		if c == "" {
			c = "-"
		}
		cells[i] = c
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// when formats a timestamp for a table: RFC 3339 in UTC, "-" when absent.
func when(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return "-"
	}
	return ts.AsTime().UTC().Format(time.RFC3339)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// rpcError turns a failed call into the message to print: the command, the
// status code, the pactd ErrorInfo reason and every field violation of a
// google.rpc.BadRequest, one per line, or the message when there are none.
func (s *session) rpcError(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return failure("%s: %v", s.op, err)
	}
	var reason string
	var fields []*errdetails.BadRequest_FieldViolation
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue
		}
		switch x := v.(type) {
		case *errdetails.ErrorInfo:
			reason = x.GetReason()
		case *errdetails.BadRequest:
			fields = append(fields, x.GetFieldViolations()...)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", s.op, ce.Code())
	if reason != "" {
		fmt.Fprintf(&b, " (%s)", reason)
	}
	for _, f := range fields {
		fmt.Fprintf(&b, "\n  field %s: %s", f.GetField(), f.GetDescription())
	}
	if len(fields) == 0 && ce.Message() != "" {
		fmt.Fprintf(&b, ": %s", ce.Message())
	}
	switch {
	case reason != "":
	case ce.Code() == connect.CodeUnavailable || ce.Code() == connect.CodeDeadlineExceeded:
		// No ErrorInfo: pactd did not answer at all.
		fmt.Fprintf(&b, "\n  is pactd running at %s? (set PACT_ADDR or -addr; -grpc for the native gRPC port)", s.base)
	case ce.Code() == connect.CodeUnimplemented || ce.Code() == connect.CodeUnknown || ce.Code() == connect.CodeInternal:
		fmt.Fprintf(&b, "\n  is %s pactd? (-grpc for its native gRPC port, else its main port)", s.base)
	}
	// Name the pactd that answered: a credential of another pactd (a demo's,
	// a second instance's) is the usual cause, and the address shows it.
	if reason == "ERROR_REASON_UNAUTHENTICATED" {
		fmt.Fprintf(&b, "\n  the pactd at %s does not know this credential (PACT_ADMIN_TOKEN or -token-file): "+
			"it is another pactd's, or it was revoked or expired", s.where)
	}
	if reason == "ERROR_REASON_PERMISSION_DENIED" {
		fmt.Fprintf(&b, "\n  the credential is not an admin credential of the pactd at %s", s.where)
	}
	return failure("%s", b.String())
}
