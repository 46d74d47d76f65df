-- +goose Up
-- The Provider's signing keys (PACT §5.4, §5.6). Times are integer unix
-- seconds (UTC); 0 means "not set" for retire_time and expire_time.
--   seq                orders the keys; UNIQUE, so two replicas that create
--                      or rotate at once cannot both win (one gets a conflict)
--   public_jwk         the public JWK JSON as published in the JWKS
--   sealed_private_key the private scalar sealed with AES-256-GCM under the
--                      key-encryption key (never plaintext; the KEK is
--                      never stored in the database)
--   activate_time      when the key may start signing
--   retire_time        when a newer key takes over signing (0: not retired)
--   expire_time        when the key leaves the JWKS (0: not retired)
CREATE TABLE signing_keys (
  kid                TEXT   NOT NULL PRIMARY KEY,
  seq                BIGINT NOT NULL UNIQUE,
  alg                TEXT   NOT NULL,
  public_jwk         TEXT   NOT NULL,
  sealed_private_key BYTEA NOT NULL,
  create_time        BIGINT NOT NULL,
  activate_time      BIGINT NOT NULL,
  retire_time        BIGINT NOT NULL DEFAULT 0,
  expire_time        BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE signing_keys;
