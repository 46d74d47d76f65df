package provkeys

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"sync/atomic"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/token/jws"
)

// Timing defaults.
const (
	// JWKSMaxAge is how long clients may cache the JWKS.
	JWKSMaxAge = 300 * time.Second
	// JWKSCacheControl is the Cache-Control the JWKS is served with.
	JWKSCacheControl = "public, max-age=300"
	// DefaultRefreshInterval bounds how stale a replica's cached keys get
	// before the next call that needs them reloads them.
	DefaultRefreshInterval = 60 * time.Second
	// DefaultPublishDelay is how long a new key is published before it
	// signs: the JWKS max-age plus the refresh interval, so no cached JWKS
	// (from any replica) lacks a key when it starts signing.
	DefaultPublishDelay = JWKSMaxAge + DefaultRefreshInterval
	// MaxTokenLifetime is the longest lifetime of anything the keys sign
	// with an expiry (delegation tokens: 1 h).
	MaxTokenLifetime = time.Hour
	// DefaultRetireGrace is how long a retired key stays published: the
	// longest token lifetime plus a margin for clock skew between replicas.
	DefaultRetireGrace = MaxTokenLifetime + 5*time.Minute
	// retryAfterFailure spaces reload attempts while the store fails.
	retryAfterFailure = 5 * time.Second
)

// ErrNoSigningKey means no key may sign now (the store holds only keys
// that are not active yet, or none).
var ErrNoSigningKey = errors.New("provkeys: no active signing key")

// ErrStale means the ring could not reload its keys for longer than the
// publish delay, so it refuses to sign or publish from what it has.
var ErrStale = errors.New("provkeys: signing keys could not be reloaded from the store")

// ErrConcurrentRotation means another replica or caller rotated at the
// same moment and won; nothing was changed by this call.
var ErrConcurrentRotation = errors.New("provkeys: another rotation happened at the same time")

// Store is the key storage the ring needs (db.KeyStore satisfies it).
type Store interface {
	AddSigningKey(ctx context.Context, k db.SigningKey, expireRetired time.Time) error
	ListPublishedSigningKeys(ctx context.Context, now time.Time) ([]db.SigningKey, error)
	DeleteExpiredSigningKeys(ctx context.Context, now time.Time) (int64, error)
}

// Config are the ring's collaborators and timings.
type Config struct {
	// Store keeps the keys.
	Store Store
	// KEK is the 32-byte key-encryption key (see LoadKEK).
	KEK []byte
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives key lifecycle events (kids only, never key material).
	Logger *slog.Logger
	// PublishDelay is how long a rotated-in key is published before it
	// signs; DefaultPublishDelay when zero. Must exceed RefreshInterval.
	PublishDelay time.Duration
	// RetireGrace is how long a retired key stays published; at least the
	// longest token lifetime. DefaultRetireGrace when zero.
	RetireGrace time.Duration
	// RefreshInterval is how long cached keys are used before a reload;
	// DefaultRefreshInterval when zero.
	RefreshInterval time.Duration
}

// State is where a key is in its life, at a given instant.
type State string

// The key states.
const (
	// StateNext is a published key that does not sign yet.
	StateNext State = "next"
	// StateActive is the key that signs now.
	StateActive State = "active"
	// StateRetired is a published key that no longer signs.
	StateRetired State = "retired"
)

// KeyInfo describes one published key; it holds no key material.
type KeyInfo struct {
	// KID is the key's RFC 7638 thumbprint.
	KID string
	// State is the key's state when the info was made.
	State State
	// ActivateTime is when the key signs from.
	ActivateTime time.Time
	// RetireTime is when it stops signing; zero if no successor yet.
	RetireTime time.Time
	// ExpireTime is when it leaves the JWKS; zero if not retired.
	ExpireTime time.Time
}

// key is one loaded key.
type key struct {
	kid                      string
	seq                      int64
	priv                     *ecdsa.PrivateKey
	jwk                      JWK
	activate, retire, expire time.Time
	encodedHeaders           atomic.Pointer[map[string]string] // typ → base64url header
}

func (k *key) published(now time.Time) bool { return k.expire.IsZero() || now.Before(k.expire) }

// snapshot is an immutable view of the published keys.
type snapshot struct {
	keys   []*key // by seq
	byKID  map[string]*key
	loaded time.Time
}

// signer is the newest published key whose activation has come.
func (s *snapshot) signer(now time.Time) *key {
	for i := len(s.keys) - 1; i >= 0; i-- {
		k := s.keys[i]
		if !now.Before(k.activate) && k.published(now) {
			return k
		}
	}
	return nil
}

