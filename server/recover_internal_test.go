package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"pactd.dev/pactd/server/reqlog"
)

// TestPanicAnswersInternalOnBothPorts: a handler's panic is answered with
// rpcerr.Internal on the main port and on the native gRPC port alike: code
// Internal, the message "internal error" and no details (the exact Connect
// JSON below), and the panic is logged once with its procedure.
func TestPanicAnswersInternalOnBothPorts(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
	const procedure = "/pact.v1.Test/Panic"
	boom := func(context.Context, *connect.Request[emptypb.Empty]) (*connect.Response[emptypb.Empty], error) {
		panic("boom")
	}
	srv := httptest.NewServer(connect.NewUnaryHandler(procedure, boom, connect.WithRecover(s.recoverPanic)))
	defer srv.Close()

	resp, err := http.Post(srv.URL+procedure, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || string(body) != `{"code":"internal","message":"internal error"}` {
		t.Fatalf("main port: %d %s", resp.StatusCode, body)
	}
	_, err = connect.NewClient[emptypb.Empty, emptypb.Empty](srv.Client(), srv.URL+procedure).CallUnary(t.Context(), connect.NewRequest(&emptypb.Empty{}))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInternal || ce.Message() != "internal error" || len(ce.Details()) != 0 {
		t.Fatalf("main port, Connect client: %v", err)
	}
	if n := strings.Count(logs.String(), "panic in handler"); n != 2 || !strings.Contains(logs.String(), "procedure="+procedure) {
		t.Fatalf("main port logged %d panics:\n%s", n, logs.String())
	}

	logs.Reset()
	info := &grpc.UnaryServerInfo{FullMethod: procedure}
	ctx := reqlog.With(t.Context(), "req-1")
	_, err = s.grpcRecover(ctx, nil, info, func(context.Context, any) (any, error) { panic("boom") })
	st, ok := status.FromError(grpcStatus(err))
	if !ok || st.Code() != codes.Internal || st.Message() != "internal error" || len(st.Details()) != 0 {
		t.Fatalf("native gRPC port: %v", err)
	}
	if n := strings.Count(logs.String(), "panic in handler"); n != 1 || !strings.Contains(logs.String(), "procedure="+procedure) {
		t.Fatalf("native gRPC port logged %d panics:\n%s", n, logs.String())
	}
	if !reqlog.FaultLogged(ctx) {
		t.Fatal("native gRPC port: the panic is not marked as logged, so the boundary would log it again")
	}
}
