package frontdoor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/server/oauthhttp"
	"pactd.dev/pactd/services/brand"
	"pactd.dev/pactd/services/conversation"
	"pactd.dev/pactd/services/frontdoor"
)

// The harness: a frontdoor.Service over the real Brand and Conversation
// services on SQLite, pactd's real OAuth endpoints (package oauthhttp)
// over fakes, and fakes for everything that needs keys or a PA: the
// verification (fakeVerifier), the delegation service's pages and step-up
// (fakeDelegation), receipts (fakeReceipts) and self-registration
// (fakeRegistration). In front of it, over a Connect client as every
// frontend calls it, a test frontend (frontend) that does what the front
// door contract asks of a frontend library and no more.

// secret keys the Service's turn handles and CSRF tokens in the tests.
var secret = []byte("0123456789abcdef0123456789abcdef")

// clock is a settable clock for Deps.Now; it starts at the real time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// lockedBuffer is a log sink written while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fakeVerifier stands in for VerificationService: "Bearer good-<sub>" is
// allowed as that sub of agent agt_1 (with "X-A2A-User-Delegation: Bearer
// deleg-<user>", as that Brand user under grant a2agrant_1), "Bearer
// busy" is rate limited, every other value is refused; Brand "nope" is
// unknown (404). panics makes it panic.
type fakeVerifier struct {
	mu     sync.Mutex
	seen   []*pactv1.VerifyAgentRequestRequest
	panics atomic.Bool
}

func (f *fakeVerifier) VerifyAgentRequest(_ context.Context, req *pactv1.VerifyAgentRequestRequest) (*pactv1.VerifyAgentRequestResponse, error) {
	if f.panics.Load() {
		panic("the verifier fell over")
	}
	f.mu.Lock()
	f.seen = append(f.seen, req)
	f.mu.Unlock()
	sub, ok := strings.CutPrefix(req.GetAuthorization(), "Bearer good-")
	switch {
	case req.GetAuthorization() == "Bearer busy":
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 429, RetryAfterSeconds: 7, Reason: pactv1.DenyReason_DENY_REASON_RATE_LIMITED}, nil
	case !ok || sub == "" || strings.ContainsAny(sub, " ,"):
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 401, WwwAuthenticate: `Bearer realm="a2a"`, Reason: pactv1.DenyReason_DENY_REASON_MALFORMED}, nil
	case req.GetBrandId() == "nope":
		return &pactv1.VerifyAgentRequestResponse{HttpStatus: 404, Reason: pactv1.DenyReason_DENY_REASON_UNKNOWN_BRAND}, nil
	}
	resp := &pactv1.VerifyAgentRequestResponse{Allowed: true, HttpStatus: 200,
		Caller: &pactv1.Caller{AgentId: "agt_1", Issuer: "https://pa.example", Subject: sub}}
	if d, ok := strings.CutPrefix(req.GetUserDelegation(), "Bearer deleg-"); ok {
		resp.Delegation = &pactv1.DelegationInfo{GrantId: "a2agrant_1", BrandUser: d, Scopes: []string{"orders:read"}}
	}
	return resp, nil
}

func (f *fakeVerifier) calls() []*pactv1.VerifyAgentRequestRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// The user code the fake delegation service has a pending authorization
// for, at every Brand.
const pendingCode = "WDJB-MJHT"

// fakeDelegation stands in for DelegationService: StartStepUp answers a
// fixed task at Brand acme and FailedPrecondition (no delegation)
// elsewhere; DescribeConsent knows pendingCode; the grants are the test's
// (grants), ListGrants filters them by Brand and User and RevokeGrant
// marks them revoked. The signed-assertion calls are not used here.
type fakeDelegation struct {
	pactv1connect.UnimplementedDelegationServiceHandler
	now func() time.Time

	mu        sync.Mutex
	grants    []*pactv1.Grant
	approved  []*pactv1.ApproveConsentRequest
	denied    []*pactv1.DenyConsentRequest
	revoked   []string
	stepUps   []*pactv1.StartStepUpRequest
	listPanic bool
}

