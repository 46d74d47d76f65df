// Package auth authenticates pactd's callers: bearer credentials stored as
// SHA-256 hashes, each with a role (admin or frontend), and the interceptor
// that admits a call only when the caller's role may use its procedure.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sync/singleflight"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/rpcerr"
)

// MaxTokenLength bounds a caller credential; longer values are refused
// before hashing.
const MaxTokenLength = 512

// Store is the storage the authenticator needs.
type Store interface {
	CreateCredential(ctx context.Context, c db.Credential) (bool, error)
	GetCredentialByHash(ctx context.Context, hash []byte) (db.Credential, error)
	CountLiveCredentials(ctx context.Context, role db.Role, now time.Time) (int64, error)
	RevokeCredentialsByLabel(ctx context.Context, label string, keepHash []byte, now time.Time) ([]string, error)
	TouchCredential(ctx context.Context, id string, now time.Time) error
}

// Timing of the credential cache.
const (
	// RevocationBound is how long a replica may go on admitting a revoked
	// or expired credential: a credential's state is read from the store
	// again once it is this old, so a revocation on any replica takes
	// effect everywhere within it.
	RevocationBound = time.Second
	// DefaultOutageGrace is how long a credential last confirmed live is
	// still admitted while the store cannot be read (PACT_OUTAGE_GRACE), so
	// VerifyAgentRequest keeps answering through a database outage; a
	// credential pactd has not seen live within it is refused with
	// Unavailable.
	DefaultOutageGrace = 5 * time.Minute
)

// Labels of the credentials pactd makes itself; CredentialService refuses
// names with these prefixes.
const (
	// BootstrapLabelPrefix + role labels the credential of a configured
	// bootstrap token (PACT_ADMIN_TOKEN, PACT_FRONTEND_TOKEN).
	BootstrapLabelPrefix = "bootstrap "
	// GeneratedAdminLabel labels the admin credential pactd generates and
	// prints when it has no live admin credential and none is configured.
	GeneratedAdminLabel = "generated admin"
)

// MaxLabel bounds a credential's name, in characters.
const MaxLabel = 200

// CheckLabel says what is wrong with a name for a new credential ("" when
// nothing): 1 to MaxLabel printable characters without leading or trailing
// space, and not one of pactd's own prefixes.
func CheckLabel(name string) string {
	switch {
	case name == "" || utf8.RuneCountInString(name) > MaxLabel || strings.TrimSpace(name) != name:
		return fmt.Sprintf("must be 1 to %d characters without leading or trailing space", MaxLabel)
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return "must be printable characters"
	case strings.HasPrefix(name, BootstrapLabelPrefix) || strings.HasPrefix(name, GeneratedAdminLabel[:len("generated ")]):
		return fmt.Sprintf("names starting with %q or %q are pactd's own", BootstrapLabelPrefix, GeneratedAdminLabel[:len("generated ")])
	}
	return ""
}

