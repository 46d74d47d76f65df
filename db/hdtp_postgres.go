package db

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/db/internal/pgq"
)

func (s *pgStore) CreateHDTPIdentity(ctx context.Context, id HDTPIdentity) (HDTPIdentity, error) {
	r, err := s.q.CreateHDTPIdentity(ctx, pgq.CreateHDTPIdentityParams(createHDTPIdentityParams(id)))
	if err != nil {
		return HDTPIdentity{}, pgErr(err)
	}
	return hdtpIdentityFromPG(r), nil
}

func (s *pgStore) GetHDTPIdentity(ctx context.Context, id string) (HDTPIdentity, error) {
	r, err := s.q.GetHDTPIdentity(ctx, id)
	if err != nil {
		return HDTPIdentity{}, pgErr(err)
	}
	return hdtpIdentityFromPG(r), nil
}

func (s *pgStore) ListHDTPIdentities(ctx context.Context, afterID string, limit int) ([]HDTPIdentity, error) {
	rows, err := s.q.ListHDTPIdentities(ctx, pgq.ListHDTPIdentitiesParams{AfterID: afterID, PageLimit: int32(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]HDTPIdentity, 0, len(rows))
	for _, r := range rows {
		out = append(out, hdtpIdentityFromPG(r))
	}
	return out, nil
}

func (s *pgStore) UpdateHDTPIdentity(ctx context.Context, id HDTPIdentity) (HDTPIdentity, error) {
	r, err := s.q.UpdateHDTPIdentity(ctx, pgq.UpdateHDTPIdentityParams(updateHDTPIdentityParams(id)))
	if err != nil {
		return HDTPIdentity{}, pgErr(err)
	}
	return hdtpIdentityFromPG(r), nil
}

func (s *pgStore) DeleteHDTPIdentity(ctx context.Context, id string) error {
	n, err := s.q.DeleteHDTPIdentity(ctx, id)
	if err != nil {
		return pgErr(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *pgStore) PutHDTPPendingLeaf(ctx context.Context, l HDTPLeaf) error {
	// The identity's row lock serializes this with installs and other
	// requests for the same identity.
	return pgErr(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if _, err := q.LockHDTPIdentity(ctx, l.IdentityID); err != nil {
			return err
		}
		if err := q.DeleteHDTPPendingLeaf(ctx, l.IdentityID); err != nil {
			return err
		}
		return q.CreateHDTPLeaf(ctx, pgq.CreateHDTPLeafParams(createHDTPLeafParams(l)))
	}))
}

func (s *pgStore) InstallHDTPLeaf(ctx context.Context, in HDTPInstall) (HDTPLeaf, error) {
	var out HDTPLeaf
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		out, err = installHDTPLeaf(ctx, hdtpPG{s.q.WithTx(tx)}, in)
		return err
	})
	return out, pgErr(err)
}

func (s *pgStore) ListHDTPLeaves(ctx context.Context, identityID string) ([]HDTPLeaf, error) {
	rows, err := s.q.ListHDTPLeaves(ctx, identityID)
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]HDTPLeaf, 0, len(rows))
	for _, r := range rows {
		out = append(out, hdtpLeafFromPG(r))
	}
	return out, nil
}

func (s *pgStore) GetHDTPLeaf(ctx context.Context, kid string) (HDTPLeaf, error) {
	r, err := s.q.GetHDTPLeaf(ctx, kid)
	if err != nil {
		return HDTPLeaf{}, pgErr(err)
	}
	return hdtpLeafFromPG(r), nil
}

func (s *pgStore) SweepHDTPLeaves(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		a, err := q.RetireHDTPLeafKeys(ctx, unix(now))
		if err != nil {
			return err
		}
		b, err := q.DeleteExpiredHDTPRequests(ctx, unix(now))
		total = a + b
		return err
	})
	return total, pgErr(err)
}
