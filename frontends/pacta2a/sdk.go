package pacta2a

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// Wrap returns the whole PACT frontend of cfg (NewHandler) with an A2A
// server built on github.com/a2aproject/a2a-go/v2 as its agent. next is the
// SDK's HTTP+JSON handler, as a Provider already serves it:
//
//	next := a2asrv.NewTenantRESTHandler("/a2a/{*}",
//		a2asrv.NewHandler(executor, a2asrv.WithCallInterceptors(pacta2a.Interceptor())))
//	fe, err := pacta2a.Wrap(cfg, next)
//	mux.Handle("/", fe)
//
// Every route stays pactd's. Only a turn pactd says to run reaches next,
// as the request pactd prepared: POST /a2a/{brandId}/message:send (so next
// must serve that path), Content-Type application/json, A2A-Version 1.0,
// body {"message": the PA's message with pactd's contextId, "metadata"?:
// the request's metadata}, and the PA's other headers without
// Authorization, X-A2A-User-Delegation, Cookie and hop-by-hop ones. The
// verified caller travels in the request's context, where Interceptor
// finds it. next's answer (at most 1 MiB) goes to pactd as it is, and
// pactd reads it: a Message (its pact.scopesUsed and pact.actions metadata
// for the receipt: WithReceipt sets them), a step-up Task (StepUpTask), or
// an A2A error INVALID_PARAMS, CONTENT_TYPE_NOT_SUPPORTED or
// UNSUPPORTED_OPERATION; anything else fails the turn. cfg.Agent must be
// nil: next is the agent.
func Wrap(cfg Config, next http.Handler) (*Handler, error) {
	if next == nil {
		return nil, errors.New("pacta2a: Wrap needs the SDK's HTTP+JSON handler")
	}
	if cfg.Agent != nil {
		return nil, errors.New("pacta2a: Wrap makes the SDK's handler the agent; leave Config.Agent nil")
	}
	cfg.Agent = &sdkAgent{next: next}
	return NewHandler(cfg)
}

// maxAnswerBytes bounds what Wrap reads of the SDK's answer.
const maxAnswerBytes = 1 << 20

// sdkAgent is the Agent of Wrap: an a2a-go HTTP+JSON handler. The Handler
// runs it (run); Reply is there for the Agent interface only.
type sdkAgent struct{ next http.Handler }

// Reply is never called: a Handler hands the SDK pactd's request itself.
func (a *sdkAgent) Reply(context.Context, Turn) (Reply, error) {
	return Reply{}, errors.New("pacta2a: an SDK agent runs only behind Wrap's Handler")
}

// callKey is the context key of the turn Wrap hands the SDK; only this
// package can set it, so Interceptor trusts what it finds there.
type callKey struct{}

// dropped are the PA's headers that never reach the SDK: its credentials
// (the verified identity travels in the SDK's User instead), the headers
// Wrap sets itself, and the hop-by-hop ones.
var dropped = []string{"Authorization", "X-A2A-User-Delegation", "Cookie", "Content-Type", "Content-Length", "A2A-Version",
	"Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Expect"}

// run hands the turn to the SDK's handler and captures its answer.
func (a *sdkAgent) run(ctx context.Context, t Turn) (*pactv1.SdkAnswer, error) {
	req, err := http.NewRequestWithContext(context.WithValue(ctx, callKey{}, &t), http.MethodPost, t.turn.GetSdkPath(),
		strings.NewReader(t.turn.GetSdkRequestJson()))
	if err != nil {
		return nil, err
	}
	req.Header = t.header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	for _, k := range dropped {
		req.Header.Del(k)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	rec := &captureWriter{header: http.Header{}}
	if err := serveSDK(a.next, rec, req); err != nil {
		return nil, err
	}
	if rec.over {
		return nil, fmt.Errorf("the A2A handler's answer is larger than %d bytes", maxAnswerBytes)
	}
	return &pactv1.SdkAnswer{Status: int32(rec.status()), Body: rec.body.Bytes()}, nil
}

// serveSDK runs the SDK's handler; its panic (an interceptor's, the
// handler's own) fails the turn like an error.
func serveSDK(next http.Handler, w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the A2A handler panicked: %v\n%s", v, debug.Stack())
		}
	}()
	next.ServeHTTP(w, r)
	return nil
}

// errAnswerTooLarge stops the SDK from writing past maxAnswerBytes.
var errAnswerTooLarge = errors.New("pacta2a: the answer is too large")

