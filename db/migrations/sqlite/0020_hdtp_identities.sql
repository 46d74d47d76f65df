-- +goose Up
-- HDTP / PACT 2 identities a host serves through pactd, and the ledger of
-- their leaves (docs/hdtp.md). Times are integer unix seconds (UTC).
--
-- hdtp_identities: one row per identity.
--   generation       'PACT2' or 'HDTP1': the wire strings it speaks
--   endpoint         the one https URL it answers at, in normal form; one
--                    identity per endpoint
--   display_name     the FN of its card and the commonName its signing
--                    requests propose
--   seal             the card's seal policy
--   key_alg          the algorithm of the leaf keys pactd makes for it
--   root_der         the person's root, from the first chain installed
--                    (NULL before); root_fingerprint its fingerprint, ''
--                    before. A later chain must lead to the same root.
--
-- hdtp_leaves: the leaf ledger, every key pactd made for an identity.
--   kid              the key's fingerprint; unique across identities, so
--                    a kid names one identity's key or none
--   state            pending (a signing request awaits its chain),
--                    current (the leaf the identity serves), superseded
--                    (a newer leaf was installed; its key is kept until
--                    not_after so envelopes sealed to it still open),
--                    former (key destroyed; the kid is kept for
--                    certificate_renewed)
--   sealed_key       the PKCS #8 private key sealed with AES-256-GCM under
--                    the key-encryption key (never plaintext; the KEK is
--                    never stored in the database), bound to the identity
--                    and the kid; NULL once destroyed
--   certificate      the leaf's DER; NULL while pending
--   request_state_hash  SHA-256 of the signing request's state, while
--                    pending; the chain is accepted only with the state
--   request_expire_time  when a pending request stops accepting its chain
-- At most one pending and one current leaf per identity (partial unique
-- indexes), so two concurrent installs cannot both win.
CREATE TABLE hdtp_identities (
  id               TEXT   NOT NULL PRIMARY KEY,
  generation       TEXT   NOT NULL CHECK (generation IN ('PACT2', 'HDTP1')),
  endpoint         TEXT   NOT NULL UNIQUE,
  display_name     TEXT   NOT NULL,
  seal             TEXT   NOT NULL CHECK (seal IN ('none', 'optional', 'required')),
  key_alg          TEXT   NOT NULL CHECK (key_alg IN ('ed25519', 'p256')),
  root_der         BLOB,
  root_fingerprint TEXT   NOT NULL DEFAULT '',
  create_time      INTEGER NOT NULL,
  update_time      INTEGER NOT NULL
);

CREATE TABLE hdtp_leaves (
  kid                 TEXT   NOT NULL PRIMARY KEY,
  identity_id         TEXT   NOT NULL REFERENCES hdtp_identities (id) ON DELETE CASCADE,
  key_alg             TEXT   NOT NULL CHECK (key_alg IN ('ed25519', 'p256')),
  state               TEXT   NOT NULL CHECK (state IN ('pending', 'current', 'superseded', 'former')),
  sealed_key          BLOB,
  certificate         BLOB,
  not_before          INTEGER NOT NULL DEFAULT 0,
  not_after           INTEGER NOT NULL DEFAULT 0,
  request_state_hash  BLOB,
  request_expire_time INTEGER NOT NULL DEFAULT 0,
  create_time         INTEGER NOT NULL,
  install_time        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX hdtp_leaves_identity ON hdtp_leaves (identity_id, create_time);
CREATE UNIQUE INDEX hdtp_leaves_one_current ON hdtp_leaves (identity_id) WHERE state = 'current';
CREATE UNIQUE INDEX hdtp_leaves_one_pending ON hdtp_leaves (identity_id) WHERE state = 'pending';

-- +goose Down
DROP TABLE hdtp_leaves;
DROP TABLE hdtp_identities;
