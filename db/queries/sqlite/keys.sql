-- name: CreateSigningKey :exec
INSERT INTO signing_keys (kid, seq, alg, public_jwk, sealed_private_key, create_time, activate_time, retire_time, expire_time)
VALUES (sqlc.arg(kid), sqlc.arg(seq), sqlc.arg(alg), sqlc.arg(public_jwk), sqlc.arg(sealed_private_key),
        sqlc.arg(create_time), sqlc.arg(activate_time), sqlc.arg(retire_time), sqlc.arg(expire_time));

-- name: RetireSigningKeysBefore :execrows
UPDATE signing_keys
SET retire_time = sqlc.arg(retire_time), expire_time = sqlc.arg(expire_time)
WHERE retire_time = 0 AND seq < sqlc.arg(before_seq);

-- name: ListPublishedSigningKeys :many
SELECT * FROM signing_keys
WHERE expire_time = 0 OR expire_time > sqlc.arg(now)
ORDER BY seq;

-- name: DeleteExpiredSigningKeys :execrows
DELETE FROM signing_keys WHERE expire_time <> 0 AND expire_time <= sqlc.arg(now);
