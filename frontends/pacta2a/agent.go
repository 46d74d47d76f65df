package pacta2a

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// Agent is the Brand's support agent: the only part of the frontend that is
// Brand logic. Replace EchoAgent with a real one (package demo has one with
// scope-mapped actions), or put an a2a-go server behind the frontend with
// Wrap, which makes the SDK's handler the Agent.
type Agent interface {
	// Reply answers one User turn. An error abandons the turn (the PA may
	// send the same messageId again) and answers INTERNAL; so does a panic.
	Reply(ctx context.Context, t Turn) (Reply, error)
}

// Turn is what the agent knows about one User message, as pactd handed it
// out.
type Turn struct {
	// BrandID is the Brand the PA is talking to.
	BrandID string
	// ContextID is the conversation (contextId).
	ContextID string
	// NewContext is true on the conversation's first turn.
	NewContext bool
	// Text is the User's message: its text parts joined by newlines.
	Text string
	// Caller is the PA and its User, as pactd verified them.
	Caller *pactv1.Caller
	// Delegation is the grant of a verified delegation token, or nil for an
	// identity-only turn. When set, the agent acts as Brand user
	// Delegation.BrandUser, limited to Delegation.Scopes.
	Delegation *pactv1.DelegationInfo
	// What Wrap hands an SDK: pactd's turn and the PA's headers.
	turn   *pactv1.Turn
	header http.Header
}

// turnOf is the Turn of pactd's turn.
func turnOf(t *pactv1.Turn, header http.Header) Turn {
	return Turn{BrandID: t.GetBrandId(), ContextID: t.GetContextId(), NewContext: t.GetNewContext(), Text: t.GetText(),
		Caller: t.GetCaller(), Delegation: t.GetDelegation(), turn: t, header: header}
}

// Reply is the agent's answer.
type Reply struct {
	// Text is the reply message's single text part.
	Text string
	// NeedScopes, when not empty, are scopes the turn needs and the caller
	// lacks (or all it needs, when the turn has no delegation): pactd
	// answers with the step-up task of PACT §5.5 instead, and Text is sent
	// only if the Brand offers no delegation.
	NeedScopes []string
	// ScopesUsed are the scopes the reply relied on, for the receipt of a
	// delegated reply.
	ScopesUsed []string
	// Actions are the tools the reply ran, for the receipt.
	Actions []Action
	// Metadata is passed on in the reply message's metadata, except keys
	// starting with "pact.", which are pactd's (it adds pact.receipt to a
	// delegated reply). Values must encode as JSON.
	Metadata map[string]any
}

// Action is one tool call of a delegated reply.
type Action struct {
	// Tool is the tool name.
	Tool string
	// Args are the tool's arguments; the receipt carries pactd's hash of
	// their RFC 8785 canonical JSON, which a PA recomputes in any
	// language. Nil for none.
	Args any
}

// result is the reply as FinishTurn takes it.
func (r Reply) result() (*pactv1.FinishTurnRequest_Reply, error) {
	out := &pactv1.AgentReply{Text: r.Text, NeedScopes: r.NeedScopes, ScopesUsed: r.ScopesUsed}
	for _, a := range r.Actions {
		ra := &pactv1.ReceiptAction{Tool: a.Tool}
		if a.Args != nil {
			b, err := json.Marshal(a.Args)
			if err != nil {
				return nil, fmt.Errorf("receipt action %q: %w", a.Tool, err)
			}
			ra.ArgsJson = string(b)
		}
		out.Actions = append(out.Actions, ra)
	}
	if len(r.Metadata) > 0 {
		b, err := json.Marshal(r.Metadata)
		if err != nil {
			return nil, fmt.Errorf("reply metadata: %w", err)
		}
		out.MetadataJson = string(b)
	}
	return &pactv1.FinishTurnRequest_Reply{Reply: out}, nil
}

// runAgent runs the agent; a panic fails the turn like an error does, so
// its messageId is released and the cause is logged once, with the stack.
func runAgent(ctx context.Context, a Agent, t Turn) (reply Reply, err error) {
	defer func() {
		if v := recover(); v != nil {
			reply, err = Reply{}, fmt.Errorf("the agent panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return a.Reply(ctx, t)
}

// EchoAgent is a demonstration agent: it repeats the User's text and names
// the Brand.
type EchoAgent struct{}

// Reply echoes the turn's text.
func (EchoAgent) Reply(_ context.Context, t Turn) (Reply, error) {
	return Reply{Text: "This is the " + t.BrandID + " support agent. You said: " + t.Text}, nil
}
