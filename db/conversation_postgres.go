package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"pactd.dev/pactd/db/internal/pgq"
)

// pgConvErr is pgErr plus: a foreign-key violation (the Brand, agent or
// context a row points to does not exist) is ErrNotFound.
func pgConvErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return pgErr(err)
}

func (s *pgStore) CreateConversation(ctx context.Context, c Conversation) (Conversation, error) {
	r, err := s.q.CreateContext(ctx, pgq.CreateContextParams(createConversationParams(c)))
	if err != nil {
		return Conversation{}, pgConvErr(err)
	}
	return conversationFromPG(r), nil
}

func (s *pgStore) GetConversation(ctx context.Context, id string) (Conversation, error) {
	r, err := s.q.GetContext(ctx, id)
	if err != nil {
		return Conversation{}, pgErr(err)
	}
	return conversationFromPG(r), nil
}

func (s *pgStore) BindConversationUser(ctx context.Context, id, brandUser string, now time.Time) (Conversation, error) {
	r, err := s.q.BindContextUser(ctx, pgq.BindContextUserParams{BrandUser: brandUser, UpdateTime: unix(now), ID: id})
	if errors.Is(err, pgx.ErrNoRows) { // already bound (or missing): report what is stored
		return s.GetConversation(ctx, id)
	}
	if err != nil {
		return Conversation{}, pgErr(err)
	}
	return conversationFromPG(r), nil
}

func (s *pgStore) CloseConversation(ctx context.Context, id string, now time.Time) error {
	n, err := s.q.CloseContext(ctx, pgq.CloseContextParams{CloseTime: unix(now), ID: id})
	if err != nil {
		return pgErr(err)
	}
	if n == 0 { // already closed, or missing
		_, err = s.GetConversation(ctx, id)
	}
	return err
}

func (s *pgStore) ClaimTurn(ctx context.Context, contextID, messageID, claim string, now, staleBefore time.Time) (Turn, bool, error) {
	for range claimAttempts {
		r, err := s.q.ClaimTurn(ctx, pgq.ClaimTurnParams{
			ContextID: contextID, MessageID: messageID, Claim: claim, CreateTime: unix(now), StaleBefore: unix(staleBefore),
		})
		if err == nil {
			return turnFromPG(r), true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Turn{}, false, pgConvErr(err)
		}
		t, err := s.GetTurn(ctx, contextID, messageID)
		if errors.Is(err, ErrNotFound) {
			continue // abandoned since the insert collided: claim again
		}
		return t, false, err
	}
	return Turn{}, false, fmt.Errorf("claim turn: the messageId kept being claimed and abandoned")
}

func (s *pgStore) GetTurn(ctx context.Context, contextID, messageID string) (Turn, error) {
	r, err := s.q.GetTurn(ctx, pgq.GetTurnParams{ContextID: contextID, MessageID: messageID})
	if err != nil {
		return Turn{}, pgErr(err)
	}
	return turnFromPG(r), nil
}

func (s *pgStore) CompleteTurn(ctx context.Context, contextID, messageID, claim, replyMessageID, replyJSON string, now time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		_, err := q.ReserveReplyID(ctx, pgq.ReserveReplyIDParams{ContextID: contextID, MessageID: replyMessageID, CreateTime: unix(now)})
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: reply messageId is already used in the context", ErrConflict)
		}
		if err != nil {
			return pgConvErr(err)
		}
		n, err := q.CompleteTurn(ctx, pgq.CompleteTurnParams{
			ReplyMessageID: replyMessageID, ReplyJson: replyJSON, UpdateTime: unix(now), ContextID: contextID, MessageID: messageID, Claim: claim,
		})
		if err != nil {
			return pgErr(err)
		}
		if n == 0 {
			return fmt.Errorf("%w: no pending turn", ErrNotFound)
		}
		_, err = q.TouchContext(ctx, pgq.TouchContextParams{UpdateTime: unix(now), ID: contextID})
		return pgErr(err)
	})
}

func (s *pgStore) AbandonTurn(ctx context.Context, contextID, messageID, claim string) error {
	n, err := s.q.AbandonTurn(ctx, pgq.AbandonTurnParams{ContextID: contextID, MessageID: messageID, Claim: claim})
	if err != nil {
		return pgErr(err)
	}
	if n == 0 {
		return fmt.Errorf("%w: no pending turn", ErrNotFound)
	}
	return nil
}
