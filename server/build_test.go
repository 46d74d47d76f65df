package server_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/server"
)

// Build refuses a configuration it cannot complete, and releases what it
// was given on its way out: the listeners the caller bound are closed. The
// positive control builds with the same listeners' kind and keeps them
// open until the server is closed.
func TestBuildReleasesTheListenersWhenItFails(t *testing.T) {
	// closed reports whether ln is closed; on an open one Accept times out.
	closed := func(ln net.Listener) bool {
		_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := ln.Accept()
		return errors.Is(err, net.ErrClosed)
	}
	for _, tc := range []struct {
		name string
		env  []string
		want string // in the error; "" for success
	}{
		{"ok/built", []string{"PACT_GRPC_LISTEN=127.0.0.1:0"}, ""},
		{"fail/bad-kek", []string{"PACT_GRPC_LISTEN=127.0.0.1:0", "PACT_KEY_ENCRYPTION_KEY=c2hvcnQ="}, "key-encryption-key"},
		{"fail/listener-for-a-port-turned-off", []string{"PACT_GRPC_LISTEN=off"}, "native gRPC listener was given"},
		{"fail/tls-certificate-missing", []string{"PACT_GRPC_LISTEN=127.0.0.1:0", "PACT_TLS_CERT=missing.pem", "PACT_TLS_KEY=missing-key.pem"}, "load TLS certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api, grpcLn := loopback(t), loopback(t)
			srv, err := server.Build(t.Context(), testConfig(t, "", t.TempDir(), tc.env...),
				server.Deps{Listeners: server.Listeners{API: api, GRPC: grpcLn}})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				// Open until Close: a dial completes in the backlog.
				for _, ln := range []net.Listener{api, grpcLn} {
					c, err := net.Dial("tcp", ln.Addr().String())
					if err != nil {
						t.Fatalf("dial a listener of a built server: %v", err)
					}
					_ = c.Close()
				}
				if err := srv.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if !closed(api) || !closed(grpcLn) {
					t.Fatal("Close left a listener open")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build: %v, want an error with %q", err, tc.want)
			}
			if srv != nil {
				t.Fatal("Build returned a server with its error")
			}
			if !closed(api) || !closed(grpcLn) {
				t.Fatal("a failed Build left a listener open")
			}
		})
	}
}
