package db

import (
	"context"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// ConsoleSession is one signed-in session of the operator console. The
// store knows only the hash of the id the browser's cookie holds.
type ConsoleSession struct {
	// IDHash is the SHA-256 of the session id.
	IDHash []byte
	// CredentialID is the admin credential that signed in; the session ends
	// when it is revoked or expires.
	CredentialID string
	// CreateTime is when the session began; ExpireTime its absolute end.
	CreateTime, ExpireTime time.Time
	// LastSeenTime is its last recorded use (to the minute).
	LastSeenTime time.Time
}

// Replica is one pactd process's last heartbeat.
type Replica struct {
	// ID is the process's random id, new at every start.
	ID string
	// Host is the machine's host name and Version pactd's build.
	Host, Version string
	// StartTime is when the process started; SeenTime its last heartbeat.
	StartTime, SeenTime time.Time
	// FeedPosition is the change-feed position it had applied then.
	FeedPosition int64
}

// Counts are the totals the console's overview shows.
type Counts struct {
	Agents, DisabledAgents int64
	// PendingAgents are self-registered agents that registered disabled
	// (PACT_SELF_REGISTRATION=pending) and were never changed since.
	PendingAgents   int64
	Brands          int64
	LiveGrants      int64
	LiveCredentials int64
}

// ConsoleStore holds what the operator console keeps and reads beyond the
// services' stores.
type ConsoleStore interface {
	// CreateConsoleSession stores a session; ErrConflict when its hash is
	// stored already.
	CreateConsoleSession(ctx context.Context, s ConsoleSession) error
	// GetConsoleSession returns the session with the id hash.
	GetConsoleSession(ctx context.Context, idHash []byte) (ConsoleSession, error)
	// TouchConsoleSession records a use at now, unless one was recorded
	// less than a minute before.
	TouchConsoleSession(ctx context.Context, idHash []byte, now time.Time) error
	// DeleteConsoleSession ends a session; ErrNotFound when there is none.
	DeleteConsoleSession(ctx context.Context, idHash []byte) error
	// PruneConsoleSessions deletes the sessions past their ExpireTime at
	// now or last seen before idleBefore, and returns how many went.
	PruneConsoleSessions(ctx context.Context, now, idleBefore time.Time) (int64, error)

	// BeatReplica records a replica's heartbeat (inserting it the first
	// time; later beats write SeenTime and FeedPosition only).
	BeatReplica(ctx context.Context, r Replica) error
	// ListReplicas returns up to limit replicas seen at or after since, by
	// id.
	ListReplicas(ctx context.Context, since time.Time, limit int) ([]Replica, error)
	// PruneReplicas deletes the replicas last seen before before.
	PruneReplicas(ctx context.Context, before time.Time) (int64, error)

	// ConsoleCounts counts agents, Brands, grants live at now and
	// credentials live at now.
	ConsoleCounts(ctx context.Context, now time.Time) (Counts, error)
	// ListPendingAgentIDs returns up to limit ids of pending agents (see
	// Counts) after afterID, by id.
	ListPendingAgentIDs(ctx context.Context, afterID string, limit int) ([]string, error)
}

func consoleSessionFromRow(r liteq.ConsoleSession) ConsoleSession {
	return ConsoleSession{IDHash: r.IDHash, CredentialID: r.CredentialID, CreateTime: fromUnix(r.CreateTime),
		ExpireTime: fromUnix(r.ExpireTime), LastSeenTime: fromUnix(r.LastSeenTime)}
}

func consoleSessionParams(s ConsoleSession) liteq.InsertConsoleSessionParams {
	return liteq.InsertConsoleSessionParams{IDHash: s.IDHash, CredentialID: s.CredentialID, CreateTime: unix(s.CreateTime),
		LastSeenTime: unix(s.LastSeenTime), ExpireTime: unix(s.ExpireTime)}
}

func replicaFromRow(r liteq.Replica) Replica {
	return Replica{ID: r.ID, Host: r.Host, Version: r.Version, StartTime: fromUnix(r.StartTime), SeenTime: fromUnix(r.SeenTime),
		FeedPosition: r.FeedPosition}
}

func replicaParams(r Replica) liteq.UpsertReplicaParams {
	return liteq.UpsertReplicaParams{ID: r.ID, Host: r.Host, Version: r.Version, StartTime: unix(r.StartTime), SeenTime: unix(r.SeenTime),
		FeedPosition: r.FeedPosition}
}

// touchEvery is how often TouchConsoleSession writes.
const touchEvery = time.Minute

func (s *sqliteStore) CreateConsoleSession(ctx context.Context, cs ConsoleSession) error {
	return liteErr(s.q.InsertConsoleSession(ctx, consoleSessionParams(cs)))
}

func (s *sqliteStore) GetConsoleSession(ctx context.Context, idHash []byte) (ConsoleSession, error) {
	r, err := s.q.GetConsoleSession(ctx, idHash)
	return consoleSessionFromRow(r), liteErr(err)
}

func (s *sqliteStore) TouchConsoleSession(ctx context.Context, idHash []byte, now time.Time) error {
	return liteErr(s.q.TouchConsoleSession(ctx, liteq.TouchConsoleSessionParams{Now: unix(now), IDHash: idHash, OlderThan: unix(now.Add(-touchEvery))}))
}

func (s *sqliteStore) DeleteConsoleSession(ctx context.Context, idHash []byte) error {
	n, err := s.q.DeleteConsoleSession(ctx, idHash)
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return liteErr(err)
}

func (s *sqliteStore) PruneConsoleSessions(ctx context.Context, now, idleBefore time.Time) (int64, error) {
	n, err := s.q.PruneConsoleSessions(ctx, liteq.PruneConsoleSessionsParams{Now: unix(now), IdleBefore: unix(idleBefore)})
	return n, liteErr(err)
}

func (s *sqliteStore) BeatReplica(ctx context.Context, r Replica) error {
	return liteErr(s.q.UpsertReplica(ctx, replicaParams(r)))
}

func (s *sqliteStore) ListReplicas(ctx context.Context, since time.Time, limit int) ([]Replica, error) {
	rows, err := s.q.ListReplicas(ctx, liteq.ListReplicasParams{Since: unix(since), PageLimit: int64(limit)})
	if err != nil {
		return nil, liteErr(err)
	}
	out := make([]Replica, 0, len(rows))
	for _, r := range rows {
		out = append(out, replicaFromRow(r))
	}
	return out, nil
}

func (s *sqliteStore) PruneReplicas(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.q.PruneReplicas(ctx, unix(before))
	return n, liteErr(err)
}

func (s *sqliteStore) ConsoleCounts(ctx context.Context, now time.Time) (Counts, error) {
	r, err := s.q.ConsoleCounts(ctx, unix(now))
	return Counts(r), liteErr(err)
}

func (s *sqliteStore) ListPendingAgentIDs(ctx context.Context, afterID string, limit int) ([]string, error) {
	ids, err := s.q.ListPendingAgentIDs(ctx, liteq.ListPendingAgentIDsParams{AfterID: afterID, PageLimit: int64(limit)})
	return ids, liteErr(err)
}

func (s *pgStore) CreateConsoleSession(ctx context.Context, cs ConsoleSession) error {
	return pgErr(s.q.InsertConsoleSession(ctx, pgq.InsertConsoleSessionParams(consoleSessionParams(cs))))
}

func (s *pgStore) GetConsoleSession(ctx context.Context, idHash []byte) (ConsoleSession, error) {
	r, err := s.q.GetConsoleSession(ctx, idHash)
	return consoleSessionFromRow(liteq.ConsoleSession(r)), pgErr(err)
}

func (s *pgStore) TouchConsoleSession(ctx context.Context, idHash []byte, now time.Time) error {
	return pgErr(s.q.TouchConsoleSession(ctx, pgq.TouchConsoleSessionParams{Now: unix(now), IDHash: idHash, OlderThan: unix(now.Add(-touchEvery))}))
}

func (s *pgStore) DeleteConsoleSession(ctx context.Context, idHash []byte) error {
	n, err := s.q.DeleteConsoleSession(ctx, idHash)
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return pgErr(err)
}

func (s *pgStore) PruneConsoleSessions(ctx context.Context, now, idleBefore time.Time) (int64, error) {
	n, err := s.q.PruneConsoleSessions(ctx, pgq.PruneConsoleSessionsParams{Now: unix(now), IdleBefore: unix(idleBefore)})
	return n, pgErr(err)
}

func (s *pgStore) BeatReplica(ctx context.Context, r Replica) error {
	return pgErr(s.q.UpsertReplica(ctx, pgq.UpsertReplicaParams(replicaParams(r))))
}

func (s *pgStore) ListReplicas(ctx context.Context, since time.Time, limit int) ([]Replica, error) {
	rows, err := s.q.ListReplicas(ctx, pgq.ListReplicasParams{Since: unix(since), PageLimit: int64(limit)})
	if err != nil {
		return nil, pgErr(err)
	}
	out := make([]Replica, 0, len(rows))
	for _, r := range rows {
		out = append(out, replicaFromRow(liteq.Replica(r)))
	}
	return out, nil
}

func (s *pgStore) PruneReplicas(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.q.PruneReplicas(ctx, unix(before))
	return n, pgErr(err)
}

func (s *pgStore) ConsoleCounts(ctx context.Context, now time.Time) (Counts, error) {
	r, err := s.q.ConsoleCounts(ctx, unix(now))
	return Counts(r), pgErr(err)
}

func (s *pgStore) ListPendingAgentIDs(ctx context.Context, afterID string, limit int) ([]string, error) {
	ids, err := s.q.ListPendingAgentIDs(ctx, pgq.ListPendingAgentIDsParams{AfterID: afterID, PageLimit: int64(limit)})
	return ids, pgErr(err)
}
