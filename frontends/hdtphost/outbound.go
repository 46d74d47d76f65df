package hdtphost

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"time"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// Result is what an outbound call came to.
type Result struct {
	// JSON is the tool's result object (or tools/list's result) when the
	// call succeeded; nil when it was refused.
	JSON json.RawMessage
	// Refusal is the refusal, when refused.
	Refusal *Refusal
	// Sealed says whether the answer came sealed and verified.
	Sealed bool
	// Contact is the contact as it stands after the answer, when pactd
	// holds one.
	Contact *hdtpv1.Contact
}

// Call seals a call from one of the host's identities to a contact (by
// its root fingerprint) and delivers it: what an agent does to use a
// contact's tool. args is the arguments object (nil for none).
func (h *Host) Call(ctx context.Context, identityID, contactRoot, tool string, args json.RawMessage) (*Result, error) {
	sealed, err := h.host.SealOutbound(ctx, &hdtpv1.SealOutboundRequest{IdentityId: identityID,
		Target: &hdtpv1.SealOutboundRequest_ContactRoot{ContactRoot: contactRoot}, Tool: tool, ArgumentsJson: string(args)})
	if err != nil {
		return nil, fmt.Errorf("seal the call: %w", err)
	}
	return h.Deliver(ctx, sealed.GetCall())
}

// Deliver POSTs a call pactd made (SealOutbound, or the call an owner
// action of hdtp.v1.ContactService returned: request_contact,
// contact_accepted, ...) to the peer's endpoint and has pactd open the
// answer. When pactd answers with a call to resend (certificate_renewed
// followed, or the chain after chain_required), that one is delivered in
// turn; pactd follows each at most once, so at most three are sent.
func (h *Host) Deliver(ctx context.Context, call *hdtpv1.OutboundCall) (*Result, error) {
	for range 3 {
		status, body, err := h.post(ctx, call)
		if err != nil {
			h.cfg.Logger.WarnContext(ctx, "hdtp delivery failed", slog.String("endpoint", call.GetEndpoint()), slog.String("error", err.Error()))
			return nil, fmt.Errorf("deliver to %s: %w", call.GetEndpoint(), err)
		}
		opened, err := h.host.OpenOutboundResult(ctx, &hdtpv1.OpenOutboundResultRequest{
			CallHandle: call.GetCallHandle(), HttpStatus: int32(status), Body: body})
		if err != nil {
			return nil, fmt.Errorf("open the answer: %w", err)
		}
		res := &Result{Contact: opened.GetContact()}
		switch out := opened.GetOutcome().(type) {
		case *hdtpv1.OpenOutboundResultResponse_Result:
			res.JSON, res.Sealed = json.RawMessage(out.Result.GetResultJson()), out.Result.GetSealed()
			return res, nil
		case *hdtpv1.OpenOutboundResultResponse_Refusal:
			f := out.Refusal
			res.Refusal = &Refusal{Code: f.GetCode(), RetryAfter: int(f.GetRetryAfterSeconds()), Local: f.GetLocal(), Reason: f.GetReason()}
			if f.GetDataJson() != "" {
				res.Refusal.Data = json.RawMessage(f.GetDataJson())
			}
			return res, nil
		case *hdtpv1.OpenOutboundResultResponse_Resend:
			call = out.Resend
		default:
			return nil, errors.New("open the answer: pactd's answer has no outcome")
		}
	}
	return nil, errors.New("deliver: pactd asked for more than two resends")
}

// post sends the call's request body, byte for byte, and returns the
// answer's status and JSON-RPC body (taken out of an event stream when the
// peer answers with one).
func (h *Host) post(ctx context.Context, call *hdtpv1.OutboundCall) (int, []byte, error) {
	addrs, err := h.vet(ctx, call.GetEndpoint())
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(context.WithValue(ctx, vettedKey{}, addrs), http.MethodPost,
		call.GetEndpoint(), bytes.NewReader(call.GetRequestBody()))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.peers.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return 0, nil, err
	}
	if len(body) > MaxBodyBytes {
		return 0, nil, errors.New("the answer is larger than MaxBodyBytes")
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		body = firstEventData(body)
	}
	return resp.StatusCode, body, nil
}

// firstEventData is the data of the first event of an event stream that
// holds a JSON-RPC response (a JSON object with an id): the answer a
// Streamable HTTP server sends as an event stream. Comments, other events
// and notifications before it are skipped; nil when there is none.
func firstEventData(stream []byte) []byte {
	var data []byte
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 64<<10), MaxBodyBytes)
	for more := true; more; {
		more = sc.Scan()
		line := sc.Bytes()
		if more && len(line) > 0 {
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(append(data, bytes.TrimPrefix(v, []byte(" "))...), '\n')
			}
			continue
		}
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if len(data) > 0 && json.Unmarshal(data, &msg) == nil && len(msg.ID) > 0 && string(msg.ID) != "null" {
			return bytes.TrimSuffix(data, []byte("\n"))
		}
		data = nil
	}
	return nil
}

// vettedKey carries the addresses a delivery may dial.
type vettedKey struct{}

// vet resolves the endpoint's host and has pactd's address guard judge the
// endpoint and every address (TrustService.CheckAddress); the dial then
// goes only to those addresses, so a DNS answer that changes between the
// check and the dial changes nothing. With Config.Dial the operator routes
// the name, and the guard judges the name alone.
func (h *Host) vet(ctx context.Context, endpoint string) ([]string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "https" {
		return nil, errors.New("not an https endpoint")
	}
	var addrs []string
	if h.cfg.Dial == nil {
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", u.Hostname())
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			addrs = append(addrs, ip.Unmap().String())
		}
	}
	verdict, err := h.trust.CheckAddress(ctx, &hdtpv1.CheckAddressRequest{Endpoint: endpoint, ResolvedAddresses: addrs})
	if err != nil {
		return nil, fmt.Errorf("check the address: %w", err)
	}
	if !verdict.GetValid() {
		return nil, fmt.Errorf("not dialed: the address guard refuses it (%s)", verdict.GetReason())
	}
	return addrs, nil
}

// peerClient is the client deliveries use: TLS with Config.RootCAs,
// dialing only vetted addresses (or through Config.Dial), no redirects
// (an answer comes from the endpoint or not at all).
func (h *Host) peerClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h.cfg.Dial != nil {
			return h.cfg.Dial(ctx, network, addr)
		}
		addrs, _ := ctx.Value(vettedKey{}).([]string)
		_, port, err := net.SplitHostPort(addr)
		if err != nil || len(addrs) == 0 {
			return nil, errors.New("hdtphost: no vetted address to dial")
		}
		var errs []error
		for _, a := range addrs {
			c, err := dialer.DialContext(ctx, network, net.JoinHostPort(a, port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
	return &http.Client{
		Timeout: 70 * time.Second,
		Transport: &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: h.cfg.RootCAs, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: 65 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
