-- name: CreateCredential :one
INSERT INTO credentials (id, role, token_hash, label, create_time, expire_time)
VALUES (sqlc.arg(id), sqlc.arg(role), sqlc.arg(token_hash), sqlc.arg(label), sqlc.arg(create_time), sqlc.arg(expire_time))
ON CONFLICT (token_hash) DO NOTHING
RETURNING *;

-- name: GetCredentialByHash :one
SELECT * FROM credentials WHERE token_hash = sqlc.arg(token_hash);

-- name: GetCredential :one
SELECT * FROM credentials WHERE id = sqlc.arg(id);

-- name: CountCredentialsByRole :one
SELECT CAST(count(*) AS BIGINT) AS n FROM credentials WHERE role = sqlc.arg(role);

-- name: CountLiveCredentialsByRole :one
-- Credentials of the role that are neither revoked nor expired at now.
SELECT CAST(count(*) AS BIGINT) AS n FROM credentials
WHERE role = sqlc.arg(role) AND revoke_time = 0 AND (expire_time = 0 OR expire_time > sqlc.arg(now));

-- name: ListCredentials :many
-- In id (creation) order, after after_id (an empty after_id starts at the first).
SELECT * FROM credentials
WHERE CAST(sqlc.arg(after_id) AS TEXT) = '' OR id > CAST(sqlc.arg(after_id) AS TEXT)
ORDER BY id
LIMIT sqlc.arg(page_limit);

-- name: RevokeCredential :one
-- Revokes a live credential; no row when it is unknown or already revoked.
UPDATE credentials SET revoke_time = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND revoke_time = 0
RETURNING *;

-- name: RevokeCredentialsByLabel :many
-- Revokes the live credentials with the label except the one with keep_hash
-- (a rotated bootstrap token's predecessors).
UPDATE credentials SET revoke_time = sqlc.arg(now)
WHERE label = sqlc.arg(label) AND revoke_time = 0 AND token_hash <> sqlc.arg(keep_hash)
RETURNING id;

-- name: TouchCredential :exec
-- Records a use, at most once per minute: older_than is now - 60.
UPDATE credentials SET last_use_time = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND last_use_time <= sqlc.arg(older_than);
