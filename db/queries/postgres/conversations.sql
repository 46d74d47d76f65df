-- name: CreateContext :one
INSERT INTO contexts (id, brand_id, agent_id, subject, brand_user, close_time, create_time, update_time)
VALUES (sqlc.arg(id), sqlc.arg(brand_id), sqlc.arg(agent_id), sqlc.arg(subject), sqlc.arg(brand_user), 0, sqlc.arg(create_time), sqlc.arg(update_time))
RETURNING *;

-- name: GetContext :one
SELECT * FROM contexts WHERE id = sqlc.arg(id);

-- name: BindContextUser :one
UPDATE contexts SET brand_user = sqlc.arg(brand_user), update_time = sqlc.arg(update_time)
WHERE id = sqlc.arg(id) AND brand_user = ''
RETURNING *;

-- name: CloseContext :execrows
UPDATE contexts SET close_time = sqlc.arg(close_time), update_time = sqlc.arg(close_time)
WHERE id = sqlc.arg(id) AND close_time = 0;

-- name: TouchContext :execrows
UPDATE contexts SET update_time = sqlc.arg(update_time) WHERE id = sqlc.arg(id);

-- name: ClaimTurn :one
-- Inserts a pending User turn with the claim, or takes over a pending User
-- turn last claimed before stale_before; replied turns and agent rows are
-- never taken over. One statement: on a conflict PostgreSQL locks the row
-- and checks the WHERE against its latest version, so of concurrent claims
-- exactly one gets a row back.
INSERT INTO turns (context_id, message_id, role, state, claim, create_time, update_time)
VALUES (sqlc.arg(context_id), sqlc.arg(message_id), 'user', 'pending', sqlc.arg(claim), sqlc.arg(create_time), sqlc.arg(create_time))
ON CONFLICT (context_id, message_id) DO UPDATE SET claim = excluded.claim, update_time = excluded.update_time
WHERE turns.role = 'user' AND turns.state = 'pending' AND turns.update_time < sqlc.arg(stale_before)
RETURNING *;

-- name: GetTurn :one
SELECT * FROM turns WHERE context_id = sqlc.arg(context_id) AND message_id = sqlc.arg(message_id);

-- name: ReserveReplyID :one
INSERT INTO turns (context_id, message_id, role, state, create_time, update_time)
VALUES (sqlc.arg(context_id), sqlc.arg(message_id), 'agent', 'replied', sqlc.arg(create_time), sqlc.arg(create_time))
ON CONFLICT (context_id, message_id) DO NOTHING
RETURNING message_id;

-- name: CompleteTurn :execrows
-- An empty claim completes the pending turn whatever its claim (callers
-- that predate claims); any other only the run that holds that claim.
UPDATE turns
SET state = 'replied', reply_message_id = sqlc.arg(reply_message_id), reply_json = sqlc.arg(reply_json), update_time = sqlc.arg(update_time)
WHERE context_id = sqlc.arg(context_id) AND message_id = sqlc.arg(message_id) AND role = 'user' AND state = 'pending'
  AND (claim = sqlc.arg(claim) OR sqlc.arg(claim) = '');

-- name: AbandonTurn :execrows
DELETE FROM turns
WHERE context_id = sqlc.arg(context_id) AND message_id = sqlc.arg(message_id) AND role = 'user' AND state = 'pending'
  AND (claim = sqlc.arg(claim) OR sqlc.arg(claim) = '');
