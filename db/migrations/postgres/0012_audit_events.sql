-- +goose Up
-- The audit trail: one row per receipt pactd signs and per grant event
-- (created, redeemed, refreshed, step-up, revoked, reuse-revoked, consent
-- skipped). Rows carry no foreign keys on purpose: the trail outlives the
-- agents, Brands and grants it names. id only grows (an identity column never
-- reuses an id, even after pruning), so it orders the trail and pages it.
-- time is integer unix seconds (UTC); rows older than the retention
-- setting are pruned.
CREATE TABLE audit_events (
  id         BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind       TEXT    NOT NULL,
  time       BIGINT  NOT NULL,
  brand_id   TEXT    NOT NULL DEFAULT '',
  brand_user TEXT    NOT NULL DEFAULT '',
  agent_id   TEXT    NOT NULL DEFAULT '',
  -- The PA's issuer (the OAuth client_id, the receipt's pa claim).
  client_id  TEXT    NOT NULL DEFAULT '',
  grant_id   TEXT    NOT NULL DEFAULT '',
  -- Space-separated scope ids: granted, refreshed, used or missing.
  scopes     TEXT    NOT NULL DEFAULT '',
  -- JSON array of receipt actions ([{"tool":…,"args_hash":…}]), '' for none.
  actions    TEXT    NOT NULL DEFAULT '',
  -- Who caused the event: admin, frontend or pa.
  actor      TEXT    NOT NULL DEFAULT '',
  -- Kind-specific detail (a receipt's jti, a step-up's task id), '' for none.
  detail     TEXT    NOT NULL DEFAULT ''
);

CREATE INDEX audit_events_time ON audit_events (time);
CREATE INDEX audit_events_brand ON audit_events (brand_id, id);
CREATE INDEX audit_events_grant ON audit_events (grant_id, id);
CREATE INDEX audit_events_agent ON audit_events (agent_id, id);

-- +goose Down
DROP INDEX audit_events_agent;
DROP INDEX audit_events_grant;
DROP INDEX audit_events_brand;
DROP INDEX audit_events_time;
DROP TABLE audit_events;
