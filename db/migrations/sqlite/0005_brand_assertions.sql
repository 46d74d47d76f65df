-- +goose Up
-- Single use of Brand login assertions (PACT section 5, Brand login to consent):
-- the jti of every accepted assertion, per Brand, kept until the assertion
-- could no longer be accepted anyway (expire_time, integer unix seconds,
-- UTC) and pruned after that. A row is written in the same transaction as
-- the consent decision the assertion makes, so a replayed jti decides
-- nothing.
CREATE TABLE used_brand_assertions (
  brand_id    TEXT   NOT NULL REFERENCES brands (id) ON DELETE CASCADE,
  jti         TEXT   NOT NULL,
  expire_time BIGINT NOT NULL,
  PRIMARY KEY (brand_id, jti)
);

CREATE INDEX used_brand_assertions_expiry ON used_brand_assertions (expire_time);

-- +goose Down
DROP INDEX used_brand_assertions_expiry;
DROP TABLE used_brand_assertions;
