// Package frontdoor serves pact.v1.FrontDoorService: the whole PACT front
// door of a Provider's A2A frontend, once, for frontends in every language.
//
// A frontend forwards each HTTP request it receives (Serve) and writes
// back what pactd answers; the one thing it runs itself is the Brand's
// agent, for a turn Serve hands it, and it gives the agent's answer to
// FinishTurn. Everything else is here: routing under the interface URL in
// the order of PACT 1.0 §4.3 (match the route, else 404/405 before any
// authentication; verify the PA JWT and any delegation token; then the
// route), the Agent Card, the fixed A2A errors and the task list,
// message:send's parsing and conversation rules, step-up tasks, signed
// receipts, pactd's OAuth endpoints, self-registration, and every page a
// User sees: consent in both login modes, connected assistants and
// revoking, the root page and the HTML 404.
//
// The service calls the other services in process, through the same
// methods their RPCs run (so the same rules, limits and audit events
// apply), and pactd's OAuth endpoints through their HTTP handler.
// Requests are rebuilt as net/http requests inside pactd and answered by
// ordinary handlers into a recorder; a frontend's request is never read
// past the bounds below, and no input stops the process (a handler's panic
// becomes INTERNAL for the frontend, logged once).
package frontdoor

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/bounds"
	"pactd.dev/pactd/internal/rpcerr"
)

// The bounds of a forwarded request.
const (
	// MaxBodyBytes is the largest body a frontend forwards; past it the
	// frontend sends body_too_large instead, and every route answers as it
	// answers an oversized body.
	MaxBodyBytes = 1 << 20
	// MaxPathBytes bounds the request path; a longer one is answered 414.
	MaxPathBytes = 8 << 10
	// MaxQueryBytes bounds the raw query; a longer one is answered 414.
	MaxQueryBytes = 8 << 10
	// MaxHeaderBytes bounds the header fields, names and values together.
	MaxHeaderBytes = 64 << 10
	// MaxBrandUserBytes bounds brand_user, as the delegation service does.
	MaxBrandUserBytes = bounds.BrandUser
	// MaxSignInURLBytes bounds sign_in_url.
	MaxSignInURLBytes = 2 << 10
	// MaxRequestBytes is the largest ServeRequest or FinishTurnRequest
	// pactd reads: a whole body plus room for the rest.
	MaxRequestBytes = MaxBodyBytes + 128<<10
	// DefaultTurnTimeout is how long an agent may run a turn.
	DefaultTurnTimeout = 60 * time.Second
	// MaxTurnTimeout is the longest TurnTimeout New accepts: a turn's
	// handle (and so its run) must end well before the conversation
	// service may hand a stale claim of the turn to another run (see
	// MaxHandleLife).
	MaxTurnTimeout = 5 * time.Minute
)

// Verifier is VerificationService's VerifyAgentRequest.
type Verifier interface {
	VerifyAgentRequest(context.Context, *pactv1.VerifyAgentRequestRequest) (*pactv1.VerifyAgentRequestResponse, error)
}

// Brands is the part of BrandService the front door reads.
type Brands interface {
	GetAgentCard(context.Context, *pactv1.GetAgentCardRequest) (*pactv1.GetAgentCardResponse, error)
	GetBrand(context.Context, *pactv1.GetBrandRequest) (*pactv1.GetBrandResponse, error)
	ListBrands(context.Context, *pactv1.ListBrandsRequest) (*pactv1.ListBrandsResponse, error)
}

// Turns is the part of ConversationService message:send runs on.
type Turns interface {
	BeginTurn(context.Context, *pactv1.BeginTurnRequest) (*pactv1.BeginTurnResponse, error)
	CompleteTurn(context.Context, *pactv1.CompleteTurnRequest) (*pactv1.CompleteTurnResponse, error)
	AbandonTurn(context.Context, *pactv1.AbandonTurnRequest) (*pactv1.AbandonTurnResponse, error)
}

// Delegation is the part of DelegationService the pages and step-ups use.
type Delegation interface {
	DescribeConsent(context.Context, *pactv1.DescribeConsentRequest) (*pactv1.DescribeConsentResponse, error)
	ApproveConsent(context.Context, *pactv1.ApproveConsentRequest) (*pactv1.ApproveConsentResponse, error)
	DenyConsent(context.Context, *pactv1.DenyConsentRequest) (*pactv1.DenyConsentResponse, error)
	BeginConsent(context.Context, *pactv1.BeginConsentRequest) (*pactv1.BeginConsentResponse, error)
	BeginConnected(context.Context, *pactv1.BeginConnectedRequest) (*pactv1.BeginConnectedResponse, error)
	RevokeConnected(context.Context, *pactv1.RevokeConnectedRequest) (*pactv1.RevokeConnectedResponse, error)
	ListGrants(context.Context, *pactv1.ListGrantsRequest) (*pactv1.ListGrantsResponse, error)
	RevokeGrant(context.Context, *pactv1.RevokeGrantRequest) (*pactv1.RevokeGrantResponse, error)
	StartStepUp(context.Context, *pactv1.StartStepUpRequest) (*pactv1.StartStepUpResponse, error)
}

