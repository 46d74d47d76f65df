-- +goose Up
-- Times are integer unix seconds (UTC) in both engines.
CREATE TABLE agents (
  id           TEXT    NOT NULL PRIMARY KEY,
  issuer       TEXT    NOT NULL UNIQUE,
  jwks_uri     TEXT    NOT NULL,
  display_name TEXT    NOT NULL,
  audience     TEXT    NOT NULL DEFAULT '',
  enabled      BOOLEAN NOT NULL DEFAULT TRUE,
  create_time  BIGINT  NOT NULL,
  update_time  BIGINT  NOT NULL
);

CREATE TABLE brands (
  id              TEXT   NOT NULL PRIMARY KEY,
  display_name    TEXT   NOT NULL,
  description     TEXT   NOT NULL,
  skills_json     TEXT   NOT NULL,
  delegation_json TEXT   NOT NULL,
  create_time     BIGINT NOT NULL,
  update_time     BIGINT NOT NULL
);

CREATE TABLE credentials (
  id          TEXT   NOT NULL PRIMARY KEY,
  role        TEXT   NOT NULL,
  token_hash  BYTEA  NOT NULL UNIQUE,
  label       TEXT   NOT NULL,
  create_time BIGINT NOT NULL
);

-- +goose Down
DROP TABLE credentials;
DROP TABLE brands;
DROP TABLE agents;
