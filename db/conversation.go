package db

import (
	"context"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// Conversation is an A2A context (its id is the contextId PAs send). It is
// owned by the User (AgentID, Subject) at one Brand, and may be bound once to
// the Brand user of a delegation token.
type Conversation struct {
	// ID is the contextId: a UUID minted by pactd.
	ID string
	// BrandID is the Brand the conversation is with.
	BrandID string
	// AgentID is pactd's id of the PA that started it.
	AgentID string
	// Subject is the PA JWT's sub: with AgentID, the User.
	Subject string
	// BrandUser is the Brand user the context runs as; empty until a
	// delegated turn binds it. It never changes once set.
	BrandUser string
	// CloseTime is when the context was closed; zero while it is open.
	CloseTime time.Time
	// CreateTime is when the first turn created it.
	CreateTime time.Time
	// UpdateTime is when it was last bound, closed or answered.
	UpdateTime time.Time
}

// Closed reports whether the context was closed.
func (c Conversation) Closed() bool { return !c.CloseTime.IsZero() }

// MessageRole says who sent the message a Turn row holds the id of.
type MessageRole string

// The message roles of Turn rows.
const (
	// MessageRoleUser rows are turns: a User message and, once stored, the
	// agent's reply to it.
	MessageRoleUser MessageRole = "user"
	// MessageRoleAgent rows only reserve the messageId of an agent reply,
	// so that no User message in the context can reuse it.
	MessageRoleAgent MessageRole = "agent"
)

// TurnState is the state of a User turn.
type TurnState string

// The turn states.
const (
	// TurnPending means the messageId was claimed and no reply is stored.
	TurnPending TurnState = "pending"
	// TurnReplied means the reply is stored (always the state of agent rows).
	TurnReplied TurnState = "replied"
)

// Turn is one messageId used in a context. User and agent messageIds share
// one namespace per context: (ContextID, MessageID) is unique.
type Turn struct {
	// ContextID is the conversation the messageId is used in.
	ContextID string
	// MessageID is the User message's or agent reply's messageId.
	MessageID string
	// Role says whose message MessageID names.
	Role MessageRole
	// State is pending or replied (agent rows are always replied).
	State TurnState
	// Claim is the id of the run that claimed a User turn last (kept once
	// replied); empty for agent rows and for turns claimed before claims
	// had ids.
	Claim string
	// ReplyMessageID and ReplyJSON are the stored reply of a replied User
	// turn; empty otherwise.
	ReplyMessageID string
	ReplyJSON      string
	// CreateTime is when the messageId was first claimed or reserved.
	CreateTime time.Time
	// UpdateTime is when the reply was stored or, while the turn is
	// pending, when it was last claimed (CreateTime until either).
	UpdateTime time.Time
}

// ConversationStore is the storage of A2A conversations: contexts owned by
// (Brand, agent, sub) and their idempotent turns. Every state change is a
// single guarded statement (or one transaction), so concurrent duplicates
// are decided by the database, never by a read followed by a write.
type ConversationStore interface {
	// CreateConversation inserts a context. ErrConflict when the id exists;
	// ErrNotFound when its Brand or agent does not exist.
	CreateConversation(ctx context.Context, c Conversation) (Conversation, error)
	// GetConversation returns the context with the id.
	GetConversation(ctx context.Context, id string) (Conversation, error)
	// BindConversationUser binds an unbound context to brandUser (a guarded
	// update: only when its BrandUser is still empty) and returns the
	// context as it is afterwards. When another call bound it first, the
	// returned BrandUser is that call's, so the caller compares it.
	BindConversationUser(ctx context.Context, id, brandUser string, now time.Time) (Conversation, error)
	// CloseConversation closes the context at now; closing a closed context
	// keeps its first CloseTime. ErrNotFound when it does not exist.
	CloseConversation(ctx context.Context, id string, now time.Time) error

	// ClaimTurn claims messageID in the context for a new User turn under
	// the claim id, with a single upsert: it inserts the pending turn, or
	// takes over a pending User turn last claimed before staleBefore (its
	// Claim and UpdateTime become claim and now). claimed is true for
	// exactly one of any number of concurrent claims of the same id; the
	// others get the existing row (a pending or replied User turn, or an
	// agent reply id).
	ClaimTurn(ctx context.Context, contextID, messageID, claim string, now, staleBefore time.Time) (t Turn, claimed bool, err error)
	// GetTurn returns the row of messageID in the context.
	GetTurn(ctx context.Context, contextID, messageID string) (Turn, error)
	// CompleteTurn stores the reply of a pending User turn and reserves
	// replyMessageID in the context, in one transaction. A non-empty claim
	// must be the turn's Claim; an empty one matches any. ErrConflict when
	// replyMessageID is already used in the context; ErrNotFound when the
	// turn is not pending under the claim (never claimed, abandoned,
	// already replied, or claimed by another run). Nothing is changed on
	// error.
	CompleteTurn(ctx context.Context, contextID, messageID, claim, replyMessageID, replyJSON string, now time.Time) error
	// AbandonTurn deletes a pending User turn so its messageId can be sent
	// again; a non-empty claim must be the turn's Claim, an empty one
	// matches any. ErrNotFound when the turn is not pending under the claim.
	AbandonTurn(ctx context.Context, contextID, messageID, claim string) error
}

// Row mapping for conversations; PostgreSQL rows convert to the SQLite ones
// as in rows.go.

func conversationFromRow(r liteq.Context) Conversation {
	c := Conversation{
		ID: r.ID, BrandID: r.BrandID, AgentID: r.AgentID, Subject: r.Subject, BrandUser: r.BrandUser,
		CreateTime: fromUnix(r.CreateTime), UpdateTime: fromUnix(r.UpdateTime),
	}
	if r.CloseTime != 0 {
		c.CloseTime = fromUnix(r.CloseTime)
	}
	return c
}

func conversationFromPG(r pgq.Context) Conversation { return conversationFromRow(liteq.Context(r)) }

func createConversationParams(c Conversation) liteq.CreateContextParams {
	return liteq.CreateContextParams{
		ID: c.ID, BrandID: c.BrandID, AgentID: c.AgentID, Subject: c.Subject, BrandUser: c.BrandUser,
		CreateTime: unix(c.CreateTime), UpdateTime: unix(c.UpdateTime),
	}
}

func turnFromRow(r liteq.Turn) Turn {
	return Turn{
		ContextID: r.ContextID, MessageID: r.MessageID, Role: MessageRole(r.Role), State: TurnState(r.State), Claim: r.Claim,
		ReplyMessageID: r.ReplyMessageID, ReplyJSON: r.ReplyJson,
		CreateTime: fromUnix(r.CreateTime), UpdateTime: fromUnix(r.UpdateTime),
	}
}

func turnFromPG(r pgq.Turn) Turn { return turnFromRow(liteq.Turn(r)) }

// claimAttempts bounds ClaimTurn's insert-then-read loop: a read can miss
// only when the row it collided with was abandoned in between.
const claimAttempts = 3