func (f *fakeDelegation) StartStepUp(_ context.Context, req *pactv1.StartStepUpRequest) (*pactv1.StartStepUpResponse, error) {
	f.mu.Lock()
	f.stepUps = append(f.stepUps, req)
	f.mu.Unlock()
	if req.GetBrandId() != "acme" {
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("no delegation"))
	}
	return &pactv1.StartStepUpResponse{TaskId: "t-1", MissingScopes: req.GetMissingScopes(),
		VerificationUriComplete: "https://brand.example/login?return_to=x",
		Scopes:                  []*pactv1.Scope{{Id: req.GetMissingScopes()[0], Description: "See your orders"}}}, nil
}

func (f *fakeDelegation) DescribeConsent(_ context.Context, req *pactv1.DescribeConsentRequest) (*pactv1.DescribeConsentResponse, error) {
	if req.GetUserCode() != pendingCode {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("unknown code"))
	}
	return &pactv1.DescribeConsentResponse{UserCode: pendingCode, AgentDisplayName: "E2E PA", AgentOrigin: "https://pa.example",
		BrandDisplayName: "Shop", ExpiresAt: timestamppb.New(f.now().Add(10 * time.Minute)),
		Scopes: []*pactv1.Scope{{Id: "orders:read", Description: "See your orders"}}}, nil
}

func (f *fakeDelegation) ApproveConsent(_ context.Context, req *pactv1.ApproveConsentRequest) (*pactv1.ApproveConsentResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approved = append(f.approved, req)
	return &pactv1.ApproveConsentResponse{GrantId: "a2agrant_new", Scopes: req.GetScopes()}, nil
}

func (f *fakeDelegation) DenyConsent(_ context.Context, req *pactv1.DenyConsentRequest) (*pactv1.DenyConsentResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.denied = append(f.denied, req)
	return &pactv1.DenyConsentResponse{}, nil
}

func (f *fakeDelegation) ListGrants(_ context.Context, req *pactv1.ListGrantsRequest) (*pactv1.ListGrantsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listPanic {
		panic("the grant list fell over")
	}
	var out []*pactv1.Grant
	for _, g := range f.grants {
		if g.GetBrandId() == req.GetBrandId() && g.GetBrandUser() == req.GetBrandUser() {
			out = append(out, g)
		}
	}
	return &pactv1.ListGrantsResponse{Grants: out}, nil
}

func (f *fakeDelegation) RevokeGrant(_ context.Context, req *pactv1.RevokeGrantRequest) (*pactv1.RevokeGrantResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.grants {
		if g.GetGrantId() == req.GetGrantId() && g.GetBrandId() == req.GetBrandId() && g.GetBrandUser() == req.GetBrandUser() {
			g.RevokeTime = timestamppb.New(f.now())
			f.revoked = append(f.revoked, g.GetGrantId())
			return &pactv1.RevokeGrantResponse{}, nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, errors.New("no such grant"))
}

func (f *fakeDelegation) setGrants(gs ...*pactv1.Grant) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.grants = gs
}

func (f *fakeDelegation) stepUpRequests() []*pactv1.StartStepUpRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.stepUps)
}

func (f *fakeDelegation) approvals() []*pactv1.ApproveConsentRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.approved)
}

func (f *fakeDelegation) revokedIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.revoked)
}

// fakeReceipts stands in for SignReceipt: it keeps each request and
// answers a receipt naming the request's fields (the actions as the
// request carries them, args_json included). panics makes it panic.
type fakeReceipts struct {
	mu     sync.Mutex
	seen   []*pactv1.SignReceiptRequest
	panics atomic.Bool
}

