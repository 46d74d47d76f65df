package db

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChangeKind names what changed.
type ChangeKind string

// The kinds of announced changes.
const (
	// ChangeAgent carries the agent's issuer.
	ChangeAgent ChangeKind = "agents"
	// ChangeBrand carries the Brand id.
	ChangeBrand ChangeKind = "brands"
	// ChangeKey carries the signing key's kid.
	ChangeKey ChangeKind = "signing_keys"
)

// Change is one announced change of a cached row.
type Change struct {
	Kind ChangeKind
	Key  string
}

// changeChannel is the PostgreSQL channel migration 0006 notifies on.
const changeChannel = "pactd_changes"

// ListenChanges calls fn for every change any replica makes to agents,
// Brands and signing keys, until ctx ends. On PostgreSQL it holds one
// connection in LISTEN, reconnecting with backoff, and calls resync (when
// not nil) after every (re)connection, because changes made while it was
// disconnected were not seen. On SQLite it returns at once: one process
// serves the file and applies its own changes directly.
func ListenChanges(ctx context.Context, s Store, fn func(Change), resync func()) error {
	pg, ok := s.(*pgStore)
	if !ok {
		return nil
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := pg.listenOnce(ctx, fn, resync)
		if ctx.Err() != nil {
			return nil
		}
		_ = err // the caller's caches stay bounded by their lifetimes meanwhile
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
	return nil
}

func (s *pgStore) listenOnce(ctx context.Context, fn func(Change), resync func()) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{changeChannel}.Sanitize()); err != nil {
		return err
	}
	if resync != nil {
		resync()
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			// The connection may be mid-wait: never hand it back to the pool.
			_ = conn.Conn().Close(context.Background())
			return err
		}
		kind, key, ok := strings.Cut(n.Payload, ":")
		if ok {
			fn(Change{Kind: ChangeKind(kind), Key: key})
		}
	}
}
