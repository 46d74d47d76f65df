-- +goose Up
-- Per-Brand agent policy (BrandService.SetBrandAgentPolicy): 'all' admits
-- every enabled PA (the default, and every existing Brand's), 'listed'
-- only those in brand_agents. Deleting an agent takes it off every list.
-- A change of the list is a change of its Brand for the feed: replicas
-- drop the Brand from their caches (key: the Brand id) as for any other
-- Brand change, within the revocation bound. The policy column is part of
-- the brands row, whose trigger (0010) already feeds its changes.
ALTER TABLE brands ADD COLUMN agent_policy TEXT NOT NULL DEFAULT 'all' CHECK (agent_policy IN ('all', 'listed'));

CREATE TABLE brand_agents (
  brand_id    TEXT   NOT NULL REFERENCES brands (id) ON DELETE CASCADE,
  agent_id    TEXT   NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  create_time BIGINT NOT NULL,
  PRIMARY KEY (brand_id, agent_id)
);
CREATE INDEX brand_agents_agent ON brand_agents (agent_id);

CREATE FUNCTION pactd_feed_brand_agent() RETURNS trigger AS $$
BEGIN
  PERFORM pactd_append_change('brands', COALESCE(NEW.brand_id, OLD.brand_id));
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER brand_agents_feed AFTER INSERT OR DELETE ON brand_agents
  FOR EACH ROW EXECUTE FUNCTION pactd_feed_brand_agent();

-- +goose Down
DROP TRIGGER brand_agents_feed ON brand_agents;
DROP FUNCTION pactd_feed_brand_agent();
DROP TABLE brand_agents;
ALTER TABLE brands DROP COLUMN agent_policy;
