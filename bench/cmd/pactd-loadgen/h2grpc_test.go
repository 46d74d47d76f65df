package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// grpcScripted is a grpc-go VerificationService that answers by the
// Authorization value it receives and records what each call carried.
type grpcScripted struct {
	pactv1.UnimplementedVerificationServiceServer
	mu        sync.Mutex
	seen      []grpcSeen
	inFlight  atomic.Int32
	maxFlight atomic.Int32
	canceled  chan struct{} // a "Bearer slow" call's context ended
}

type grpcSeen struct {
	authz, brand, ctype, bearer string
	deadline                    bool
}

func (s *grpcScripted) VerifyAgentRequest(ctx context.Context, req *pactv1.VerifyAgentRequestRequest) (*pactv1.VerifyAgentRequestResponse, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.maxFlight.Load(); n > m && !s.maxFlight.CompareAndSwap(m, n); m = s.maxFlight.Load() {
	}
	md, _ := metadata.FromIncomingContext(ctx)
	_, dl := ctx.Deadline()
	first := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	s.mu.Lock()
	s.seen = append(s.seen, grpcSeen{authz: req.GetAuthorization(), brand: req.GetBrandId(),
		ctype: first("content-type"), bearer: first("authorization"), deadline: dl})
	s.mu.Unlock()
	switch a := req.GetAuthorization(); {
	case a == "Bearer deny":
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 403, Reason: pactv1.DenyReason_DENY_REASON_AUDIENCE}, nil
	case a == "Bearer error":
		return nil, status.Error(codes.Unauthenticated, "no credential")
	case a == "Bearer odd message":
		// grpc-go percent-encodes this grpc-message on the wire.
		return nil, status.Error(codes.PermissionDenied, "100% naïve\r\nline")
	case a == "Bearer slow":
		<-ctx.Done()
		if s.canceled != nil {
			s.canceled <- struct{}{}
		}
		return nil, ctx.Err()
	case a == "Bearer huge":
		return &pactv1.VerifyAgentRequestResponse{WwwAuthenticate: strings.Repeat("x", 100<<10)}, nil
	case strings.HasPrefix(a, "Bearer wait"):
		time.Sleep(2 * time.Millisecond) // so that calls overlap
	case a == "Bearer other":
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 401}, nil
	}
	return &pactv1.VerifyAgentRequestResponse{Allowed: true, HttpStatus: 200}, nil
}

// countingListener counts the connections it accepts and those closed.
type countingListener struct {
	net.Listener
	accepted, closed atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
		c = &countedConn{Conn: c, l: l}
	}
	return c, err
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.closed.Add(1) })
	return c.Conn.Close()
}

// startGRPC serves s with grpc-go on a loopback port.
func startGRPC(t *testing.T, s *grpcScripted, opts ...grpc.ServerOption) (*countingListener, *grpc.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	gs := grpc.NewServer(opts...)
	pactv1.RegisterVerificationServiceServer(gs, s)
	go func() { _ = gs.Serve(cl) }()
	t.Cleanup(gs.Stop)
	return cl, gs
}

