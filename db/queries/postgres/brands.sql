-- name: CreateBrand :one
INSERT INTO brands (id, display_name, description, skills_json, delegation_json, create_time, update_time)
VALUES (sqlc.arg(id), sqlc.arg(display_name), sqlc.arg(description), sqlc.arg(skills_json), sqlc.arg(delegation_json), sqlc.arg(create_time), sqlc.arg(update_time))
RETURNING *;

-- name: GetBrand :one
SELECT * FROM brands WHERE id = sqlc.arg(id);

-- name: ListBrands :many
SELECT * FROM brands WHERE id > sqlc.arg(after_id) ORDER BY id LIMIT sqlc.arg(page_limit)::bigint;

-- name: UpdateBrand :one
UPDATE brands
SET display_name = sqlc.arg(display_name), description = sqlc.arg(description), skills_json = sqlc.arg(skills_json),
    delegation_json = sqlc.arg(delegation_json), update_time = sqlc.arg(update_time)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: SetBrandAgentPolicy :one
UPDATE brands SET agent_policy = sqlc.arg(agent_policy), update_time = sqlc.arg(update_time)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: LockBrand :one
SELECT id FROM brands WHERE id = sqlc.arg(id) FOR UPDATE;

-- name: CountBrandAgents :one
SELECT count(*) FROM brand_agents WHERE brand_id = sqlc.arg(brand_id);

-- name: AddBrandAgent :execrows
INSERT INTO brand_agents (brand_id, agent_id, create_time)
VALUES (sqlc.arg(brand_id), sqlc.arg(agent_id), sqlc.arg(create_time))
ON CONFLICT DO NOTHING;

-- name: RemoveBrandAgent :execrows
DELETE FROM brand_agents WHERE brand_id = sqlc.arg(brand_id) AND agent_id = sqlc.arg(agent_id);

-- name: ListBrandAgentIDs :many
SELECT agent_id FROM brand_agents WHERE brand_id = sqlc.arg(brand_id) ORDER BY agent_id;

-- name: ListBrandAgents :many
SELECT ba.agent_id, a.display_name, ba.create_time
FROM brand_agents ba JOIN agents a ON a.id = ba.agent_id
WHERE ba.brand_id = sqlc.arg(brand_id) AND ba.agent_id > sqlc.arg(after_id)
ORDER BY ba.agent_id LIMIT sqlc.arg(page_limit);
