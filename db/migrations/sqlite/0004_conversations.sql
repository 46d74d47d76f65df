-- +goose Up
-- A2A conversations (PACT §4): a context is owned by (Brand, agent, sub) and
-- may be bound once to a Brand user; its turns make messageIds idempotent.
-- Times are integer unix seconds (UTC); close_time 0 means open.
CREATE TABLE contexts (
  id          TEXT   NOT NULL PRIMARY KEY,
  brand_id    TEXT   NOT NULL REFERENCES brands (id) ON DELETE CASCADE,
  agent_id    TEXT   NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  subject     TEXT   NOT NULL,
  brand_user  TEXT   NOT NULL DEFAULT '',
  close_time  BIGINT NOT NULL DEFAULT 0,
  create_time BIGINT NOT NULL,
  update_time BIGINT NOT NULL
);

CREATE INDEX contexts_owner ON contexts (brand_id, agent_id, subject, update_time);
CREATE INDEX contexts_agent ON contexts (agent_id);

-- One row per messageId used in a context, so User messageIds and agent
-- reply ids share one namespace: role 'user' rows are turns (state pending
-- until the reply is stored, then replied); role 'agent' rows only reserve
-- the id of an agent reply, so no later User message can reuse it.
CREATE TABLE turns (
  context_id       TEXT   NOT NULL REFERENCES contexts (id) ON DELETE CASCADE,
  message_id       TEXT   NOT NULL,
  role             TEXT   NOT NULL CHECK (role IN ('user', 'agent')),
  state            TEXT   NOT NULL CHECK (state IN ('pending', 'replied')),
  reply_message_id TEXT   NOT NULL DEFAULT '',
  reply_json       TEXT   NOT NULL DEFAULT '',
  create_time      BIGINT NOT NULL,
  update_time      BIGINT NOT NULL,
  PRIMARY KEY (context_id, message_id)
);

-- +goose Down
DROP TABLE turns;
DROP INDEX contexts_agent;
DROP INDEX contexts_owner;
DROP TABLE contexts;
