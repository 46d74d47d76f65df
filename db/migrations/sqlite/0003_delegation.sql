-- +goose Up
-- PACT Delegated (spec section 5): device authorizations (RFC 8628), the grants Users
-- approve, and the refresh tokens that renew them. Times are integer unix
-- seconds (UTC). Bearer secrets (device codes, user codes, refresh tokens)
-- are stored only as SHA-256 hashes, so a copy of the database cannot be
-- replayed as a credential.
CREATE TABLE device_authorizations (
  id               TEXT    NOT NULL PRIMARY KEY,
  brand_id         TEXT    NOT NULL REFERENCES brands (id) ON DELETE CASCADE,
  agent_id         TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  client_id        TEXT    NOT NULL,
  device_code_hash BLOB    NOT NULL UNIQUE,
  user_code_hash   BLOB    NOT NULL UNIQUE,
  -- Space-separated requested scope ids.
  scopes           TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'consumed')),
  brand_user       TEXT    NOT NULL DEFAULT '',
  grant_id         TEXT    NOT NULL DEFAULT '',
  interval_seconds BIGINT  NOT NULL,
  last_polled_at   BIGINT  NOT NULL DEFAULT 0,
  expires_at       BIGINT  NOT NULL,
  create_time      BIGINT  NOT NULL
);

CREATE INDEX device_authorizations_agent ON device_authorizations (agent_id);
CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at);

-- revoke_time 0 means live.
CREATE TABLE grants (
  id          TEXT   NOT NULL PRIMARY KEY,
  brand_id    TEXT   NOT NULL REFERENCES brands (id) ON DELETE CASCADE,
  agent_id    TEXT   NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  client_id   TEXT   NOT NULL,
  brand_user  TEXT   NOT NULL,
  -- Space-separated granted scope ids.
  scopes      TEXT   NOT NULL,
  create_time BIGINT NOT NULL,
  expire_time BIGINT NOT NULL,
  revoke_time BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX grants_brand_user ON grants (brand_id, brand_user, id);
CREATE INDEX grants_agent ON grants (agent_id);

-- used_at 0 means unused.
CREATE TABLE refresh_tokens (
  token_hash  BLOB   NOT NULL PRIMARY KEY,
  grant_id    TEXT   NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
  expires_at  BIGINT NOT NULL,
  used_at     BIGINT NOT NULL DEFAULT 0,
  create_time BIGINT NOT NULL
);

CREATE INDEX refresh_tokens_grant ON refresh_tokens (grant_id);

-- +goose Down
DROP INDEX refresh_tokens_grant;
DROP TABLE refresh_tokens;
DROP INDEX grants_agent;
DROP INDEX grants_brand_user;
DROP TABLE grants;
DROP INDEX device_authorizations_expiry;
DROP INDEX device_authorizations_agent;
DROP TABLE device_authorizations;
