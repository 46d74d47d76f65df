-- +goose Up
-- The change feed: every change that other replicas must learn (an agent
-- registered, updated or deleted; a Brand created or changed; a signing key
-- added, retired or dropped; a credential or a grant revoked) appends one
-- row here, in the transaction that makes the change (the triggers below),
-- so no change can commit without its row and no row can exist without its
-- change. Replicas poll the feed from the last position they applied.
--
-- Positions must become visible in position order, or a reader that asks
-- for "pos > last" would skip a row whose transaction commits after a later
-- one's (a sequence value is taken when a row is inserted, not when it
-- commits). So positions come from the single row of change_feed_head,
-- incremented inside the change's transaction: the row lock it takes is
-- held until commit, so the next change's transaction waits for this one to
-- commit before it takes the next position. Position n+1 therefore commits
-- after position n, and any snapshot that sees n+1 sees n. The cost is that
-- changes commit one at a time; they are rare (revocations and admin
-- changes, not grants or refreshes).
--
--   pos             1, 2, 3, ... without gaps (see above)
--   token           random, so a replica can tell the row it applied from
--                   another one at the same position (after a failover
--                   that lost rows): it then drops all its cached state
--   kind, key       what changed: agents/issuer, brands/id,
--                   signing_keys/kid, credentials/id, grants/id
--   create_time_ms  the database's clock when the row was written, unix ms
--                   (UTC): for pruning and for the feed's delay metric
CREATE TABLE change_feed_head (
  id  INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  pos BIGINT  NOT NULL
);
INSERT INTO change_feed_head (id, pos) VALUES (1, 0);

CREATE TABLE change_feed (
  pos            BIGINT NOT NULL PRIMARY KEY,
  token          BIGINT NOT NULL,
  kind           TEXT   NOT NULL,
  key            TEXT   NOT NULL,
  create_time_ms BIGINT NOT NULL
);
CREATE INDEX change_feed_time ON change_feed (create_time_ms);

-- pactd_append_change appends one row at the next position and wakes the
-- replicas that LISTEN on pactd_changes (a wake-up only: the feed is the
-- record, so a lost notification costs at most one poll interval).
CREATE FUNCTION pactd_append_change(change_kind TEXT, change_key TEXT) RETURNS void AS $$
DECLARE
  p BIGINT;
BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1 RETURNING pos INTO p;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  VALUES (p, floor(random() * 9007199254740991)::bigint, change_kind, change_key,
          floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  PERFORM pg_notify('pactd_changes', p::text);
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION pactd_feed_change() RETURNS trigger AS $$
BEGIN
  IF TG_TABLE_NAME = 'agents' THEN
    IF TG_OP = 'UPDATE' AND OLD.issuer <> NEW.issuer THEN
      PERFORM pactd_append_change('agents', OLD.issuer);
    END IF;
    PERFORM pactd_append_change('agents', COALESCE(NEW.issuer, OLD.issuer));
  ELSIF TG_TABLE_NAME = 'brands' THEN
    PERFORM pactd_append_change('brands', COALESCE(NEW.id, OLD.id));
  ELSIF TG_TABLE_NAME = 'signing_keys' THEN
    PERFORM pactd_append_change('signing_keys', COALESCE(NEW.kid, OLD.kid));
  ELSE -- credentials, grants: only a revocation (see the triggers' WHEN)
    PERFORM pactd_append_change(TG_TABLE_NAME, NEW.id);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- The feed replaces the notify-only triggers of migration 0006.
DROP TRIGGER signing_keys_notify_change ON signing_keys;
DROP TRIGGER brands_notify_change ON brands;
DROP TRIGGER agents_notify_change ON agents;

CREATE TRIGGER agents_feed AFTER INSERT OR UPDATE OR DELETE ON agents
  FOR EACH ROW EXECUTE FUNCTION pactd_feed_change();
CREATE TRIGGER brands_feed AFTER INSERT OR UPDATE OR DELETE ON brands
  FOR EACH ROW EXECUTE FUNCTION pactd_feed_change();
CREATE TRIGGER signing_keys_feed AFTER INSERT OR UPDATE OR DELETE ON signing_keys
  FOR EACH ROW EXECUTE FUNCTION pactd_feed_change();
CREATE TRIGGER credentials_feed AFTER UPDATE OF revoke_time ON credentials
  FOR EACH ROW WHEN (OLD.revoke_time = 0 AND NEW.revoke_time <> 0) EXECUTE FUNCTION pactd_feed_change();
CREATE TRIGGER grants_feed AFTER UPDATE OF revoke_time ON grants
  FOR EACH ROW WHEN (OLD.revoke_time = 0 AND NEW.revoke_time <> 0) EXECUTE FUNCTION pactd_feed_change();

-- +goose Down
DROP TRIGGER grants_feed ON grants;
DROP TRIGGER credentials_feed ON credentials;
DROP TRIGGER signing_keys_feed ON signing_keys;
DROP TRIGGER brands_feed ON brands;
DROP TRIGGER agents_feed ON agents;
CREATE TRIGGER agents_notify_change AFTER INSERT OR UPDATE OR DELETE ON agents
  FOR EACH ROW EXECUTE FUNCTION pactd_notify_change();
CREATE TRIGGER brands_notify_change AFTER INSERT OR UPDATE OR DELETE ON brands
  FOR EACH ROW EXECUTE FUNCTION pactd_notify_change();
CREATE TRIGGER signing_keys_notify_change AFTER INSERT OR UPDATE OR DELETE ON signing_keys
  FOR EACH ROW EXECUTE FUNCTION pactd_notify_change();
DROP FUNCTION pactd_feed_change();
DROP FUNCTION pactd_append_change(TEXT, TEXT);
DROP INDEX change_feed_time;
DROP TABLE change_feed;
DROP TABLE change_feed_head;
