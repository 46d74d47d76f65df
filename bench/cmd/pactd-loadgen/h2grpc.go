package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// h2grpcVerifier is the -client h2grpc verifier: gRPC's unary call over
// plain HTTP/2 (h2c) on one connection, built from x/net's HTTP/2 framer and
// HPACK coder. The calling worker encodes and writes its request itself;
// one reader goroutine per connection reads the answers and hands each to
// its worker.
//
// grpc-go's client spends about as much CPU per call as pactd does at the
// native port's half-peak rate (90–114 µs on the load generator's one core)
// and passes each call through its own write goroutine: against a server
// doing nothing at that rate its p99 alone was 1.4–3.2 ms
// (docs/performance.md, "p99 at half the peak"; docs/benchmarks.md,
// "Transport and clients"). This client sends the same request
// (:path, content-type application/grpc, te, grpc-timeout, authorization)
// and labels the answer as outcome labels grpc-go's; it keeps the HTTP/2
// rules a server relies on (the peer's stream limit, flow-control windows
// both ways, SETTINGS and PING acknowledgements, GOAWAY) and nothing more:
// no compression, no keepalive pings, no TLS. PING acknowledgements ride
// with the next request (within a millisecond), as one write.
type h2grpcVerifier struct {
	fields []hpack.HeaderField // the request headers but grpc-timeout
	brand  string

	mu   sync.Mutex // guards conn and serializes dialing
	conn *h2conn
	dial func(ctx context.Context) (net.Conn, error) // opens a connection to the server
}

// h2conn is one HTTP/2 connection and its reader's state.
type h2conn struct {
	nc net.Conn

	// wmu serializes writes: the write framer, the HPACK encoder and the
	// stream ids (which must rise in the order the streams are opened).
	wmu    sync.Mutex
	wbuf   bytes.Buffer
	fr     *http2.Framer // writes into wbuf
	hbuf   bytes.Buffer
	henc   *hpack.Encoder
	nextID uint32
	// acks are PING acknowledgements not yet written: they leave with the
	// next request, or after h2AckDelay when none comes (ackTimer armed).
	acks     [][8]byte
	ackTimer *time.Timer

	// mu guards the rest; cond (on mu) wakes a worker waiting for a stream
	// slot or send window. Lock order: wmu before mu; the reader never holds
	// mu while it waits for wmu.
	mu           sync.Mutex
	cond         sync.Cond
	active       map[uint32]*h2call
	open         uint32 // streams reserved or open
	maxStreams   uint32 // the peer's SETTINGS_MAX_CONCURRENT_STREAMS
	sendWindow   int64  // the connection's send window
	streamWindow int64  // the peer's initial stream window
	maxFrame     uint32 // the peer's SETTINGS_MAX_FRAME_SIZE
	full         bool   // stream ids used up, or GOAWAY received: no new streams
	err          error  // the reader stopped: the connection is finished
}

// h2call is one call's answer as the reader assembles it.
type h2call struct {
	done       chan struct{}
	status     int    // :status of the first HEADERS
	grpcStatus int    // -1 until grpc-status arrives
	grpcMsg    string // grpc-message, percent-decoded
	data       []byte
	fail       string // a transport-level label, when set
}

const (
	// h2RecvWindow is the connection receive window this client grants at
	// the start, refilled by what was read once half of it is used.
	h2RecvWindow = 1 << 30
	// h2StreamWindow is each stream's receive window (SETTINGS): more than
	// an answer may be, so a stream never waits on it.
	h2StreamWindow = 1 << 20
	// h2MaxHeaderList bounds one decoded header list from the server.
	h2MaxHeaderList = 16 << 10
	// h2WriteTimeout bounds one write to the server.
	h2WriteTimeout = 10 * time.Second
	// h2AckDelay is how long a PING acknowledgement may wait for a request
	// to ride with. grpc-go's server pings with nearly every answer (its
	// flow-control estimate); acknowledging each in a write of its own cost
	// pactd a read and a wake-up per call. h2MaxAcks bounds those waiting.
	h2AckDelay = time.Millisecond
	h2MaxAcks  = 16
)

// h2LastStreamID is the last stream id a connection opens before the
// client moves to a new one (2^31-1 is HTTP/2's limit; a variable so a
// test can reach it).
var h2LastStreamID uint32 = 1 << 30

