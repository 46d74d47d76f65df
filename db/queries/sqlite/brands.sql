-- name: CreateBrand :one
INSERT INTO brands (id, display_name, description, skills_json, delegation_json, create_time, update_time)
VALUES (sqlc.arg(id), sqlc.arg(display_name), sqlc.arg(description), sqlc.arg(skills_json), sqlc.arg(delegation_json), sqlc.arg(create_time), sqlc.arg(update_time))
RETURNING *;

-- name: GetBrand :one
SELECT * FROM brands WHERE id = sqlc.arg(id);

-- name: ListBrands :many
SELECT * FROM brands WHERE id > sqlc.arg(after_id) ORDER BY id LIMIT sqlc.arg(page_limit);

-- name: UpdateBrand :one
UPDATE brands
SET display_name = sqlc.arg(display_name), description = sqlc.arg(description), skills_json = sqlc.arg(skills_json),
    delegation_json = sqlc.arg(delegation_json), update_time = sqlc.arg(update_time)
WHERE id = sqlc.arg(id)
RETURNING *;
