-- HDTP / PACT 2 host wire (migration 0021): identity policies, contacts,
-- former pins, invites, replay records, dispatched calls, threads and
-- token buckets.

-- name: GetHDTPIdentityByEndpoint :one
SELECT * FROM hdtp_identities WHERE endpoint = sqlc.arg(endpoint);

-- name: SetHDTPIdentityPolicy :execrows
UPDATE hdtp_identities SET accept_new_hosts = sqlc.arg(accept_new_hosts), client_cert = sqlc.arg(client_cert), update_time = sqlc.arg(update_time)
WHERE id = sqlc.arg(id);

-- name: SetHDTPContentTools :execrows
UPDATE hdtp_identities SET content_tools = sqlc.arg(content_tools), update_time = sqlc.arg(update_time) WHERE id = sqlc.arg(id);

-- name: GetHDTPContact :one
SELECT * FROM hdtp_contacts WHERE identity_id = sqlc.arg(identity_id) AND root = sqlc.arg(root);

-- name: GetHDTPContactsByLeaf :many
SELECT * FROM hdtp_contacts WHERE identity_id = sqlc.arg(identity_id) AND leaf_kid = sqlc.arg(leaf_kid) ORDER BY root;

-- name: ListHDTPContacts :many
SELECT * FROM hdtp_contacts
WHERE identity_id = sqlc.arg(identity_id) AND root > sqlc.arg(after_root) AND (CAST(sqlc.arg(state) AS TEXT) = '' OR state = CAST(sqlc.arg(state) AS TEXT))
ORDER BY root LIMIT sqlc.arg(page_limit);

-- name: ListHDTPPendingAddresses :many
SELECT * FROM hdtp_contacts WHERE identity_id = sqlc.arg(identity_id) AND pending_endpoint <> '' ORDER BY root;

-- name: CountHDTPContacts :one
SELECT CAST(count(*) AS BIGINT) FROM hdtp_contacts WHERE identity_id = sqlc.arg(identity_id) AND state = sqlc.arg(state);

-- name: ListHDTPContactRootsAt :many
SELECT root FROM hdtp_contacts WHERE identity_id = sqlc.arg(identity_id) AND endpoint = sqlc.arg(endpoint) AND root <> sqlc.arg(root)
ORDER BY root;

-- name: ListHDTPFormerRootsAt :many
SELECT root FROM hdtp_former_pins WHERE identity_id = sqlc.arg(identity_id) AND endpoint = sqlc.arg(endpoint) AND root <> sqlc.arg(root)
  AND expire_time > sqlc.arg(now)
ORDER BY root;

-- name: UpsertHDTPContact :exec
INSERT INTO hdtp_contacts (identity_id, root, endpoint, leaf, leaf_kid, leaf_not_before, state, was_active, permissions, preset,
                           their_permissions, display_name, invite_label, note, pending_endpoint, pending_leaf, pending_leaf_kid,
                           pending_seen_time, pending_borrowed_from, request_time, create_time, update_time)
VALUES (sqlc.arg(identity_id), sqlc.arg(root), sqlc.arg(endpoint), sqlc.arg(leaf), sqlc.arg(leaf_kid), sqlc.arg(leaf_not_before),
        sqlc.arg(state), sqlc.arg(was_active), sqlc.arg(permissions), sqlc.arg(preset), sqlc.arg(their_permissions),
        sqlc.arg(display_name), sqlc.arg(invite_label), sqlc.arg(note), sqlc.arg(pending_endpoint), sqlc.arg(pending_leaf),
        sqlc.arg(pending_leaf_kid), sqlc.arg(pending_seen_time), sqlc.arg(pending_borrowed_from), sqlc.arg(request_time),
        sqlc.arg(create_time), sqlc.arg(update_time))