// newH2GRPCVerifier returns a verifier for the gRPC server at base
// (http:// only), sending authorization "Bearer frontendToken".
func newH2GRPCVerifier(base, frontendToken, brand string) (*h2grpcVerifier, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, errors.New("-client h2grpc speaks plain http:// (h2c) only")
	}
	path := strings.TrimSuffix(u.Path, "/") + pactv1.VerificationService_VerifyAgentRequest_FullMethodName
	var d net.Dialer
	return &h2grpcVerifier{brand: brand, dial: func(ctx context.Context) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", u.Host)
	}, fields: []hpack.HeaderField{
		{Name: ":method", Value: "POST"},
		{Name: ":scheme", Value: "http"},
		{Name: ":path", Value: path},
		{Name: ":authority", Value: u.Host},
		{Name: "content-type", Value: "application/grpc"},
		{Name: "user-agent", Value: "pactd-loadgen-h2grpc"},
		{Name: "te", Value: "trailers"},
		{Name: "authorization", Value: "Bearer " + frontendToken},
	}}, nil
}

// close closes the connection; calls on it end as unavailable.
func (v *h2grpcVerifier) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.conn != nil {
		_ = v.conn.nc.Close()
		v.conn = nil
	}
}

// verify sends one VerifyAgentRequest and labels the answer as outcome
// labels grpc-go's.
func (v *h2grpcVerifier) verify(ctx context.Context, authz string) string {
	msg, err := proto.Marshal(&pactv1.VerifyAgentRequestRequest{BrandId: v.brand, Authorization: authz})
	if err != nil {
		return "encode: " + err.Error()
	}
	// The gRPC message prefix: not compressed, then the length.
	body := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(body[1:5], uint32(len(msg)))
	copy(body[5:], msg)
	for attempt := 0; ; attempt++ {
		c, err := v.get(ctx)
		if err != nil {
			return "rpc unavailable: " + err.Error()
		}
		call, id, retry, label := c.start(ctx, v.fields, body)
		if retry && attempt == 0 {
			continue // the connection closed or filled before the stream opened: a new one
		}
		if call == nil {
			return label
		}
		select {
		case <-call.done:
			if dl, ok := ctx.Deadline(); call.fail != "" && ok && !time.Now().Before(dl) {
				// The server reset the stream when its copy of our
				// deadline ran out, before our context said so: grpc-go
				// reports the deadline then.
				return outcome(nil, status.FromContextError(context.DeadlineExceeded).Err())
			}
			return call.label()
		case <-ctx.Done():
			if c.cancel(id) {
				return outcome(nil, status.FromContextError(ctx.Err()).Err())
			}
			<-call.done // the reader finished it first
			return call.label()
		}
	}
}

// get returns the current connection, dialing a new one when there is none
// or it can open no more streams.
func (v *h2grpcVerifier) get(ctx context.Context) (*h2conn, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.conn != nil && v.conn.usable() {
		return v.conn, nil
	}
	if v.conn != nil {
		v.conn.retire()
	}
	nc, err := v.dial(ctx)
	if err != nil {
		return nil, err
	}
	c, err := startH2(ctx, nc)
	if err != nil {
		return nil, err
	}
	v.conn = c
	return c, nil
}

// startH2 starts h2c on nc: the client preface, its SETTINGS and a
// connection window update, then the server's SETTINGS read before any
// stream opens (so its stream limit holds from the first request). nc is
// closed when that fails.
func startH2(ctx context.Context, nc net.Conn) (*h2conn, error) {
	c := &h2conn{nc: nc, nextID: 1, active: map[uint32]*h2call{}, maxStreams: ^uint32(0),
		sendWindow: 65535, streamWindow: 65535, maxFrame: 16384}
	c.cond.L = &c.mu
	c.fr = http2.NewFramer(&c.wbuf, nil)
	c.henc = hpack.NewEncoder(&c.hbuf)
	c.wbuf.WriteString(http2.ClientPreface)
	_ = c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: h2MaxHeaderList})
	_ = c.fr.WriteWindowUpdate(0, h2RecvWindow-65535)
	dl := time.Now().Add(h2WriteTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	_ = nc.SetDeadline(dl)
	if _, err := nc.Write(c.wbuf.Bytes()); err != nil {
		_ = nc.Close()
		return nil, err
	}
	rf := http2.NewFramer(nil, bufio.NewReaderSize(nc, 32<<10))
	rf.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	rf.MaxHeaderListSize = h2MaxHeaderList
	rf.SetMaxReadFrameSize(16384) // the default this client's SETTINGS leave
	rf.SetReuseFrames()
	f, err := rf.ReadFrame()
	if err == nil {
		if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
			err = fmt.Errorf("the server's first frame is %s, not SETTINGS", f.Header().Type)
		} else if err = c.settings(sf); err == nil {
			err = c.writeFrames(func() error { return c.fr.WriteSettingsAck() })
		}
	}
	if err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("HTTP/2 handshake: %w", err)
	}
	_ = nc.SetDeadline(time.Time{})
	go c.read(rf)
	return c, nil
}