func (f *fakeReceipts) SignReceipt(_ context.Context, req *pactv1.SignReceiptRequest) (*pactv1.SignReceiptResponse, error) {
	if f.panics.Load() {
		panic("the receipt signer fell over")
	}
	f.mu.Lock()
	f.seen = append(f.seen, req)
	f.mu.Unlock()
	// An empty list is written as null, whether the request came over the
	// wire or in process: protobuf does not tell them apart.
	scopes, actions := req.GetScopesUsed(), req.GetActions()
	if len(scopes) == 0 {
		scopes = nil
	}
	if len(actions) == 0 {
		actions = nil
	}
	b, _ := json.Marshal(map[string]any{"jws": "h.p.s", "claims": map[string]any{
		"grantId": req.GetGrantId(), "user": req.GetBrandUser(), "pa": req.GetPaIssuer(), "scopesUsed": scopes, "actions": actions}})
	return &pactv1.SignReceiptResponse{ReceiptJson: string(b)}, nil
}

func (f *fakeReceipts) requests() []*pactv1.SignReceiptRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// fakeRegistration stands in for AgentService's SelfRegisterAgent.
type fakeRegistration struct {
	mu  sync.Mutex
	got *pactv1.SelfRegisterAgentRequest
	res *pactv1.SelfRegisterAgentResponse
}

func (f *fakeRegistration) SelfRegisterAgent(_ context.Context, req *pactv1.SelfRegisterAgentRequest) (*pactv1.SelfRegisterAgentResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = req
	return f.res, nil
}

func (f *fakeRegistration) set(res *pactv1.SelfRegisterAgentResponse) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got, f.res = nil, res
}

func (f *fakeRegistration) request() *pactv1.SelfRegisterAgentRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got
}

// fakeOAuth stands in for the delegation and token calls of pactd's OAuth
// endpoints: the token endpoint always answers authorization_pending, the
// metadata is a fixed document.
type fakeOAuth struct{ calls atomic.Int32 }

func (f *fakeOAuth) StartDeviceAuthorization(context.Context, *pactv1.StartDeviceAuthorizationRequest) (*pactv1.StartDeviceAuthorizationResponse, error) {
	f.calls.Add(1)
	return nil, connect.NewError(connect.CodeUnimplemented, errors.New("not in these tests"))
}

func (f *fakeOAuth) IssueDelegation(context.Context, *pactv1.IssueDelegationRequest) (*pactv1.IssueDelegationResponse, error) {
	f.calls.Add(1)
	return &pactv1.IssueDelegationResponse{Error: &pactv1.OAuthError{HttpStatus: 400, Error: "authorization_pending",
		BodyJson: `{"error":"authorization_pending"}`}}, nil
}

func (f *fakeOAuth) RevokeToken(context.Context, *pactv1.RevokeTokenRequest) (*pactv1.RevokeTokenResponse, error) {
	f.calls.Add(1)
	return &pactv1.RevokeTokenResponse{}, nil
}

func (f *fakeOAuth) GetAuthorizationServerMetadata(context.Context, *pactv1.GetAuthorizationServerMetadataRequest) (*pactv1.GetAuthorizationServerMetadataResponse, error) {
	f.calls.Add(1)
	return &pactv1.GetAuthorizationServerMetadataResponse{MetadataJson: `{"issuer":"https://provider.example"}`, CacheControl: "public, max-age=300"}, nil
}

func (f *fakeOAuth) GetJwks(context.Context, *pactv1.GetJwksRequest) (*pactv1.GetJwksResponse, error) {
	f.calls.Add(1)
	return &pactv1.GetJwksResponse{JwksJson: `{"keys":[]}`}, nil
}

// turnCounter wraps the Conversation service and counts its calls; a test
// reads abandoned to see a turn released.
type turnCounter struct {
	frontdoor.Turns
	calls     *atomic.Int32
	abandoned atomic.Int32
}

func (c *turnCounter) BeginTurn(ctx context.Context, r *pactv1.BeginTurnRequest) (*pactv1.BeginTurnResponse, error) {
	c.calls.Add(1)
	return c.Turns.BeginTurn(ctx, r)
}

func (c *turnCounter) CompleteTurn(ctx context.Context, r *pactv1.CompleteTurnRequest) (*pactv1.CompleteTurnResponse, error) {
	c.calls.Add(1)
	return c.Turns.CompleteTurn(ctx, r)
}