ON CONFLICT (identity_id, root) DO UPDATE SET
  endpoint = excluded.endpoint, leaf = excluded.leaf, leaf_kid = excluded.leaf_kid, leaf_not_before = excluded.leaf_not_before,
  state = excluded.state, was_active = excluded.was_active, permissions = excluded.permissions, preset = excluded.preset,
  their_permissions = excluded.their_permissions, display_name = excluded.display_name, invite_label = excluded.invite_label,
  note = excluded.note, pending_endpoint = excluded.pending_endpoint, pending_leaf = excluded.pending_leaf,
  pending_leaf_kid = excluded.pending_leaf_kid, pending_seen_time = excluded.pending_seen_time,
  pending_borrowed_from = excluded.pending_borrowed_from, request_time = excluded.request_time, update_time = excluded.update_time;

-- name: DeleteHDTPContact :execrows
DELETE FROM hdtp_contacts WHERE identity_id = sqlc.arg(identity_id) AND root = sqlc.arg(root);

-- name: PutHDTPFormerPin :exec
INSERT INTO hdtp_former_pins (identity_id, root, endpoint, leaf_kid, leaf_not_before, tombstone, permissions, preset, expire_time)
VALUES (sqlc.arg(identity_id), sqlc.arg(root), sqlc.arg(endpoint), sqlc.arg(leaf_kid), sqlc.arg(leaf_not_before), sqlc.arg(tombstone),
        sqlc.arg(permissions), sqlc.arg(preset), sqlc.arg(expire_time))
ON CONFLICT (identity_id, root, endpoint) DO UPDATE SET
  leaf_kid = excluded.leaf_kid, leaf_not_before = excluded.leaf_not_before, tombstone = excluded.tombstone,
  permissions = excluded.permissions, preset = excluded.preset, expire_time = excluded.expire_time;

-- name: ListHDTPFormerPins :many
SELECT * FROM hdtp_former_pins WHERE identity_id = sqlc.arg(identity_id) AND root = sqlc.arg(root) AND expire_time > sqlc.arg(now)
ORDER BY endpoint;

-- name: DeleteHDTPTombstones :exec
DELETE FROM hdtp_former_pins WHERE identity_id = sqlc.arg(identity_id) AND root = sqlc.arg(root) AND tombstone = 1;

-- name: PurgeHDTPFormerPins :execrows
DELETE FROM hdtp_former_pins WHERE expire_time <= sqlc.arg(now);

-- name: CreateHDTPInvite :exec
INSERT INTO hdtp_invites (id, identity_id, token_hash, expire_time, max_uses, uses, auto_accept, preset, label, create_time)
VALUES (sqlc.arg(id), sqlc.arg(identity_id), sqlc.arg(token_hash), sqlc.arg(expire_time), sqlc.arg(max_uses), 0, sqlc.arg(auto_accept),
        sqlc.arg(preset), sqlc.arg(label), sqlc.arg(create_time));

-- name: GetHDTPInviteByHash :one
SELECT * FROM hdtp_invites WHERE token_hash = sqlc.arg(token_hash);

-- name: UseHDTPInvite :execrows
UPDATE hdtp_invites SET uses = uses + 1
WHERE id = sqlc.arg(id) AND uses < max_uses AND expire_time > sqlc.arg(now);

-- name: ListHDTPInvites :many
SELECT * FROM hdtp_invites WHERE identity_id = sqlc.arg(identity_id) ORDER BY create_time DESC, id DESC;

-- name: DeleteHDTPInvite :execrows
DELETE FROM hdtp_invites WHERE identity_id = sqlc.arg(identity_id) AND id = sqlc.arg(id);

-- name: PurgeHDTPInvites :execrows
DELETE FROM hdtp_invites WHERE expire_time <= sqlc.arg(before);

-- name: InsertHDTPReplay :execrows
INSERT INTO hdtp_replays (identity_id, sender_root, msg_id, call_id, answer, expire_time)
VALUES (sqlc.arg(identity_id), sqlc.arg(sender_root), sqlc.arg(msg_id), '', NULL, sqlc.arg(expire_time))
ON CONFLICT DO NOTHING;

