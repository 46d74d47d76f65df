-- The audit trail (migration 0012).

-- name: InsertAuditEvent :one
INSERT INTO audit_events (kind, time, brand_id, brand_user, agent_id, client_id, grant_id, scopes, actions, actor, detail, identity_id, peer)
VALUES (sqlc.arg(kind), sqlc.arg(time), sqlc.arg(brand_id), sqlc.arg(brand_user), sqlc.arg(agent_id), sqlc.arg(client_id),
        sqlc.arg(grant_id), sqlc.arg(scopes), sqlc.arg(actions), sqlc.arg(actor), sqlc.arg(detail), sqlc.arg(identity_id), sqlc.arg(peer))
RETURNING id;

-- name: ListAuditEvents :many
-- Oldest first, after after_id; an empty filter value (0 for the times)
-- matches every row. end_time is exclusive.
SELECT * FROM audit_events
WHERE id > sqlc.arg(after_id)::bigint
  AND (sqlc.arg(brand_id)::text = '' OR brand_id = sqlc.arg(brand_id)::text)
  AND (sqlc.arg(brand_user)::text = '' OR brand_user = sqlc.arg(brand_user)::text)
  AND (sqlc.arg(agent_id)::text = '' OR agent_id = sqlc.arg(agent_id)::text)
  AND (sqlc.arg(grant_id)::text = '' OR grant_id = sqlc.arg(grant_id)::text)
  AND (sqlc.arg(kind)::text = '' OR kind = sqlc.arg(kind)::text)
  AND (sqlc.arg(identity_id)::text = '' OR identity_id = sqlc.arg(identity_id)::text)
  AND (sqlc.arg(start_time)::bigint = 0 OR time >= sqlc.arg(start_time)::bigint)
  AND (sqlc.arg(end_time)::bigint = 0 OR time < sqlc.arg(end_time)::bigint)
ORDER BY id
LIMIT sqlc.arg(page_limit)::bigint;

-- name: PruneAuditEvents :execrows
-- Deletes up to batch of the oldest rows with time before before, so one
-- pass never holds locks for long.
DELETE FROM audit_events
WHERE id IN (SELECT a.id FROM audit_events a WHERE a.time < sqlc.arg(before)::bigint ORDER BY a.id LIMIT sqlc.arg(batch)::bigint);