func (c *turnCounter) AbandonTurn(ctx context.Context, r *pactv1.AbandonTurnRequest) (*pactv1.AbandonTurnResponse, error) {
	c.calls.Add(1)
	c.abandoned.Add(1)
	return c.Turns.AbandonTurn(ctx, r)
}

// brandCounter wraps the Brand service and counts its calls.
type brandCounter struct {
	frontdoor.Brands
	calls *atomic.Int32
}

func (c brandCounter) GetAgentCard(ctx context.Context, r *pactv1.GetAgentCardRequest) (*pactv1.GetAgentCardResponse, error) {
	c.calls.Add(1)
	return c.Brands.GetAgentCard(ctx, r)
}

func (c brandCounter) GetBrand(ctx context.Context, r *pactv1.GetBrandRequest) (*pactv1.GetBrandResponse, error) {
	c.calls.Add(1)
	return c.Brands.GetBrand(ctx, r)
}

func (c brandCounter) ListBrands(ctx context.Context, r *pactv1.ListBrandsRequest) (*pactv1.ListBrandsResponse, error) {
	c.calls.Add(1)
	return c.Brands.ListBrands(ctx, r)
}

// reply is what the test agent answers, as a Brand's agent writes it in
// a frontend library.
type reply struct {
	Text       string
	NeedScopes []string
	ScopesUsed []string
	Actions    []action
	Metadata   map[string]any
}

// action is one tool call of a reply; Args are encoded by encoding/json,
// as a Go frontend encodes them.
type action struct {
	Tool string
	Args any
}

// agentReply is the reply as FinishTurn takes it.
func (r reply) agentReply() (*pactv1.AgentReply, error) {
	out := &pactv1.AgentReply{Text: r.Text, NeedScopes: r.NeedScopes, ScopesUsed: r.ScopesUsed}
	for _, a := range r.Actions {
		ra := &pactv1.ReceiptAction{Tool: a.Tool}
		if a.Args != nil {
			b, err := json.Marshal(a.Args)
			if err != nil {
				return nil, err
			}
			ra.ArgsJson = string(b)
		}
		out.Actions = append(out.Actions, ra)
	}
	if len(r.Metadata) > 0 {
		b, err := json.Marshal(r.Metadata)
		if err != nil {
			return nil, err
		}
		out.MetadataJson = string(b)
	}
	return out, nil
}

// countingAgent echoes, counts its runs, and can be held, made to fail or
// to panic; "need SCOPE" asks for SCOPE, and "act" answers actReply.
type countingAgent struct {
	runs    atomic.Int32
	entered chan struct{} // receives once per run when non-nil
	release chan struct{} // runs wait on it when non-nil
	fail    atomic.Bool
	panics  atomic.Bool
}

// actReply is countingAgent's answer to "act": HTML characters and a
// number past float64's precision in the arguments, pass-through and
// "pact." metadata (which pactd drops).
var actReply = reply{
	Text: "done <ok> & more", ScopesUsed: []string{"orders:read", "orders:cancel"},
	Actions: []action{{Tool: "list_orders"}, {Tool: "cancel_order", Args: map[string]any{
		"orderId": "1002", "note": "<b>&", "big": json.Number("12345678901234567890"), "list": []any{1.5, true, nil}}}},
	Metadata: map[string]any{"trace": "t-1", "nested": map[string]any{"a": []any{"x"}}, "pact.receipt": "forged", "pact.other": 1},
}

func (a *countingAgent) reply(t *pactv1.Turn) (reply, error) {
	a.runs.Add(1)
	if a.entered != nil {
		a.entered <- struct{}{}
	}
	if a.release != nil {
		<-a.release
	}
	if a.fail.Load() {
		return reply{}, errors.New("agent down")
	}
	if a.panics.Load() {
		panic("the agent fell over")
	}
	if t.GetText() == "act" {
		return actReply, nil
	}
	if scope, ok := strings.CutPrefix(t.GetText(), "need "); ok {
		return reply{NeedScopes: []string{scope}, Text: "not here"}, nil
	}
	r := reply{Text: "This is the " + t.GetBrandId() + " support agent. You said: " + t.GetText()}
	if d := t.GetDelegation(); d != nil {
		r.Text += " (as " + d.GetBrandUser() + ")"
	}
	return r, nil
}

