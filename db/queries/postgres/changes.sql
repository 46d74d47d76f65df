-- The change feed (migration 0010): rows are appended by triggers only.

-- name: GetLatestChange :one
-- The newest change; no row when the feed is empty.
SELECT * FROM change_feed ORDER BY pos DESC LIMIT 1;

-- name: ListChangesFrom :many
-- Changes at and after from_pos, in position order: a poller asks from the
-- position it applied last, so the first row tells it whether that row is
-- still the one it applied.
SELECT * FROM change_feed WHERE pos >= sqlc.arg(from_pos) ORDER BY pos LIMIT sqlc.arg(page_limit)::bigint;

-- name: DeleteChangesBefore :execrows
-- Prunes changes written before before_ms (unix ms), always keeping the
-- newest row: pollers check their position against it.
DELETE FROM change_feed
WHERE change_feed.create_time_ms < sqlc.arg(before_ms)
  AND change_feed.pos < (SELECT max(newest.pos) FROM change_feed newest);
