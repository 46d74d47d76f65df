-- Webhook destinations and the delivery outbox (migrations 0030 and 0045).

-- name: CreateWebhookDestination :one
INSERT INTO webhook_destinations (id, url, description, kinds, brand_ids, enabled, sealed_secret, create_time, update_time)
VALUES (sqlc.arg(id), sqlc.arg(url), sqlc.arg(description), sqlc.arg(kinds), sqlc.arg(brand_ids), sqlc.arg(enabled),
        sqlc.arg(sealed_secret), sqlc.arg(create_time), sqlc.arg(update_time))
RETURNING *;

-- name: GetWebhookDestination :one
SELECT * FROM webhook_destinations WHERE id = sqlc.arg(id);

-- name: ListWebhookDestinations :many
SELECT * FROM webhook_destinations WHERE id > sqlc.arg(after_id)::text ORDER BY id LIMIT sqlc.arg(page_limit)::bigint;

-- name: UpdateWebhookDestination :one
-- Sets the settings whose set_* flag is true, and update_time; every other
-- column keeps what it holds when the statement runs, so an update never
-- writes back a secret (or a setting) that a concurrent writer changed.
UPDATE webhook_destinations
SET url = CASE WHEN sqlc.arg(set_url)::boolean THEN sqlc.arg(url)::text ELSE url END,
    description = CASE WHEN sqlc.arg(set_description)::boolean THEN sqlc.arg(description)::text ELSE description END,
    kinds = CASE WHEN sqlc.arg(set_kinds)::boolean THEN sqlc.arg(kinds)::text ELSE kinds END,
    brand_ids = CASE WHEN sqlc.arg(set_brand_ids)::boolean THEN sqlc.arg(brand_ids)::text ELSE brand_ids END,
    enabled = CASE WHEN sqlc.arg(set_enabled)::boolean THEN sqlc.arg(enabled)::boolean ELSE enabled END,
    update_time = sqlc.arg(update_time)::bigint
WHERE id = sqlc.arg(id)::text
RETURNING *;

-- name: RotateWebhookSecret :one
-- Replaces the sealed secret in one statement: the right-hand sides read the
-- row as it is when the statement runs, so the secret moved to previous is
-- the one stored then (never a stale copy), kept when previous_until_ms is
-- not 0 and dropped otherwise. The settings are left as they are.
UPDATE webhook_destinations
SET previous_sealed_secret = CASE WHEN sqlc.arg(previous_until_ms)::bigint <> 0 THEN sealed_secret ELSE ''::bytea END,
    previous_until_ms = sqlc.arg(previous_until_ms)::bigint,
    sealed_secret = sqlc.arg(sealed_secret)::bytea,
    update_time = sqlc.arg(update_time)::bigint
WHERE id = sqlc.arg(id)::text
RETURNING *;

-- name: DeleteWebhookDestination :execrows
DELETE FROM webhook_destinations WHERE id = sqlc.arg(id);

-- name: ClaimWebhookDeliveries :many
-- Leases up to batch due pending rows of enabled destinations to owner. SKIP LOCKED lets replicas
-- claim at the same moment without waiting on each other's rows; the lease
-- condition keeps a row claimed by a live replica out of every other claim.
UPDATE webhook_deliveries w
SET lease_owner = sqlc.arg(owner)::text, lease_until_ms = sqlc.arg(lease_until_ms)::bigint
WHERE w.id IN (
  SELECT c.id FROM webhook_deliveries c
  WHERE c.state = 'pending' AND c.next_attempt_ms <= sqlc.arg(now_ms)::bigint AND c.lease_until_ms <= sqlc.arg(now_ms)::bigint
    AND EXISTS (SELECT 1 FROM webhook_destinations d WHERE d.id = c.destination_id AND d.enabled)
  ORDER BY c.next_attempt_ms, c.id
  LIMIT sqlc.arg(batch)::bigint
  FOR UPDATE SKIP LOCKED)
RETURNING w.*;

-- name: FinishWebhookDelivery :execrows
-- Records an attempt of a row owner still holds: the new state, the next
-- attempt and the outcome; the lease ends.
UPDATE webhook_deliveries
SET state = sqlc.arg(state)::text, attempts = attempts + 1, next_attempt_ms = sqlc.arg(next_attempt_ms)::bigint,
    lease_owner = '', lease_until_ms = 0, last_attempt_ms = sqlc.arg(now_ms)::bigint,
    last_status = sqlc.arg(last_status)::bigint, last_error = sqlc.arg(last_error)::text, done_ms = sqlc.arg(done_ms)::bigint
