package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
)

// delegationTx runs fn in one BEGIN IMMEDIATE transaction (the DSN's _txlock), so
// concurrent writers queue on the write lock instead of failing an upgrade.
func (s *sqliteStore) delegationTx(ctx context.Context, fn func(q *liteq.Queries) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return liteErr(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(s.q.WithTx(tx)); err != nil {
		return liteErr(err)
	}
	return liteErr(tx.Commit())
}

func (s *sqliteStore) CreateDeviceAuthorization(ctx context.Context, d DeviceAuthorization) (DeviceAuthorization, error) {
	if err := checkDetailScopes(d.AuthorizationDetails, d.AuthorizationDetailsScopes); err != nil {
		return DeviceAuthorization{}, err
	}
	r, err := s.q.CreateDeviceAuthorization(ctx, createDeviceParams(d))
	if err != nil {
		return DeviceAuthorization{}, liteErr(err)
	}
	return deviceFromRow(r), nil
}

func (s *sqliteStore) GetDeviceAuthorizationByDeviceCode(ctx context.Context, brandID string, hash []byte) (DeviceAuthorization, error) {
	r, err := s.q.GetDeviceAuthorizationByDeviceCode(ctx, liteq.GetDeviceAuthorizationByDeviceCodeParams{BrandID: brandID, DeviceCodeHash: hash})
	if err != nil {
		return DeviceAuthorization{}, liteErr(err)
	}
	return deviceFromRow(r), nil
}

func (s *sqliteStore) GetDeviceAuthorizationByUserCode(ctx context.Context, brandID string, hash []byte) (DeviceAuthorization, error) {
	r, err := s.q.GetDeviceAuthorizationByUserCode(ctx, liteq.GetDeviceAuthorizationByUserCodeParams{BrandID: brandID, UserCodeHash: hash})
	if err != nil {
		return DeviceAuthorization{}, liteErr(err)
	}
	return deviceFromRow(r), nil
}

func (s *sqliteStore) PollDeviceAuthorization(ctx context.Context, id string, now time.Time, step time.Duration) (DeviceAuthorization, PollOutcome, error) {
	r, err := s.q.PollDeviceAuthorization(ctx, liteq.PollDeviceAuthorizationParams{ID: id, Now: unix(now)})
	if err == nil {
		return deviceFromRow(r), PollPending, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return DeviceAuthorization{}, 0, liteErr(err)
	}
	r, err = s.q.SlowDownDeviceAuthorization(ctx, liteq.SlowDownDeviceAuthorizationParams{ID: id, Now: unix(now), Step: int64(step / time.Second)})
	if err != nil {
		return DeviceAuthorization{}, 0, liteErr(err)
	}
	return deviceFromRow(r), PollSlowDown, nil
}

func (s *sqliteStore) ApproveDeviceAuthorization(ctx context.Context, id string, g Grant, now time.Time) (DeviceAuthorization, Grant, error) {
	return s.approve(ctx, id, g, nil, now)
}

func (s *sqliteStore) ApproveDeviceAuthorizationWithAssertion(ctx context.Context, id string, g Grant, a BrandAssertionUse, now time.Time) (DeviceAuthorization, Grant, error) {
	return s.approve(ctx, id, g, &a, now)
}

// approve is one transaction: the assertion's single use (when given),
// the guarded pending -> approved change, and the grant.
func (s *sqliteStore) approve(ctx context.Context, id string, g Grant, a *BrandAssertionUse, now time.Time) (DeviceAuthorization, Grant, error) {
	if err := checkDetailScopes(g.AuthorizationDetails, g.AuthorizationDetailsScopes); err != nil {
		return DeviceAuthorization{}, Grant{}, err
	}
	var d DeviceAuthorization
	err := s.delegationTx(ctx, func(q *liteq.Queries) error {
		if err := liteUseAssertion(ctx, q, a, now); err != nil {
			return err
		}
		r, err := q.ApproveDeviceAuthorization(ctx, liteq.ApproveDeviceAuthorizationParams{ID: id, BrandUser: g.BrandUser, GrantID: g.ID, Now: unix(now)})
		if err != nil {
			return err
		}
		d = deviceFromRow(r)
		gr, err := q.CreateGrant(ctx, createGrantParams(g))
		if err != nil {
			return fmt.Errorf("create grant: %w", err)
		}
		g = grantFromRow(gr)
		if _, err := liteRecordAudit(ctx, q, auditFrom(ctx, now, g.ID)); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return DeviceAuthorization{}, Grant{}, err
	}
	return d, g, nil
}

func (s *sqliteStore) DenyDeviceAuthorization(ctx context.Context, id string, now time.Time) (DeviceAuthorization, error) {
	r, err := s.q.DenyDeviceAuthorization(ctx, liteq.DenyDeviceAuthorizationParams{ID: id, Now: unix(now)})
	if err != nil {
		return DeviceAuthorization{}, liteErr(err)
	}
	return deviceFromRow(r), nil
}

func (s *sqliteStore) DenyDeviceAuthorizationWithAssertion(ctx context.Context, id string, a BrandAssertionUse, now time.Time) (DeviceAuthorization, error) {
	var d DeviceAuthorization
	err := s.delegationTx(ctx, func(q *liteq.Queries) error {
		if err := liteUseAssertion(ctx, q, &a, now); err != nil {
			return err
		}
		r, err := q.DenyDeviceAuthorization(ctx, liteq.DenyDeviceAuthorizationParams{ID: id, Now: unix(now)})
		if err != nil {
			return err
		}
		d = deviceFromRow(r)
		return nil
	})
	if err != nil {
		return DeviceAuthorization{}, err
	}
	return d, nil
}

// UseBrandAssertion records a's single use in a transaction of its own.
func (s *sqliteStore) UseBrandAssertion(ctx context.Context, a BrandAssertionUse, now time.Time) error {
	return s.delegationTx(ctx, func(q *liteq.Queries) error { return liteUseAssertion(ctx, q, &a, now) })
}

// liteUseAssertion records a's single use inside a transaction (nothing
// when a is nil): an expired record of the same jti is dropped first, then
// the insert-if-absent decides. ErrAssertionReplayed when it inserted
// nothing.
func liteUseAssertion(ctx context.Context, q *liteq.Queries, a *BrandAssertionUse, now time.Time) error {
	if a == nil {
		return nil
	}
	if _, err := q.ReleaseExpiredBrandAssertion(ctx, releaseAssertionParams(*a, now)); err != nil {
		return fmt.Errorf("release expired assertion: %w", err)
	}
	n, err := q.UseBrandAssertion(ctx, useAssertionParams(*a))
	if err != nil {
		return fmt.Errorf("use assertion: %w", err)
	}
	if n == 0 {
		return ErrAssertionReplayed
	}
	return nil
}

func (s *sqliteStore) RedeemDeviceAuthorization(ctx context.Context, id string, now time.Time, rt RefreshToken) (DeviceAuthorization, error) {
	var d DeviceAuthorization
	err := s.delegationTx(ctx, func(q *liteq.Queries) error {
		r, err := q.ConsumeDeviceAuthorization(ctx, liteq.ConsumeDeviceAuthorizationParams{ID: id, Now: unix(now)})
		if err != nil {
			return err
		}
		d = deviceFromRow(r)
		rt.GrantID = d.GrantID
		if err := q.CreateRefreshToken(ctx, createRefreshParams(rt)); err != nil {
			return fmt.Errorf("create refresh token: %w", err)
		}
		_, err = liteRecordAudit(ctx, q, auditFrom(ctx, now, d.GrantID))
		return err
	})
	if err != nil {
		return DeviceAuthorization{}, err
	}
	return d, nil
}

func (s *sqliteStore) GetGrant(ctx context.Context, id string) (Grant, error) {
	r, err := s.q.GetGrant(ctx, id)
	if err != nil {
		return Grant{}, liteErr(err)
	}
	return grantFromRow(r), nil
}

func (s *sqliteStore) RevokeGrant(ctx context.Context, id string, now time.Time) (bool, error) {
	var n int64
	audit := auditFrom(ctx, now, id)
	revoke := func(q *liteq.Queries) error {
		var err error
		if n, err = q.RevokeGrant(ctx, liteq.RevokeGrantParams{ID: id, Now: unix(now)}); err != nil || n != 1 {
			return err
		}
		_, err = liteRecordAudit(ctx, q, audit)
		return err
	}
	var err error
	if audit == nil {
		err = liteErr(revoke(s.q))
	} else {
		// The revocation and its audit row commit together.
		err = s.delegationTx(ctx, revoke)
	}
	if err != nil {
		return false, err
	}
	if n == 1 {
		return true, nil
	}
	if _, err := s.GetGrant(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}

func (s *sqliteStore) ListGrants(ctx context.Context, brandID, brandUser, beforeID string, limit int) ([]Grant, error) {
	rows, err := s.q.ListGrantsByUser(ctx, liteq.ListGrantsByUserParams{BrandID: brandID, BrandUser: brandUser, BeforeID: beforeID, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]Grant, 0, len(rows))
	for _, r := range rows {
		out = append(out, grantFromListRow(r))
	}
	return out, nil
}

func (s *sqliteStore) GrantLiveAt(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (bool, error) {
	n, err := s.q.CountLiveGrants(ctx, liteq.CountLiveGrantsParams{ID: grantID, BrandID: brandID, ClientID: clientID, BrandUser: brandUser, Now: unix(now)})
	return n == 1, liteErr(err)
}

func (s *sqliteStore) LiveGrantDetails(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (string, bool, error) {
	d, err := s.q.GetLiveGrantDetails(ctx, liteq.GetLiveGrantDetailsParams{ID: grantID, BrandID: brandID, ClientID: clientID, BrandUser: brandUser, Now: unix(now)})
	if err != nil {
		if err = liteErr(err); errors.Is(err, ErrNotFound) {
			return "", false, nil
		}
		return "", false, err
	}
	return d, true, nil
}

func (s *sqliteStore) GetRefreshToken(ctx context.Context, hash []byte) (RefreshToken, error) {
	r, err := s.q.GetRefreshToken(ctx, hash)
	if err != nil {
		return RefreshToken{}, liteErr(err)
	}
	return refreshFromRow(r), nil
}

func (s *sqliteStore) RotateRefreshToken(ctx context.Context, old []byte, brandID, clientID string, now time.Time, next RefreshToken) (RefreshToken, error) {
	err := s.delegationTx(ctx, func(q *liteq.Queries) error {
		used, err := q.UseRefreshToken(ctx, liteq.UseRefreshTokenParams{TokenHash: old, BrandID: brandID, ClientID: clientID, Now: unix(now)})
		if err != nil {
			return err
		}
		next.GrantID = used.GrantID
		if err := q.CreateRefreshToken(ctx, createRefreshParams(next)); err != nil {
			return fmt.Errorf("create refresh token: %w", err)
		}
		_, err = liteRecordAudit(ctx, q, auditFrom(ctx, now, used.GrantID))
		return err
	})
	if err != nil {
		return RefreshToken{}, err
	}
	return normRefresh(next), nil
}

func (s *sqliteStore) PurgeExpiredDelegation(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	err := s.delegationTx(ctx, func(q *liteq.Queries) error {
		n, err := q.DeleteExpiredDeviceAuthorizations(ctx, unix(now))
		if err != nil {
			return err
		}
		m, err := q.DeleteExpiredRefreshTokens(ctx, unix(now))
		if err != nil {
			return err
		}
		k, err := q.DeleteExpiredBrandAssertions(ctx, unix(now))
		if err != nil {
			return err
		}
		f, err := q.DeleteOldUserCodeFailures(ctx, unix(now.Add(-time.Hour)))
		total = n + m + k + f
		return err
	})
	return total, err
}

func (s *sqliteStore) AddUserCodeFailure(ctx context.Context, scope string, window time.Time) (int64, error) {
	n, err := s.q.AddUserCodeFailure(ctx, liteq.AddUserCodeFailureParams{Scope: scope, WindowStart: unix(window)})
	return n, liteErr(err)
}

func (s *sqliteStore) RemoveUserCodeFailure(ctx context.Context, scope string, window time.Time) error {
	return liteErr(s.q.RemoveUserCodeFailure(ctx, liteq.RemoveUserCodeFailureParams{Scope: scope, WindowStart: unix(window)}))
}

func (s *sqliteStore) CountPendingDeviceAuthorizations(ctx context.Context, agentID, brandID string, now time.Time) (int64, int64, error) {
	r, err := s.q.CountPendingDeviceAuthorizations(ctx, liteq.CountPendingDeviceAuthorizationsParams{AgentID: agentID, BrandID: brandID, Now: unix(now)})
	return r.Total, r.AtBrand, liteErr(err)
}

func (s *sqliteStore) FindGrants(ctx context.Context, f GrantFilter, beforeID string, limit int) ([]Grant, error) {
	rows, err := s.q.FindGrants(ctx, findGrantsParams(f, beforeID, limit))
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]Grant, 0, len(rows))
	for _, r := range rows {
		out = append(out, grantFromListRow(liteq.ListGrantsByUserRow(r)))
	}
	return out, nil
}
