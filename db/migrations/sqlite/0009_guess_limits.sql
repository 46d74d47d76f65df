-- +goose Up
-- Failed user-code lookups, counted per scope (a Brand, or a Brand and the
-- client a frontend saw) and fixed window (window_start, integer unix
-- seconds, UTC), in the store so that every replica counts against the same
-- limit. Old windows are pruned with the other expired delegation state.
CREATE TABLE user_code_failures (
  scope        TEXT   NOT NULL,
  window_start BIGINT NOT NULL,
  failures     BIGINT NOT NULL,
  PRIMARY KEY (scope, window_start)
);

CREATE INDEX user_code_failures_window ON user_code_failures (window_start);

-- Pending device authorizations are counted per agent (and Brand) to bound
-- what one PA may hold open.
CREATE INDEX device_authorizations_agent_pending ON device_authorizations (agent_id, brand_id, status, expires_at);

-- +goose Down
DROP INDEX device_authorizations_agent_pending;
DROP INDEX user_code_failures_window;
DROP TABLE user_code_failures;
