package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// maxAnswerBytes bounds one answer body the http1 client reads.
const maxAnswerBytes = 64 << 10

// http1Verifier is the -client http1 verifier: the Connect protocol's unary
// call over plain HTTP/1.1, written and read on the calling worker's own
// goroutine over a connection it keeps to itself for the call.
//
// connect-go over net/http's client hands every call to two goroutines per
// connection (its write and read loops) and back; on the load generator's
// one core that left milliseconds of its own in the measured tail: against
// a server doing nothing at 4,400/s, p99 3.5–3.9 ms against 1.1–2.2 ms with
// this client (docs/benchmarks.md, "Transport and clients"). This client
// sends the same request (method, path, Content-Type,
// Connect-Protocol-Version, Connect-Timeout-Ms, Authorization) and checks
// the same answer; it only asks for no compression.
type http1Verifier struct {
	addr   string // host:port to dial
	head   string // request line and the fixed headers, up to Content-Length
	codec  string // "json" or "proto"
	brand  string
	idle   chan *h1conn
	dialer net.Dialer
}

// h1conn is one kept-alive connection.
type h1conn struct {
	c net.Conn
	r *bufio.Reader
	w []byte // request buffer, reused
}

// newHTTP1Verifier returns a verifier for pactd at base (http:// only),
// keeping up to conns idle connections.
func newHTTP1Verifier(base, codec, frontendToken, brand string, conns int) (*http1Verifier, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, errors.New("-client http1 speaks plain http:// only")
	}
	ctype := "application/proto"
	if codec == "json" {
		ctype = "application/json"
	}
	path := strings.TrimSuffix(u.Path, "/") + pactv1connect.VerificationServiceVerifyAgentRequestProcedure
	head := "POST " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nAuthorization: Bearer " + frontendToken +
		"\r\nContent-Type: " + ctype + "\r\nConnect-Protocol-Version: 1\r\nAccept-Encoding: identity\r\n"
	return &http1Verifier{addr: u.Host, head: head, codec: codec, brand: brand, idle: make(chan *h1conn, max(conns, 1))}, nil
}

// close closes the idle connections.
func (v *http1Verifier) close() {
	for {
		select {
		case c := <-v.idle:
			_ = c.c.Close()
		default:
			return
		}
	}
}

// verify sends one VerifyAgentRequest and labels the answer as outcome does.
func (v *http1Verifier) verify(ctx context.Context, authz string) string {
	body, err := v.body(authz)
	if err != nil {
		return "encode: " + err.Error()
	}
	c, err := v.get(ctx)
	if err != nil {
		return "rpc unavailable: " + err.Error()
	}
	label, reuse := v.call(ctx, c, body)
	if reuse {
		select {
		case v.idle <- c:
			return label
		default:
		}
	}
	_ = c.c.Close()
	return label
}

func (v *http1Verifier) get(ctx context.Context) (*h1conn, error) {
	select {
	case c := <-v.idle:
		return c, nil
	default:
	}
	nc, err := v.dialer.DialContext(ctx, "tcp", v.addr)
	if err != nil {
		return nil, err
	}
	return &h1conn{c: nc, r: bufio.NewReaderSize(nc, 4096)}, nil
}

func (v *http1Verifier) body(authz string) ([]byte, error) {
	if v.codec == "json" {
		// The message's JSON form (protojson's field names); json.Marshal
		// escapes what a string needs.
		return json.Marshal(struct {
			BrandID       string `json:"brandId"`
			Authorization string `json:"authorization"`
		}{v.brand, authz})
	}
	return proto.Marshal(&pactv1.VerifyAgentRequestRequest{BrandId: v.brand, Authorization: authz})
}

// call writes the request on c and reads the answer. reuse is false when
// the connection cannot carry another request.
func (v *http1Verifier) call(ctx context.Context, c *h1conn, body []byte) (label string, reuse bool) {
	c.w = append(c.w[:0], v.head...)
	if dl, ok := ctx.Deadline(); ok {
		ms := max(time.Until(dl).Milliseconds(), 1)
		c.w = append(c.w, "Connect-Timeout-Ms: "...)
		c.w = strconv.AppendInt(c.w, ms, 10)
		c.w = append(c.w, "\r\n"...)
		_ = c.c.SetDeadline(dl)
	}
	c.w = append(c.w, "Content-Length: "...)
	c.w = strconv.AppendInt(c.w, int64(len(body)), 10)
	c.w = append(c.w, "\r\n\r\n"...)
	c.w = append(c.w, body...)
	if _, err := c.c.Write(c.w); err != nil {
		return "rpc unavailable: " + err.Error(), false
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return "rpc unavailable: " + err.Error(), false
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	_ = resp.Body.Close()
	if err != nil {
		return "rpc unavailable: " + err.Error(), false
	}
	if len(data) > maxAnswerBytes {
		return "answer larger than 64 KiB", false
	}
	reuse = !resp.Close
	if resp.StatusCode != http.StatusOK {
		// A Connect error: {"code": "...", "message": "..."}, as connect-go
		// labels it.
		var e struct{ Code, Message string }
		if json.Unmarshal(data, &e) != nil || e.Code == "" {
			return fmt.Sprintf("rpc HTTP %d", resp.StatusCode), reuse
		}
		return "rpc " + e.Code + ": " + e.Message, reuse
	}
	var ans pactv1.VerifyAgentRequestResponse
	if v.codec == "json" {
		// The fields outcome reads, in protojson's names; the reason is
		// the enum's name.
		var a struct {
			Allowed    bool   `json:"allowed"`
			HTTPStatus int32  `json:"httpStatus"`
			Reason     string `json:"reason"`
		}
		if err := json.Unmarshal(data, &a); err != nil {
			return "decode: " + err.Error(), reuse
		}
		if a.Allowed && a.HTTPStatus == 200 {
			return "", reuse
		}
		if a.Reason == "" {
			a.Reason = pactv1.DenyReason(0).String()
		}
		return fmt.Sprintf("denied %d %s", a.HTTPStatus, a.Reason), reuse
	}
	if err := proto.Unmarshal(data, &ans); err != nil {
		return "decode: " + err.Error(), reuse
	}
	return outcome(&ans, nil), reuse
}