// Receipts is TokenService's SignReceipt.
type Receipts interface {
	SignReceipt(context.Context, *pactv1.SignReceiptRequest) (*pactv1.SignReceiptResponse, error)
}

// Registration is AgentService's SelfRegisterAgent.
type Registration interface {
	SelfRegisterAgent(context.Context, *pactv1.SelfRegisterAgentRequest) (*pactv1.SelfRegisterAgentResponse, error)
}

// Deps are what the front door calls.
type Deps struct {
	Verify       Verifier
	Brands       Brands
	Turns        Turns
	Delegation   Delegation
	Receipts     Receipts
	Registration Registration
	// OAuth serves pactd's OAuth endpoints under /a2a/{brandId}/oauth/
	// (package oauthhttp).
	OAuth http.Handler
	// Secret keys the turn handles and the pages' anti-forgery tokens; the
	// same on every replica (pactd derives it from the key-encryption
	// key), so any replica finishes a turn another began.
	Secret []byte
	// PublicURL is the Provider's public base URL: self-registration's
	// endpoint is PublicURL + "/api/platforms".
	PublicURL string
	// TurnTimeout bounds an agent's run; DefaultTurnTimeout when zero, at
	// most MaxTurnTimeout.
	TurnTimeout time.Duration
	Now         func() time.Time
	// NewMessageID mints reply message ids; random when nil.
	NewMessageID func() string
	Logger       *slog.Logger
}

// Service implements pact.v1.FrontDoorService.
type Service struct {
	pactv1connect.UnimplementedFrontDoorServiceHandler
	d     Deps
	pages *pages
	turns *handles
}

