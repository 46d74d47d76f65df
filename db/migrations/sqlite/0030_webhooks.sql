-- +goose Up
-- Audit events pushed out: the destinations an operator configures, and the
-- outbox of deliveries, one row per (destination, audit event).
--
-- A trigger on audit_events inserts the delivery rows in the transaction
-- that inserts the event, for every enabled destination whose filters match
-- (kinds and brand_ids: space-separated lists, '' for all). So an event
-- that is committed always has its deliveries, whichever code path wrote
-- it, and a rolled-back one has none. A destination receives the events
-- recorded after it was created (or enabled), not older ones.
CREATE TABLE webhook_destinations (
  id            TEXT    NOT NULL PRIMARY KEY,
  url           TEXT    NOT NULL,
  description   TEXT    NOT NULL DEFAULT '',
  kinds         TEXT    NOT NULL DEFAULT '',
  brand_ids     TEXT    NOT NULL DEFAULT '',
  enabled       BOOLEAN NOT NULL DEFAULT TRUE,
  -- The signing secret, sealed with the key-encryption key (AES-256-GCM,
  -- the destination id bound in as additional data).
  sealed_secret BLOB    NOT NULL,
  create_time   BIGINT  NOT NULL,
  update_time   BIGINT  NOT NULL
);

-- state: pending (to be sent, at next_attempt_ms or later), delivered or
-- dead (the attempt or age bound was reached; an operator may retry it).
-- A claim sets lease_owner and lease_until_ms; the row is claimed again
-- only after the lease ended, so a crashed process's claim expires.
-- since_ms starts the age bound: the event's time, or when an operator
-- retried the row. Times are unix milliseconds.
CREATE TABLE webhook_deliveries (
  id              INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  destination_id  TEXT    NOT NULL REFERENCES webhook_destinations (id) ON DELETE CASCADE,
  event_id        BIGINT  NOT NULL,
  state           TEXT    NOT NULL DEFAULT 'pending',
  attempts        INTEGER NOT NULL DEFAULT 0,
  since_ms        BIGINT  NOT NULL,
  next_attempt_ms BIGINT  NOT NULL,
  lease_owner     TEXT    NOT NULL DEFAULT '',
  lease_until_ms  BIGINT  NOT NULL DEFAULT 0,
  last_attempt_ms BIGINT  NOT NULL DEFAULT 0,
  -- The HTTP status of the last attempt, 0 when none came back.
  last_status     INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT    NOT NULL DEFAULT '',
  -- When the row became delivered or dead.
  done_ms         BIGINT  NOT NULL DEFAULT 0,
  UNIQUE (destination_id, event_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_ms, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_destination ON webhook_deliveries (destination_id, state, id);
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (done_ms) WHERE state <> 'pending';
CREATE INDEX webhook_deliveries_state ON webhook_deliveries (state, since_ms);

CREATE TRIGGER audit_events_enqueue_webhooks AFTER INSERT ON audit_events BEGIN
  INSERT INTO webhook_deliveries (destination_id, event_id, since_ms, next_attempt_ms)
  SELECT d.id, NEW.id, NEW.time * 1000, NEW.time * 1000
  FROM webhook_destinations d
  WHERE d.enabled
    AND (d.kinds = '' OR instr(' ' || d.kinds || ' ', ' ' || NEW.kind || ' ') > 0)
    AND (d.brand_ids = '' OR (NEW.brand_id <> '' AND instr(' ' || d.brand_ids || ' ', ' ' || NEW.brand_id || ' ') > 0));
END;

-- +goose Down
DROP TRIGGER audit_events_enqueue_webhooks;
DROP INDEX webhook_deliveries_state;
DROP INDEX webhook_deliveries_done;
DROP INDEX webhook_deliveries_destination;
DROP INDEX webhook_deliveries_due;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_destinations;