// sessions is the test frontend's sign-in hook for trusted-frontend
// Brands: the User is the "user" cookie of the request (which the
// frontend never forwards to pactd), signed in at every Brand.
type sessions struct{ calls atomic.Int32 }

func (s *sessions) brandUser(r *http.Request, _ string) string {
	s.calls.Add(1)
	c, err := r.Cookie("user")
	if err != nil {
		return ""
	}
	return c.Value
}

func (*sessions) loginURL(brandID, returnTo string) string {
	return "/login?brand=" + url.QueryEscape(brandID) + "&return_to=" + url.QueryEscape(returnTo)
}

// hopByHop are the fields a frontend never forwards, with Cookie.
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Cookie"}

// turnKey carries the turn to an SDK executor in the request context.
type turnKey struct{}

// frontend is the test adapter: for every request, what a frontend
// library does per the front door contract. It reads the body (at most
// MaxBodyBytes, else body_too_large and a closed connection), forwards
// the raw request to Serve, answers UserNeeded through its sign-in hook,
// runs the test agent (or hands the turn to an A2A SDK handler) and calls
// FinishTurn, writes pactd's answer byte for byte, honours Connection:
// close, answers a failed call with a bare 502 and its own panic with a
// bare 500.
type frontend struct {
	door     pactv1connect.FrontDoorServiceClient
	agent    *countingAgent
	sdk      http.Handler // when set, turns go to this A2A SDK handler
	sessions *sessions    // nil: the frontend signs nobody in
	log      *slog.Logger
}

func (f *frontend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			f.log.Error("frontend panic", slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			w.WriteHeader(http.StatusInternalServerError)
		}
	}()
	req := f.serveRequest(w, r)
	res, err := f.door.Serve(r.Context(), req)
	if err == nil && res.GetUserNeeded() != nil && f.sessions != nil {
		need := res.GetUserNeeded()
		if req.BrandUser = f.sessions.brandUser(r, need.GetBrandId()); req.BrandUser == "" {
			req.SignInUrl = f.sessions.loginURL(need.GetBrandId(), need.GetReturnTo())
		}
		res, err = f.door.Serve(r.Context(), req)
	}
	switch {
	case err != nil:
		f.failed(w, "Serve", err)
	case res.GetResponse() != nil:
		write(w, res.GetResponse())
	case res.GetTurn() != nil:
		f.turn(w, r, res.GetTurn())
	default:
		f.failed(w, "Serve", fmt.Errorf("an answer without outcome: %v", res))
	}
}

func (f *frontend) serveRequest(w http.ResponseWriter, r *http.Request) *pactv1.ServeRequest {
	path, query, _ := strings.Cut(r.RequestURI, "?")
	req := &pactv1.ServeRequest{Method: r.Method, Path: path, Query: query, SignsInUsers: f.sessions != nil, ClientAddress: r.RemoteAddr}
	req.Headers = append(req.Headers, &pactv1.HttpHeader{Name: "Host", Value: r.Host})
	for name, values := range r.Header {
		if !slices.ContainsFunc(hopByHop, func(h string) bool { return strings.EqualFold(h, name) }) {
			for _, v := range values {
				req.Headers = append(req.Headers, &pactv1.HttpHeader{Name: name, Value: v})
			}
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, frontdoor.MaxBodyBytes))
	if err != nil {
		req.BodyTooLarge = true
		w.Header().Set("Connection", "close")
	} else {
		req.Body = body
	}
	return req
}