// New returns the service. Secret must be at least 32 bytes.
func New(d Deps) (*Service, error) {
	if len(d.Secret) < 32 {
		return nil, errors.New("frontdoor: the secret must be at least 32 bytes")
	}
	if d.TurnTimeout <= 0 {
		d.TurnTimeout = DefaultTurnTimeout
	}
	if d.TurnTimeout > MaxTurnTimeout {
		return nil, fmt.Errorf("frontdoor: the turn timeout %v is above %v", d.TurnTimeout, MaxTurnTimeout)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.NewMessageID == nil {
		d.NewMessageID = rand.Text
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	csrfKey, err := hkdf.Key(sha256.New, d.Secret, nil, "pactd front door page forms", 32)
	if err != nil {
		return nil, err
	}
	turnKey, err := hkdf.Key(sha256.New, d.Secret, nil, "pactd front door turn handles", 32)
	if err != nil {
		return nil, err
	}
	return &Service{d: d, pages: newPages(csrfKey, d.Now), turns: &handles{key: turnKey, now: d.Now}}, nil
}

// exchange is one forwarded request while it is served: what the frontend
// said beside the HTTP request, and what Serve answers other than a
// response.
type exchange struct {
	brandUser    string
	signInURL    string
	signsInUsers bool
	bodyTooLarge bool
	// userNeeded is set by a page that needs the trusted-frontend User.
	userNeeded *pactv1.UserNeeded
	// turn is set by message:send when the agent is to run.
	turn *pactv1.Turn
}

// Serve answers one forwarded HTTP request.
func (s *Service) Serve(ctx context.Context, req *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
	if len(req.GetPath()) > MaxPathBytes || len(req.GetQuery()) > MaxQueryBytes {
		// A target this long is the client's, not the frontend's, fault:
		// the answer HTTP has for it (RFC 9110 §15.5.15).
		return &pactv1.ServeResponse{Outcome: &pactv1.ServeResponse_Response{Response: &pactv1.HttpResponse{Status: http.StatusRequestURITooLong}}}, nil
	}
	r, err := s.request(ctx, req)
	if err != nil {
		return nil, err
	}
	x := &exchange{brandUser: req.GetBrandUser(), signInURL: req.GetSignInUrl(), signsInUsers: req.GetSignsInUsers(),
		bodyTooLarge: req.GetBodyTooLarge()}
	rec := newRecorder()
	s.recovered(rec, r, func() { s.route(rec, r, x) })
	switch {
	case x.turn != nil:
		return &pactv1.ServeResponse{Outcome: &pactv1.ServeResponse_Turn{Turn: x.turn}}, nil
	case x.userNeeded != nil:
		return &pactv1.ServeResponse{Outcome: &pactv1.ServeResponse_UserNeeded{UserNeeded: x.userNeeded}}, nil
	}
	return &pactv1.ServeResponse{Outcome: &pactv1.ServeResponse_Response{Response: rec.response()}}, nil
}

// request rebuilds the frontend's HTTP request, refusing what is past the
// bounds or not HTTP.
func (s *Service) request(ctx context.Context, req *pactv1.ServeRequest) (*http.Request, error) {
	var v rpcerr.Violations
	if !validMethod(req.GetMethod()) {
		v.Add("method", "must be an HTTP method token")
	}
	path := req.GetPath()
	if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?# \t\r\n\x00") {
		v.Add("path", "must be a request path starting with / (without query or fragment)")
	}
	if strings.ContainsAny(req.GetQuery(), "# \t\r\n\x00") {
		v.Add("query", "must be a raw query without fragment, spaces or controls")
	}
	if len(req.GetBody()) > MaxBodyBytes {
		v.Add("body", "is longer than %d bytes: send body_too_large instead", MaxBodyBytes)
	}
	if req.GetBodyTooLarge() && len(req.GetBody()) > 0 {
		v.Add("body", "must be empty with body_too_large")
	}
	if u := req.GetBrandUser(); len(u) > MaxBrandUserBytes || hasControl(u) {
		v.Add("brand_user", "must be at most %d bytes without control characters", MaxBrandUserBytes)
	}
	if u := req.GetSignInUrl(); len(u) > MaxSignInURLBytes || hasControl(u) {
		v.Add("sign_in_url", "must be at most %d bytes without control characters", MaxSignInURLBytes)
	} else if u != "" && req.GetBrandUser() != "" {
		v.Add("sign_in_url", "must be empty when brand_user is set")
	}
	header := http.Header{}
	size := 0
	for i, h := range req.GetHeaders() {
		size += len(h.GetName()) + len(h.GetValue())
		if !validHeaderName(h.GetName()) || strings.ContainsAny(h.GetValue(), "\r\n\x00") {
			v.Add(fmt.Sprintf("headers[%d]", i), "must be a header field name token and a value without CR, LF or NUL")
			continue
		}
		header.Add(h.GetName(), h.GetValue())
	}
	if size > MaxHeaderBytes {
		v.Add("headers", "are longer than %d bytes in all", MaxHeaderBytes)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	u := &url.URL{RawQuery: req.GetQuery()}
	if p, err := url.PathUnescape(path); err == nil {
		u.Path, u.RawPath = p, path
	} else {
		u.Path = path // never matched: routing splits the raw path itself
	}
	var body io.Reader = bytes.NewReader(req.GetBody())
	if req.GetBodyTooLarge() {
		// Stands for the body the frontend stopped reading: each route
		// reads it through its own bound and refuses it as it refuses a
		// real one of that size.
		body = io.LimitReader(filler{}, MaxBodyBytes+1)
	}
	r, err := http.NewRequestWithContext(ctx, req.GetMethod(), "/", body)
	if err != nil {
		return nil, rpcerr.InvalidField("method", "%s", err.Error())
	}
	r.URL, r.RequestURI, r.Header = u, path, header
	if r.Host = header.Get("Host"); r.Host == "" {
		r.Host = "frontend"
	}
	r.RemoteAddr = req.GetClientAddress()
	return r, nil
}

// filler reads as an endless run of 'a'.
type filler struct{}

func (filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// validMethod reports whether m is an HTTP method token (RFC 9110 §9.1).
func validMethod(m string) bool { return m != "" && len(m) <= 32 && isToken(m) }

// validHeaderName reports whether n is a field-name token (RFC 9110 §5.1).
func validHeaderName(n string) bool { return n != "" && len(n) <= 256 && isToken(n) }

// hasControl reports whether s holds a C0 control character or DEL.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f })
}

func isToken(s string) bool {
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// recovered runs serve; a panic becomes a bare 500 (or the INTERNAL A2A
// error under /a2a/), logged once with its stack.
func (s *Service) recovered(rec *recorder, r *http.Request, serve func()) {
	defer func() {
		if p := recover(); p != nil {
			s.d.Logger.ErrorContext(r.Context(), "front door panic", slog.String("path", r.URL.EscapedPath()),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			rec.reset()
			if strings.HasPrefix(r.RequestURI, "/a2a/") {
				internalError(rec)
			} else {
				bare(rec, http.StatusInternalServerError)
			}
		}
	}()
	serve()
}

// recorder keeps what a handler writes, bounded like an A2A answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

func (w *recorder) reset() { *w = *newRecorder() }

// response is what was written, headers in sorted order (as net/http
// writes them), so every frontend sends the same bytes.
func (w *recorder) response() *pactv1.HttpResponse {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	out := &pactv1.HttpResponse{Status: int32(status), Body: w.body.Bytes()}
	names := make([]string, 0, len(w.header))
	for k := range w.header {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range w.header[k] {
			out.Headers = append(out.Headers, &pactv1.HttpHeader{Name: k, Value: v})
		}
	}
	return out
}

// fail answers INTERNAL after an unexpected failure; the cause goes to the
// log only.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, op string, err error) {
	s.d.Logger.ErrorContext(r.Context(), op, slog.String("path", r.URL.EscapedPath()), slog.String("error", err.Error()))
	internalError(w)
}

// codeOf is the connect code of an in-process service error.
func codeOf(err error) connect.Code { return connect.CodeOf(err) }