WHERE id = sqlc.arg(id)::bigint AND lease_owner = sqlc.arg(owner)::text AND state = 'pending';

-- name: ReleaseWebhookDeliveries :execrows
-- Ends owner's leases on rows it did not attempt (at shutdown).
UPDATE webhook_deliveries SET lease_owner = '', lease_until_ms = 0
WHERE id = ANY(sqlc.arg(ids)::bigint[]) AND lease_owner = sqlc.arg(owner)::text AND state = 'pending';

-- name: RetryDeadWebhookDeliveries :execrows
-- Makes a destination's dead rows (all, or the one with delivery_id) pending
-- again, due now, with a fresh attempt count and age bound.
UPDATE webhook_deliveries
SET state = 'pending', attempts = 0, since_ms = sqlc.arg(now_ms)::bigint, next_attempt_ms = sqlc.arg(now_ms)::bigint,
    lease_owner = '', lease_until_ms = 0, done_ms = 0
WHERE destination_id = sqlc.arg(destination_id)::text AND state = 'dead'
  AND (sqlc.arg(delivery_id)::bigint = 0 OR id = sqlc.arg(delivery_id)::bigint);

-- name: ListWebhookDeliveries :many
-- A destination's rows (every destination's for '') in one state (every
-- state for ''), newest first, before before_id (0: from the newest).
SELECT * FROM webhook_deliveries
WHERE (sqlc.arg(destination_id)::text = '' OR destination_id = sqlc.arg(destination_id)::text)
  AND (sqlc.arg(state)::text = '' OR state = sqlc.arg(state)::text)
  AND (sqlc.arg(before_id)::bigint = 0 OR id < sqlc.arg(before_id)::bigint)
ORDER BY id DESC
LIMIT sqlc.arg(page_limit)::bigint;

-- name: GetDeliveryEvents :many
-- The audit events of claimed rows.
SELECT * FROM audit_events WHERE id = ANY(sqlc.arg(ids)::bigint[]);

-- name: WebhookDeliveryStats :many
-- Per destination: rows in each state, the oldest pending row's age bound
-- start, and the last attempt that failed.
SELECT d.id AS destination_id,
       CAST(COUNT(w.id) FILTER (WHERE w.state = 'pending') AS BIGINT) AS pending,
       CAST(COUNT(w.id) FILTER (WHERE w.state = 'dead') AS BIGINT) AS dead,
       CAST(COUNT(w.id) FILTER (WHERE w.state = 'delivered') AS BIGINT) AS delivered,
       CAST(COALESCE(MIN(w.since_ms) FILTER (WHERE w.state = 'pending'), 0) AS BIGINT) AS oldest_pending_ms,
       CAST(COALESCE(MAX(w.last_attempt_ms), 0) AS BIGINT) AS last_attempt_ms,
       CAST(COALESCE(MAX(w.done_ms) FILTER (WHERE w.state = 'delivered'), 0) AS BIGINT) AS last_delivered_ms
FROM webhook_destinations d LEFT JOIN webhook_deliveries w ON w.destination_id = d.id
WHERE sqlc.arg(destination_id)::text = '' OR d.id = sqlc.arg(destination_id)::text
GROUP BY d.id
ORDER BY d.id;

-- name: LastWebhookFailure :one
-- The destination's most recent failed attempt.
SELECT last_attempt_ms, last_status, last_error FROM webhook_deliveries
WHERE destination_id = sqlc.arg(destination_id)::text AND last_error <> ''
ORDER BY last_attempt_ms DESC, id DESC
LIMIT 1;

-- name: PurgeWebhookDeliveries :execrows
-- Deletes up to batch rows delivered before delivered_before_ms or dead
-- before dead_before_ms.
DELETE FROM webhook_deliveries
WHERE id IN (SELECT p.id FROM webhook_deliveries p
             WHERE p.state <> 'pending' AND p.done_ms < sqlc.arg(delivered_before_ms)::bigint
               AND (p.state = 'delivered' OR p.done_ms < sqlc.arg(dead_before_ms)::bigint)
             ORDER BY p.done_ms LIMIT sqlc.arg(batch)::bigint);

-- name: WebhookOutboxGauges :many
-- Rows pending and dead, and the oldest age bound start of each state.
SELECT state, CAST(COUNT(*) AS BIGINT) AS row_count, CAST(MIN(since_ms) AS BIGINT) AS oldest_since_ms
FROM webhook_deliveries WHERE state IN ('pending', 'dead') GROUP BY state;
