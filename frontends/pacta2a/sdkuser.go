package pacta2a

import (
	"context"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

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

// Interceptor returns the a2asrv.CallInterceptor that makes the caller
// Wrap verified the SDK's user: a2asrv.NewAuthenticatedUser with the name
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

// Before sets the user from the call Wrap put in the context.
func (interceptor) Before(ctx context.Context, callCtx *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	c, ok := ctx.Value(callKey{}).(*sdkCall)
	if !ok || callCtx.Method() != "SendMessage" {
		return ctx, nil, a2a.ErrUnauthenticated
	}
	t := c.turn
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
// Wrap answers the PA with PACT's step-up task (pactd's task id and
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
// on) and pact.actions (the tools it ran; the receipt carries the
// base64url SHA-256 of each Args' JSON). Wrap reads and removes them, and
// adds pact.receipt on delegated turns. It returns msg.
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