// The h2grpc client speaks gRPC as grpc-go's client does: a grpc-go server
// (an independent implementation) accepts its requests, sees the same
// metadata and message, and the answers get the labels outcome gives
// grpc-go's client's answers.
func TestH2GRPCClientMatchesGRPCGo(t *testing.T) {
	s := &grpcScripted{}
	ln, _ := startGRPC(t, s)
	base := "http://" + ln.Addr().String()
	// Expected labels, from outcome's rules: allowed with 200 is ""; an
	// answer that is not is "denied STATUS REASON"; an RPC error is "rpc "
	// and grpc-go's status error text, "rpc error: code = CODE desc = MSG",
	// with the message as the handler gave it.
	cases := []struct{ authz, want string }{
		{"Bearer allow", ""},
		{"Bearer deny", "denied 403 DENY_REASON_AUDIENCE"},
		{"Bearer error", "rpc rpc error: code = Unauthenticated desc = no credential"},
		{"Bearer odd message", "rpc rpc error: code = PermissionDenied desc = 100% naïve\r\nline"},
		{"Bearer other", "denied 401 DENY_REASON_UNSPECIFIED"},
		{"Bearer q\"uote\\back\tslash é", ""},
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	lite, closeLite, err := newVerifiers(base, "h2grpc", "grpc", wire{http: "2", codec: "proto"}, 1, false, "fe-token", "brand-1")
	if err != nil {
		t.Fatal(err)
	}
	defer closeLite()
	ref, closeRef, err := newVerifiers(base, "grpc-go", "grpc", wire{http: "2", codec: "proto"}, 1, false, "fe-token", "brand-1")
	if err != nil {
		t.Fatal(err)
	}
	defer closeRef()
	for _, c := range cases {
		s.mu.Lock()
		s.seen = nil
		s.mu.Unlock()
		got, gotRef := lite[0](ctx, c.authz), ref[0](ctx, c.authz)
		if got != c.want || gotRef != c.want {
			t.Errorf("%q: h2grpc %q, grpc-go %q, want %q", c.authz, got, gotRef, c.want)
		}
		s.mu.Lock()
		seen := s.seen
		s.mu.Unlock()
		if len(seen) != 2 {
			t.Fatalf("%q: server saw %d calls, want 2", c.authz, len(seen))
		}
		if seen[0] != seen[1] {
			t.Errorf("%q: the server saw h2grpc's call as %+v, grpc-go's as %+v", c.authz, seen[0], seen[1])
		}
		if seen[0].authz != c.authz || seen[0].brand != "brand-1" || seen[0].ctype != "application/grpc" ||
			seen[0].bearer != "Bearer fe-token" || !seen[0].deadline {
			t.Errorf("%q: server saw %+v", c.authz, seen[0])
		}
	}
	// An answer above the client's 64 KiB bound is refused, not read on.
	if got := lite[0](ctx, "Bearer huge"); got != "answer larger than 64 KiB" {
		t.Errorf("a 100 KiB answer: %q", got)
	}
	if got := lite[0](ctx, "Bearer allow"); got != "" {
		t.Errorf("the call after a refused answer: %q, want allowed", got)
	}
	if _, err := newH2GRPCVerifier("https://127.0.0.1:1", "fe", "b"); err == nil {
		t.Error("https accepted; h2grpc speaks h2c only")
	}
}

// Many workers on one connection: the server's stream limit holds (grpc-go
// refuses a stream above it), requests larger in all than the connection's
// 64 KiB send window flow on the server's window updates, and every call
// is answered.
func TestH2GRPCClientKeepsStreamLimitAndWindows(t *testing.T) {
	s := &grpcScripted{}
	ln, _ := startGRPC(t, s, grpc.MaxConcurrentStreams(4))
	v, err := newH2GRPCVerifier("http://"+ln.Addr().String(), "fe", "b")
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	big := "Bearer wait" + strings.Repeat("a", 2000) // 32 × 40 × 2 KB ≈ 2.5 MB
	var wg sync.WaitGroup
	var bad atomic.Int32
	var firstBad atomic.Value
	for range 32 {
		wg.Go(func() {
			for range 40 {
				if got := v.verify(t.Context(), big); got != "" {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, got)
				}
			}
		})
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d of 1280 calls failed, the first: %q", n, firstBad.Load())
	}
	if m := s.maxFlight.Load(); m != 4 {
		t.Errorf("at most %d calls in the handler at once; want 4 (the limit, with 32 workers waiting)", m)
	}
	if n := ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// A call whose context ends is reset and reported as grpc-go reports it;
// the server sees the cancellation and the connection carries the next
// call.
func TestH2GRPCClientCancels(t *testing.T) {
	s := &grpcScripted{canceled: make(chan struct{}, 1)}
	ln, _ := startGRPC(t, s)
	v, err := newH2GRPCVerifier("http://"+ln.Addr().String(), "fe", "b")
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if got, want := v.verify(ctx, "Bearer slow"), "rpc rpc error: code = DeadlineExceeded desc = context deadline exceeded"; got != want {
		t.Fatalf("slow call: %q, want %q", got, want)
	}
	select {
	case <-s.canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's handler never saw its context end")
	}
	if got := v.verify(t.Context(), "Bearer allow"); got != "" {
		t.Fatalf("the next call: %q", got)
	}
	if n := ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// When a connection's stream ids run out the client moves to a new
// connection and closes the old one once its streams end; when the server
// goes, calls fail as unavailable, and a server back on the address is
// used again.
func TestH2GRPCClientRenewsConnections(t *testing.T) {
	old := h2LastStreamID
	h2LastStreamID = 9 // five streams a connection: 1, 3, 5, 7, 9
	t.Cleanup(func() { h2LastStreamID = old })
	s := &grpcScripted{}
	ln, gs := startGRPC(t, s)
	addr := ln.Addr().String()
	v, err := newH2GRPCVerifier("http://"+addr, "fe", "b")
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	for i := range 12 {
		if got := v.verify(t.Context(), "Bearer allow"); got != "" {
			t.Fatalf("call %d: %q", i, got)
		}
	}
	if n := ln.accepted.Load(); n != 3 {
		t.Errorf("12 calls at 5 a connection opened %d connections, want 3", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ln.closed.Load() != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := ln.closed.Load(); n != 2 {
		t.Errorf("%d connections closed, want the 2 used up", n)
	}

	gs.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if got := v.verify(ctx, "Bearer allow"); !strings.HasPrefix(got, "rpc unavailable: ") {
		t.Fatalf("after the server stopped: %q, want rpc unavailable", got)
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address was taken meanwhile: %v", err)
	}
	gs2 := grpc.NewServer()
	pactv1.RegisterVerificationServiceServer(gs2, s)
	go func() { _ = gs2.Serve(ln2) }()
	defer gs2.Stop()
	if got := v.verify(ctx, "Bearer allow"); got != "" {
		t.Fatalf("with a server back on the address: %q", got)
	}
}

// A server that does not speak HTTP/2 fails the handshake, reported as
// unavailable; nothing hangs.
func TestH2GRPCClientRefusesANonHTTP2Server(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
			_ = c.Close()
		}
	}()
	v, err := newH2GRPCVerifier("http://"+ln.Addr().String(), "fe", "b")
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if got := v.verify(ctx, "Bearer allow"); !strings.HasPrefix(got, "rpc unavailable: HTTP/2 handshake: ") {
		t.Fatalf("%q, want an HTTP/2 handshake failure", got)
	}
}

// grpc-timeout holds at most eight digits, rounded up to the unit.
func TestGRPCTimeout(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "1n"}, {-time.Second, "1n"}, {1, "1n"}, {99_999_999, "99999999n"},
		{100 * time.Millisecond, "100000u"}, {1500 * time.Millisecond, "1500000u"},
		{100*time.Millisecond + 1, "100001u"}, {24 * time.Hour, "86400000m"},
	} {
		if got := grpcTimeout(c.d); got != c.want {
			t.Errorf("grpcTimeout(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// grpc-message is percent-decoded as grpc-go decodes it; a malformed
// escape stays as sent.
func TestPercentDecode(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "a%20b": "a b", "na%C3%AFve": "naïve", "100%": "100%",
		"%zz": "%zz", "%2": "%2", "%25%": "%%", "%0D%0A": "\r\n",
	} {
		if got := percentDecode(in); got != want {
			t.Errorf("percentDecode(%q) = %q, want %q", in, got, want)
		}
	}
}

// pipeVerifier's server answers an h2grpc client on one end of an
// in-memory pipe: it sends an empty SETTINGS, reads the client's frames
// until the request's last one (or a second passes), then sends script and
// hangs up.
func pipeVerifier(script []byte) *h2grpcVerifier {
	v, _ := newH2GRPCVerifier("http://pipe", "fe", "b")
	v.dial = func(context.Context) (net.Conn, error) {
		cli, srv := net.Pipe()
		request := make(chan struct{})
		go func() {
			defer func() { _, _ = io.Copy(io.Discard, srv) }()
			if _, err := io.ReadFull(srv, make([]byte, len(http2.ClientPreface))); err != nil {
				return
			}
			fr := http2.NewFramer(nil, srv)
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					return
				}
				if d, ok := f.(*http2.DataFrame); ok && d.StreamEnded() {
					close(request)
					return
				}
			}
		}()
		go func() {
			var b bytes.Buffer
			_ = http2.NewFramer(&b, nil).WriteSettings()
			_, _ = srv.Write(b.Bytes())
			select {
			case <-request:
			case <-time.After(time.Second):
			}
			_, _ = srv.Write(script)
			_ = srv.Close()
		}()
		return cli, nil
	}
	return v
}

// Whatever a server sends after its SETTINGS, the call ends with a label
// and nothing panics or hangs. The seeds: an answer cut short, a
// RST_STREAM, a GOAWAY, a frame larger than allowed, garbage.
func FuzzH2GRPCAnswer(f *testing.F) {
	frames := func(write func(*http2.Framer)) []byte {
		var b bytes.Buffer
		write(http2.NewFramer(&b, nil))
		return b.Bytes()
	}
	f.Add([]byte{})
	f.Add([]byte("garbage that is not a frame"))
	f.Add(frames(func(fr *http2.Framer) { _ = fr.WriteRSTStream(1, http2.ErrCodeRefusedStream) }))
	f.Add(frames(func(fr *http2.Framer) { _ = fr.WriteGoAway(0, http2.ErrCodeNo, nil) }))
	f.Add(frames(func(fr *http2.Framer) { _ = fr.WriteData(1, true, []byte{0, 0, 0, 0, 9, 1}) }))
	f.Add(frames(func(fr *http2.Framer) { _ = fr.WritePing(false, [8]byte{1}) }))
	// A whole allowed answer: HEADERS, the message, trailers.
	f.Add(frames(func(fr *http2.Framer) {
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
		_ = fr.WriteData(1, false, []byte{0, 0, 0, 0, 5, 0x08, 0x01, 0x10, 0xc8, 0x01}) // allowed: true, http_status: 200
		hb.Reset()
		_ = enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: true})
	}))
	f.Add(frames(func(fr *http2.Framer) { _ = fr.WriteRawFrame(http2.FrameData, 0, 1, make([]byte, 20000)) }))
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 1<<16 {
			return
		}
		v := pipeVerifier(script)
		defer v.close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		done := make(chan string, 1)
		go func() { done <- v.verify(ctx, "Bearer x") }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("verify did not return")
		}
	})
}

