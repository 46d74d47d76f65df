-- +goose Up
-- The change feed (see the PostgreSQL migration of the same number for the
-- design): one row per change other replicas must learn, appended by the
-- triggers below in the change's own transaction, at the position that
-- change_feed_head hands out. SQLite serves one process and commits one
-- writer at a time, so positions are visible in order here by construction;
-- the feed exists so that both engines run the same code path and the same
-- contract tests. create_time_ms is unix milliseconds (UTC).
CREATE TABLE change_feed_head (
  id  INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  pos INTEGER NOT NULL
);
INSERT INTO change_feed_head (id, pos) VALUES (1, 0);

CREATE TABLE change_feed (
  pos            INTEGER NOT NULL PRIMARY KEY,
  token          INTEGER NOT NULL,
  kind           TEXT    NOT NULL,
  key            TEXT    NOT NULL,
  create_time_ms INTEGER NOT NULL
);
CREATE INDEX change_feed_time ON change_feed (create_time_ms);

-- Each trigger takes the next position, then appends its row at it.
CREATE TRIGGER agents_feed_insert AFTER INSERT ON agents BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'agents', NEW.issuer, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER agents_feed_update AFTER UPDATE ON agents BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1 AND OLD.issuer <> NEW.issuer;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'agents', OLD.issuer, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head
  WHERE id = 1 AND OLD.issuer <> NEW.issuer;
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'agents', NEW.issuer, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER agents_feed_delete AFTER DELETE ON agents BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'agents', OLD.issuer, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER brands_feed_insert AFTER INSERT ON brands BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'brands', NEW.id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER brands_feed_update AFTER UPDATE ON brands BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'brands', NEW.id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER brands_feed_delete AFTER DELETE ON brands BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'brands', OLD.id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER signing_keys_feed_insert AFTER INSERT ON signing_keys BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'signing_keys', NEW.kid, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER signing_keys_feed_update AFTER UPDATE ON signing_keys BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'signing_keys', NEW.kid, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER signing_keys_feed_delete AFTER DELETE ON signing_keys BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'signing_keys', OLD.kid, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER credentials_feed_revoke AFTER UPDATE OF revoke_time ON credentials
WHEN OLD.revoke_time = 0 AND NEW.revoke_time <> 0 BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'credentials', NEW.id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER grants_feed_revoke AFTER UPDATE OF revoke_time ON grants
WHEN OLD.revoke_time = 0 AND NEW.revoke_time <> 0 BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'grants', NEW.id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;

-- +goose Down
DROP TRIGGER grants_feed_revoke;
DROP TRIGGER credentials_feed_revoke;
DROP TRIGGER signing_keys_feed_delete;
DROP TRIGGER signing_keys_feed_update;
DROP TRIGGER signing_keys_feed_insert;
DROP TRIGGER brands_feed_delete;
DROP TRIGGER brands_feed_update;
DROP TRIGGER brands_feed_insert;
DROP TRIGGER agents_feed_delete;
DROP TRIGGER agents_feed_update;
DROP TRIGGER agents_feed_insert;
DROP INDEX change_feed_time;
DROP TABLE change_feed;
DROP TABLE change_feed_head;
