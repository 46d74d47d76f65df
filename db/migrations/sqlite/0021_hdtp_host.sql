-- +goose Up
-- The HDTP / PACT 2 host wire (docs/hdtp.md): each identity's policies and
-- content tools, its contacts (pins), tombstones and former endpoints,
-- invites, envelope replay records, dispatched calls with their inner
-- idempotency keys, thread ownership, and the token buckets every replica
-- charges. Times are integer unix seconds (UTC) unless named _ms.
--
-- hdtp_identities gains:
--   accept_new_hosts  'auto' or 'ask': a contact's newer leaf at another
--                     endpoint is re-pinned at once, or held for the owner
--   client_cert       'off', 'preferred' or 'required': the client
--                     certificate posture
--   content_tools     the host's declared content tools, a JSON array of
--                     {"name","permission","description","input_schema"}
ALTER TABLE hdtp_identities ADD COLUMN accept_new_hosts TEXT NOT NULL DEFAULT 'auto';
ALTER TABLE hdtp_identities ADD COLUMN client_cert TEXT NOT NULL DEFAULT 'off';
ALTER TABLE hdtp_identities ADD COLUMN content_tools TEXT NOT NULL DEFAULT '[]';

-- hdtp_contacts: the pins. A row names a root the identity knows:
--   state             active, pending_in (they asked, the owner decides),
--                     pending_out (the identity asked), blocked
--   endpoint, leaf    the pinned endpoint and the latest accepted leaf
--                     (DER); leaf_kid its fingerprint, leaf_not_before its
--                     notBefore (the newest-leaf rule compares it)
--   permissions       space-separated permissions the owner granted;
--                     preset the preset they came from ('' for a list);
--                     their_permissions what the contact granted back
--   display_name      the FN of its card (an untrusted claim)
--   invite_label, note  the invite's label and the request's note
--   was_active        1 when it was active before it was blocked
--   pending_*         a newer leaf at another endpoint waiting for the
--                     owner ('' / NULL / 0 when none); pending_borrowed_from
--                     the other root that endpoint is or was pinned for
--   request_time      when the request was made (pending states)
CREATE TABLE hdtp_contacts (
  identity_id           TEXT    NOT NULL REFERENCES hdtp_identities (id) ON DELETE CASCADE,
  root                  TEXT    NOT NULL,
  endpoint              TEXT    NOT NULL,
  leaf                  BLOB    NOT NULL,
  leaf_kid              TEXT    NOT NULL,
  leaf_not_before       INTEGER NOT NULL,
  state                 TEXT    NOT NULL CHECK (state IN ('active', 'pending_in', 'pending_out', 'blocked')),
  was_active            INTEGER NOT NULL DEFAULT 0,
  permissions           TEXT    NOT NULL DEFAULT '',
  preset                TEXT    NOT NULL DEFAULT '',
  their_permissions     TEXT    NOT NULL DEFAULT '',
  display_name          TEXT    NOT NULL DEFAULT '',
  invite_label          TEXT    NOT NULL DEFAULT '',
  note                  TEXT    NOT NULL DEFAULT '',
  pending_endpoint      TEXT    NOT NULL DEFAULT '',
  pending_leaf          BLOB,
  pending_leaf_kid      TEXT    NOT NULL DEFAULT '',
  pending_seen_time     INTEGER NOT NULL DEFAULT 0,
  pending_borrowed_from TEXT    NOT NULL DEFAULT '',
  request_time          INTEGER NOT NULL DEFAULT 0,
  create_time           INTEGER NOT NULL,
  update_time           INTEGER NOT NULL,
  PRIMARY KEY (identity_id, root)
);
CREATE INDEX hdtp_contacts_leaf ON hdtp_contacts (identity_id, leaf_kid);
CREATE INDEX hdtp_contacts_endpoint ON hdtp_contacts (identity_id, endpoint);

-- hdtp_former_pins: for 30 days, the endpoints a root was pinned at and
-- left (moved, or removed: tombstone = 1 keeps the removed root, the leaf
-- it was pinned with and its permissions), for the borrowed-address rule
-- and the tombstone rule (§5.3).
CREATE TABLE hdtp_former_pins (
  identity_id     TEXT    NOT NULL REFERENCES hdtp_identities (id) ON DELETE CASCADE,
  root            TEXT    NOT NULL,
  endpoint        TEXT    NOT NULL,
  leaf_kid        TEXT    NOT NULL,
  leaf_not_before INTEGER NOT NULL,
  tombstone       INTEGER NOT NULL DEFAULT 0,
  permissions     TEXT    NOT NULL DEFAULT '',
  preset          TEXT    NOT NULL DEFAULT '',
  expire_time     INTEGER NOT NULL,
  PRIMARY KEY (identity_id, root, endpoint)
);
CREATE INDEX hdtp_former_pins_endpoint ON hdtp_former_pins (identity_id, endpoint);
CREATE INDEX hdtp_former_pins_expire ON hdtp_former_pins (expire_time);

