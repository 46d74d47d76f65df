package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/db/internal/pgq"
)

// delegationTx runs fn in one transaction.
func (s *pgStore) delegationTx(ctx context.Context, fn func(q *pgq.Queries) error) error {
	return pgErr(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(s.q.WithTx(tx)) }))
}

func (s *pgStore) CreateDeviceAuthorization(ctx context.Context, d DeviceAuthorization) (DeviceAuthorization, error) {
	if err := checkDetailScopes(d.AuthorizationDetails, d.AuthorizationDetailsScopes); err != nil {
		return DeviceAuthorization{}, err
	}
	r, err := s.q.CreateDeviceAuthorization(ctx, pgq.CreateDeviceAuthorizationParams(createDeviceParams(d)))
	if err != nil {
		return DeviceAuthorization{}, pgErr(err)
	}
	return deviceFromPG(r), nil
}

func (s *pgStore) GetDeviceAuthorizationByDeviceCode(ctx context.Context, brandID string, hash []byte) (DeviceAuthorization, error) {
	r, err := s.q.GetDeviceAuthorizationByDeviceCode(ctx, pgq.GetDeviceAuthorizationByDeviceCodeParams{BrandID: brandID, DeviceCodeHash: hash})
	if err != nil {
		return DeviceAuthorization{}, pgErr(err)
	}
	return deviceFromPG(r), nil
}

func (s *pgStore) GetDeviceAuthorizationByUserCode(ctx context.Context, brandID string, hash []byte) (DeviceAuthorization, error) {
	r, err := s.q.GetDeviceAuthorizationByUserCode(ctx, pgq.GetDeviceAuthorizationByUserCodeParams{BrandID: brandID, UserCodeHash: hash})
	if err != nil {
		return DeviceAuthorization{}, pgErr(err)
	}
	return deviceFromPG(r), nil
}

func (s *pgStore) PollDeviceAuthorization(ctx context.Context, id string, now time.Time, step time.Duration) (DeviceAuthorization, PollOutcome, error) {
	r, err := s.q.PollDeviceAuthorization(ctx, pgq.PollDeviceAuthorizationParams{ID: id, Now: unix(now)})
	if err == nil {
		return deviceFromPG(r), PollPending, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return DeviceAuthorization{}, 0, pgErr(err)
	}
	r, err = s.q.SlowDownDeviceAuthorization(ctx, pgq.SlowDownDeviceAuthorizationParams{ID: id, Now: unix(now), Step: int64(step / time.Second)})
	if err != nil {
		return DeviceAuthorization{}, 0, pgErr(err)
	}
	return deviceFromPG(r), PollSlowDown, nil
}

func (s *pgStore) ApproveDeviceAuthorization(ctx context.Context, id string, g Grant, now time.Time) (DeviceAuthorization, Grant, error) {
	return s.approve(ctx, id, g, nil, now)
}

func (s *pgStore) ApproveDeviceAuthorizationWithAssertion(ctx context.Context, id string, g Grant, a BrandAssertionUse, now time.Time) (DeviceAuthorization, Grant, error) {
	return s.approve(ctx, id, g, &a, now)
}

