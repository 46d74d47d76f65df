package db

import (
	"context"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
)

func (s *sqliteStore) CreateWebhookDestination(ctx context.Context, d WebhookDestination) (WebhookDestination, error) {
	r, err := s.q.CreateWebhookDestination(ctx, destinationParams(d))
	if err != nil {
		return WebhookDestination{}, liteErr(err)
	}
	return destinationFromRow(r), nil
}

func (s *sqliteStore) GetWebhookDestination(ctx context.Context, id string) (WebhookDestination, error) {
	r, err := s.q.GetWebhookDestination(ctx, id)
	if err != nil {
		return WebhookDestination{}, liteErr(err)
	}
	return destinationFromRow(r), nil
}

func (s *sqliteStore) ListWebhookDestinations(ctx context.Context, afterID string, limit int) ([]WebhookDestination, error) {
	rows, err := s.q.ListWebhookDestinations(ctx, liteq.ListWebhookDestinationsParams{AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]WebhookDestination, len(rows))
	for i, r := range rows {
		out[i] = destinationFromRow(r)
	}
	return out, nil
}

func (s *sqliteStore) UpdateWebhookDestination(ctx context.Context, id string, u WebhookUpdate) (WebhookDestination, error) {
	r, err := s.q.UpdateWebhookDestination(ctx, destinationUpdateParams(id, u))
	if err != nil {
		return WebhookDestination{}, liteErr(err)
	}
	return destinationFromRow(r), nil
}

func (s *sqliteStore) RotateWebhookSecret(ctx context.Context, id string, sealed []byte, previousUntil, now time.Time) (WebhookDestination, error) {
	r, err := s.q.RotateWebhookSecret(ctx, rotateParams(id, sealed, previousUntil, now))
	if err != nil {
		return WebhookDestination{}, liteErr(err)
	}
	return destinationFromRow(r), nil
}

func (s *sqliteStore) DeleteWebhookDestination(ctx context.Context, id string) error {
	n, err := s.q.DeleteWebhookDestination(ctx, id)
	if err != nil {
		return liteErr(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqliteStore) WebhookStats(ctx context.Context, destinationID string) ([]WebhookStats, error) {
	rows, err := s.q.WebhookDeliveryStats(ctx, destinationID)
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]WebhookStats, len(rows))
	for i, r := range rows {
		out[i] = statsFromRow(r)
		f, err := s.q.LastWebhookFailure(ctx, r.DestinationID)
		if err := liteErr(err); err != nil && err != ErrNotFound {
			return nil, err
		}
		out[i].LastFailure, out[i].LastStatus, out[i].LastError = fromMs(f.LastAttemptMs), int(f.LastStatus), f.LastError
	}
	return out, nil
}

func (s *sqliteStore) ListWebhookDeliveries(ctx context.Context, f WebhookDeliveryFilter, beforeID int64, limit int) ([]WebhookDelivery, error) {
	rows, err := s.q.ListWebhookDeliveries(ctx, liteq.ListWebhookDeliveriesParams{
		DestinationID: f.DestinationID, State: string(f.State), BeforeID: beforeID, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]WebhookDelivery, len(rows))
	for i, r := range rows {
		out[i] = deliveryFromRow(r)
	}
	return out, nil
}

func (s *sqliteStore) AuditEventsByID(ctx context.Context, ids []int64) (map[int64]AuditEvent, error) {
	rows, err := s.q.GetDeliveryEvents(ctx, ids)
	if err != nil {
		return nil, liteErr(err)
	}
	return eventsByID(rows)
}

func (s *sqliteStore) RetryDeadWebhookDeliveries(ctx context.Context, destinationID string, deliveryID int64, now time.Time) (int64, error) {
	n, err := s.q.RetryDeadWebhookDeliveries(ctx, liteq.RetryDeadWebhookDeliveriesParams{NowMs: toMs(now), DestinationID: destinationID, DeliveryID: deliveryID})
	return n, liteErr(err)
}

func (s *sqliteStore) ClaimWebhookDeliveries(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]ClaimedDelivery, error) {
	rows, err := s.q.ClaimWebhookDeliveries(ctx, liteq.ClaimWebhookDeliveriesParams{Owner: owner, LeaseUntilMs: toMs(leaseUntil), NowMs: toMs(now), Batch: int64(limit)})
	if err != nil || len(rows) == 0 {
		return nil, liteErr(err)
	}
	events, err := s.AuditEventsByID(ctx, deliveryIDs(rows))
	if err != nil {
		return nil, err
	}
	return claimed(rows, events), nil
}

func (s *sqliteStore) FinishWebhookDelivery(ctx context.Context, o DeliveryOutcome) (bool, error) {
	n, err := s.q.FinishWebhookDelivery(ctx, outcomeParams(o))
	return n == 1, liteErr(err)
}

func (s *sqliteStore) ReleaseWebhookDeliveries(ctx context.Context, owner string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.q.ReleaseWebhookDeliveries(ctx, liteq.ReleaseWebhookDeliveriesParams{Ids: ids, Owner: owner})
	return liteErr(err)
}

func (s *sqliteStore) WebhookOutboxGauges(ctx context.Context) (OutboxGauges, error) {
	rows, err := s.q.WebhookOutboxGauges(ctx)
	if err != nil {
		return OutboxGauges{}, liteErr(err)
	}
	return gaugesFromRows(rows), nil
}

func (s *sqliteStore) PurgeWebhookDeliveries(ctx context.Context, deliveredBefore, deadBefore time.Time) (int64, error) {
	var total int64
	for {
		n, err := s.q.PurgeWebhookDeliveries(ctx, liteq.PurgeWebhookDeliveriesParams{DeliveredBeforeMs: toMs(deliveredBefore), DeadBeforeMs: toMs(deadBefore), Batch: pruneBatch})
		total += n
		if err != nil || n < pruneBatch {
			return total, liteErr(err)
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
