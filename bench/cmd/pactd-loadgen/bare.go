package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/oauthwire"
)

// The bare server (-serve-bare) is the transports' own floor, without
// pactd: VerificationService/VerifyAgentRequest answered with a fixed
// refusal (the one -mode floor expects) by the same libraries pactd serves
// with, configured as pactd configures them, and nothing else — no
// interceptors, credentials, metrics, logging, request ids or store. Run
// pinned like pactd, the difference between pactd's floor and this one is
// what pactd's own layers cost per call; this one is what the libraries
// cost.
//
//   - the "main" address: net/http (HTTP/1.1 and h2c) with connect-go's
//     handler (Connect, gRPC, gRPC-Web; proto and JSON codecs);
//   - the "grpc" address: grpc-go's server, as on pactd's native port
//     (with the same pool of stream workers).

// bareVerifier answers every VerifyAgentRequest with the floor refusal.
type bareVerifier struct {
	pactv1connect.UnimplementedVerificationServiceHandler
}

// bareAnswer is the refusal pactd gives a non-JWT Authorization value,
// with the members pactd sets on it (so the answers are the same size).
var bareAnswer = &pactv1.VerifyAgentRequestResponse{
	Allowed:         false,
	HttpStatus:      401,
	WwwAuthenticate: oauthwire.Challenge,
	Reason:          pactv1.DenyReason_DENY_REASON_MALFORMED,
}

// VerifyAgentRequest answers with the fixed refusal.
func (bareVerifier) VerifyAgentRequest(context.Context, *pactv1.VerifyAgentRequestRequest) (*pactv1.VerifyAgentRequestResponse, error) {
	return bareAnswer, nil
}

// bareGRPC adapts bareVerifier to grpc-go's generated interface.
type bareGRPC struct {
	pactv1.UnimplementedVerificationServiceServer
}

// VerifyAgentRequest answers with the fixed refusal.
func (bareGRPC) VerifyAgentRequest(context.Context, *pactv1.VerifyAgentRequestRequest) (*pactv1.VerifyAgentRequestResponse, error) {
	return bareAnswer, nil
}

// serveBare serves the bare floor on spec ("main=host:port,grpc=host:port",
// either may be left out) until interrupted. Both must be loopback.
func serveBare(spec string, stdout io.Writer) error {
	var mainAddr, grpcAddr string
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(part, "=")
		switch {
		case ok && k == "main":
			mainAddr = v
		case ok && k == "grpc":
			grpcAddr = v
		default:
			return fmt.Errorf("-serve-bare: %q is not main=host:port or grpc=host:port", part)
		}
	}
	b, err := startBare(mainAddr, grpcAddr)
	if err != nil {
		return err
	}
	if b.main != nil {
		fmt.Fprintln(stdout, "bare net/http + connect-go on", b.main.Addr())
	}
	if b.grpc != nil {
		fmt.Fprintln(stdout, "bare grpc-go on", b.grpc.Addr())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case err = <-b.errc:
	}
	b.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// bareServer is a running bare floor.
type bareServer struct {
	main, grpc net.Listener // nil when not served
	errc       chan error
	stops      []func()
}

// Close stops both servers.
func (b *bareServer) Close() {
	for _, s := range b.stops {
		s()
	}
}

// startBare serves the bare floor on the given loopback addresses ("" for
// none; port 0 for a free one).
func startBare(mainAddr, grpcAddr string) (*bareServer, error) {
	if mainAddr == "" && grpcAddr == "" {
		return nil, errors.New("-serve-bare: no address")
	}
	listen := func(addr string) (net.Listener, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
			_ = ln.Close()
			return nil, fmt.Errorf("-serve-bare: %s is not loopback", ln.Addr())
		}
		return ln, nil
	}
	b := &bareServer{errc: make(chan error, 2)}
	if mainAddr != "" {
		ln, err := listen(mainAddr)
		if err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		// pactd compresses no answer below 4 KiB (server.go); without the
		// same floor connect-go gzips every answer a client accepts gzip
		// for, and the bare floor would pay a cost pactd does not.
		mux.Handle(pactv1connect.NewVerificationServiceHandler(bareVerifier{}, connect.WithCompressMinBytes(4096)))
		p := new(http.Protocols)
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv := &http.Server{Handler: mux, Protocols: p, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
		go func() { b.errc <- srv.Serve(ln) }()
		b.main = ln
		b.stops = append(b.stops, func() { _ = srv.Close() })
	}
	if grpcAddr != "" {
		ln, err := listen(grpcAddr)
		if err != nil {
			b.Close()
			return nil, err
		}
		// As pactd's native port (server/grpcnative.go).
		gs := grpc.NewServer(grpc.NumStreamWorkers(bareStreamWorkers))
		pactv1.RegisterVerificationServiceServer(gs, bareGRPC{})
		go func() { b.errc <- gs.Serve(ln) }()
		b.grpc = ln
		b.stops = append(b.stops, gs.Stop)
	}
	return b, nil
}

// bareStreamWorkers is pactd's native-port stream worker pool size
// (server.streamWorkers).
const bareStreamWorkers = 256