// The fuzz target's seed of a whole answer is read as allowed: the
// fuzzed path reaches the message, not only the framing.
func TestH2GRPCPipeAnswer(t *testing.T) {
	var b bytes.Buffer
	fr := http2.NewFramer(&b, nil)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
	_ = fr.WriteData(1, false, []byte{0, 0, 0, 0, 5, 0x08, 0x01, 0x10, 0xc8, 0x01})
	hb.Reset()
	_ = enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: true})
	for _, c := range []struct {
		name   string
		script []byte
		want   string
	}{
		{"allowed", b.Bytes(), ""},
		{"cut after the message", b.Bytes()[:len(b.Bytes())-len(hb.Bytes())-9], "rpc unavailable: the connection closed"},
		{"reset", func() []byte {
			var r bytes.Buffer
			_ = http2.NewFramer(&r, nil).WriteRSTStream(1, http2.ErrCodeRefusedStream)
			return r.Bytes()
		}(), "rpc stream reset: REFUSED_STREAM"},
	} {
		v := pipeVerifier(c.script)
		if got := v.verify(t.Context(), "Bearer x"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		v.close()
	}
}

// A PING's acknowledgement leaves with the next request, in the same
// write and ahead of it, or on its own within about h2AckDelay when no
// request comes; each ping is acknowledged once, with its own data.
func TestH2GRPCClientAcknowledgesPings(t *testing.T) {
	cli, srv := net.Pipe()
	defer srv.Close()
	type frame struct {
		typ  http2.FrameType
		ack  bool
		data [8]byte
	}
	frames := make(chan frame, 64)
	go func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(srv, int64(len(http2.ClientPreface))))
		fr := http2.NewFramer(nil, srv)
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				close(frames)
				return
			}
			fe := frame{typ: f.Header().Type}
			if p, ok := f.(*http2.PingFrame); ok {
				fe.ack, fe.data = p.IsAck(), p.Data
			}
			frames <- fe
		}
	}()
	go func() {
		var b bytes.Buffer
		_ = http2.NewFramer(&b, nil).WriteSettings()
		_, _ = srv.Write(b.Bytes())
	}()
	c, err := startH2(t.Context(), cli)
	if err != nil {
		t.Fatal(err)
	}
	next := func() frame {
		t.Helper()
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("the connection ended")
			}
			return f
		case <-time.After(2 * time.Second):
			t.Fatal("no frame within 2 s")
		}
		return frame{}
	}
	// The handshake: SETTINGS, WINDOW_UPDATE, then the SETTINGS ack.
	for _, want := range []http2.FrameType{http2.FrameSettings, http2.FrameWindowUpdate, http2.FrameSettings} {
		if f := next(); f.typ != want {
			t.Fatalf("handshake frame %v, want %v", f.typ, want)
		}
	}

	// No request: the acknowledgement comes on its own.
	start := time.Now()
	if err := c.ack([8]byte{'a'}); err != nil {
		t.Fatal(err)
	}
	if f := next(); f.typ != http2.FramePing || !f.ack || f.data != [8]byte{'a'} {
		t.Fatalf("got %+v, want the PING ack of 'a'", f)
	}
	if d := time.Since(start); d < h2AckDelay/2 {
		t.Errorf("the lone ack left after %v, before the %v it may wait for a request", d, h2AckDelay)
	}

	// A request right after: the acknowledgement leads it.
	if err := c.ack([8]byte{'b'}); err != nil {
		t.Fatal(err)
	}
	call, _, retry, label := c.start(t.Context(), []hpack.HeaderField{{Name: ":method", Value: "POST"}}, []byte{0, 0, 0, 0, 0})
	if call == nil || retry {
		t.Fatalf("start: %q", label)
	}
	for _, want := range []frame{{typ: http2.FramePing, ack: true, data: [8]byte{'b'}}, {typ: http2.FrameHeaders}, {typ: http2.FrameData}} {
		if f := next(); f != want {
			t.Fatalf("got %+v, want %+v", f, want)
		}
	}
	// And it is not sent again when the timer fires.
	select {
	case f, ok := <-frames:
		if ok {
			t.Fatalf("after the request: %+v, want nothing", f)
		}
	case <-time.After(20 * h2AckDelay):
	}
}