// usable reports whether c can open another stream.
func (c *h2conn) usable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == nil && !c.full
}

// retire lets c open no more streams and closes it once its last stream
// ends.
func (c *h2conn) retire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.full = true
	if len(c.active) == 0 && c.open == 0 {
		_ = c.nc.Close()
	}
}

// start opens a stream carrying body. retry reports that the connection
// could not open it (closed or full) and a new one may; otherwise a nil
// call comes with its label.
func (c *h2conn) start(ctx context.Context, fields []hpack.HeaderField, body []byte) (call *h2call, id uint32, retry bool, label string) {
	n := int64(len(body))
	c.mu.Lock()
	if c.open >= c.maxStreams || c.sendWindow < n {
		stop := context.AfterFunc(ctx, func() {
			c.mu.Lock()
			c.cond.Broadcast()
			c.mu.Unlock()
		})
		for c.err == nil && !c.full && ctx.Err() == nil && (c.open >= c.maxStreams || c.sendWindow < n) {
			c.cond.Wait()
		}
		stop()
	}
	switch {
	case c.err != nil || c.full:
		c.mu.Unlock()
		return nil, 0, true, "rpc unavailable: the connection closed"
	case ctx.Err() != nil:
		c.mu.Unlock()
		return nil, 0, false, outcome(nil, status.FromContextError(ctx.Err()).Err())
	case n > c.streamWindow:
		c.mu.Unlock()
		return nil, 0, false, fmt.Sprintf("request of %d bytes exceeds the server's stream window of %d", n, c.streamWindow)
	}
	c.open++
	c.sendWindow -= n
	maxFrame := int(c.maxFrame)
	c.mu.Unlock()

	call = &h2call{done: make(chan struct{}, 1), grpcStatus: -1}
	c.wmu.Lock()
	id = c.nextID
	c.nextID += 2
	c.mu.Lock()
	if c.err != nil {
		c.open--
		c.mu.Unlock()
		c.wmu.Unlock()
		return nil, 0, true, "rpc unavailable: the connection closed"
	}
	c.active[id] = call
	if c.nextID > h2LastStreamID {
		c.full = true
	}
	c.mu.Unlock()
	err := c.writeLocked(func() error {
		if err := c.writeAcksLocked(); err != nil {
			return err
		}
		c.hbuf.Reset()
		for _, f := range fields {
			_ = c.henc.WriteField(f)
		}
		if dl, ok := ctx.Deadline(); ok {
			_ = c.henc.WriteField(hpack.HeaderField{Name: "grpc-timeout", Value: grpcTimeout(time.Until(dl))})
		}
		if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hbuf.Bytes(), EndHeaders: true}); err != nil {
			return err
		}
		rest := body
		for {
			chunk := rest[:min(len(rest), maxFrame)]
			rest = rest[len(chunk):]
			if err := c.fr.WriteData(id, len(rest) == 0, chunk); err != nil {
				return err
			}
			if len(rest) == 0 {
				return nil
			}
		}
	})
	c.wmu.Unlock()
	if err != nil {
		// The reader sees the closed connection and ends every open call,
		// this one included.
		_ = c.nc.Close()
	}
	return call, id, false, ""
}

