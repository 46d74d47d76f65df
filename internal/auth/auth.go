// Package auth authenticates pactd's callers: bearer credentials stored as
// SHA-256 hashes, each with a role (admin or frontend), and the interceptor
// that admits a call only when the caller's role may use its procedure.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"pactd/db"
	pactv1 "pactd/gen/pact/v1"
	"pactd/internal/ids"
	"pactd/internal/rpcerr"
)

// MaxTokenLength bounds a caller credential; longer values are refused
// before hashing.
const MaxTokenLength = 512

// Store is the storage the authenticator needs.
type Store interface {
	CreateCredential(ctx context.Context, c db.Credential) (bool, error)
	GetCredentialByHash(ctx context.Context, hash []byte) (db.Credential, error)
	CountCredentials(ctx context.Context, role db.Role) (int64, error)
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

// Bootstrap stores the configured credentials' hashes. When no admin token
// is configured and none is stored yet, it generates one, stores its hash
// and writes it to out once: it cannot be shown again.
func Bootstrap(ctx context.Context, s Store, adminToken, frontendToken string, now time.Time, out io.Writer) error {
	for _, c := range []struct {
		token string
		role  db.Role
	}{{adminToken, db.RoleAdmin}, {frontendToken, db.RoleFrontend}} {
		if c.token == "" {
			continue
		}
		if err := ensure(ctx, s, c.token, c.role, "bootstrap "+string(c.role), now); err != nil {
			return err
		}
	}
	if adminToken != "" {
		return nil
	}
	n, err := s.CountCredentials(ctx, db.RoleAdmin)
	if err != nil {
		return fmt.Errorf("count admin credentials: %w", err)
	}
	if n > 0 {
		return nil
	}
	tok := NewToken(db.RoleAdmin)
	if err := ensure(ctx, s, tok, db.RoleAdmin, "generated admin", now); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "pactd: no admin token was configured, so one was generated.\n"+
		"pactd: it is shown only this once; only its hash is stored:\n\n    PACT_ADMIN_TOKEN=%s\n\n", tok)
	return err
}

// Create stores a new random credential of the role and returns it.
func Create(ctx context.Context, s Store, role db.Role, label string, now time.Time) (string, error) {
	tok := NewToken(role)
	return tok, ensure(ctx, s, tok, role, label, now)
}

func ensure(ctx context.Context, s Store, token string, role db.Role, label string, now time.Time) error {
	if len(token) > MaxTokenLength {
		return fmt.Errorf("%s token: longer than %d bytes", role, MaxTokenLength)
	}
	created, err := s.CreateCredential(ctx, db.Credential{ID: ids.New("cred_", now), Role: role, TokenHash: Hash(token), Label: label, CreateTime: now})
	if err != nil {
		return fmt.Errorf("store %s credential: %w", role, err)
	}
	if created {
		return nil
	}
	existing, err := s.GetCredentialByHash(ctx, Hash(token))
	if err != nil {
		return fmt.Errorf("load %s credential: %w", role, err)
	}
	if existing.Role != role {
		return fmt.Errorf("the configured %s token is already stored with role %s", role, existing.Role)
	}
	return nil
}

// Authenticator resolves bearer credentials to roles. Configured bootstrap
// credentials are compared in constant time in memory; others are looked up
// by hash and cached briefly.
type Authenticator struct {
	store     Store
	bootstrap []known
	now       func() time.Time
	ttl       time.Duration

	mu    sync.Mutex
	cache map[[32]byte]cached
}

type known struct {
	hash []byte
	role db.Role
}

type cached struct {
	role    db.Role
	expires time.Time
}

// maxCache bounds the credential cache; it is cleared when full.
const maxCache = 4096

// NewAuthenticator returns an authenticator over the store, with the
// configured bootstrap tokens ("" when not configured).
func NewAuthenticator(s Store, adminToken, frontendToken string, now func() time.Time) *Authenticator {
	a := &Authenticator{store: s, now: now, ttl: 30 * time.Second, cache: map[[32]byte]cached{}}
	if adminToken != "" {
		a.bootstrap = append(a.bootstrap, known{Hash(adminToken), db.RoleAdmin})
	}
	if frontendToken != "" {
		a.bootstrap = append(a.bootstrap, known{Hash(frontendToken), db.RoleFrontend})
	}
	return a
}

// errUnauthenticated is the one answer for every credential failure, so a
// caller cannot tell a malformed header from an unknown token.
func errUnauthenticated() error {
	return rpcerr.New(connect.CodeUnauthenticated, pactv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED,
		"a valid pactd credential is required: Authorization: Bearer <token>")
}

// Authenticate returns the role of the credential in an Authorization
// header value.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (db.Role, error) {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || len(tok) > MaxTokenLength || strings.ContainsAny(tok, " \t") {
		return "", errUnauthenticated()
	}
	h := Hash(tok)
	var role db.Role
	for _, k := range a.bootstrap { // no early exit: constant time over the set
		if subtle.ConstantTimeCompare(h, k.hash) == 1 {
			role = k.role
		}
	}
	if role != "" {
		return role, nil
	}
	key := [32]byte(h)
	now := a.now()
	a.mu.Lock()
	c, ok := a.cache[key]
	a.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.role, nil
	}
	cred, err := a.store.GetCredentialByHash(ctx, h)
	if errors.Is(err, db.ErrNotFound) {
		return "", errUnauthenticated()
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", rpcerr.Unavailable("credential store unavailable; retry")
	}
	a.mu.Lock()
	if len(a.cache) >= maxCache {
		clear(a.cache)
	}
	a.cache[key] = cached{role: cred.Role, expires: now.Add(a.ttl)}
	a.mu.Unlock()
	return cred.Role, nil
}
