-- HDTP / PACT 2 identities and their leaf ledger (migration 0020).

-- name: CreateHDTPIdentity :one
INSERT INTO hdtp_identities (id, generation, endpoint, display_name, seal, key_alg, root_der, root_fingerprint, create_time, update_time)
VALUES (sqlc.arg(id), sqlc.arg(generation), sqlc.arg(endpoint), sqlc.arg(display_name), sqlc.arg(seal), sqlc.arg(key_alg),
        NULL, '', sqlc.arg(create_time), sqlc.arg(update_time))
RETURNING *;

-- name: GetHDTPIdentity :one
SELECT * FROM hdtp_identities WHERE id = sqlc.arg(id);

-- name: LockHDTPIdentity :one
SELECT id FROM hdtp_identities WHERE id = sqlc.arg(id);

-- name: ListHDTPIdentities :many
SELECT * FROM hdtp_identities WHERE id > sqlc.arg(after_id) ORDER BY id LIMIT sqlc.arg(page_limit);

-- name: UpdateHDTPIdentity :one
UPDATE hdtp_identities
SET generation = sqlc.arg(generation), display_name = sqlc.arg(display_name), seal = sqlc.arg(seal), key_alg = sqlc.arg(key_alg),
    update_time = sqlc.arg(update_time)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: SetHDTPIdentityRoot :execrows
UPDATE hdtp_identities SET root_der = sqlc.arg(root_der), root_fingerprint = sqlc.arg(root_fingerprint), update_time = sqlc.arg(update_time)
WHERE id = sqlc.arg(id) AND (root_fingerprint = '' OR root_fingerprint = sqlc.arg(root_fingerprint));

-- name: DeleteHDTPIdentity :execrows
DELETE FROM hdtp_identities WHERE id = sqlc.arg(id);

-- name: DeleteHDTPPendingLeaf :exec
DELETE FROM hdtp_leaves WHERE identity_id = sqlc.arg(identity_id) AND state = 'pending';

-- name: CreateHDTPLeaf :exec
INSERT INTO hdtp_leaves (kid, identity_id, key_alg, state, sealed_key, certificate, not_before, not_after,
                         request_state_hash, request_expire_time, create_time, install_time)
VALUES (sqlc.arg(kid), sqlc.arg(identity_id), sqlc.arg(key_alg), sqlc.arg(state), sqlc.arg(sealed_key), sqlc.arg(certificate),
        sqlc.arg(not_before), sqlc.arg(not_after), sqlc.arg(request_state_hash), sqlc.arg(request_expire_time),
        sqlc.arg(create_time), sqlc.arg(install_time));

-- name: GetHDTPLeaf :one
SELECT * FROM hdtp_leaves WHERE kid = sqlc.arg(kid);

-- name: ListHDTPLeaves :many
SELECT * FROM hdtp_leaves WHERE identity_id = sqlc.arg(identity_id) ORDER BY create_time, kid;

-- name: GetHDTPCurrentLeafKID :many
SELECT kid FROM hdtp_leaves WHERE identity_id = sqlc.arg(identity_id) AND state = 'current';

-- name: SupersedeHDTPCurrentLeaf :execrows
UPDATE hdtp_leaves SET state = 'superseded' WHERE identity_id = sqlc.arg(identity_id) AND state = 'current';

-- name: PromoteHDTPPendingLeaf :execrows
UPDATE hdtp_leaves
SET state = 'current', certificate = sqlc.arg(certificate), not_before = sqlc.arg(not_before), not_after = sqlc.arg(not_after),
    request_state_hash = NULL, request_expire_time = 0, install_time = sqlc.arg(install_time)
WHERE kid = sqlc.arg(kid) AND identity_id = sqlc.arg(identity_id) AND state = 'pending'
  AND request_state_hash = sqlc.arg(request_state_hash) AND request_expire_time > sqlc.arg(install_time);

-- name: RetireHDTPLeafKeys :execrows
UPDATE hdtp_leaves SET state = 'former', sealed_key = NULL
WHERE state IN ('current', 'superseded') AND not_after <= sqlc.arg(now);

-- name: DeleteExpiredHDTPRequests :execrows
DELETE FROM hdtp_leaves WHERE state = 'pending' AND request_expire_time <= sqlc.arg(now);
