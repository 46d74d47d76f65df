-- +goose Up
-- Self-service PA registration (PACT reference section 4.3).
-- agent_registrations names each self-registered agent by the slug it chose;
-- a slug is taken once across the Provider. The row goes with its agent.
CREATE TABLE agent_registrations (
  name        TEXT   NOT NULL PRIMARY KEY,
  agent_id    TEXT   NOT NULL UNIQUE REFERENCES agents (id) ON DELETE CASCADE,
  create_time BIGINT NOT NULL
);

-- registration_jtis remembers every accepted registration JWT's (iss, jti)
-- until the token's exp (plus skew), so no token is accepted twice. Only an
-- accepted registration writes a row; a refusal writes nothing.
CREATE TABLE registration_jtis (
  issuer      TEXT   NOT NULL,
  jti         TEXT   NOT NULL,
  expire_time BIGINT NOT NULL,
  PRIMARY KEY (issuer, jti)
);
CREATE INDEX registration_jtis_expire ON registration_jtis (expire_time);

-- +goose Down
DROP TABLE registration_jtis;
DROP TABLE agent_registrations;
