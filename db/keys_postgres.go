package db

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/db/internal/pgq"
)

func (s *pgStore) AddSigningKey(ctx context.Context, k SigningKey, expireRetired time.Time) error {
	// A concurrent insert of the same seq waits on the unique index and then
	// fails with 23505, so exactly one rotation wins.
	return pgErr(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := q.CreateSigningKey(ctx, pgq.CreateSigningKeyParams(createSigningKeyParams(k))); err != nil {
			return err
		}
		_, err := q.RetireSigningKeysBefore(ctx, pgq.RetireSigningKeysBeforeParams(retireSigningKeysParams(k, expireRetired)))
		return err
	}))
}

func (s *pgStore) ListPublishedSigningKeys(ctx context.Context, now time.Time) ([]SigningKey, error) {
	rows, err := s.q.ListPublishedSigningKeys(ctx, unix(now))
	if err != nil {
		return nil, pgErr(err)
	}
	return signingKeysFromRows(rows, signingKeyFromPG), nil
}

func (s *pgStore) DeleteExpiredSigningKeys(ctx context.Context, now time.Time) (int64, error) {
	n, err := s.q.DeleteExpiredSigningKeys(ctx, unix(now))
	return n, pgErr(err)
}
