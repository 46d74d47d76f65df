-- name: CreateAgent :one
INSERT INTO agents (id, issuer, jwks_uri, display_name, audience, enabled, create_time, update_time)
VALUES (sqlc.arg(id), sqlc.arg(issuer), sqlc.arg(jwks_uri), sqlc.arg(display_name), sqlc.arg(audience), sqlc.arg(enabled), sqlc.arg(create_time), sqlc.arg(update_time))
RETURNING *;

-- name: GetAgentByID :one
SELECT * FROM agents WHERE id = sqlc.arg(id);

-- name: GetAgentByIssuer :one
SELECT * FROM agents WHERE issuer = sqlc.arg(issuer);

-- name: ListAgents :many
SELECT * FROM agents WHERE id > sqlc.arg(after_id) ORDER BY id LIMIT sqlc.arg(page_limit);

-- name: UpdateAgent :one
UPDATE agents
SET jwks_uri = sqlc.arg(jwks_uri), display_name = sqlc.arg(display_name), audience = sqlc.arg(audience),
    enabled = sqlc.arg(enabled), update_time = sqlc.arg(update_time)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: DeleteAgent :execrows
DELETE FROM agents WHERE id = sqlc.arg(id);
