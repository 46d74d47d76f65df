package db

import (
	"context"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
)

func (s *sqliteStore) CreateHDTPIdentity(ctx context.Context, id HDTPIdentity) (HDTPIdentity, error) {
	r, err := s.q.CreateHDTPIdentity(ctx, createHDTPIdentityParams(id))
	if err != nil {
		return HDTPIdentity{}, liteErr(err)
	}
	return hdtpIdentityFromRow(r), nil
}

func (s *sqliteStore) GetHDTPIdentity(ctx context.Context, id string) (HDTPIdentity, error) {
	r, err := s.q.GetHDTPIdentity(ctx, id)
	if err != nil {
		return HDTPIdentity{}, liteErr(err)
	}
	return hdtpIdentityFromRow(r), nil
}

func (s *sqliteStore) ListHDTPIdentities(ctx context.Context, afterID string, limit int) ([]HDTPIdentity, error) {
	rows, err := s.q.ListHDTPIdentities(ctx, liteq.ListHDTPIdentitiesParams{AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]HDTPIdentity, 0, len(rows))
	for _, r := range rows {
		out = append(out, hdtpIdentityFromRow(r))
	}
	return out, nil
}

func (s *sqliteStore) UpdateHDTPIdentity(ctx context.Context, id HDTPIdentity) (HDTPIdentity, error) {
	r, err := s.q.UpdateHDTPIdentity(ctx, updateHDTPIdentityParams(id))
	if err != nil {
		return HDTPIdentity{}, liteErr(err)
	}
	return hdtpIdentityFromRow(r), nil
}

func (s *sqliteStore) DeleteHDTPIdentity(ctx context.Context, id string) error {
	n, err := s.q.DeleteHDTPIdentity(ctx, id)
	if err != nil {
		return liteErr(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqliteStore) PutHDTPPendingLeaf(ctx context.Context, l HDTPLeaf) error {
	// BEGIN IMMEDIATE (the DSN's _txlock): the delete and the insert are
	// one step with respect to other writers.
	return s.delegationTx(ctx, func(q *liteq.Queries) error {
		if _, err := q.LockHDTPIdentity(ctx, l.IdentityID); err != nil {
			return err
		}
		if err := q.DeleteHDTPPendingLeaf(ctx, l.IdentityID); err != nil {
			return err
		}
		return q.CreateHDTPLeaf(ctx, createHDTPLeafParams(l))
	})
}

func (s *sqliteStore) InstallHDTPLeaf(ctx context.Context, in HDTPInstall) (HDTPLeaf, error) {
	var out HDTPLeaf
	err := s.delegationTx(ctx, func(q *liteq.Queries) error {
		var err error
		out, err = installHDTPLeaf(ctx, hdtpLite{q}, in)
		return err
	})
	return out, err
}

func (s *sqliteStore) ListHDTPLeaves(ctx context.Context, identityID string) ([]HDTPLeaf, error) {
	rows, err := s.q.ListHDTPLeaves(ctx, identityID)
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]HDTPLeaf, 0, len(rows))
	for _, r := range rows {
		out = append(out, hdtpLeafFromRow(r))
	}
	return out, nil
}

func (s *sqliteStore) GetHDTPLeaf(ctx context.Context, kid string) (HDTPLeaf, error) {
	r, err := s.q.GetHDTPLeaf(ctx, kid)
	if err != nil {
		return HDTPLeaf{}, liteErr(err)
	}
	return hdtpLeafFromRow(r), nil
}

func (s *sqliteStore) SweepHDTPLeaves(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	err := s.delegationTx(ctx, func(q *liteq.Queries) error {
		a, err := q.RetireHDTPLeafKeys(ctx, unix(now))
		if err != nil {
			return err
		}
		b, err := q.DeleteExpiredHDTPRequests(ctx, unix(now))
		total = a + b
		return err
	})
	return total, err
}
