-- +goose Up
-- Each claim of a User turn gets an id (services/conversation mints it at
-- BeginTurn), so CompleteTurn and AbandonTurn act on one run of a messageId,
-- not on whichever run holds it now: a pending turn whose claim is stale
-- may be claimed again, and the claimant it was taken from must not finish
-- it. Rows from before have no id (''): their claimants, which predate it,
-- finish them without one.
ALTER TABLE turns ADD COLUMN claim TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE turns DROP COLUMN claim;
