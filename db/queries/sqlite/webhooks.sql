-- Webhook destinations and the delivery outbox (migrations 0030 and 0045).

-- name: CreateWebhookDestination :one
INSERT INTO webhook_destinations (id, url, description, kinds, brand_ids, enabled, sealed_secret, create_time, update_time)
VALUES (sqlc.arg(id), sqlc.arg(url), sqlc.arg(description), sqlc.arg(kinds), sqlc.arg(brand_ids), sqlc.arg(enabled),
        sqlc.arg(sealed_secret), sqlc.arg(create_time), sqlc.arg(update_time))
RETURNING *;

-- name: GetWebhookDestination :one
SELECT * FROM webhook_destinations WHERE id = sqlc.arg(id);

-- name: ListWebhookDestinations :many
SELECT * FROM webhook_destinations WHERE id > CAST(sqlc.arg(after_id) AS TEXT) ORDER BY id LIMIT CAST(sqlc.arg(page_limit) AS INTEGER);

-- name: UpdateWebhookDestination :one
-- Sets the settings whose set_* flag is true, and update_time; every other
-- column keeps what it holds when the statement runs, so an update never
-- writes back a secret (or a setting) that a concurrent writer changed.
UPDATE webhook_destinations
SET url = CASE WHEN CAST(sqlc.arg(set_url) AS BOOLEAN) THEN CAST(sqlc.arg(url) AS TEXT) ELSE url END,
    description = CASE WHEN CAST(sqlc.arg(set_description) AS BOOLEAN) THEN CAST(sqlc.arg(description) AS TEXT) ELSE description END,
    kinds = CASE WHEN CAST(sqlc.arg(set_kinds) AS BOOLEAN) THEN CAST(sqlc.arg(kinds) AS TEXT) ELSE kinds END,
    brand_ids = CASE WHEN CAST(sqlc.arg(set_brand_ids) AS BOOLEAN) THEN CAST(sqlc.arg(brand_ids) AS TEXT) ELSE brand_ids END,
    enabled = CASE WHEN CAST(sqlc.arg(set_enabled) AS BOOLEAN) THEN CAST(sqlc.arg(enabled) AS BOOLEAN) ELSE enabled END,
    update_time = CAST(sqlc.arg(update_time) AS INTEGER)
WHERE id = CAST(sqlc.arg(id) AS TEXT)
RETURNING *;

-- name: RotateWebhookSecret :one
-- Replaces the sealed secret in one statement: the right-hand sides read the
-- row as it is when the statement runs, so the secret moved to previous is
-- the one stored then (never a stale copy), kept when previous_until_ms is
-- not 0 and dropped otherwise. The settings are left as they are.
UPDATE webhook_destinations
SET previous_sealed_secret = CASE WHEN CAST(sqlc.arg(previous_until_ms) AS INTEGER) <> 0 THEN sealed_secret ELSE x'' END,
    previous_until_ms = CAST(sqlc.arg(previous_until_ms) AS INTEGER),
    sealed_secret = CAST(sqlc.arg(sealed_secret) AS BLOB),
    update_time = CAST(sqlc.arg(update_time) AS INTEGER)
WHERE id = CAST(sqlc.arg(id) AS TEXT)
RETURNING *;

-- name: DeleteWebhookDestination :execrows
DELETE FROM webhook_destinations WHERE id = sqlc.arg(id);

-- name: ClaimWebhookDeliveries :many
-- Leases up to batch due pending rows of enabled destinations to owner (BEGIN IMMEDIATE
-- serializes claims); the lease condition keeps a row claimed by a live
-- process out of every other claim.
UPDATE webhook_deliveries
SET lease_owner = CAST(sqlc.arg(owner) AS TEXT), lease_until_ms = CAST(sqlc.arg(lease_until_ms) AS INTEGER)
WHERE id IN (
  SELECT c.id FROM webhook_deliveries c
  WHERE c.state = 'pending' AND c.next_attempt_ms <= CAST(sqlc.arg(now_ms) AS INTEGER) AND c.lease_until_ms <= CAST(sqlc.arg(now_ms) AS INTEGER)
    AND EXISTS (SELECT 1 FROM webhook_destinations d WHERE d.id = c.destination_id AND d.enabled)
  ORDER BY c.next_attempt_ms, c.id
  LIMIT CAST(sqlc.arg(batch) AS INTEGER))
RETURNING *;

