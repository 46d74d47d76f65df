-- +goose Up
-- A rotated signing secret may stay valid for an overlap window
-- (WebhookService.RotateWebhookSecret's previous_valid_for): until
-- previous_until_ms (unix milliseconds), deliveries carry a signature under
-- it after the one under the current secret, so a receiver not yet updated
-- still verifies them. previous_sealed_secret is the former sealed_secret,
-- moved as it was (sealed with the key-encryption key, the destination id
-- bound in); empty with previous_until_ms 0 when there is none. One previous
-- secret is kept: rotating again moves the current one over it.
ALTER TABLE webhook_destinations ADD COLUMN previous_sealed_secret BLOB    NOT NULL DEFAULT x'';
ALTER TABLE webhook_destinations ADD COLUMN previous_until_ms      BIGINT  NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE webhook_destinations DROP COLUMN previous_until_ms;
ALTER TABLE webhook_destinations DROP COLUMN previous_sealed_secret;
