package db

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// ChangeKind names what changed; it is the table the change was made in.
type ChangeKind string

// The kinds of change the feed records, and what Key holds for each.
const (
	// ChangeAgent: an agent was registered, updated or deleted; Key is its
	// issuer.
	ChangeAgent ChangeKind = "agents"
	// ChangeBrand: a Brand was created or changed; Key is its id.
	ChangeBrand ChangeKind = "brands"
	// ChangeKey: a signing key was added, retired or deleted; Key is its kid.
	ChangeKey ChangeKind = "signing_keys"
	// ChangeCredential: a caller credential was revoked; Key is its id.
	ChangeCredential ChangeKind = "credentials"
	// ChangeGrant: a grant was revoked (by RevokeGrant, RevokeToken or a
	// refresh token's reuse); Key is its id.
	ChangeGrant ChangeKind = "grants"
)

// Change is one row of the change feed.
type Change struct {
	// Pos is the row's position: 1, 2, 3, ... in the order the changes
	// committed, without gaps, and visible in that order (migration 0010).
	Pos int64
	// Token is random: two rows at one position (after a failover lost the
	// first) have different tokens.
	Token int64
	// Kind and Key say what changed.
	Kind ChangeKind
	Key  string
	// Time is when the database wrote the row, by its own clock (ms).
	Time time.Time
}

// FeedStore reads and prunes the change feed. Its rows are written by the
// database itself, by triggers, in the transaction of each change (agents,
// Brands, signing keys, credential and grant revocations; migration 0010),
// so a change never commits without its row.
type FeedStore interface {
	// LatestChange returns the newest change; ErrNotFound when the feed
	// is empty.
	LatestChange(ctx context.Context) (Change, error)
	// ChangesFrom returns up to limit changes with positions from from on,
	// in position order.
	ChangesFrom(ctx context.Context, from int64, limit int) ([]Change, error)
	// PruneChanges deletes the changes written before before, except the
	// newest, and returns how many went.
	PruneChanges(ctx context.Context, before time.Time) (int64, error)
}

func changeFromRow(r liteq.ChangeFeed) Change {
	return Change{Pos: r.Pos, Token: r.Token, Kind: ChangeKind(r.Kind), Key: r.Key, Time: time.UnixMilli(r.CreateTimeMs).UTC()}
}

func changesFromRows[R any](rows []R, conv func(R) liteq.ChangeFeed) []Change {
	out := make([]Change, 0, len(rows))
	for _, r := range rows {
		out = append(out, changeFromRow(conv(r)))
	}
	return out
}

func (s *pgStore) LatestChange(ctx context.Context) (Change, error) {
	r, err := s.q.GetLatestChange(ctx)
	return changeFromRow(liteq.ChangeFeed(r)), pgErr(err)
}

func (s *pgStore) ChangesFrom(ctx context.Context, from int64, limit int) ([]Change, error) {
	rows, err := s.q.ListChangesFrom(ctx, pgq.ListChangesFromParams{FromPos: from, PageLimit: int64(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	return changesFromRows(rows, func(r pgq.ChangeFeed) liteq.ChangeFeed { return liteq.ChangeFeed(r) }), nil
}

func (s *pgStore) PruneChanges(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.q.DeleteChangesBefore(ctx, before.UnixMilli())
	return n, pgErr(err)
}

func (s *sqliteStore) LatestChange(ctx context.Context) (Change, error) {
	r, err := s.q.GetLatestChange(ctx)
	return changeFromRow(r), liteErr(err)
}

func (s *sqliteStore) ChangesFrom(ctx context.Context, from int64, limit int) ([]Change, error) {
	rows, err := s.q.ListChangesFrom(ctx, liteq.ListChangesFromParams{FromPos: from, PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	return changesFromRows(rows, func(r liteq.ChangeFeed) liteq.ChangeFeed { return r }), nil
}

func (s *sqliteStore) PruneChanges(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.q.DeleteChangesBefore(ctx, before.UnixMilli())
	return n, liteErr(err)
}

// changeChannel is the PostgreSQL channel migration 0010's triggers notify
// on, with the new position as payload.
const changeChannel = "pactd_changes"

// ListenForChanges holds one connection of its own (never a pooled one) to
// the PostgreSQL server at databaseURL in LISTEN on the change channel, and
// calls wake for every notification and after every (re)connection, until
// ctx ends; report is told when the connection is up (err nil) and when an
// attempt or the connection fails (err set). It reconnects with backoff. Notifications only wake a poller
// early: the feed is the record, so one that is lost costs a poll interval.
// databaseURL must reach PostgreSQL itself: a transaction pooler (PgBouncer
// in pool_mode=transaction) accepts LISTEN but never delivers.
func ListenForChanges(ctx context.Context, databaseURL string, wake func(), report func(up bool, err error)) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return err
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		up, err := listenOnce(ctx, cfg, wake, report)
		if ctx.Err() != nil {
			return nil
		}
		if up {
			backoff = 100 * time.Millisecond
		}
		report(false, err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
	return nil
}

// listenOnce connects, listens and waits for notifications until the
// connection fails; up says whether it got as far as listening.
func listenOnce(ctx context.Context, cfg *pgx.ConnConfig, wake func(), report func(bool, error)) (up bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		return false, err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{changeChannel}.Sanitize()); err != nil {
		return false, err
	}
	report(true, nil)
	wake() // changes made while no connection listened
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, err
		}
		wake()
	}
}