-- name: FinishWebhookDelivery :execrows
-- Records an attempt of a row owner still holds: the new state, the next
-- attempt and the outcome; the lease ends.
UPDATE webhook_deliveries
SET state = CAST(sqlc.arg(state) AS TEXT), attempts = attempts + 1, next_attempt_ms = CAST(sqlc.arg(next_attempt_ms) AS INTEGER),
    lease_owner = '', lease_until_ms = 0, last_attempt_ms = CAST(sqlc.arg(now_ms) AS INTEGER),
    last_status = CAST(sqlc.arg(last_status) AS INTEGER), last_error = CAST(sqlc.arg(last_error) AS TEXT), done_ms = CAST(sqlc.arg(done_ms) AS INTEGER)
WHERE id = CAST(sqlc.arg(id) AS INTEGER) AND lease_owner = CAST(sqlc.arg(owner) AS TEXT) AND state = 'pending';

-- name: ReleaseWebhookDeliveries :execrows
-- Ends owner's leases on rows it did not attempt (at shutdown).
UPDATE webhook_deliveries SET lease_owner = '', lease_until_ms = 0
WHERE id IN (sqlc.slice(ids)) AND lease_owner = CAST(sqlc.arg(owner) AS TEXT) AND state = 'pending';

-- name: RetryDeadWebhookDeliveries :execrows
-- Makes a destination's dead rows (all, or the one with delivery_id) pending
-- again, due now, with a fresh attempt count and age bound.
UPDATE webhook_deliveries
SET state = 'pending', attempts = 0, since_ms = CAST(sqlc.arg(now_ms) AS INTEGER), next_attempt_ms = CAST(sqlc.arg(now_ms) AS INTEGER),
    lease_owner = '', lease_until_ms = 0, done_ms = 0
WHERE destination_id = CAST(sqlc.arg(destination_id) AS TEXT) AND state = 'dead'
  AND (CAST(sqlc.arg(delivery_id) AS INTEGER) = 0 OR id = CAST(sqlc.arg(delivery_id) AS INTEGER));

-- name: ListWebhookDeliveries :many
-- A destination's rows (every destination's for '') in one state (every
-- state for ''), newest first, before before_id (0: from the newest).
SELECT * FROM webhook_deliveries
WHERE (CAST(sqlc.arg(destination_id) AS TEXT) = '' OR destination_id = CAST(sqlc.arg(destination_id) AS TEXT))
  AND (CAST(sqlc.arg(state) AS TEXT) = '' OR state = CAST(sqlc.arg(state) AS TEXT))
  AND (CAST(sqlc.arg(before_id) AS INTEGER) = 0 OR id < CAST(sqlc.arg(before_id) AS INTEGER))
ORDER BY id DESC
LIMIT CAST(sqlc.arg(page_limit) AS INTEGER);

-- name: GetDeliveryEvents :many
-- The audit events of claimed rows.
SELECT * FROM audit_events WHERE id IN (sqlc.slice(ids));

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
WHERE CAST(sqlc.arg(destination_id) AS TEXT) = '' OR d.id = CAST(sqlc.arg(destination_id) AS TEXT)
GROUP BY d.id
ORDER BY d.id;

-- name: LastWebhookFailure :one
-- The destination's most recent failed attempt.
SELECT last_attempt_ms, last_status, last_error FROM webhook_deliveries
WHERE destination_id = CAST(sqlc.arg(destination_id) AS TEXT) AND last_error <> ''
ORDER BY last_attempt_ms DESC, id DESC
LIMIT 1;

-- name: PurgeWebhookDeliveries :execrows
-- Deletes up to batch rows delivered before delivered_before_ms or dead
-- before dead_before_ms.
DELETE FROM webhook_deliveries
WHERE id IN (SELECT p.id FROM webhook_deliveries p
             WHERE p.state <> 'pending' AND p.done_ms < CAST(sqlc.arg(delivered_before_ms) AS INTEGER)
               AND (p.state = 'delivered' OR p.done_ms < CAST(sqlc.arg(dead_before_ms) AS INTEGER))
             ORDER BY p.done_ms LIMIT CAST(sqlc.arg(batch) AS INTEGER));

-- name: WebhookOutboxGauges :many
-- Rows pending and dead, and the oldest age bound start of each state.
SELECT state, CAST(COUNT(*) AS BIGINT) AS row_count, CAST(MIN(since_ms) AS BIGINT) AS oldest_since_ms
FROM webhook_deliveries WHERE state IN ('pending', 'dead') GROUP BY state;