-- hdtp_invites: token_hash is SHA-256 of the token (the token is shown
-- once and never stored); a redeem consumes a use with one guarded update.
CREATE TABLE hdtp_invites (
  id          TEXT    NOT NULL PRIMARY KEY,
  identity_id TEXT    NOT NULL REFERENCES hdtp_identities (id) ON DELETE CASCADE,
  token_hash  BLOB    NOT NULL UNIQUE,
  expire_time INTEGER NOT NULL,
  max_uses    INTEGER NOT NULL,
  uses        INTEGER NOT NULL DEFAULT 0,
  auto_accept INTEGER NOT NULL DEFAULT 0,
  preset      TEXT    NOT NULL,
  label       TEXT    NOT NULL DEFAULT '',
  create_time INTEGER NOT NULL
);
CREATE INDEX hdtp_invites_identity ON hdtp_invites (identity_id, create_time);

-- hdtp_replays: envelope replay records, keyed by (identity, sender root,
-- envelope msg_id), kept until min(exp, ts + 300). answer is the stored
-- CallToolResult JSON; NULL while call_id's dispatched call is in flight.
CREATE TABLE hdtp_replays (
  identity_id TEXT    NOT NULL REFERENCES hdtp_identities (id) ON DELETE CASCADE,
  sender_root TEXT    NOT NULL,
  msg_id      TEXT    NOT NULL,
  call_id     TEXT    NOT NULL DEFAULT '',
  answer      BLOB,
  expire_time INTEGER NOT NULL,
  PRIMARY KEY (identity_id, sender_root, msg_id)
);
CREATE INDEX hdtp_replays_expire ON hdtp_replays (expire_time);

-- hdtp_calls: content tool calls pactd dispatched to the host.
--   msg_id       the inner msg_id of send_message, send_media and
--                book_slot ('' for other tools, and once the call failed:
--                a refusal frees the id for a new attempt); at most one
--                call per (identity, caller root, msg_id)
--   state        dispatched, completed (result stored) or failed (the
--                host's refusal stored as result, is_error 1)
--   result       the tool's result object, or the error object
--   reply_leaf   the caller's leaf to seal the answer to (NULL for a
--                plaintext call); reply_chain 1 to answer in the full form;
--                env_msg_id the request envelope's msg_id
--   rpc_id       the JSON-RPC id of the request that dispatched it
CREATE TABLE hdtp_calls (
  id            TEXT    NOT NULL PRIMARY KEY,
  identity_id   TEXT    NOT NULL REFERENCES hdtp_identities (id) ON DELETE CASCADE,
  caller_root   TEXT    NOT NULL,
  msg_id        TEXT    NOT NULL DEFAULT '',
  tool          TEXT    NOT NULL,
  state         TEXT    NOT NULL CHECK (state IN ('dispatched', 'completed', 'failed')),
  result        BLOB,
  is_error      INTEGER NOT NULL DEFAULT 0,
  reply_leaf    BLOB,
  reply_chain   INTEGER NOT NULL DEFAULT 0,
  env_msg_id    TEXT    NOT NULL DEFAULT '',
  rpc_id        TEXT    NOT NULL,
  create_time   INTEGER NOT NULL,
  complete_time INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX hdtp_calls_msg ON hdtp_calls (identity_id, caller_root, msg_id) WHERE msg_id <> '';
CREATE INDEX hdtp_calls_create ON hdtp_calls (create_time);

-- hdtp_threads: which contact a thread_id belongs to (the first to use it,
-- learned from dispatched results).
CREATE TABLE hdtp_threads (
  identity_id TEXT    NOT NULL REFERENCES hdtp_identities (id) ON DELETE CASCADE,
  thread_id   TEXT    NOT NULL,
  root        TEXT    NOT NULL,
  create_time INTEGER NOT NULL,
  PRIMARY KEY (identity_id, thread_id)
);

-- hdtp_buckets: token buckets every replica charges (contact, identity,
-- guest, source address). tokens are millionths of a token as of
-- update_ms; full_ms is when the bucket is full again, after which the
-- row means nothing and is purged.
CREATE TABLE hdtp_buckets (
  scope     TEXT    NOT NULL PRIMARY KEY,
  tokens    INTEGER NOT NULL,
  update_ms INTEGER NOT NULL,
  full_ms   INTEGER NOT NULL
);
CREATE INDEX hdtp_buckets_full ON hdtp_buckets (full_ms);

-- audit_events gains the HDTP identity an event is about and the peer
-- (a contact's root fingerprint) it involves: contact and invite changes
-- and refusals to proven callers share the one audit trail.
ALTER TABLE audit_events ADD COLUMN identity_id TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_events ADD COLUMN peer TEXT NOT NULL DEFAULT '';
CREATE INDEX audit_events_identity ON audit_events (identity_id, id);

-- +goose Down
DROP INDEX audit_events_identity;
ALTER TABLE audit_events DROP COLUMN peer;
ALTER TABLE audit_events DROP COLUMN identity_id;
DROP TABLE hdtp_buckets;
DROP TABLE hdtp_threads;
DROP TABLE hdtp_calls;
DROP TABLE hdtp_replays;
DROP TABLE hdtp_invites;
DROP TABLE hdtp_former_pins;
DROP TABLE hdtp_contacts;
ALTER TABLE hdtp_identities DROP COLUMN content_tools;
ALTER TABLE hdtp_identities DROP COLUMN client_cert;
ALTER TABLE hdtp_identities DROP COLUMN accept_new_hosts;