// turn runs the agent to the end (even if the PA hangs up), then writes
// FinishTurn's answer.
func (f *frontend) turn(w http.ResponseWriter, r *http.Request, t *pactv1.Turn) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), time.Duration(t.GetTurnTimeoutSeconds())*time.Second)
	defer cancel()
	req := &pactv1.FinishTurnRequest{Handle: t.GetHandle()}
	if f.sdk != nil {
		a, err := f.runSDK(ctx, r, t)
		if err != nil {
			req.Result = &pactv1.FinishTurnRequest_Failure{Failure: err.Error()}
		} else {
			req.Result = &pactv1.FinishTurnRequest_SdkAnswer{SdkAnswer: a}
		}
	} else if rp, err := f.runAgent(t); err != nil {
		req.Result = &pactv1.FinishTurnRequest_Failure{Failure: err.Error()}
	} else {
		req.Result = &pactv1.FinishTurnRequest_Reply{Reply: rp}
	}
	res, err := f.door.FinishTurn(context.WithoutCancel(r.Context()), req)
	if err != nil {
		f.failed(w, "FinishTurn", err)
		return
	}
	write(w, res.GetResponse())
}

func (f *frontend) runAgent(t *pactv1.Turn) (out *pactv1.AgentReply, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("the agent panicked: %v\n%s", p, debug.Stack())
		}
	}()
	rp, err := f.agent.reply(t)
	if err != nil {
		return nil, err
	}
	return rp.agentReply()
}

// maxSDKAnswer bounds what the frontend reads of an SDK's answer.
const maxSDKAnswer = 1 << 20

// sdkDropped are the PA's headers an SDK never sees.
var sdkDropped = []string{"Authorization", "X-A2A-User-Delegation", "Cookie", "Content-Type", "Content-Length", "A2A-Version",
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// runSDK hands the turn to the SDK handler and captures its answer.
func (f *frontend) runSDK(ctx context.Context, r *http.Request, t *pactv1.Turn) (a *pactv1.SdkAnswer, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = nil, fmt.Errorf("the A2A handler panicked: %v\n%s", p, debug.Stack())
		}
	}()
	req, err := http.NewRequestWithContext(context.WithValue(ctx, turnKey{}, t), http.MethodPost, t.GetSdkPath(),
		strings.NewReader(t.GetSdkRequestJson()))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	for _, k := range sdkDropped {
		req.Header.Del(k)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	rec := httptest.NewRecorder()
	f.sdk.ServeHTTP(rec, req)
	if rec.Body.Len() > maxSDKAnswer {
		return nil, fmt.Errorf("the SDK's answer is larger than %d bytes", maxSDKAnswer)
	}
	return &pactv1.SdkAnswer{Status: int32(rec.Code), Body: rec.Body.Bytes()}, nil
}

// write sends pactd's answer as it is: status, headers in order, body. A
// "Connection: close" among the headers makes net/http close the
// connection after the response.
func write(w http.ResponseWriter, res *pactv1.HttpResponse) {
	for _, h := range res.GetHeaders() {
		w.Header().Add(h.GetName(), h.GetValue())
	}
	w.WriteHeader(int(res.GetStatus()))
	_, _ = w.Write(res.GetBody())
}

// failed answers a failed call to pactd: a bare 502, one log line naming
// the RPC.
func (f *frontend) failed(w http.ResponseWriter, rpc string, err error) {
	f.log.Error("pactd "+rpc, slog.String("error", err.Error()))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadGateway)
}

// env is the Service, its dependencies and the test frontend.
type env struct {
	svc      *frontdoor.Service
	door     pactv1connect.FrontDoorServiceClient
	url      string
	store    db.Store
	clock    *clock
	verifier *fakeVerifier
	deleg    *fakeDelegation
	receipts *fakeReceipts
	reg      *fakeRegistration
	oauth    *fakeOAuth
	turns    *turnCounter
	agent    *countingAgent
	fe       *frontend
	calls    atomic.Int32 // calls of the Service to the Brand and Conversation services
	ids      atomic.Int32
	log      lockedBuffer // pactd's log (the Service's)
	feLog    lockedBuffer // the test frontend's log
	srvLog   lockedBuffer // the test frontend's http.Server's own log
}

