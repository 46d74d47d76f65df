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
-- approval and never skips consent on its account. (The window form of
-- json_group_array keeps the entries' order: ORDER BY e.key.)
ALTER TABLE device_authorizations ADD COLUMN authorization_details_scopes TEXT NOT NULL DEFAULT '';
ALTER TABLE grants ADD COLUMN authorization_details_scopes TEXT NOT NULL DEFAULT '';

UPDATE device_authorizations SET authorization_details_scopes = (
  SELECT json_group_array(COALESCE((
    SELECT json_extract(t.value, '$.scope')
    FROM brands b, json_each(CASE WHEN json_valid(b.delegation_json) THEN b.delegation_json ELSE '{}' END,
                             '$.authorization_details_types') t
    WHERE b.id = device_authorizations.brand_id
      AND json_extract(t.value, '$.type') = json_extract(e.value, '$.type')
      AND instr(' ' || device_authorizations.scopes || ' ', ' ' || json_extract(t.value, '$.scope') || ' ') > 0
    LIMIT 1), '')) OVER (ORDER BY e.key ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
  FROM json_each(device_authorizations.authorization_details) e LIMIT 1)
WHERE authorization_details <> '' AND json_valid(authorization_details);

UPDATE grants SET authorization_details_scopes = (
  SELECT json_group_array(COALESCE((
    SELECT json_extract(t.value, '$.scope')
    FROM brands b, json_each(CASE WHEN json_valid(b.delegation_json) THEN b.delegation_json ELSE '{}' END,
                             '$.authorization_details_types') t
    WHERE b.id = grants.brand_id
      AND json_extract(t.value, '$.type') = json_extract(e.value, '$.type')
      AND instr(' ' || grants.scopes || ' ', ' ' || json_extract(t.value, '$.scope') || ' ') > 0
    LIMIT 1), '')) OVER (ORDER BY e.key ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
  FROM json_each(grants.authorization_details) e LIMIT 1)
WHERE authorization_details <> '' AND json_valid(authorization_details);

-- +goose Down
ALTER TABLE grants DROP COLUMN authorization_details_scopes;
ALTER TABLE device_authorizations DROP COLUMN authorization_details_scopes;
