-- +goose Up
-- Per-Brand agent policy (see the PostgreSQL migration of the same number):
-- the policy on the brands row, the list in brand_agents, and each change
-- of the list fed as a change of its Brand.
ALTER TABLE brands ADD COLUMN agent_policy TEXT NOT NULL DEFAULT 'all' CHECK (agent_policy IN ('all', 'listed'));

CREATE TABLE brand_agents (
  brand_id    TEXT    NOT NULL REFERENCES brands (id) ON DELETE CASCADE,
  agent_id    TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  create_time INTEGER NOT NULL,
  PRIMARY KEY (brand_id, agent_id)
);
CREATE INDEX brand_agents_agent ON brand_agents (agent_id);

CREATE TRIGGER brand_agents_feed_insert AFTER INSERT ON brand_agents BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'brands', NEW.brand_id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;
CREATE TRIGGER brand_agents_feed_delete AFTER DELETE ON brand_agents BEGIN
  UPDATE change_feed_head SET pos = pos + 1 WHERE id = 1;
  INSERT INTO change_feed (pos, token, kind, key, create_time_ms)
  SELECT pos, random(), 'brands', OLD.brand_id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM change_feed_head WHERE id = 1;
END;

-- +goose Down
DROP TRIGGER brand_agents_feed_delete;
DROP TRIGGER brand_agents_feed_insert;
DROP INDEX brand_agents_agent;
DROP TABLE brand_agents;
ALTER TABLE brands DROP COLUMN agent_policy;