// options change how newEnv builds the env.
type options struct {
	sessions    bool                      // the frontend has a sign-in hook
	sdk         func(e *env) http.Handler // turns go to this A2A SDK handler
	turnTimeout time.Duration             // Deps.TurnTimeout
	panicBrands bool                      // every Brand service call panics
}

// newEnv builds the env with the Brands acme and beta (identity only),
// shop and mall (delegation, trusted-frontend sign-in) and mart
// (delegation, signed-assertion login), and the PA agt_1.
func newEnv(t *testing.T, opts ...func(*options)) *env {
	t.Helper()
	var o options
	for _, f := range opts {
		f(&o)
	}
	store := dbtest.Open(t, "", t.TempDir())
	now := time.Now()
	for _, b := range []string{"acme", "beta"} {
		if _, err := store.CreateBrand(t.Context(), db.Brand{ID: b, DisplayName: strings.ToUpper(b), Description: "Support", CreateTime: now, UpdateTime: now}); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []struct{ id, name string }{{"shop", "Shop"}, {"mall", "Mall"}} {
		if _, err := store.CreateBrand(t.Context(), db.Brand{ID: b.id, DisplayName: b.name, Description: "Support", CreateTime: now, UpdateTime: now,
			Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See your orders"},
				{ID: "orders:cancel", Description: "Cancel your orders"}},
				LoginURL: "https://shop.example", LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND.String()}}); err != nil {
			t.Fatal(err)
		}
	}
	// mart offers delegation through its own login, which posts signed
	// assertions.
	if _, err := store.CreateBrand(t.Context(), db.Brand{ID: "mart", DisplayName: "Mart", Description: "Support", CreateTime: now, UpdateTime: now,
		Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See your orders"},
			{ID: "orders:cancel", Description: "Cancel your orders"}, {ID: "a", Description: "A"}},
			LoginURL: "https://mart.example", LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION.String()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateAgent(t.Context(), db.Agent{ID: "agt_1", Issuer: "https://pa.example", JWKSURI: "https://pa.example/j", DisplayName: "PA",
		Enabled: true, CreateTime: now, UpdateTime: now}); err != nil {
		t.Fatal(err)
	}
	e := &env{store: store, clock: newClock(), verifier: &fakeVerifier{}, receipts: &fakeReceipts{}, reg: &fakeRegistration{},
		oauth: &fakeOAuth{}, agent: &countingAgent{}}
	e.deleg = &fakeDelegation{now: e.clock.Now}
	e.turns = &turnCounter{Turns: conversation.New(conversation.Deps{Store: store, Now: e.clock.Now}), calls: &e.calls}
	var brands frontdoor.Brands = brandCounter{Brands: brand.New(brand.Deps{Store: store, PublicURL: "https://provider.example"}), calls: &e.calls}
	if o.panicBrands {
		brands = panicBrands{}
	}
	oauthMux := http.NewServeMux()
	oauthhttp.New(e.oauth, e.oauth, nil).Register(oauthMux)
	svc, err := frontdoor.New(frontdoor.Deps{
		Verify: e.verifier, Brands: brands, Turns: e.turns, Delegation: e.deleg, Receipts: e.receipts, Registration: e.reg,
		OAuth: oauthMux, Secret: secret, PublicURL: "https://provider.example", TurnTimeout: o.turnTimeout, Now: e.clock.Now,
		NewMessageID: func() string { return fmt.Sprintf("reply-%d", e.ids.Add(1)) },
		Logger:       slog.New(slog.NewJSONHandler(&e.log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewFrontDoorServiceHandler(svc, connect.WithReadMaxBytes(frontdoor.MaxRequestBytes)))
	pactd := httptest.NewServer(mux)
	t.Cleanup(pactd.Close)
	e.door = pactv1connect.NewFrontDoorServiceClient(pactd.Client(), pactd.URL)
	e.fe = &frontend{door: e.door, agent: e.agent, log: slog.New(slog.NewJSONHandler(&e.feLog, nil))}
	if o.sessions {
		e.fe.sessions = &sessions{}
	}
	if o.sdk != nil {
		e.fe.sdk = o.sdk(e)
	}
	fe := httptest.NewUnstartedServer(e.fe)
	fe.Config.ErrorLog = log.New(&e.srvLog, "", 0)
	fe.Start()
	t.Cleanup(fe.Close)
	e.url = fe.URL
	return e
}

func withSessions(o *options) { o.sessions = true }

// panicBrands is a Brand service whose every call panics.
type panicBrands struct{}

func (panicBrands) GetAgentCard(context.Context, *pactv1.GetAgentCardRequest) (*pactv1.GetAgentCardResponse, error) {
	panic("the Brand service fell over")
}

func (panicBrands) GetBrand(context.Context, *pactv1.GetBrandRequest) (*pactv1.GetBrandResponse, error) {
	panic("the Brand service fell over")
}

func (panicBrands) ListBrands(context.Context, *pactv1.ListBrandsRequest) (*pactv1.ListBrandsResponse, error) {
	panic("the Brand service fell over")
}

// response is what a client of the test frontend got.
type response struct {
	status int
	header http.Header
	body   string
	close  bool // the server said Connection: close
}

// do sends one request to the test frontend; headers are "Name: value".
func (e *env) do(t *testing.T, method, path, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	// No redirects are followed: a test sees the 303 itself.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, string(b), res.Close}
}

// serve calls Serve directly (over the wire), as a frontend does.
func (e *env) serve(t *testing.T, req *pactv1.ServeRequest) (*pactv1.ServeResponse, error) {
	t.Helper()
	return e.door.Serve(t.Context(), req)
}

// finish calls FinishTurn directly (over the wire).
func (e *env) finish(t *testing.T, req *pactv1.FinishTurnRequest) (*pactv1.FinishTurnResponse, error) {
	t.Helper()
	return e.door.FinishTurn(t.Context(), req)
}

// logEntries decodes the lines of pactd's JSON log written after mark (a
// length of e.log.String()).
func (e *env) logEntries(t *testing.T, mark int) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(e.log.String()[mark:]) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// logLines returns the lines of pactd's log that hold s.
func (e *env) logLines(s string) []string {
	var out []string
	for line := range strings.Lines(e.log.String()) {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

const good = "Authorization: Bearer good-alice"

func errBody(r a2aerr.Reason, msg string) string { return string(a2aerr.Body(r, msg)) }

// wantA2A checks an A2A answer: status, the exact content type and body.
func wantA2A(t *testing.T, name string, got response, status int, body string) {
	t.Helper()
	if got.status != status || got.header.Get("Content-Type") != "application/a2a+json" || got.body != body {
		t.Errorf("%s: got %d %q %s\nwant %d application/a2a+json %s", name, got.status, got.header.Get("Content-Type"), got.body, status, body)
	}
}

// wantBare checks a non-A2A answer: the status and no body.
func wantBare(t *testing.T, name string, got response, status int) {
	t.Helper()
	if got.status != status || got.body != "" || got.header.Get("Content-Type") == "application/a2a+json" {
		t.Errorf("%s: got %d %q %q; want a bare %d", name, got.status, got.header.Get("Content-Type"), got.body, status)
	}
}

// wantPage checks an HTML page: status, the pages' headers, and that the
// body holds each of wants.
func wantPage(t *testing.T, name string, got response, status int, wants ...string) {
	t.Helper()
	h := got.header
	if got.status != status || h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("X-Frame-Options") != "DENY" ||
		h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'none'; style-src 'sha256-") {
		t.Errorf("%s: got %d %v; want the %d page with the pages' headers\n%s", name, got.status, h, status, got.body)
		return
	}
	for _, w := range wants {
		if !strings.Contains(got.body, w) {
			t.Errorf("%s: the page lacks %q:\n%s", name, w, got.body)
		}
	}
}

// sendBody is a message:send body with one text part.
func sendBody(id, contextID, text string) string {
	m := map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	b, _ := json.Marshal(map[string]any{"message": m})
	return string(b)
}
