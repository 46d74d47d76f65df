package db

import (
	"context"
	"fmt"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// pgRecordAudit inserts e with q (inside the caller's transaction when q
// is bound to one); nothing when e is nil. Missing parties are filled from
// the grant (whose Brand, User and PA never change); a grant gone (deleted
// with its agent) leaves them empty rather than failing the record.
func pgRecordAudit(ctx context.Context, q *pgq.Queries, e *AuditEvent) (AuditEvent, error) {
	if e == nil {
		return AuditEvent{}, nil
	}
	ev := *e
	if ev.GrantID != "" && (ev.AgentID == "" || ev.BrandID == "" || ev.BrandUser == "" || ev.ClientID == "") {
		if g, err := q.GetGrant(ctx, ev.GrantID); err == nil {
			ev.fillFromGrant(g.BrandID, g.BrandUser, g.AgentID, g.ClientID)
		}
	}
	p, err := auditParams(ev)
	if err != nil {
		return AuditEvent{}, err
	}
	id, err := q.InsertAuditEvent(ctx, pgq.InsertAuditEventParams(p))
	if err != nil {
		return AuditEvent{}, fmt.Errorf("record audit event: %w", err)
	}
	return finishAudit(ev, p, id), nil
}

func (s *pgStore) RecordAuditEvent(ctx context.Context, e AuditEvent) (AuditEvent, error) {
	if e.Time.IsZero() {
		return AuditEvent{}, fmt.Errorf("record audit event: time is required")
	}
	out, err := pgRecordAudit(ctx, s.q, &e)
	return out, pgErr(err)
}

func (s *pgStore) ListAuditEvents(ctx context.Context, f AuditFilter, afterID int64, limit int) ([]AuditEvent, error) {
	rows, err := s.q.ListAuditEvents(ctx, pgq.ListAuditEventsParams(auditListParams(f, afterID, limit)))
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]AuditEvent, 0, len(rows))
	for _, r := range rows {
		e, err := auditFromRow(liteq.AuditEvent(r))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *pgStore) PruneAuditEvents(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		n, err := s.q.PruneAuditEvents(ctx, pgq.PruneAuditEventsParams{Before: unix(before), Batch: pruneBatch})
		total += n
		if err != nil || n < pruneBatch {
			return total, pgErr(err)
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
