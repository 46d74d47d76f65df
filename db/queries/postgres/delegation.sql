-- PACT Delegated: device authorizations, grants and refresh tokens.
-- Every state change is one guarded statement (update-where-state), never
-- read-then-write; a guard that matches nothing returns no row.

-- name: CreateDeviceAuthorization :one
INSERT INTO device_authorizations (id, brand_id, agent_id, client_id, device_code_hash, user_code_hash, scopes, status,
                                   interval_seconds, expires_at, create_time, authorization_details,
                                   authorization_details_scopes)
VALUES (sqlc.arg(id), sqlc.arg(brand_id), sqlc.arg(agent_id), sqlc.arg(client_id), sqlc.arg(device_code_hash),
        sqlc.arg(user_code_hash), sqlc.arg(scopes), 'pending', sqlc.arg(interval_seconds), sqlc.arg(expires_at),
        sqlc.arg(create_time), sqlc.arg(authorization_details), sqlc.arg(authorization_details_scopes))
RETURNING *;

-- name: GetDeviceAuthorizationByDeviceCode :one
SELECT * FROM device_authorizations
WHERE brand_id = sqlc.arg(brand_id) AND device_code_hash = sqlc.arg(device_code_hash);

-- name: GetDeviceAuthorizationByUserCode :one
SELECT * FROM device_authorizations
WHERE brand_id = sqlc.arg(brand_id) AND user_code_hash = sqlc.arg(user_code_hash);

-- name: PollDeviceAuthorization :one
-- An on-time poll of a pending authorization: records the poll time.
UPDATE device_authorizations SET last_polled_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND status = 'pending' AND last_polled_at + interval_seconds <= sqlc.arg(now)
RETURNING *;

-- name: SlowDownDeviceAuthorization :one
-- A too-early poll of a pending authorization: records the poll time and
-- lengthens the interval (RFC 8628 section 3.5, slow_down).
UPDATE device_authorizations SET last_polled_at = sqlc.arg(now), interval_seconds = interval_seconds + sqlc.arg(step)
WHERE id = sqlc.arg(id) AND status = 'pending' AND last_polled_at + interval_seconds > sqlc.arg(now)
RETURNING *;

-- name: ApproveDeviceAuthorization :one
UPDATE device_authorizations SET status = 'approved', brand_user = sqlc.arg(brand_user), grant_id = sqlc.arg(grant_id)
WHERE id = sqlc.arg(id) AND status = 'pending' AND expires_at > sqlc.arg(now)
RETURNING *;

-- name: DenyDeviceAuthorization :one
UPDATE device_authorizations SET status = 'denied'
WHERE id = sqlc.arg(id) AND status = 'pending' AND expires_at > sqlc.arg(now)
RETURNING *;

-- name: ConsumeDeviceAuthorization :one
UPDATE device_authorizations SET status = 'consumed'
WHERE id = sqlc.arg(id) AND status = 'approved' AND expires_at > sqlc.arg(now)
RETURNING *;

-- name: DeleteExpiredDeviceAuthorizations :execrows
DELETE FROM device_authorizations WHERE expires_at <= sqlc.arg(now);

-- name: CreateGrant :one
INSERT INTO grants (id, brand_id, agent_id, client_id, brand_user, scopes, create_time, expire_time, authorization_details,
                    authorization_details_scopes)
VALUES (sqlc.arg(id), sqlc.arg(brand_id), sqlc.arg(agent_id), sqlc.arg(client_id), sqlc.arg(brand_user), sqlc.arg(scopes),
        sqlc.arg(create_time), sqlc.arg(expire_time), sqlc.arg(authorization_details), sqlc.arg(authorization_details_scopes))
RETURNING *;

-- name: GetGrant :one
SELECT * FROM grants WHERE id = sqlc.arg(id);

-- name: RevokeGrant :execrows
UPDATE grants SET revoke_time = sqlc.arg(now) WHERE id = sqlc.arg(id) AND revoke_time = 0;

-- name: ListGrantsByUser :many
-- Newest first (ids are ULIDs); before_id '' starts at the newest.
SELECT g.id, g.brand_id, g.agent_id, g.client_id, g.brand_user, g.scopes, g.create_time, g.expire_time, g.revoke_time, g.authorization_details,
       g.authorization_details_scopes, a.display_name AS agent_display_name
FROM grants g JOIN agents a ON a.id = g.agent_id
WHERE g.brand_id = sqlc.arg(brand_id) AND g.brand_user = sqlc.arg(brand_user)
  AND (sqlc.arg(before_id)::text = '' OR g.id < sqlc.arg(before_id)::text)
ORDER BY g.id DESC
LIMIT sqlc.arg(page_limit)::bigint;

-- name: FindGrants :many
-- Newest first; an empty filter matches every grant; before_id '' starts at
-- the newest.
SELECT g.id, g.brand_id, g.agent_id, g.client_id, g.brand_user, g.scopes, g.create_time, g.expire_time, g.revoke_time, g.authorization_details,
       g.authorization_details_scopes, a.display_name AS agent_display_name