// Ring is the Provider's key ring. It is safe for concurrent use.
type Ring struct {
	cfg    Config
	sealer *sealer
	snap   atomic.Pointer[snapshot]
	// loading is a one-slot semaphore: one reload at a time.
	loading chan struct{}
	// retryAt (unix nanoseconds) holds reloads back after a failure.
	retryAt atomic.Int64
}

// Open builds the ring: it loads the published keys (refusing to start if
// any of them does not open with the KEK) and, on first start, generates
// the first key, which signs at once. Replicas starting together agree on
// one first key.
func Open(ctx context.Context, cfg Config) (*Ring, error) {
	if cfg.Store == nil {
		return nil, errors.New("provkeys: no store")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RefreshInterval == 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.PublishDelay == 0 {
		cfg.PublishDelay = JWKSMaxAge + cfg.RefreshInterval
	}
	if cfg.RetireGrace == 0 {
		cfg.RetireGrace = DefaultRetireGrace
	}
	switch {
	case cfg.RefreshInterval < 0 || cfg.PublishDelay <= cfg.RefreshInterval:
		return nil, fmt.Errorf("provkeys: publish delay (%v) must exceed the refresh interval (%v)", cfg.PublishDelay, cfg.RefreshInterval)
	case cfg.RetireGrace < MaxTokenLifetime:
		return nil, fmt.Errorf("provkeys: retire grace (%v) must be at least the longest token lifetime (%v)", cfg.RetireGrace, MaxTokenLifetime)
	}
	s, err := newSealer(cfg.KEK)
	if err != nil {
		return nil, err
	}
	r := &Ring{cfg: cfg, sealer: s, loading: make(chan struct{}, 1)}
	snap, err := r.load(ctx, nil)
	if err != nil {
		return nil, err
	}
	r.snap.Store(snap)
	if snap.signer(cfg.Now()) != nil {
		return r, nil
	}
	if len(snap.keys) > 0 {
		// Keys exist but none is active (only a pending next key): it will
		// activate by itself; signing fails until then.
		cfg.Logger.Warn("no signing key is active yet", slog.Int("published_keys", len(snap.keys)))
		return r, nil
	}
	now := cfg.Now()
	if _, err := r.add(ctx, snap, now, now); err != nil && !errors.Is(err, ErrConcurrentRotation) {
		return nil, err
	}
	// Either this call made the first key or a replica starting at the same
	// time did: load whichever won.
	snap, err = r.load(ctx, snap)
	if err != nil {
		return nil, err
	}
	r.snap.Store(snap)
	if snap.signer(cfg.Now()) == nil {
		return nil, ErrNoSigningKey
	}
	return r, nil
}

// load reads the published keys. Keys already in prev are reused, so their
// private halves are opened only once.
func (r *Ring) load(ctx context.Context, prev *snapshot) (*snapshot, error) {
	now := r.cfg.Now()
	rows, err := r.cfg.Store.ListPublishedSigningKeys(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("provkeys: load signing keys: %w", err)
	}
	s := &snapshot{keys: make([]*key, 0, len(rows)), byKID: make(map[string]*key, len(rows)), loaded: now}
	for _, row := range rows {
		var k *key
		if prev != nil {
			if old := prev.byKID[row.KID]; old != nil && old.seq == row.Seq {
				k = &key{kid: old.kid, seq: old.seq, priv: old.priv, jwk: old.jwk}
				k.encodedHeaders.Store(old.encodedHeaders.Load())
			}
		}
		if k == nil {
			if row.Alg != Alg {
				return nil, fmt.Errorf("provkeys: signing key %s has algorithm %q, want %s", row.KID, row.Alg, Alg)
			}
			priv, err := r.sealer.open(row.KID, row.SealedPrivateKey)
			if err != nil {
				return nil, err
			}
			jwk, err := PublicJWK(&priv.PublicKey)
			if err != nil {
				return nil, err
			}
			k = &key{kid: row.KID, seq: row.Seq, priv: priv, jwk: jwk}
		}
		k.activate, k.retire, k.expire = row.ActivateTime, row.RetireTime, row.ExpireTime
		s.keys = append(s.keys, k)
		s.byKID[k.kid] = k
	}
	sort.Slice(s.keys, func(i, j int) bool { return s.keys[i].seq < s.keys[j].seq })
	return s, nil
}

// current returns a snapshot fresh enough to use. The first caller after
// RefreshInterval reloads while the others keep using the cached keys; once
// the snapshot is older than PublishDelay every caller waits for a reload
// and fails with ErrStale if it cannot have one.
func (r *Ring) current(ctx context.Context) (*snapshot, error) {
	s := r.snap.Load()
	now := r.cfg.Now()
	age := now.Sub(s.loaded)
	if age < r.cfg.RefreshInterval && age >= 0 {
		return s, nil
	}
	tooOld := age >= r.cfg.PublishDelay || age < 0
	if !tooOld {
		if now.UnixNano() < r.retryAt.Load() {
			return s, nil
		}
		select {
		case r.loading <- struct{}{}:
		default:
			return s, nil // another caller is reloading
		}
	} else {
		select {
		case r.loading <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer func() { <-r.loading }()
	if cur := r.snap.Load(); cur != s {
		return cur, nil // reloaded while we waited
	}
	fresh, err := r.load(ctx, s)
	if err != nil {
		r.retryAt.Store(now.Add(retryAfterFailure).UnixNano())
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.cfg.Logger.ErrorContext(ctx, "reload signing keys", slog.String("error", err.Error()), slog.Int64("snapshot_age_ms", age.Milliseconds()))
		if tooOld {
			return nil, fmt.Errorf("%w: %w", ErrStale, err)
		}
		return s, nil
	}
	r.snap.Store(fresh)
	return fresh, nil
}

// Refresh reloads the keys from the store now, for example when another
// replica announces a rotation.
func (r *Ring) Refresh(ctx context.Context) error {
	select {
	case r.loading <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.loading }()
	fresh, err := r.load(ctx, r.snap.Load())
	if err != nil {
		return err
	}
	r.snap.Store(fresh)
	return nil
}

// typPattern bounds the typ header values the ring signs with.
var typPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+/-]{0,63}$`)

// Sign returns a compact JWS of payload with the protected header
// {"alg":"ES256","kid":<active kid>,"typ":typ}, signed by the active key
// (raw R||S, low S).
func (r *Ring) Sign(ctx context.Context, typ string, payload []byte) (string, error) {
	if !typPattern.MatchString(typ) {
		return "", fmt.Errorf("provkeys: bad typ %q", typ)
	}
	s, err := r.current(ctx)
	if err != nil {
		return "", err
	}
	k := s.signer(r.cfg.Now())
	if k == nil {
		return "", ErrNoSigningKey
	}
	input := make([]byte, 0, 128+b64.EncodedLen(len(payload))+1+86)
	input = append(input, k.header(typ)...)
	input = append(input, '.')
	input = b64.AppendEncode(input, payload)
	sig, err := jws.SignES256(k.priv, input) // low S: the one encoding verifiers accept
	if err != nil {
		return "", fmt.Errorf("provkeys: sign: %w", err)
	}
	input = append(input, '.')
	input = b64.AppendEncode(input, sig)
	return string(input), nil
}

// header returns the base64url protected header for typ, cached per key.
func (k *key) header(typ string) string {
	if m := k.encodedHeaders.Load(); m != nil {
		if h, ok := (*m)[typ]; ok {
			return h
		}
	}
	raw, _ := json.Marshal(struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}{Alg, k.kid, typ})
	h := b64.EncodeToString(raw)
	for {
		old := k.encodedHeaders.Load()
		next := map[string]string{typ: h}
		if old != nil {
			if len(*old) >= 16 { // a handful of token kinds; never grows unbounded
				return h
			}
			for t, v := range *old {
				next[t] = v
			}
		}
		if k.encodedHeaders.CompareAndSwap(old, &next) {
			return h
		}
	}
}

// PublicKey returns the published key with the kid. found is false for a
// kid that is not published now; err is set only when the keys could not
// be loaded. An unknown kid never causes a store round trip: every replica
// knows a key for at least PublishDelay − RefreshInterval before it signs.
func (r *Ring) PublicKey(ctx context.Context, kid string) (pub *ecdsa.PublicKey, found bool, err error) {
	s, err := r.current(ctx)
	if err != nil {
		return nil, false, err
	}
	k := s.byKID[kid]
	if k == nil || !k.published(r.cfg.Now()) {
		return nil, false, nil
	}
	return &k.priv.PublicKey, true, nil
}

// JWKS returns the JWKS document: the active key first, then the next
// keys, then the retired keys that are still published (newest first),
// each as {kty,crv,x,y,kid,alg:"ES256",use:"sig"}. Serve it with
// JWKSCacheControl.
func (r *Ring) JWKS(ctx context.Context) ([]byte, error) {
	s, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	now := r.cfg.Now()
	doc := JWKS{Keys: []JWK{}}
	for _, info := range s.infos(now) {
		doc.Keys = append(doc.Keys, s.byKID[info.KID].jwk)
	}
	return json.Marshal(doc)
}

// Keys describes the published keys in JWKS order.
func (r *Ring) Keys(ctx context.Context) ([]KeyInfo, error) {
	s, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	return s.infos(r.cfg.Now()), nil
}

func (s *snapshot) infos(now time.Time) []KeyInfo {
	var active, next, retired []KeyInfo
	signer := s.signer(now)
	for i := len(s.keys) - 1; i >= 0; i-- {
		k := s.keys[i]
		if !k.published(now) {
			continue
		}
		info := KeyInfo{KID: k.kid, ActivateTime: k.activate, RetireTime: k.retire, ExpireTime: k.expire}
		switch {
		case k == signer:
			info.State = StateActive
			active = append(active, info)
		case now.Before(k.activate):
			info.State = StateNext
			next = append([]KeyInfo{info}, next...) // oldest pending first
		default:
			info.State = StateRetired
			retired = append(retired, info)
		}
	}
	return append(append(active, next...), retired...)
}

// Rotate adds a new key that is published now and signs from
// now + PublishDelay, when every key before it retires; a retired key
// stays published for RetireGrace. Keys that have left the JWKS are
// deleted. ErrConcurrentRotation when another rotation won the race.
func (r *Ring) Rotate(ctx context.Context) (KeyInfo, error) {
	// Work from the store's current state, not the cache: the new key must
	// follow the newest one.
	fresh, err := r.load(ctx, r.snap.Load())
	if err != nil {
		return KeyInfo{}, err
	}
	now := r.cfg.Now()
	// Round the activation up to a whole second (the store keeps seconds)
	// so the key is never published for less than PublishDelay.
	activate := now.Add(r.cfg.PublishDelay)
	if t := activate.Truncate(time.Second); !t.Equal(activate) {
		activate = t.Add(time.Second)
	}
	info, err := r.add(ctx, fresh, now, activate)
	if err != nil {
		return KeyInfo{}, err
	}
	if n, err := r.cfg.Store.DeleteExpiredSigningKeys(ctx, now); err != nil {
		r.cfg.Logger.WarnContext(ctx, "delete expired signing keys", slog.String("error", err.Error()))
	} else if n > 0 {
		r.cfg.Logger.InfoContext(ctx, "deleted expired signing keys", slog.Int64("count", n))
	}
	if err := r.Refresh(ctx); err != nil {
		// The key is stored; this replica will see it on its next reload.
		r.cfg.Logger.WarnContext(ctx, "reload after rotation", slog.String("error", err.Error()))
	}
	return info, nil
}

// add generates a key that signs from activate and stores it after the
// newest key in s, retiring the older ones at its activation.
func (r *Ring) add(ctx context.Context, s *snapshot, now, activate time.Time) (KeyInfo, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyInfo{}, fmt.Errorf("provkeys: generate key: %w", err)
	}
	jwk, err := PublicJWK(&priv.PublicKey)
	if err != nil {
		return KeyInfo{}, err
	}
	sealed, err := r.sealer.seal(jwk.Kid, priv)
	if err != nil {
		return KeyInfo{}, err
	}
	pubJSON, err := json.Marshal(jwk)
	if err != nil {
		return KeyInfo{}, fmt.Errorf("provkeys: encode JWK: %w", err)
	}
	var seq int64 = 1
	if n := len(s.keys); n > 0 {
		seq = s.keys[n-1].seq + 1
	}
	row := db.SigningKey{
		KID: jwk.Kid, Seq: seq, Alg: Alg, PublicJWK: string(pubJSON), SealedPrivateKey: sealed,
		CreateTime: now, ActivateTime: activate,
	}
	err = r.cfg.Store.AddSigningKey(ctx, row, row.ActivateTime.Add(r.cfg.RetireGrace))
	if errors.Is(err, db.ErrConflict) {
		return KeyInfo{}, ErrConcurrentRotation
	}
	if err != nil {
		return KeyInfo{}, fmt.Errorf("provkeys: store signing key: %w", err)
	}
	r.cfg.Logger.InfoContext(ctx, "signing key added", slog.String("kid", jwk.Kid), slog.Int64("seq", seq),
		slog.Time("activate_time", row.ActivateTime))
	state := StateActive
	if activate.After(now) {
		state = StateNext
	}
	return KeyInfo{KID: jwk.Kid, State: state, ActivateTime: row.ActivateTime.Truncate(time.Second)}, nil
}

// LogValue redacts the KEK, so a Config can be logged.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("kek_set", len(c.KEK) > 0), slog.Int64("publish_delay_ms", c.PublishDelay.Milliseconds()),
		slog.Int64("retire_grace_ms", c.RetireGrace.Milliseconds()), slog.Int64("refresh_interval_ms", c.RefreshInterval.Milliseconds()),
	)
}

// LogValue shows the published kids and states, never key material.
func (r *Ring) LogValue() slog.Value {
	s := r.snap.Load()
	if s == nil {
		return slog.StringValue("provkeys.Ring{}")
	}
	var attrs []slog.Attr
	for _, info := range s.infos(r.cfg.Now()) {
		attrs = append(attrs, slog.String(info.KID, string(info.State)))
	}
	return slog.GroupValue(attrs...)
}
