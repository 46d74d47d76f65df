package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"pactd.dev/pactd/db"
)

// The lifetimes of a console session. The store records a use at most once
// a minute, so a session idle for IdleLifetime ends, at the latest, then,
// and at the earliest a minute sooner.
const (
	// IdleLifetime ends a session nobody used for this long.
	IdleLifetime = 15 * time.Minute
	// AbsoluteLifetime ends every session this long after sign-in.
	AbsoluteLifetime = 8 * time.Hour
)

// sessionIDLen is the length of a session id: 32 random bytes, base64url.
const sessionIDLen = 43

// errNoSession is every reason a request has no live session: no cookie,
// an unknown or malformed id, an expired session, or one whose admin
// credential is no longer live.
var errNoSession = errors.New("no live console session")

// SessionStore is what sessions keep and check in the store.
type SessionStore interface {
	CreateConsoleSession(ctx context.Context, s db.ConsoleSession) error
	GetConsoleSession(ctx context.Context, idHash []byte) (db.ConsoleSession, error)
	TouchConsoleSession(ctx context.Context, idHash []byte, now time.Time) error
	DeleteConsoleSession(ctx context.Context, idHash []byte) error
	PruneConsoleSessions(ctx context.Context, now, idleBefore time.Time) (int64, error)
	GetCredential(ctx context.Context, id string) (db.Credential, error)
}

// sessions opens, checks and ends console sessions. The browser holds a
// random id; the store holds its SHA-256, so every replica knows the
// session and a read of the table signs no one in.
type sessions struct {
	store SessionStore
	now   func() time.Time
}

// open starts a session for the admin credential and returns its id. It
// first deletes the sessions that have ended, which keeps the table to the
// live ones.
func (s sessions) open(ctx context.Context, credentialID string) (string, error) {
	now := s.now()
	if _, err := s.store.PruneConsoleSessions(ctx, now, now.Add(-IdleLifetime)); err != nil {
		return "", fmt.Errorf("prune console sessions: %w", err)
	}
	id := newRandomID()
	err := s.store.CreateConsoleSession(ctx, db.ConsoleSession{IDHash: hashID(id), CredentialID: credentialID,
		CreateTime: now, LastSeenTime: now, ExpireTime: now.Add(AbsoluteLifetime)})
	if err != nil {
		return "", fmt.Errorf("store console session: %w", err)
	}
	return id, nil
}

// check returns the live session with the id and records the use; a
// session found ended (by time or with its credential) is deleted.
func (s sessions) check(ctx context.Context, id string) (db.ConsoleSession, error) {
	if !wellFormedID(id) {
		return db.ConsoleSession{}, errNoSession
	}
	h := hashID(id)
	cs, err := s.store.GetConsoleSession(ctx, h)
	if errors.Is(err, db.ErrNotFound) {
		return db.ConsoleSession{}, errNoSession
	}
	if err != nil {
		return db.ConsoleSession{}, fmt.Errorf("load console session: %w", err)
	}
	now := s.now()
	live := now.Before(cs.ExpireTime) && now.Before(cs.LastSeenTime.Add(IdleLifetime))
	if live {
		cred, err := s.store.GetCredential(ctx, cs.CredentialID)
		switch {
		case errors.Is(err, db.ErrNotFound):
			live = false
		case err != nil:
			return db.ConsoleSession{}, fmt.Errorf("load the session's credential: %w", err)
		default:
			live = cred.LiveAt(now) && cred.Role == db.RoleAdmin
		}
	}
	if !live {
		if err := s.store.DeleteConsoleSession(ctx, h); err != nil && !errors.Is(err, db.ErrNotFound) {
			return db.ConsoleSession{}, fmt.Errorf("delete ended console session: %w", err)
		}
		return db.ConsoleSession{}, errNoSession
	}
	if err := s.store.TouchConsoleSession(ctx, h, now); err != nil {
		return db.ConsoleSession{}, fmt.Errorf("record console session use: %w", err)
	}
	return cs, nil
}

// end deletes the session with the id (signing out); an unknown one is
// not an error.
func (s sessions) end(ctx context.Context, id string) error {
	if !wellFormedID(id) {
		return nil
	}
	if err := s.store.DeleteConsoleSession(ctx, hashID(id)); err != nil && !errors.Is(err, db.ErrNotFound) {
		return fmt.Errorf("delete console session: %w", err)
	}
	return nil
}

// newRandomID returns 32 random bytes, base64url: a session id, or the
// sign-in form's anti-forgery token.
func newRandomID() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// csrfToken is the anti-forgery token of a session's forms: an HMAC of a
// fixed label under the session id, so it is checked without storing it
// and says nothing of the id.
func csrfToken(sessionID string) string {
	m := hmac.New(sha256.New, []byte(sessionID))
	m.Write([]byte("pactd console csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// tokenEqual compares two tokens in constant time (for equal lengths).
func tokenEqual(a, b string) bool {
	return len(a) == len(b) && hmac.Equal([]byte(a), []byte(b))
}

func hashID(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// wellFormedID reports whether id has a session id's shape (43 base64url
// characters), so nothing else reaches the store.
func wellFormedID(id string) bool {
	if len(id) != sessionIDLen {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
