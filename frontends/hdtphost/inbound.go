package hdtphost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"connectrpc.com/connect"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// Forward returns next (the MCP SDK's handler) with tools/list and
// tools/call taken out: their bodies go to pactd, whose answers are
// written byte for byte. Every other request, and any body that is not
// one JSON object naming one of those two methods, goes to next as it
// came (next never sees a tool: its server has none).
func (h *Host) Forward(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if !toolsRequest(body) {
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
			return
		}
		h.inbound(w, r, body)
	})
}

// toolTimeout bounds running a dispatched tool and completing it.
const toolTimeout = 60 * time.Second

// toolsRequest reports whether body is one JSON object whose method is
// tools/list or tools/call: pactd's to answer. Whatever else the body
// says, the SDK's reading of it can reach no tool, since its server has
// none; pactd reads what it is given strictly.
func toolsRequest(body []byte) bool {
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && (msg.Method == "tools/list" || msg.Method == "tools/call")
}

// inbound asks pactd about one tools request and writes its answer.
func (h *Host) inbound(w http.ResponseWriter, r *http.Request, body []byte) {
	ctx := r.Context()
	endpoint := h.cfg.Endpoint(r)
	req := &hdtpv1.OpenInboundRequest{Endpoint: endpoint, Body: body, SourceAddress: h.cfg.SourceAddress(r)}
	if h.cfg.TransportChain != nil {
		req.TransportChain = h.cfg.TransportChain(r)
	}
	res, err := h.host.OpenInbound(ctx, req)
	if err != nil {
		h.pactdFailed(w, r, "OpenInbound", err)
		return
	}
	switch out := res.GetOutcome().(type) {
	case *hdtpv1.OpenInboundResponse_Respond:
		writeJSON(w, out.Respond.GetBody())
	case *hdtpv1.OpenInboundResponse_Dispatch:
		// Once dispatched, the call runs and is completed even if the
		// caller hangs up: pactd never dispatches it again, and a call
		// never completed stays "unavailable" to every retry.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), toolTimeout)
		defer cancel()
		done, err := h.host.CompleteInbound(rctx, h.run(r.WithContext(rctx), endpoint, out.Dispatch))
		if err != nil {
			h.pactdFailed(w, r, "CompleteInbound", err)
			return
		}
		writeJSON(w, done.GetBody())
	case *hdtpv1.OpenInboundResponse_Reject:
		// As a refused TLS handshake: no answer at all.
		h.cfg.Logger.InfoContext(ctx, "hdtp request rejected at the transport", slog.String("reason", out.Reject.GetReason()))
		panic(http.ErrAbortHandler)
	default:
		h.pactdFailed(w, r, "OpenInbound", errors.New("pactd's answer has no outcome"))
	}
}

// pactdFailed answers a request pactd could not decide: 404 for an
// endpoint that is no identity's (as any path the host does not serve),
// else 502 with no body.
func (h *Host) pactdFailed(w http.ResponseWriter, r *http.Request, rpc string, err error) {
	if connect.CodeOf(err) == connect.CodeNotFound && rpc == "OpenInbound" {
		http.NotFound(w, r)
		return
	}
	h.cfg.Logger.ErrorContext(r.Context(), "hdtp call to pactd failed", slog.String("rpc", rpc),
		slog.String("code", connect.CodeOf(err).String()), slog.String("error", err.Error()))
	w.WriteHeader(http.StatusBadGateway)
}

// writeJSON writes one of pactd's finished JSON-RPC bodies.
func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
