-- +goose Up
-- The operator console (server/console).
-- console_sessions holds the signed-in sessions, so that every replica behind
-- a load balancer knows them. The cookie carries a random id; only its
-- SHA-256 hash is stored, so a read of this table signs no one in. A session
-- belongs to the admin credential that opened it and ends with it.
CREATE TABLE console_sessions (
  id_hash        BLOB   NOT NULL PRIMARY KEY,
  credential_id  TEXT   NOT NULL,
  create_time    BIGINT NOT NULL,
  last_seen_time BIGINT NOT NULL,
  expire_time    BIGINT NOT NULL
);
CREATE INDEX console_sessions_expire ON console_sessions (expire_time);

-- replicas is each pactd process's heartbeat: the change-feed position it
-- has applied and when it last said so. The console's overview lists the
-- replicas seen lately and how far each is behind the feed's head.
CREATE TABLE replicas (
  id            TEXT   NOT NULL PRIMARY KEY,
  host          TEXT   NOT NULL,
  version       TEXT   NOT NULL,
  start_time    BIGINT NOT NULL,
  seen_time     BIGINT NOT NULL,
  feed_position BIGINT NOT NULL
);
CREATE INDEX replicas_seen ON replicas (seen_time);

-- +goose Down
DROP TABLE replicas;
DROP TABLE console_sessions;