// cancel resets stream id after its caller gave up, unless the reader has
// already finished it (false: its answer is on the way).
func (c *h2conn) cancel(id uint32) bool {
	c.mu.Lock()
	_, ok := c.active[id]
	if ok {
		delete(c.active, id)
		c.open--
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	if ok {
		_ = c.writeFrames(func() error { return c.fr.WriteRSTStream(id, http2.ErrCodeCancel) })
	}
	return ok
}

// writeFrames writes the frames fn puts in the write buffer, under wmu.
func (c *h2conn) writeFrames(fn func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(fn)
}

// writeLocked writes what fn frames; the caller holds wmu. fn runs after
// the buffer is reset, so it may add to what it frames but not keep it.
func (c *h2conn) writeLocked(fn func() error) error {
	c.wbuf.Reset()
	if err := fn(); err != nil {
		return err
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(h2WriteTimeout))
	_, err := c.nc.Write(c.wbuf.Bytes())
	return err
}

// ack queues the acknowledgement of a PING carrying data, to leave with
// the next request; a timer writes it when no request comes within
// h2AckDelay, and a full queue is written at once.
func (c *h2conn) ack(data [8]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.acks = append(c.acks, data)
	if len(c.acks) >= h2MaxAcks {
		return c.writeLocked(c.writeAcksLocked)
	}
	if c.ackTimer == nil {
		c.ackTimer = time.AfterFunc(h2AckDelay, func() {
			c.wmu.Lock()
			defer c.wmu.Unlock()
			c.ackTimer = nil
			if len(c.acks) > 0 {
				if err := c.writeLocked(c.writeAcksLocked); err != nil {
					_ = c.nc.Close() // the reader ends every open call
				}
			}
		})
	}
	return nil
}

// writeAcksLocked frames the waiting PING acknowledgements into the write
// buffer; the caller holds wmu.
func (c *h2conn) writeAcksLocked() error {
	for _, d := range c.acks {
		if err := c.fr.WritePing(true, d); err != nil {
			return err
		}
	}
	c.acks = c.acks[:0]
	return nil
}

// settings applies the server's SETTINGS.
func (c *h2conn) settings(sf *http2.SettingsFrame) error {
	var tableSize uint32
	var haveTable bool
	c.mu.Lock()
	err := sf.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			c.maxStreams = s.Val
		case http2.SettingInitialWindowSize:
			c.streamWindow = int64(s.Val)
		case http2.SettingMaxFrameSize:
			c.maxFrame = s.Val
		case http2.SettingHeaderTableSize:
			tableSize, haveTable = s.Val, true
		}
		return nil
	})
	c.cond.Broadcast()
	c.mu.Unlock()
	if err == nil && haveTable {
		c.wmu.Lock()
		c.henc.SetMaxDynamicTableSizeLimit(tableSize)
		c.wmu.Unlock()
	}
	return err
}

// read reads frames until the connection ends, then ends every open call.
func (c *h2conn) read(rf *http2.Framer) {
	var unacked uint32
	err := func() error {
		for {
			f, err := rf.ReadFrame()
			if err != nil {
				return err
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				c.headers(f)
			case *http2.DataFrame:
				// Every DATA byte counts against the connection window,
				// whoever it was for.
				if unacked += f.Length; unacked >= h2RecvWindow/2 {
					n := unacked
					unacked = 0
					if err := c.writeFrames(func() error { return c.fr.WriteWindowUpdate(0, n) }); err != nil {
						return err
					}
				}
				c.data(f)
			case *http2.SettingsFrame:
				if f.IsAck() {
					continue
				}
				if err := c.settings(f); err != nil {
					return err
				}
				if err := c.writeFrames(func() error { return c.fr.WriteSettingsAck() }); err != nil {
					return err
				}
			case *http2.PingFrame:
				if f.IsAck() {
					continue
				}
				if err := c.ack(f.Data); err != nil {
					return err
				}
			case *http2.WindowUpdateFrame:
				c.mu.Lock()
				if f.StreamID == 0 {
					c.sendWindow += int64(f.Increment)
					c.cond.Broadcast()
				}
				c.mu.Unlock()
			case *http2.RSTStreamFrame:
				c.finish(f.StreamID, "rpc stream reset: "+f.ErrCode.String())
			case *http2.GoAwayFrame:
				c.goAway(f.LastStreamID, f.ErrCode)
			}
		}
	}()
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
		err = errors.New("the connection closed")
	}
	_ = c.nc.Close()
	c.mu.Lock()
	c.err = err
	for id, call := range c.active {
		call.fail = "rpc unavailable: " + err.Error()
		delete(c.active, id)
		call.done <- struct{}{}
	}
	c.cond.Broadcast()
	c.mu.Unlock()
}

