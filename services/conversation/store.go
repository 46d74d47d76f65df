package conversation

import (
	"context"
	"time"

	"pactd.dev/pactd/db"
)

// Store is the storage the conversation service needs.
type Store interface {
	CreateConversation(ctx context.Context, c db.Conversation) (db.Conversation, error)
	GetConversation(ctx context.Context, id string) (db.Conversation, error)
	BindConversationUser(ctx context.Context, id, brandUser string, now time.Time) (db.Conversation, error)
	CloseConversation(ctx context.Context, id string, now time.Time) error
	ClaimTurn(ctx context.Context, contextID, messageID, claim string, now, staleBefore time.Time) (db.Turn, bool, error)
	GetTurn(ctx context.Context, contextID, messageID string) (db.Turn, error)
	CompleteTurn(ctx context.Context, contextID, messageID, claim, replyMessageID, replyJSON string, now time.Time) error
	AbandonTurn(ctx context.Context, contextID, messageID, claim string) error
}
