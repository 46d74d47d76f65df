package db

import (
	"context"
	"fmt"
	"time"
)

func (s *sqliteStore) AddSigningKey(ctx context.Context, k SigningKey, expireRetired time.Time) error {
	// The DSN's _txlock=immediate makes this BEGIN IMMEDIATE: the insert and
	// the retirement are one atomic step with respect to other writers.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("add signing key: begin: %w", liteErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	q := s.q.WithTx(tx)
	if err := q.CreateSigningKey(ctx, createSigningKeyParams(k)); err != nil {
		return liteErr(err)
	}
	if _, err := q.RetireSigningKeysBefore(ctx, retireSigningKeysParams(k, expireRetired)); err != nil {
		return liteErr(err)
	}
	return liteErr(tx.Commit())
}

func (s *sqliteStore) ListPublishedSigningKeys(ctx context.Context, now time.Time) ([]SigningKey, error) {
	rows, err := s.q.ListPublishedSigningKeys(ctx, unix(now))
	if err != nil {
		return nil, liteErr(err)
	}
	return signingKeysFromRows(rows, signingKeyFromRow), nil
}

func (s *sqliteStore) DeleteExpiredSigningKeys(ctx context.Context, now time.Time) (int64, error) {
	n, err := s.q.DeleteExpiredSigningKeys(ctx, unix(now))
	return n, liteErr(err)
}