// headers takes a HEADERS block: the answer's headers, or its trailers.
func (c *h2conn) headers(f *http2.MetaHeadersFrame) {
	call := c.lookup(f.StreamID)
	if call == nil {
		return
	}
	// Only the reader touches a call until it is finished.
	for _, hf := range f.Fields {
		switch hf.Name {
		case ":status":
			call.status, _ = strconv.Atoi(hf.Value)
		case "grpc-status":
			if n, err := strconv.Atoi(hf.Value); err == nil && n >= 0 {
				call.grpcStatus = n
			}
		case "grpc-message":
			call.grpcMsg = percentDecode(hf.Value)
		}
	}
	if f.StreamEnded() {
		c.finish(f.StreamID, "")
	}
}

// data takes a DATA frame of an answer.
func (c *h2conn) data(f *http2.DataFrame) {
	call := c.lookup(f.StreamID)
	if call == nil {
		return
	}
	if len(call.data)+len(f.Data()) > 5+maxAnswerBytes {
		c.finish(f.StreamID, "answer larger than 64 KiB")
		_ = c.writeFrames(func() error { return c.fr.WriteRSTStream(f.StreamID, http2.ErrCodeCancel) })
		return
	}
	call.data = append(call.data, f.Data()...)
	if f.StreamEnded() {
		c.finish(f.StreamID, "")
	}
}

// lookup returns stream id's open call, or nil.
func (c *h2conn) lookup(id uint32) *h2call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active[id]
}

// finish ends stream id's call (with fail as its label when set).
func (c *h2conn) finish(id uint32, fail string) {
	c.mu.Lock()
	call := c.active[id]
	if call != nil {
		delete(c.active, id)
		c.open--
		c.cond.Broadcast()
		if c.full && len(c.active) == 0 && c.open == 0 {
			_ = c.nc.Close()
		}
	}
	c.mu.Unlock()
	if call != nil {
		call.fail = fail
		call.done <- struct{}{}
	}
}

// goAway takes a GOAWAY: no new streams; those above last were never
// processed and end now.
func (c *h2conn) goAway(last uint32, code http2.ErrCode) {
	c.mu.Lock()
	c.full = true
	var gone []uint32
	for id := range c.active {
		if id > last {
			gone = append(gone, id)
		}
	}
	c.mu.Unlock()
	for _, id := range gone {
		c.finish(id, "rpc unavailable: GOAWAY "+code.String())
	}
	c.mu.Lock()
	if len(c.active) == 0 && c.open == 0 {
		_ = c.nc.Close()
	}
	c.mu.Unlock()
}

// label labels a finished call as outcome labels grpc-go's answer.
func (call *h2call) label() string {
	switch {
	case call.fail != "":
		return call.fail
	case call.status != 200:
		return fmt.Sprintf("rpc HTTP %d", call.status)
	case call.grpcStatus < 0:
		return "rpc internal: the answer has no grpc-status"
	case call.grpcStatus != 0:
		return outcome(nil, status.Error(codes.Code(call.grpcStatus), call.grpcMsg))
	case len(call.data) < 5 || call.data[0] != 0 || int(binary.BigEndian.Uint32(call.data[1:5])) != len(call.data)-5:
		return "rpc internal: not one uncompressed gRPC message"
	}
	var ans pactv1.VerifyAgentRequestResponse
	if err := proto.Unmarshal(call.data[5:], &ans); err != nil {
		return "decode: " + err.Error()
	}
	return outcome(&ans, nil)
}

// grpcTimeout encodes d as a grpc-timeout value: at most eight digits and
// a unit, rounded up so the server's deadline is never earlier than ours.
func grpcTimeout(d time.Duration) string {
	if d <= 0 {
		return "1n"
	}
	for _, u := range []struct {
		unit string
		size time.Duration
	}{{"n", time.Nanosecond}, {"u", time.Microsecond}, {"m", time.Millisecond}, {"S", time.Second}, {"M", time.Minute}, {"H", time.Hour}} {
		if n := (d + u.size - 1) / u.size; n < 1e8 {
			return strconv.FormatInt(int64(n), 10) + u.unit
		}
	}
	return "99999999H"
}

// percentDecode decodes grpc-message's percent-encoding; a malformed
// escape stays as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}
