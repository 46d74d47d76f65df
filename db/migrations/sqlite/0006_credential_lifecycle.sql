-- +goose Up
-- Caller credentials get a lifecycle: an optional expiry, a revocation time
-- and the time of last use (kept to the minute, so authentication does not
-- write on every call). All are integer unix seconds (UTC); 0 means never.
ALTER TABLE credentials ADD COLUMN expire_time BIGINT NOT NULL DEFAULT 0;
ALTER TABLE credentials ADD COLUMN revoke_time BIGINT NOT NULL DEFAULT 0;
ALTER TABLE credentials ADD COLUMN last_use_time BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE credentials DROP COLUMN last_use_time;
ALTER TABLE credentials DROP COLUMN revoke_time;
ALTER TABLE credentials DROP COLUMN expire_time;
