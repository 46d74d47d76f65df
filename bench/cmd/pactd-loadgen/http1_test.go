package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// scriptedVerifier answers by the Authorization value it receives and
// records what each call carried.
type scriptedVerifier struct {
	pactv1connect.UnimplementedVerificationServiceHandler
	mu   sync.Mutex
	seen []seenCall
}

type seenCall struct {
	authz, brand, ctype, version, bearer string
	deadline                             bool
}

func (v *scriptedVerifier) VerifyAgentRequest(ctx context.Context, req *pactv1.VerifyAgentRequestRequest) (*pactv1.VerifyAgentRequestResponse, error) {
	info, _ := connect.CallInfoForHandlerContext(ctx)
	_, dl := ctx.Deadline()
	v.mu.Lock()
	v.seen = append(v.seen, seenCall{authz: req.GetAuthorization(), brand: req.GetBrandId(),
		ctype: info.RequestHeader().Get("Content-Type"), version: info.RequestHeader().Get("Connect-Protocol-Version"),
		bearer: info.RequestHeader().Get("Authorization"), deadline: dl})
	v.mu.Unlock()
	switch req.GetAuthorization() {
	case "Bearer allow":
		return &pactv1.VerifyAgentRequestResponse{Allowed: true, HttpStatus: 200}, nil
	case "Bearer deny":
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 403, Reason: pactv1.DenyReason_DENY_REASON_AUDIENCE}, nil
	case "Bearer error":
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("no credential"))
	}
	// Anything else: echo nothing useful, as a refusal with no reason.
	return &pactv1.VerifyAgentRequestResponse{HttpStatus: 401}, nil
}

// The http1 client speaks the Connect protocol as connect-go does: a
// connect-go handler (an independent implementation) accepts its requests
// in both codecs, sees the same headers and values, and the answers get the
// labels outcome gives them, which are also connect-go's client's labels.
func TestHTTP1ClientMatchesConnectGo(t *testing.T) {
	sv := &scriptedVerifier{}
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewVerificationServiceHandler(sv))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// Expected labels, from outcome's rules: allowed with 200 is "";
	// an answer that is not is "denied STATUS REASON"; an RPC error is
	// "rpc CODE: MESSAGE" with the Connect code's name.
	cases := []struct{ authz, want string }{
		{"Bearer allow", ""},
		{"Bearer deny", "denied 403 DENY_REASON_AUDIENCE"},
		{"Bearer error", "rpc unauthenticated: no credential"},
		{"Bearer other", "denied 401 DENY_REASON_UNSPECIFIED"},
		{"Bearer q\"uote\\back\tslash é", "denied 401 DENY_REASON_UNSPECIFIED"},
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for _, codec := range []string{"json", "proto"} {
		w := wire{http: "1.1", codec: codec, workers: 2}
		raw, closeRaw, err := newVerifiers(srv.URL, "http1", "connect", w, 1, false, "fe-token", "brand-1")
		if err != nil {
			t.Fatal(err)
		}
		ref, closeRef, err := newVerifiers(srv.URL, "connect-go", "connect", w, 1, false, "fe-token", "brand-1")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			sv.mu.Lock()
			sv.seen = nil
			sv.mu.Unlock()
			got, gotRef := raw[0](ctx, c.authz), ref[0](ctx, c.authz)
			if got != c.want || gotRef != c.want {
				t.Errorf("%s %q: http1 %q, connect-go %q, want %q", codec, c.authz, got, gotRef, c.want)
			}
			sv.mu.Lock()
			seen := sv.seen
			sv.mu.Unlock()
			if len(seen) != 2 {
				t.Fatalf("%s %q: server saw %d calls, want 2", codec, c.authz, len(seen))
			}
			if seen[0] != seen[1] {
				t.Errorf("%s %q: the server saw http1's call as %+v, connect-go's as %+v", codec, c.authz, seen[0], seen[1])
			}
			wantCT := "application/" + codec
			if seen[0].authz != c.authz || seen[0].brand != "brand-1" || seen[0].ctype != wantCT ||
				seen[0].version != "1" || seen[0].bearer != "Bearer fe-token" || !seen[0].deadline {
				t.Errorf("%s %q: server saw %+v", codec, c.authz, seen[0])
			}
		}
		closeRaw()
		closeRef()
	}
}

// The http1 client keeps its connections: calls in a row reuse one, and
// a closed server is reported as a failure, not a panic or a hang.
func TestHTTP1ClientReusesConnectionsAndReportsAClosedServer(t *testing.T) {
	sv := &scriptedVerifier{}
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewVerificationServiceHandler(sv))
	srv := httptest.NewUnstartedServer(mux)
	var mu sync.Mutex
	conns := 0
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	hv, err := newHTTP1Verifier(srv.URL, "json", "fe", "b", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer hv.close()
	for range 20 {
		if got := hv.verify(t.Context(), "Bearer allow"); got != "" {
			t.Fatalf("allow: %q", got)
		}
	}
	mu.Lock()
	n := conns
	mu.Unlock()
	if n != 1 {
		t.Fatalf("20 calls in a row opened %d connections, want 1", n)
	}
	srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if got := hv.verify(ctx, "Bearer allow"); got == "" || got[:4] != "rpc " {
		t.Fatalf("after the server closed: %q, want an rpc failure", got)
	}
	if _, err := newHTTP1Verifier("https://127.0.0.1:1", "json", "fe", "b", 1); err == nil {
		t.Fatal("https accepted; the http1 client speaks plain http only")
	}
}