// captureWriter keeps the SDK's answer, at most maxAnswerBytes of it.
type captureWriter struct {
	header http.Header
	code   int
	body   bytes.Buffer
	over   bool
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(code int) {
	if c.code == 0 && code >= 200 { // 1xx are interim
		c.code = code
	}
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	if c.over || c.body.Len()+len(b) > maxAnswerBytes {
		c.over = true
		return 0, errAnswerTooLarge
	}
	return c.body.Write(b)
}

func (c *captureWriter) status() int {
	if c.code == 0 {
		return http.StatusOK
	}
	return c.code
}

// The attributes of the a2asrv.User that Interceptor makes; CallerOf,
// DelegationOf, BrandOf and TurnOf read them.
const (
	// AttrBrandID is the Brand's id (a string).
	AttrBrandID = "pact.brandId"
	// AttrCaller is the PA and its User as pactd verified them (*pactv1.Caller).
	AttrCaller = "pact.caller"
	// AttrDelegation is the grant of a verified delegation token
	// (*pactv1.DelegationInfo); absent on an identity-only turn.
	AttrDelegation = "pact.delegation"
	// AttrNewContext is true on a conversation's first turn (a bool).
	AttrNewContext = "pact.newContext"
)

// The metadata keys an executor answers PACT with (pactd reads them).
const (
	metaScopesUsed    = "pact.scopesUsed"
	metaActions       = "pact.actions"
	metaMissingScopes = "pact.missingScopes"
)

// Interceptor returns the a2asrv.CallInterceptor that makes the caller
// pactd verified the SDK's user: a2asrv.NewAuthenticatedUser with the name
// "{agentId}:{sub}" (one per PA and User, as pactd's conversations key
// them) and the Attr* attributes, so a2asrv.ExecutorContext.User carries
// it. It refuses, with a2a.ErrUnauthenticated, every call that did not
// come through Wrap: the SDK's handler serves nobody PACT did not let in.
// Register it with a2asrv.WithCallInterceptors. The attributes hold Go
// values, so they reach the executor in a2a-go's local mode (the default),
// not across a cluster's work queue.
func Interceptor() a2asrv.CallInterceptor { return interceptor{} }

type interceptor struct {
	a2asrv.PassthroughCallInterceptor
}

// Before sets the user from the turn Wrap put in the context.
func (interceptor) Before(ctx context.Context, callCtx *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	t, ok := ctx.Value(callKey{}).(*Turn)
	if !ok || callCtx.Method() != "SendMessage" {
		return ctx, nil, a2a.ErrUnauthenticated
	}
	attrs := map[string]any{AttrBrandID: t.BrandID, AttrCaller: t.Caller, AttrNewContext: t.NewContext}
	if t.Delegation != nil {
		attrs[AttrDelegation] = t.Delegation
	}
	callCtx.User = a2asrv.NewAuthenticatedUser(t.Caller.GetAgentId()+":"+t.Caller.GetSubject(), attrs)
	return ctx, nil, nil
}

// CallerOf is the verified PA and User of an SDK user Interceptor made,
// or nil.
func CallerOf(u *a2asrv.User) *pactv1.Caller {
	c, _ := attr(u, AttrCaller).(*pactv1.Caller)
	return c
}

// DelegationOf is the grant the turn runs under (act as its BrandUser,
// within its Scopes and AuthorizationDetails), or nil for an identity-only
// turn or a user Interceptor did not make.
func DelegationOf(u *a2asrv.User) *pactv1.DelegationInfo {
	d, _ := attr(u, AttrDelegation).(*pactv1.DelegationInfo)
	return d
}

// BrandOf is the id of the Brand the PA is talking to, or "".
func BrandOf(u *a2asrv.User) string {
	b, _ := attr(u, AttrBrandID).(string)
	return b
}

func attr(u *a2asrv.User, key string) any {
	if u == nil || !u.Authenticated {
		return nil
	}
	return u.Attributes[key]
}

// TurnOf is the turn an executor runs as an Agent sees it, so Brand logic
// written for the standalone frontend (an Agent) serves an a2a-go
// executor unchanged. ok is false when execCtx did not come through Wrap.
func TurnOf(execCtx *a2asrv.ExecutorContext) (t Turn, ok bool) {
	caller := CallerOf(execCtx.User)
	if caller == nil || execCtx.Message == nil {
		return Turn{}, false
	}
	var text []string
	for _, p := range execCtx.Message.Parts {
		if s, isText := p.Content.(a2a.Text); isText {
			text = append(text, string(s))
		}
	}
	newContext, _ := attr(execCtx.User, AttrNewContext).(bool)
	return Turn{
		BrandID: BrandOf(execCtx.User), ContextID: execCtx.ContextID, NewContext: newContext,
		Text: strings.Join(text, "\n"), Caller: caller, Delegation: DelegationOf(execCtx.User),
	}, true
}

// StepUpTask is an executor's answer to a turn that needs scopes the caller
// was not granted (or any, on an identity-only turn): a Task in
// TASK_STATE_AUTH_REQUIRED whose metadata pact.missingScopes lists them.
// pactd answers the PA with PACT's step-up task (its task id and
// verification link) and does not store the turn. fallback is the status
// message's text, sent as an ordinary reply instead when the Brand offers
// no delegation ("" for none).
func StepUpTask(execCtx *a2asrv.ExecutorContext, fallback string, scopes ...string) *a2a.Task {
	need := make([]any, 0, len(scopes)) // the SDK's task store admits []any, not []string
	for _, s := range scopes {
		need = append(need, s)
	}
	t := &a2a.Task{
		ID: execCtx.TaskID, ContextID: execCtx.ContextID,
		Status:   a2a.TaskStatus{State: a2a.TaskStateAuthRequired},
		Metadata: map[string]any{metaMissingScopes: need},
	}
	if fallback != "" {
		t.Status.Message = a2a.NewMessageForTask(a2a.MessageRoleAgent, execCtx, a2a.NewTextPart(fallback))
	}
	return t
}

// WithReceipt sets what the receipt of a delegated reply names on an
// executor's answer message: pact.scopesUsed (the scopes the reply relied
// on) and pact.actions (the tools it ran, with their arguments, which
// pactd hashes). pactd reads and removes them, and adds pact.receipt on
// delegated turns. It returns msg.
func WithReceipt(msg *a2a.Message, scopesUsed []string, actions ...Action) *a2a.Message {
	used := make([]any, 0, len(scopesUsed))
	for _, s := range scopesUsed {
		used = append(used, s)
	}
	acts := make([]any, 0, len(actions))
	for _, a := range actions {
		act := map[string]any{"tool": a.Tool}
		if a.Args != nil {
			act["args"] = a.Args
		}
		acts = append(acts, act)
	}
	msg.SetMeta(metaScopesUsed, used)
	msg.SetMeta(metaActions, acts)
	return msg
}
