-- name: CreateCredential :one
INSERT INTO credentials (id, role, token_hash, label, create_time)
VALUES (sqlc.arg(id), sqlc.arg(role), sqlc.arg(token_hash), sqlc.arg(label), sqlc.arg(create_time))
ON CONFLICT (token_hash) DO NOTHING
RETURNING *;

-- name: GetCredentialByHash :one
SELECT * FROM credentials WHERE token_hash = sqlc.arg(token_hash);

-- name: CountCredentialsByRole :one
SELECT CAST(count(*) AS BIGINT) AS n FROM credentials WHERE role = sqlc.arg(role);
