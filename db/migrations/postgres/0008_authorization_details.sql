-- +goose Up
-- Resource-bound delegation (PACT section 5.7, RFC 9396): the
-- authorization_details a PA requested, as pactd's canonical JSON array,
-- kept with its device authorization, and the approved subset kept with
-- the grant (those whose scope the User declined are dropped). '' means a
-- scope-only request or grant. Written once, never updated.
ALTER TABLE device_authorizations ADD COLUMN authorization_details TEXT NOT NULL DEFAULT '';
ALTER TABLE grants ADD COLUMN authorization_details TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE grants DROP COLUMN authorization_details;
ALTER TABLE device_authorizations DROP COLUMN authorization_details;