-- name: GetHDTPReplay :one
SELECT * FROM hdtp_replays WHERE identity_id = sqlc.arg(identity_id) AND sender_root = sqlc.arg(sender_root) AND msg_id = sqlc.arg(msg_id);

-- name: SetHDTPReplayAnswer :execrows
UPDATE hdtp_replays SET answer = sqlc.arg(answer)
WHERE identity_id = sqlc.arg(identity_id) AND sender_root = sqlc.arg(sender_root) AND msg_id = sqlc.arg(msg_id) AND answer IS NULL;

-- name: SetHDTPReplayCall :execrows
UPDATE hdtp_replays SET call_id = sqlc.arg(call_id)
WHERE identity_id = sqlc.arg(identity_id) AND sender_root = sqlc.arg(sender_root) AND msg_id = sqlc.arg(msg_id);

-- name: PurgeHDTPReplays :execrows
DELETE FROM hdtp_replays WHERE expire_time <= sqlc.arg(now);

-- name: InsertHDTPCall :execrows
INSERT INTO hdtp_calls (id, identity_id, caller_root, msg_id, tool, state, result, is_error, reply_leaf, reply_chain, env_msg_id, rpc_id,
                        create_time, complete_time)
VALUES (sqlc.arg(id), sqlc.arg(identity_id), sqlc.arg(caller_root), sqlc.arg(msg_id), sqlc.arg(tool), 'dispatched', NULL, 0,
        sqlc.arg(reply_leaf), sqlc.arg(reply_chain), sqlc.arg(env_msg_id), sqlc.arg(rpc_id), sqlc.arg(create_time), 0)
ON CONFLICT DO NOTHING;

-- name: GetHDTPCall :one
SELECT * FROM hdtp_calls WHERE id = sqlc.arg(id);

-- name: GetHDTPCallByMsgID :one
SELECT * FROM hdtp_calls WHERE identity_id = sqlc.arg(identity_id) AND caller_root = sqlc.arg(caller_root) AND msg_id = sqlc.arg(msg_id)
  AND msg_id <> '';

-- name: FinishHDTPCall :execrows
UPDATE hdtp_calls SET state = sqlc.arg(state), result = sqlc.arg(result), is_error = sqlc.arg(is_error), complete_time = sqlc.arg(complete_time),
  msg_id = CASE WHEN sqlc.arg(state) = 'failed' THEN '' ELSE msg_id END
WHERE id = sqlc.arg(id) AND state = 'dispatched';

-- name: PurgeHDTPCalls :execrows
DELETE FROM hdtp_calls WHERE create_time <= sqlc.arg(before);

-- name: GetHDTPThreadOwner :one
SELECT root FROM hdtp_threads WHERE identity_id = sqlc.arg(identity_id) AND thread_id = sqlc.arg(thread_id);

-- name: InsertHDTPThread :exec
INSERT INTO hdtp_threads (identity_id, thread_id, root, create_time)
VALUES (sqlc.arg(identity_id), sqlc.arg(thread_id), sqlc.arg(root), sqlc.arg(create_time))
ON CONFLICT DO NOTHING;

-- name: EnsureHDTPBucket :exec
INSERT INTO hdtp_buckets (scope, tokens, update_ms, full_ms) VALUES (sqlc.arg(scope), sqlc.arg(tokens), sqlc.arg(now_ms), sqlc.arg(now_ms))
ON CONFLICT DO NOTHING;

-- name: GetHDTPBucket :one
SELECT * FROM hdtp_buckets WHERE scope = sqlc.arg(scope);

-- name: LockHDTPBucket :one
SELECT * FROM hdtp_buckets WHERE scope = sqlc.arg(scope);

-- name: SetHDTPBucket :exec
UPDATE hdtp_buckets SET tokens = sqlc.arg(tokens), update_ms = sqlc.arg(update_ms), full_ms = sqlc.arg(full_ms) WHERE scope = sqlc.arg(scope);

-- name: PurgeHDTPBuckets :execrows
DELETE FROM hdtp_buckets WHERE full_ms <= sqlc.arg(now_ms);