// Hash is the stored form of a credential.
func Hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// NewToken returns a fresh random credential with a readable prefix.
func NewToken(role db.Role) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "pact_" + string(role)[:3] + "_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// Bootstrap stores the configured credentials' hashes. The variables are a
// bootstrap only: when one holds a new value, the credential of its
// previous value is revoked (an unset variable revokes nothing). A
// configured value whose credential was revoked stays refused (pactd says
// so on out and starts anyway): choose a new one. When no admin token is configured and no live admin credential is
// stored, it generates one, stores its hash and writes it to out once: it
// cannot be shown again (this is also how an operator who revoked every
// admin credential gets back in).
func Bootstrap(ctx context.Context, s Store, adminToken, frontendToken string, now time.Time, out io.Writer) error {
	for _, c := range []struct {
		token, env string
		role       db.Role
	}{{adminToken, "PACT_ADMIN_TOKEN", db.RoleAdmin}, {frontendToken, "PACT_FRONTEND_TOKEN", db.RoleFrontend}} {
		if c.token == "" {
			continue
		}
		label := BootstrapLabelPrefix + string(c.role)
		cred, err := ensure(ctx, s, c.token, c.role, label, time.Time{}, now)
		if err != nil {
			return err
		}
		if !cred.LiveAt(now) {
			// Refused, but no reason to stop serving everyone else: a
			// revoked bootstrap must not take every replica down at its
			// next start.
			if _, err := fmt.Fprintf(out, "pactd: %s is a revoked or expired credential (%s): it is refused; set a new value\n",
				c.env, cred.ID); err != nil {
				return err
			}
			continue
		}
		revoked, err := s.RevokeCredentialsByLabel(ctx, label, Hash(c.token), now)
		if err != nil {
			return fmt.Errorf("revoke the previous %s credential: %w", c.env, err)
		}
		if len(revoked) > 0 {
			if _, err := fmt.Fprintf(out, "pactd: %s has a new value: revoked the credential of its previous value (%s)\n",
				c.env, strings.Join(revoked, ", ")); err != nil {
				return err
			}
		}
	}
	if adminToken != "" {
		return nil
	}
	n, err := s.CountLiveCredentials(ctx, db.RoleAdmin, now)
	if err != nil {
		return fmt.Errorf("count admin credentials: %w", err)
	}
	if n > 0 {
		return nil
	}
	tok := NewToken(db.RoleAdmin)
	if _, err := ensure(ctx, s, tok, db.RoleAdmin, GeneratedAdminLabel, time.Time{}, now); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "pactd: no admin token was configured, so one was generated.\n"+
		"pactd: it is shown only this once; only its hash is stored:\n\n    PACT_ADMIN_TOKEN=%s\n\n", tok)
	return err
}

// Create stores a new random credential of the role and returns it with
// its token. expires is the zero time for no expiry.
func Create(ctx context.Context, s Store, role db.Role, label string, expires, now time.Time) (db.Credential, string, error) {
	tok := NewToken(role)
	c, err := ensure(ctx, s, tok, role, label, expires, now)
	return c, tok, err
}

// ensure stores the token's credential unless its hash is stored already,
// and returns the stored credential.
func ensure(ctx context.Context, s Store, token string, role db.Role, label string, expires, now time.Time) (db.Credential, error) {
	if len(token) > MaxTokenLength {
		return db.Credential{}, fmt.Errorf("%s token: longer than %d bytes", role, MaxTokenLength)
	}
	c := db.Credential{ID: ids.New("cred_", now), Role: role, TokenHash: Hash(token), Label: label, CreateTime: now, ExpireTime: expires}
	created, err := s.CreateCredential(ctx, c)
	if err != nil {
		return db.Credential{}, fmt.Errorf("store %s credential: %w", role, err)
	}
	if created {
		return c, nil
	}
	existing, err := s.GetCredentialByHash(ctx, Hash(token))
	if err != nil {
		return db.Credential{}, fmt.Errorf("load %s credential: %w", role, err)
	}
	if existing.Role != role {
		return db.Credential{}, fmt.Errorf("the configured %s token is already stored with role %s", role, existing.Role)
	}
	return existing, nil
}

// Authenticator resolves bearer credentials to roles. A credential's state
// is read from the store and cached for at most RevocationBound (one
// lookup per credential per second and replica, however busy), so
// revocations and expiries reach every replica within that bound without
// notifications. While the store cannot be read, a credential confirmed
// live within the outage grace is still admitted.
type Authenticator struct {
	store Store
	now   func() time.Time
	ttl   time.Duration
	grace time.Duration

	lookups singleflight.Group
	// touches are the background writes of a last use in flight (Wait).
	touches sync.WaitGroup

	mu    sync.Mutex
	cache map[[32]byte]cached
}

type cached struct {
	cred    db.Credential // without the hash
	checked time.Time     // when the store last said so
}

