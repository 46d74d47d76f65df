package pacta2a

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// MaxBodyBytes is the largest request body the frontend reads; past it,
// pactd answers the route's refusal and the connection is closed after
// the answer (RFC 9112 §9.3: the rest is never read as a next request).
const MaxBodyBytes = 1 << 20

// RegistrationPath is where a frontend that offers self-service PA
// registration mounts its Handler too (pactd answers it).
const RegistrationPath = "/api/platforms"

// hopByHop are the header fields that describe one connection, never
// forwarded; Cookie is the frontend's own business.
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Cookie"}

// Handler serves PACT's front door: mount it at "/" (the root page and
// everything under /a2a/) and, to offer self-registration, at
// RegistrationPath.
type Handler struct {
	cfg Config
	clients
}

// NewHandler returns the frontend's HTTP handler.
func NewHandler(cfg Config) (*Handler, error) {
	c, err := newClients(&cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Agent == nil {
		cfg.Agent = EchoAgent{}
	}
	return &Handler{cfg: cfg, clients: c}, nil
}

// ServeHTTP forwards the request to pactd and writes its answer, running
// the agent for a turn. A panic becomes a bare 500, as Recover says.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serveRecovered(w, r, h.cfg.Logger, func(w http.ResponseWriter) { h.serve(w, r) })
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	req := h.serveRequest(w, r)
	res, err := h.door.Serve(r.Context(), req)
	if err == nil && res.GetUserNeeded() != nil && h.cfg.Sessions != nil {
		// A trusted-frontend Brand's page: say who is signed in, or where
		// the sign-in is, and ask again.
		need := res.GetUserNeeded()
		if req.BrandUser = h.cfg.Sessions.BrandUser(r, need.GetBrandId()); req.BrandUser == "" {
			req.SignInUrl = h.cfg.Sessions.LoginURL(need.GetBrandId(), need.GetReturnTo())
		}
		res, err = h.door.Serve(r.Context(), req)
	}
	switch {
	case err != nil:
		h.failed(w, r, "serve", err)
	case res.GetResponse() != nil:
		write(w, res.GetResponse())
	case res.GetTurn() != nil:
		h.turn(w, r, res.GetTurn())
	default:
		h.failed(w, r, "serve", errors.New("pactd's answer has no outcome"))
	}
}

// serveRequest is the request as pactd takes it: the raw target, the
// headers but hop-by-hop ones and cookies, the body up to MaxBodyBytes.
func (h *Handler) serveRequest(w http.ResponseWriter, r *http.Request) *pactv1.ServeRequest {
	path, query, _ := strings.Cut(r.RequestURI, "?")
	if !strings.HasPrefix(path, "/") { // an absolute-form target (a proxy request)
		path, query = r.URL.EscapedPath(), r.URL.RawQuery
	}
	req := &pactv1.ServeRequest{Method: r.Method, Path: path, Query: query, SignsInUsers: h.cfg.Sessions != nil,
		ClientAddress: r.RemoteAddr}
	if r.Host != "" {
		req.Headers = append(req.Headers, &pactv1.HttpHeader{Name: "Host", Value: r.Host})
	}
	for name, values := range r.Header {
		if !isHopByHop(name) {
			for _, v := range values {
				req.Headers = append(req.Headers, &pactv1.HttpHeader{Name: name, Value: v})
			}
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		req.BodyTooLarge = true // or unreadable: the route refuses it either way
		w.Header().Set("Connection", "close")
	} else {
		req.Body = body
	}
	return req
}

func isHopByHop(name string) bool {
	for _, h := range hopByHop {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// turn runs the agent on a turn pactd handed out, to the end even if the
// PA hangs up (so a retry of its messageId finds the stored reply), then
// writes pactd's answer.
func (h *Handler) turn(w http.ResponseWriter, r *http.Request, t *pactv1.Turn) {
	timeout := time.Duration(t.GetTurnTimeoutSeconds()) * time.Second
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
	defer cancel()
	req := &pactv1.FinishTurnRequest{Handle: t.GetHandle()}
	turn := turnOf(t, r.Header)
	if sdk, ok := h.cfg.Agent.(*sdkAgent); ok {
		a, err := sdk.run(ctx, turn)
		if err != nil {
			req.Result = &pactv1.FinishTurnRequest_Failure{Failure: err.Error()}
		} else {
			req.Result = &pactv1.FinishTurnRequest_SdkAnswer{SdkAnswer: a}
		}
	} else if reply, err := runAgent(ctx, h.cfg.Agent, turn); err != nil {
		req.Result = &pactv1.FinishTurnRequest_Failure{Failure: err.Error()}
	} else if req.Result, err = reply.result(); err != nil {
		req.Result = &pactv1.FinishTurnRequest_Failure{Failure: err.Error()}
	}
	if f := req.GetFailure(); f != "" {
		h.cfg.Logger.ErrorContext(r.Context(), "agent failed", slog.String("brand", t.GetBrandId()), slog.String("error", f))
	}
	// Finish with a context of its own: the turn's may have run out.
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
	defer fcancel()
	res, err := h.door.FinishTurn(fctx, req)
	if err != nil {
		h.failed(w, r, "finish turn", err)
		return
	}
	write(w, res.GetResponse())
}

// write sends pactd's response as it is: status, headers in order, body.
func write(w http.ResponseWriter, res *pactv1.HttpResponse) {
	hdr := w.Header()
	for _, f := range res.GetHeaders() {
		hdr.Add(f.GetName(), f.GetValue())
	}
	status := int(res.GetStatus())
	if status < 100 || status > 999 {
		status = http.StatusBadGateway
	}
	w.WriteHeader(status)
	_, _ = w.Write(res.GetBody())
}

// failed answers a failed call to pactd: a bare 502, one log line.
func (h *Handler) failed(w http.ResponseWriter, r *http.Request, rpc string, err error) {
	h.cfg.Logger.ErrorContext(r.Context(), "pactd "+rpc, slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadGateway)
}

// BrandName is the Brand's display name, or "" when pactd does not know
// the Brand or cannot answer: for pages of the frontend's own, such as a
// Brand's sign-in.
func (h *Handler) BrandName(ctx context.Context, brandID string) string {
	res, err := h.brand.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: brandID})
	if err != nil {
		return ""
	}
	return res.GetDisplayName()
}
