package db

import (
	"context"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

func (s *pgStore) CreateWebhookDestination(ctx context.Context, d WebhookDestination) (WebhookDestination, error) {
	r, err := s.q.CreateWebhookDestination(ctx, pgq.CreateWebhookDestinationParams(destinationParams(d)))
	if err != nil {
		return WebhookDestination{}, pgErr(err)
	}
	return destinationFromRow(liteq.WebhookDestination(r)), nil
}

func (s *pgStore) GetWebhookDestination(ctx context.Context, id string) (WebhookDestination, error) {
	r, err := s.q.GetWebhookDestination(ctx, id)
	if err != nil {
		return WebhookDestination{}, pgErr(err)
	}
	return destinationFromRow(liteq.WebhookDestination(r)), nil
}

func (s *pgStore) ListWebhookDestinations(ctx context.Context, afterID string, limit int) ([]WebhookDestination, error) {
	rows, err := s.q.ListWebhookDestinations(ctx, pgq.ListWebhookDestinationsParams{AfterID: afterID, PageLimit: int64(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]WebhookDestination, len(rows))
	for i, r := range rows {
		out[i] = destinationFromRow(liteq.WebhookDestination(r))
	}
	return out, nil
}

func (s *pgStore) UpdateWebhookDestination(ctx context.Context, id string, u WebhookUpdate) (WebhookDestination, error) {
	r, err := s.q.UpdateWebhookDestination(ctx, pgq.UpdateWebhookDestinationParams(destinationUpdateParams(id, u)))
	if err != nil {
		return WebhookDestination{}, pgErr(err)
	}
	return destinationFromRow(liteq.WebhookDestination(r)), nil
}

func (s *pgStore) RotateWebhookSecret(ctx context.Context, id string, sealed []byte, previousUntil, now time.Time) (WebhookDestination, error) {
	r, err := s.q.RotateWebhookSecret(ctx, pgq.RotateWebhookSecretParams(rotateParams(id, sealed, previousUntil, now)))
	if err != nil {
		return WebhookDestination{}, pgErr(err)
	}
	return destinationFromRow(liteq.WebhookDestination(r)), nil
}

func (s *pgStore) DeleteWebhookDestination(ctx context.Context, id string) error {
	n, err := s.q.DeleteWebhookDestination(ctx, id)
	if err != nil {
		return pgErr(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *pgStore) WebhookStats(ctx context.Context, destinationID string) ([]WebhookStats, error) {
	rows, err := s.q.WebhookDeliveryStats(ctx, destinationID)
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]WebhookStats, len(rows))
	for i, r := range rows {
		out[i] = statsFromRow(liteq.WebhookDeliveryStatsRow(r))
		f, err := s.q.LastWebhookFailure(ctx, r.DestinationID)
		if err := pgErr(err); err != nil && err != ErrNotFound {
			return nil, err
		}
		out[i].LastFailure, out[i].LastStatus, out[i].LastError = fromMs(f.LastAttemptMs), int(f.LastStatus), f.LastError
	}
	return out, nil
}

func (s *pgStore) ListWebhookDeliveries(ctx context.Context, f WebhookDeliveryFilter, beforeID int64, limit int) ([]WebhookDelivery, error) {
	rows, err := s.q.ListWebhookDeliveries(ctx, pgq.ListWebhookDeliveriesParams{
		DestinationID: f.DestinationID, State: string(f.State), BeforeID: beforeID, PageLimit: int64(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]WebhookDelivery, len(rows))
	for i, r := range rows {
		out[i] = deliveryFromRow(liteq.WebhookDelivery(r))
	}
	return out, nil
}

func (s *pgStore) AuditEventsByID(ctx context.Context, ids []int64) (map[int64]AuditEvent, error) {
	rows, err := s.q.GetDeliveryEvents(ctx, ids)
	if err != nil {
		return nil, pgErr(err)
	}
	lite := make([]liteq.AuditEvent, len(rows))
	for i, r := range rows {
		lite[i] = liteq.AuditEvent(r)
	}
	return eventsByID(lite)
}

func (s *pgStore) RetryDeadWebhookDeliveries(ctx context.Context, destinationID string, deliveryID int64, now time.Time) (int64, error) {
	n, err := s.q.RetryDeadWebhookDeliveries(ctx, pgq.RetryDeadWebhookDeliveriesParams{NowMs: toMs(now), DestinationID: destinationID, DeliveryID: deliveryID})
	return n, pgErr(err)
}

func (s *pgStore) ClaimWebhookDeliveries(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]ClaimedDelivery, error) {
	rows, err := s.q.ClaimWebhookDeliveries(ctx, pgq.ClaimWebhookDeliveriesParams{Owner: owner, LeaseUntilMs: toMs(leaseUntil), NowMs: toMs(now), Batch: int64(limit)})
	if err != nil || len(rows) == 0 {
		return nil, pgErr(err)
	}
	lite := make([]liteq.WebhookDelivery, len(rows))
	for i, r := range rows {
		lite[i] = liteq.WebhookDelivery(r)
	}
	events, err := s.AuditEventsByID(ctx, deliveryIDs(lite))
	if err != nil {
		return nil, err
	}
	return claimed(lite, events), nil
}

func (s *pgStore) FinishWebhookDelivery(ctx context.Context, o DeliveryOutcome) (bool, error) {
	n, err := s.q.FinishWebhookDelivery(ctx, pgq.FinishWebhookDeliveryParams(outcomeParams(o)))
	return n == 1, pgErr(err)
}

func (s *pgStore) ReleaseWebhookDeliveries(ctx context.Context, owner string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.q.ReleaseWebhookDeliveries(ctx, pgq.ReleaseWebhookDeliveriesParams{Ids: ids, Owner: owner})
	return pgErr(err)
}

func (s *pgStore) WebhookOutboxGauges(ctx context.Context) (OutboxGauges, error) {
	rows, err := s.q.WebhookOutboxGauges(ctx)
	if err != nil {
		return OutboxGauges{}, pgErr(err)
	}
	lite := make([]liteq.WebhookOutboxGaugesRow, len(rows))
	for i, r := range rows {
		lite[i] = liteq.WebhookOutboxGaugesRow(r)
	}
	return gaugesFromRows(lite), nil
}

func (s *pgStore) PurgeWebhookDeliveries(ctx context.Context, deliveredBefore, deadBefore time.Time) (int64, error) {
	var total int64
	for {
		n, err := s.q.PurgeWebhookDeliveries(ctx, pgq.PurgeWebhookDeliveriesParams{DeliveredBeforeMs: toMs(deliveredBefore), DeadBeforeMs: toMs(deadBefore), Batch: pruneBatch})
		total += n
		if err != nil || n < pruneBatch {
			return total, pgErr(err)
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