// maxCache bounds the credential cache; the oldest half is dropped when it
// is full, so live frontends' entries survive a spray of unknown tokens
// (which are never cached anyway).
const maxCache = 4096

// NewAuthenticator returns an authenticator over the store; outageGrace is
// how long a credential confirmed live is still admitted while the store
// cannot be read (0: not at all); now is the clock (time.Now when nil).
func NewAuthenticator(s Store, outageGrace time.Duration, now func() time.Time) *Authenticator {
	if now == nil {
		now = time.Now
	}
	return &Authenticator{store: s, now: now, ttl: RevocationBound, grace: outageGrace, cache: map[[32]byte]cached{}}
}

// Forget drops every cached credential, so a revocation made through this
// replica applies to its very next call.
func (a *Authenticator) Forget() {
	a.mu.Lock()
	clear(a.cache)
	a.mu.Unlock()
}

// errUnauthenticated is the one answer for every credential failure, so a
// caller cannot tell a malformed header from an unknown, expired or
// revoked token.
func errUnauthenticated() error {
	return rpcerr.Unauthenticated.Err(
		"a valid pactd credential is required: Authorization: Bearer <token>")
}

// Authenticate returns the role of the credential in an Authorization
// header value.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (db.Role, error) {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || len(tok) > MaxTokenLength || strings.ContainsAny(tok, " \t") {
		return "", errUnauthenticated()
	}
	key := sha256.Sum256([]byte(tok))
	now := a.now()
	a.mu.Lock()
	c, hit := a.cache[key]
	a.mu.Unlock()
	if hit && now.Sub(c.checked) < a.ttl {
		return c.role(now)
	}
	// One store read per credential at a time: the callers that arrive
	// while it runs share its answer.
	// It runs without the first caller's cancellation, which is not theirs.
	v, err, _ := a.lookups.Do(string(key[:]), func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return a.store.GetCredentialByHash(lctx, key[:])
	})
	if errors.Is(err, db.ErrNotFound) {
		return "", errUnauthenticated()
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if hit && now.Sub(c.checked) < a.grace {
			return c.role(now) // the store is down: the last word stands, for a while
		}
		return "", rpcerr.Unavailable("credential store unavailable; retry")
	}
	cred := v.(db.Credential)
	cred.TokenHash = nil
	a.mu.Lock()
	if len(a.cache) >= maxCache {
		a.evictOldest()
	}
	a.cache[key] = cached{cred: cred, checked: now}
	a.mu.Unlock()
	if cred.LiveAt(now) && now.Sub(cred.LastUseTime) >= time.Minute {
		a.touch(cred.ID, now)
	}
	return cached{cred: cred}.role(now)
}

// role is the cached credential's role if it is live at now.
func (c cached) role(now time.Time) (db.Role, error) {
	if !c.cred.LiveAt(now) {
		return "", errUnauthenticated()
	}
	return c.cred.Role, nil
}

// evictOldest drops the older half of the cache. Called with a.mu held.
func (a *Authenticator) evictOldest() {
	times := make([]time.Time, 0, len(a.cache))
	for _, c := range a.cache {
		times = append(times, c.checked)
	}
	slices.SortFunc(times, func(x, y time.Time) int { return x.Compare(y) })
	cut := times[len(times)/2]
	for k, c := range a.cache {
		if !c.checked.After(cut) {
			delete(a.cache, k)
		}
	}
}

// touch records a use in the background; the store keeps it to the minute.
func (a *Authenticator) touch(id string, now time.Time) {
	a.touches.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), touchTimeout)
		defer cancel()
		_ = a.store.TouchCredential(ctx, id, now) // last use is informational
	})
}

// touchTimeout bounds one background write of a last use.
const touchTimeout = 2 * time.Second

// Wait waits for the background writes of a last use that are in flight
// (each ends within touchTimeout), so the store can be closed after it.
func (a *Authenticator) Wait() { a.touches.Wait() }
