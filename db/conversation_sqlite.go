package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"pactd.dev/pactd/db/internal/liteq"
)

// liteConvErr is liteErr plus: a foreign-key violation (the Brand, agent or
// context a row points to does not exist) is ErrNotFound.
func liteConvErr(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return liteErr(err)
}

func (s *sqliteStore) CreateConversation(ctx context.Context, c Conversation) (Conversation, error) {
	r, err := s.q.CreateContext(ctx, createConversationParams(c))
	if err != nil {
		return Conversation{}, liteConvErr(err)
	}
	return conversationFromRow(r), nil
}

func (s *sqliteStore) GetConversation(ctx context.Context, id string) (Conversation, error) {
	r, err := s.q.GetContext(ctx, id)
	if err != nil {
		return Conversation{}, liteErr(err)
	}
	return conversationFromRow(r), nil
}

func (s *sqliteStore) BindConversationUser(ctx context.Context, id, brandUser string, now time.Time) (Conversation, error) {
	r, err := s.q.BindContextUser(ctx, liteq.BindContextUserParams{BrandUser: brandUser, UpdateTime: unix(now), ID: id})
	if errors.Is(err, sql.ErrNoRows) { // already bound (or missing): report what is stored
		return s.GetConversation(ctx, id)
	}
	if err != nil {
		return Conversation{}, liteErr(err)
	}
	return conversationFromRow(r), nil
}

func (s *sqliteStore) CloseConversation(ctx context.Context, id string, now time.Time) error {
	n, err := s.q.CloseContext(ctx, liteq.CloseContextParams{CloseTime: unix(now), ID: id})
	if err != nil {
		return liteErr(err)
	}
	if n == 0 { // already closed, or missing
		_, err = s.GetConversation(ctx, id)
	}
	return err
}

func (s *sqliteStore) ClaimTurn(ctx context.Context, contextID, messageID, claim string, now, staleBefore time.Time) (Turn, bool, error) {
	for range claimAttempts {
		r, err := s.q.ClaimTurn(ctx, liteq.ClaimTurnParams{
			ContextID: contextID, MessageID: messageID, Claim: claim, CreateTime: unix(now), StaleBefore: unix(staleBefore),
		})
		if err == nil {
			return turnFromRow(r), true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return Turn{}, false, liteConvErr(err)
		}
		t, err := s.GetTurn(ctx, contextID, messageID)
		if errors.Is(err, ErrNotFound) {
			continue // abandoned since the insert collided: claim again
		}
		return t, false, err
	}
	return Turn{}, false, fmt.Errorf("claim turn: the messageId kept being claimed and abandoned")
}

func (s *sqliteStore) GetTurn(ctx context.Context, contextID, messageID string) (Turn, error) {
	r, err := s.q.GetTurn(ctx, liteq.GetTurnParams{ContextID: contextID, MessageID: messageID})
	if err != nil {
		return Turn{}, liteErr(err)
	}
	return turnFromRow(r), nil
}

func (s *sqliteStore) CompleteTurn(ctx context.Context, contextID, messageID, claim, replyMessageID, replyJSON string, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return liteErr(err)
	}
	defer func() { _ = tx.Rollback() }()
	q := s.q.WithTx(tx)
	_, err = q.ReserveReplyID(ctx, liteq.ReserveReplyIDParams{ContextID: contextID, MessageID: replyMessageID, CreateTime: unix(now)})
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: reply messageId is already used in the context", ErrConflict)
	}
	if err != nil {
		return liteConvErr(err)
	}
	n, err := q.CompleteTurn(ctx, liteq.CompleteTurnParams{
		ReplyMessageID: replyMessageID, ReplyJson: replyJSON, UpdateTime: unix(now), ContextID: contextID, MessageID: messageID, Claim: claim,
	})
	if err != nil {
		return liteErr(err)
	}
	if n == 0 {
		return fmt.Errorf("%w: no pending turn", ErrNotFound)
	}
	if _, err := q.TouchContext(ctx, liteq.TouchContextParams{UpdateTime: unix(now), ID: contextID}); err != nil {
		return liteErr(err)
	}
	return liteErr(tx.Commit())
}

func (s *sqliteStore) AbandonTurn(ctx context.Context, contextID, messageID, claim string) error {
	n, err := s.q.AbandonTurn(ctx, liteq.AbandonTurnParams{ContextID: contextID, MessageID: messageID, Claim: claim})
	if err != nil {
		return liteErr(err)
	}
	if n == 0 {
		return fmt.Errorf("%w: no pending turn", ErrNotFound)
	}
	return nil
}
