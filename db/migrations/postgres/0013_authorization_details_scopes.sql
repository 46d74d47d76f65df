-- +goose Up
-- Each accepted authorization_details entry (PACT section 5.7, RFC 9396)
-- remembers the scope it was accepted under: a JSON array of scope ids,
-- one per entry of authorization_details, in the same order ('' when the
-- row has no entries). A device authorization records the scope each
-- requested entry was validated under; a grant, the scope each kept entry
-- was approved under. Written once, never updated: a Brand that later
-- moves a type to another scope (or removes it) changes no stored entry.
--
-- Rows written before this migration are backfilled from the Brand's
-- mapping at migration time, the only record there is. Where that mapping
-- cannot be the one the entry was accepted under (the Brand no longer
-- declares the type, or its scope is not one the row holds), the entry's
-- scope is recorded as '' (unknown): pactd then keeps the entry on
-- approval and never skips consent on its account.
ALTER TABLE device_authorizations ADD COLUMN authorization_details_scopes TEXT NOT NULL DEFAULT '';
ALTER TABLE grants ADD COLUMN authorization_details_scopes TEXT NOT NULL DEFAULT '';

UPDATE device_authorizations d SET authorization_details_scopes = (
  SELECT json_agg(COALESCE((
    SELECT t ->> 'scope'
    FROM brands b, jsonb_array_elements(CASE WHEN jsonb_typeof(b.delegation_json::jsonb -> 'authorization_details_types') = 'array'
                                             THEN b.delegation_json::jsonb -> 'authorization_details_types'
                                             ELSE '[]'::jsonb END) t
    WHERE b.id = d.brand_id AND t ->> 'type' = e.value ->> 'type'
      AND (t ->> 'scope') = ANY (string_to_array(d.scopes, ' '))
    LIMIT 1), '') ORDER BY e.n)::text
  FROM jsonb_array_elements(d.authorization_details::jsonb) WITH ORDINALITY AS e(value, n))
WHERE d.authorization_details <> '';

UPDATE grants g SET authorization_details_scopes = (
  SELECT json_agg(COALESCE((
    SELECT t ->> 'scope'
    FROM brands b, jsonb_array_elements(CASE WHEN jsonb_typeof(b.delegation_json::jsonb -> 'authorization_details_types') = 'array'
                                             THEN b.delegation_json::jsonb -> 'authorization_details_types'
                                             ELSE '[]'::jsonb END) t
    WHERE b.id = g.brand_id AND t ->> 'type' = e.value ->> 'type'
      AND (t ->> 'scope') = ANY (string_to_array(g.scopes, ' '))
    LIMIT 1), '') ORDER BY e.n)::text
  FROM jsonb_array_elements(g.authorization_details::jsonb) WITH ORDINALITY AS e(value, n))
WHERE g.authorization_details <> '';

-- +goose Down
ALTER TABLE grants DROP COLUMN authorization_details_scopes;
ALTER TABLE device_authorizations DROP COLUMN authorization_details_scopes;