// approve is one transaction: the assertion's single use (when given),
// the guarded pending -> approved change, and the grant.
func (s *pgStore) approve(ctx context.Context, id string, g Grant, a *BrandAssertionUse, now time.Time) (DeviceAuthorization, Grant, error) {
	if err := checkDetailScopes(g.AuthorizationDetails, g.AuthorizationDetailsScopes); err != nil {
		return DeviceAuthorization{}, Grant{}, err
	}
	var d DeviceAuthorization
	err := s.delegationTx(ctx, func(q *pgq.Queries) error {
		if err := pgUseAssertion(ctx, q, a, now); err != nil {
			return err
		}
		r, err := q.ApproveDeviceAuthorization(ctx, pgq.ApproveDeviceAuthorizationParams{ID: id, BrandUser: g.BrandUser, GrantID: g.ID, Now: unix(now)})
		if err != nil {
			return err
		}
		d = deviceFromPG(r)
		gr, err := q.CreateGrant(ctx, pgq.CreateGrantParams(createGrantParams(g)))
		if err != nil {
			return fmt.Errorf("create grant: %w", err)
		}
		g = grantFromPG(gr)
		if _, err := pgRecordAudit(ctx, q, auditFrom(ctx, now, g.ID)); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return DeviceAuthorization{}, Grant{}, err
	}
	return d, g, nil
}

func (s *pgStore) DenyDeviceAuthorization(ctx context.Context, id string, now time.Time) (DeviceAuthorization, error) {
	r, err := s.q.DenyDeviceAuthorization(ctx, pgq.DenyDeviceAuthorizationParams{ID: id, Now: unix(now)})
	if err != nil {
		return DeviceAuthorization{}, pgErr(err)
	}
	return deviceFromPG(r), nil
}

func (s *pgStore) DenyDeviceAuthorizationWithAssertion(ctx context.Context, id string, a BrandAssertionUse, now time.Time) (DeviceAuthorization, error) {
	var d DeviceAuthorization
	err := s.delegationTx(ctx, func(q *pgq.Queries) error {
		if err := pgUseAssertion(ctx, q, &a, now); err != nil {
			return err
		}
		r, err := q.DenyDeviceAuthorization(ctx, pgq.DenyDeviceAuthorizationParams{ID: id, Now: unix(now)})
		if err != nil {
			return err
		}
		d = deviceFromPG(r)
		return nil
	})
	if err != nil {
		return DeviceAuthorization{}, err
	}
	return d, nil
}

// UseBrandAssertion records a's single use in a transaction of its own.
func (s *pgStore) UseBrandAssertion(ctx context.Context, a BrandAssertionUse, now time.Time) error {
	return s.delegationTx(ctx, func(q *pgq.Queries) error { return pgUseAssertion(ctx, q, &a, now) })
}

// pgUseAssertion records a's single use inside a transaction (nothing when
// a is nil): an expired record of the same jti is dropped first, then the
// insert-if-absent decides (a concurrent insert of the same key waits for
// the other transaction and then inserts nothing). ErrAssertionReplayed
// when it inserted nothing.
func pgUseAssertion(ctx context.Context, q *pgq.Queries, a *BrandAssertionUse, now time.Time) error {
	if a == nil {
		return nil
	}
	if _, err := q.ReleaseExpiredBrandAssertion(ctx, pgq.ReleaseExpiredBrandAssertionParams(releaseAssertionParams(*a, now))); err != nil {
		return fmt.Errorf("release expired assertion: %w", err)
	}
	n, err := q.UseBrandAssertion(ctx, pgq.UseBrandAssertionParams(useAssertionParams(*a)))
	if err != nil {
		return fmt.Errorf("use assertion: %w", err)
	}
	if n == 0 {
		return ErrAssertionReplayed
	}
	return nil
}

func (s *pgStore) RedeemDeviceAuthorization(ctx context.Context, id string, now time.Time, rt RefreshToken) (DeviceAuthorization, error) {
	var d DeviceAuthorization
	err := s.delegationTx(ctx, func(q *pgq.Queries) error {
		r, err := q.ConsumeDeviceAuthorization(ctx, pgq.ConsumeDeviceAuthorizationParams{ID: id, Now: unix(now)})
		if err != nil {
			return err
		}
		d = deviceFromPG(r)
		rt.GrantID = d.GrantID
		if err := q.CreateRefreshToken(ctx, pgq.CreateRefreshTokenParams(createRefreshParams(rt))); err != nil {
			return fmt.Errorf("create refresh token: %w", err)
		}
		_, err = pgRecordAudit(ctx, q, auditFrom(ctx, now, d.GrantID))
		return err
	})
	if err != nil {
		return DeviceAuthorization{}, err
	}
	return d, nil
}

func (s *pgStore) GetGrant(ctx context.Context, id string) (Grant, error) {
	r, err := s.q.GetGrant(ctx, id)
	if err != nil {
		return Grant{}, pgErr(err)
	}
	return grantFromPG(r), nil
}

func (s *pgStore) RevokeGrant(ctx context.Context, id string, now time.Time) (bool, error) {
	var n int64
	audit := auditFrom(ctx, now, id)
	revoke := func(q *pgq.Queries) error {
		var err error
		if n, err = q.RevokeGrant(ctx, pgq.RevokeGrantParams{ID: id, Now: unix(now)}); err != nil || n != 1 {
			return err
		}
		_, err = pgRecordAudit(ctx, q, audit)
		return err
	}
	var err error
	if audit == nil {
		err = pgErr(revoke(s.q))
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

func (s *pgStore) ListGrants(ctx context.Context, brandID, brandUser, beforeID string, limit int) ([]Grant, error) {
	rows, err := s.q.ListGrantsByUser(ctx, pgq.ListGrantsByUserParams{BrandID: brandID, BrandUser: brandUser, BeforeID: beforeID, PageLimit: int64(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]Grant, 0, len(rows))
	for _, r := range rows {
		out = append(out, grantFromPGListRow(r))
	}
	return out, nil
}

func (s *pgStore) GrantLiveAt(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (bool, error) {
	n, err := s.q.CountLiveGrants(ctx, pgq.CountLiveGrantsParams{ID: grantID, BrandID: brandID, ClientID: clientID, BrandUser: brandUser, Now: unix(now)})
	return n == 1, pgErr(err)
}

func (s *pgStore) LiveGrantDetails(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (string, bool, error) {
	d, err := s.q.GetLiveGrantDetails(ctx, pgq.GetLiveGrantDetailsParams{ID: grantID, BrandID: brandID, ClientID: clientID, BrandUser: brandUser, Now: unix(now)})
	if err != nil {
		if err = pgErr(err); errors.Is(err, ErrNotFound) {
			return "", false, nil
		}
		return "", false, err
	}
	return d, true, nil
}

func (s *pgStore) GetRefreshToken(ctx context.Context, hash []byte) (RefreshToken, error) {
	r, err := s.q.GetRefreshToken(ctx, hash)
	if err != nil {
		return RefreshToken{}, pgErr(err)
	}
	return refreshFromPG(r), nil
}

func (s *pgStore) RotateRefreshToken(ctx context.Context, old []byte, brandID, clientID string, now time.Time, next RefreshToken) (RefreshToken, error) {
	err := s.delegationTx(ctx, func(q *pgq.Queries) error {
		used, err := q.UseRefreshToken(ctx, pgq.UseRefreshTokenParams{TokenHash: old, BrandID: brandID, ClientID: clientID, Now: unix(now)})
		if err != nil {
			return err
		}
		next.GrantID = used.GrantID
		if err := q.CreateRefreshToken(ctx, pgq.CreateRefreshTokenParams(createRefreshParams(next))); err != nil {
			return fmt.Errorf("create refresh token: %w", err)
		}
		_, err = pgRecordAudit(ctx, q, auditFrom(ctx, now, used.GrantID))
		return err
	})
	if err != nil {
		return RefreshToken{}, err
	}
	return normRefresh(next), nil
}

func (s *pgStore) PurgeExpiredDelegation(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	err := s.delegationTx(ctx, func(q *pgq.Queries) error {
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

func (s *pgStore) AddUserCodeFailure(ctx context.Context, scope string, window time.Time) (int64, error) {
	n, err := s.q.AddUserCodeFailure(ctx, pgq.AddUserCodeFailureParams{Scope: scope, WindowStart: unix(window)})
	return n, pgErr(err)
}

func (s *pgStore) RemoveUserCodeFailure(ctx context.Context, scope string, window time.Time) error {
	return pgErr(s.q.RemoveUserCodeFailure(ctx, pgq.RemoveUserCodeFailureParams{Scope: scope, WindowStart: unix(window)}))
}

func (s *pgStore) CountPendingDeviceAuthorizations(ctx context.Context, agentID, brandID string, now time.Time) (int64, int64, error) {
	r, err := s.q.CountPendingDeviceAuthorizations(ctx, pgq.CountPendingDeviceAuthorizationsParams{AgentID: agentID, BrandID: brandID, Now: unix(now)})
	return r.Total, r.AtBrand, pgErr(err)
}

func (s *pgStore) FindGrants(ctx context.Context, f GrantFilter, beforeID string, limit int) ([]Grant, error) {
	rows, err := s.q.FindGrants(ctx, pgq.FindGrantsParams(findGrantsParams(f, beforeID, limit)))
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]Grant, 0, len(rows))
	for _, r := range rows {
		out = append(out, grantFromPGListRow(pgq.ListGrantsByUserRow(r)))
	}
	return out, nil
}
