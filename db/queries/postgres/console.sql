-- The operator console's sessions, the replicas' heartbeats and the
-- overview's counts (migration 0035).

-- name: InsertConsoleSession :exec
INSERT INTO console_sessions (id_hash, credential_id, create_time, last_seen_time, expire_time)
VALUES (sqlc.arg(id_hash), sqlc.arg(credential_id), sqlc.arg(create_time), sqlc.arg(last_seen_time), sqlc.arg(expire_time));

-- name: GetConsoleSession :one
SELECT * FROM console_sessions WHERE id_hash = sqlc.arg(id_hash);

-- name: TouchConsoleSession :exec
-- Records a use, unless one was recorded at or after older_than (one write
-- a minute per session, however busy).
UPDATE console_sessions SET last_seen_time = sqlc.arg(now)
WHERE id_hash = sqlc.arg(id_hash) AND last_seen_time < sqlc.arg(older_than);

-- name: DeleteConsoleSession :execrows
DELETE FROM console_sessions WHERE id_hash = sqlc.arg(id_hash);

-- name: PruneConsoleSessions :execrows
-- Deletes the sessions past their absolute expiry or idle since idle_before.
DELETE FROM console_sessions WHERE expire_time <= sqlc.arg(now) OR last_seen_time < sqlc.arg(idle_before);

-- name: UpsertReplica :exec
INSERT INTO replicas (id, host, version, start_time, seen_time, feed_position)
VALUES (sqlc.arg(id), sqlc.arg(host), sqlc.arg(version), sqlc.arg(start_time), sqlc.arg(seen_time), sqlc.arg(feed_position))
ON CONFLICT (id) DO UPDATE SET seen_time = excluded.seen_time, feed_position = excluded.feed_position;

-- name: ListReplicas :many
-- The replicas seen at or after since, by id.
SELECT * FROM replicas WHERE seen_time >= sqlc.arg(since) ORDER BY id LIMIT sqlc.arg(page_limit)::bigint;

-- name: PruneReplicas :execrows
DELETE FROM replicas WHERE seen_time < sqlc.arg(before);

-- name: ConsoleCounts :one
-- Pending agents registered themselves disabled (PACT_SELF_REGISTRATION=
-- pending) and were never changed since.
SELECT CAST((SELECT count(*) FROM agents) AS BIGINT) AS agents,
       CAST((SELECT count(*) FROM agents WHERE NOT enabled) AS BIGINT) AS disabled_agents,
       CAST((SELECT count(*) FROM agent_registrations r JOIN agents a ON a.id = r.agent_id
             WHERE NOT a.enabled AND a.update_time = a.create_time) AS BIGINT) AS pending_agents,
       CAST((SELECT count(*) FROM brands) AS BIGINT) AS brands,
       CAST((SELECT count(*) FROM grants WHERE revoke_time = 0 AND expire_time > sqlc.arg(now)::bigint) AS BIGINT) AS live_grants,
       CAST((SELECT count(*) FROM credentials WHERE revoke_time = 0
             AND (expire_time = 0 OR expire_time > sqlc.arg(now)::bigint)) AS BIGINT) AS live_credentials;

-- name: ListPendingAgentIDs :many
-- The ids of the pending agents (see ConsoleCounts), after after_id, by id.
SELECT a.id FROM agents a JOIN agent_registrations r ON r.agent_id = a.id
WHERE NOT a.enabled AND a.update_time = a.create_time AND a.id > sqlc.arg(after_id)::text
ORDER BY a.id LIMIT sqlc.arg(page_limit)::bigint;
