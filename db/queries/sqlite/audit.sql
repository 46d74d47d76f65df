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
WHERE id > CAST(sqlc.arg(after_id) AS INTEGER)
  AND (CAST(sqlc.arg(brand_id) AS TEXT) = '' OR brand_id = CAST(sqlc.arg(brand_id) AS TEXT))
  AND (CAST(sqlc.arg(brand_user) AS TEXT) = '' OR brand_user = CAST(sqlc.arg(brand_user) AS TEXT))
  AND (CAST(sqlc.arg(agent_id) AS TEXT) = '' OR agent_id = CAST(sqlc.arg(agent_id) AS TEXT))
  AND (CAST(sqlc.arg(grant_id) AS TEXT) = '' OR grant_id = CAST(sqlc.arg(grant_id) AS TEXT))
  AND (CAST(sqlc.arg(kind) AS TEXT) = '' OR kind = CAST(sqlc.arg(kind) AS TEXT))
  AND (CAST(sqlc.arg(identity_id) AS TEXT) = '' OR identity_id = CAST(sqlc.arg(identity_id) AS TEXT))
  AND (CAST(sqlc.arg(start_time) AS INTEGER) = 0 OR time >= CAST(sqlc.arg(start_time) AS INTEGER))
  AND (CAST(sqlc.arg(end_time) AS INTEGER) = 0 OR time < CAST(sqlc.arg(end_time) AS INTEGER))
ORDER BY id
LIMIT sqlc.arg(page_limit);

-- name: PruneAuditEvents :execrows
-- Deletes up to batch of the oldest rows with time before before, so one
-- pass never holds the write lock for long.
DELETE FROM audit_events
WHERE id IN (SELECT a.id FROM audit_events a WHERE a.time < CAST(sqlc.arg(before) AS INTEGER) ORDER BY a.id LIMIT sqlc.arg(batch));
