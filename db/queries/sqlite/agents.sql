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

-- name: PruneRegistrationJTIs :execrows
DELETE FROM registration_jtis WHERE expire_time < sqlc.arg(before);

-- name: InsertRegistrationJTI :execrows
INSERT INTO registration_jtis (issuer, jti, expire_time)
VALUES (sqlc.arg(issuer), sqlc.arg(jti), sqlc.arg(expire_time))
ON CONFLICT (issuer, jti) DO NOTHING;

-- name: CountRegistrationJTIs :one
SELECT COUNT(*) FROM registration_jtis;

-- name: InsertAgentRegistration :exec
INSERT INTO agent_registrations (name, agent_id, create_time)
VALUES (sqlc.arg(name), sqlc.arg(agent_id), sqlc.arg(create_time));

-- name: GetAgentRegistrationByName :one
SELECT * FROM agent_registrations WHERE name = sqlc.arg(name);

-- name: GetAgentRegistrationByAgent :one
SELECT * FROM agent_registrations WHERE agent_id = sqlc.arg(agent_id);
