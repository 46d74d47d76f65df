package pacta2a

import (
	"context"
	"encoding/json"
	"net/http"

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

// Turn is what the agent knows about one User message.
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

	// What Wrap hands an SDK: the PA's message as it sent it (every
	// member, the Part metadata included), the request's metadata, and
	// its headers. Turns made elsewhere leave them empty.
	message  map[string]json.RawMessage
	metadata json.RawMessage
	header   http.Header
}

// Reply is the agent's answer.
type Reply struct {
	// Text is the reply message's single text part.
	Text string
	// NeedScopes, when not empty, are scopes the turn needs and the caller
	// lacks (or all it needs, when the turn has no delegation): the turn is
	// answered with the step-up task of PACT §5.5 instead, and Text is sent
	// only if the Brand offers no delegation.
	NeedScopes []string
	// ScopesUsed are the scopes the reply relied on, for the receipt of a
	// delegated reply.
	ScopesUsed []string
	// Actions are the tools the reply ran, for the receipt.
	Actions []Action
	// Metadata is passed on in the reply message's metadata, except keys
	// starting with "pact.", which the frontend owns (it adds pact.receipt
	// to a delegated reply). Values must encode as JSON.
	Metadata map[string]any
}

// Action is one tool call of a delegated reply.
type Action struct {
	// Tool is the tool name.
	Tool string
	// Args are the tool's arguments; the receipt carries the base64url
	// SHA-256 of their JSON. Nil for none.
	Args any
}

// EchoAgent is a demonstration agent: it repeats the User's text and names
// the Brand.
type EchoAgent struct{}

// Reply echoes the turn's text.
func (EchoAgent) Reply(_ context.Context, t Turn) (Reply, error) {
	return Reply{Text: "This is the " + t.BrandID + " support agent. You said: " + t.Text}, nil
}