FROM grants g JOIN agents a ON a.id = g.agent_id
WHERE (sqlc.arg(brand_id)::text = '' OR g.brand_id = sqlc.arg(brand_id)::text)
  AND (sqlc.arg(brand_user)::text = '' OR g.brand_user = sqlc.arg(brand_user)::text)
  AND (sqlc.arg(agent_id)::text = '' OR g.agent_id = sqlc.arg(agent_id)::text)
  AND (sqlc.arg(before_id)::text = '' OR g.id < sqlc.arg(before_id)::text)
ORDER BY g.id DESC
LIMIT sqlc.arg(page_limit)::bigint;

-- name: CountLiveGrants :one
SELECT count(*) FROM grants
WHERE id = sqlc.arg(id) AND brand_id = sqlc.arg(brand_id) AND client_id = sqlc.arg(client_id)
  AND brand_user = sqlc.arg(brand_user) AND revoke_time = 0 AND expire_time > sqlc.arg(now);

-- name: GetLiveGrantDetails :one
-- The authorization_details of a grant that is live for this Brand, client
-- and Brand user (the guard of CountLiveGrants); no row when it is not.
SELECT authorization_details FROM grants
WHERE id = sqlc.arg(id) AND brand_id = sqlc.arg(brand_id) AND client_id = sqlc.arg(client_id)
  AND brand_user = sqlc.arg(brand_user) AND revoke_time = 0 AND expire_time > sqlc.arg(now);

-- name: CreateRefreshToken :exec
INSERT INTO refresh_tokens (token_hash, grant_id, expires_at, create_time)
VALUES (sqlc.arg(token_hash), sqlc.arg(grant_id), sqlc.arg(expires_at), sqlc.arg(create_time));

-- name: GetRefreshToken :one
SELECT * FROM refresh_tokens WHERE token_hash = sqlc.arg(token_hash);

-- name: UseRefreshToken :one
-- Marks an unused, unexpired refresh token used, only when its grant is
-- live and belongs to this Brand and client (so nobody else can burn it).
UPDATE refresh_tokens SET used_at = sqlc.arg(now)
WHERE token_hash = sqlc.arg(token_hash) AND used_at = 0 AND expires_at > sqlc.arg(now)
  AND grant_id IN (SELECT g.id FROM grants g
                   WHERE g.brand_id = sqlc.arg(brand_id) AND g.client_id = sqlc.arg(client_id)
                     AND g.revoke_time = 0 AND g.expire_time > sqlc.arg(now))
RETURNING *;

-- name: DeleteExpiredRefreshTokens :execrows
DELETE FROM refresh_tokens WHERE expires_at <= sqlc.arg(now);

-- name: ReleaseExpiredBrandAssertion :execrows
-- Drops the record of one used assertion if it has expired, so the jti can
-- be recorded again (an expired record guards nothing: an assertion is
-- refused after its expire_time anyway). Runs in the transaction of
-- UseBrandAssertion, just before it.
DELETE FROM used_brand_assertions
WHERE brand_id = sqlc.arg(brand_id) AND jti = sqlc.arg(jti) AND expire_time < sqlc.arg(now);

-- name: UseBrandAssertion :execrows
-- Records the single use of a Brand login assertion (insert-if-absent).
-- When (brand_id, jti) is recorded already no row is affected: the
-- assertion is a replay.
INSERT INTO used_brand_assertions (brand_id, jti, expire_time)
VALUES (sqlc.arg(brand_id), sqlc.arg(jti), sqlc.arg(expire_time))
ON CONFLICT (brand_id, jti) DO NOTHING;

-- name: DeleteExpiredBrandAssertions :execrows
-- A used assertion is kept while it could still be accepted (through its
-- expire_time, inclusive).
DELETE FROM used_brand_assertions WHERE expire_time < sqlc.arg(now);

-- name: AddUserCodeFailure :one
-- Counts one failed (or reserved) lookup and returns the window's count.
INSERT INTO user_code_failures (scope, window_start, failures)
VALUES (sqlc.arg(scope), sqlc.arg(window_start), 1)
ON CONFLICT (scope, window_start) DO UPDATE SET failures = user_code_failures.failures + 1
RETURNING failures;

-- name: RemoveUserCodeFailure :exec
-- Gives back a reservation: the lookup found its code, or was refused.
UPDATE user_code_failures SET failures = failures - 1
WHERE scope = sqlc.arg(scope) AND window_start = sqlc.arg(window_start) AND failures > 0;

-- name: DeleteOldUserCodeFailures :execrows
DELETE FROM user_code_failures WHERE window_start < sqlc.arg(before);

-- name: CountPendingDeviceAuthorizations :one
-- Pending, unexpired device authorizations of an agent: in all, and at one Brand.
SELECT CAST(count(*) AS BIGINT) AS total,
       CAST(COALESCE(SUM(CASE WHEN brand_id = sqlc.arg(brand_id) THEN 1 ELSE 0 END), 0) AS BIGINT) AS at_brand
FROM device_authorizations
WHERE agent_id = sqlc.arg(agent_id) AND status = 'pending' AND expires_at > sqlc.arg(now);
