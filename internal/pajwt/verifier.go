package pajwt

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"pactd.dev/pactd/internal/jose"
	"pactd.dev/pactd/internal/jws"
)

// Defaults and hard limits for [Config].
const (
	// DefaultSkew is the clock skew tolerated on iat, exp and nbf; it is
	// also the maximum (PACT §3).
	DefaultSkew = 30 * time.Second
	// DefaultMaxLifetime bounds exp - iat; it is also the maximum.
	DefaultMaxLifetime = 300 * time.Second
	// DefaultMaxTokenBytes bounds the compact token.
	DefaultMaxTokenBytes = 8 << 10
	// DefaultMaxSubjectBytes bounds "sub".
	DefaultMaxSubjectBytes = 256
	// DefaultCacheSize is the default number of repeat-token cache entries.
	DefaultCacheSize = 65536
	// MaxCacheSize is the largest CacheSize New accepts (a full cache of
	// it is ≈ 3.5 GB; a shard's arena offsets stay within 32 bits).
	MaxCacheSize = 4 << 20
	// DefaultMaxKidlessKeys bounds the keys tried for a token without kid.
	DefaultMaxKidlessKeys = 8

	// authOverhead is the room allowed around the token in the raw
	// Authorization value ("Bearer " and surrounding spaces).
	authOverhead = 64
)

// KeySource yields an agent's public keys. *jose.JWKSClient satisfies it.
type KeySource interface {
	// Keys returns the key set published at uri (cached or fetched).
	Keys(ctx context.Context, uri string) (*jose.KeySet, error)
	// Refresh refetches the set for an unknown kid, subject to the source's
	// per-URI cooldown (inside it, the cached set is returned).
	Refresh(ctx context.Context, uri string) (*jose.KeySet, error)
}

// Agent is a registered personal agent (PA) as the verifier needs it.
type Agent struct {
	// ID is pactd's identifier of the agent.
	ID string
	// Issuer is the exact "iss" string the agent signs with.
	Issuer string
	// JWKSURI is where the agent publishes its keys.
	JWKSURI string
	// Audience is the effective audience assigned to the agent (the
	// per-agent override or else the Provider-wide one). An empty audience
	// matches no token.
	Audience string
	// DisplayName is the agent's human-readable name.
	DisplayName string
	// Enabled is false for a disabled agent, whose tokens are refused.
	Enabled bool
}

// AgentLookup finds the agent registered under exactly issuer. It returns
// [ErrUnknownAgent] (possibly wrapped) when there is none; any other error is
// an infrastructure fault. It is called on every verification, cached or not.
type AgentLookup func(ctx context.Context, issuer string) (Agent, error)

// Result describes an accepted PA JWT.
type Result struct {
	// Agent is the agent that signed the token, as returned by the lookup.
	Agent Agent
	// Subject is "sub": the User is the pair (Agent, Subject).
	Subject string
	// IssuedAt and ExpiresAt are "iat" and "exp".
	IssuedAt, ExpiresAt time.Time
	// JTI is "jti" or "" (never required, never tracked).
	JTI string
	// KeyID is the kid of the key that verified the signature ("" when the
	// key has none).
	KeyID string
	// Cached is true when the signature check was skipped because the exact
	// token verified before (every other check still ran).
	Cached bool
}

// Config configures a [Verifier]. Zero fields take the defaults.
type Config struct {
	// Keys yields agents' public keys. Required.
	Keys KeySource
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Skew is the clock skew tolerated on iat, exp and nbf. Default and
	// maximum 30 s.
	Skew time.Duration
	// MaxLifetime bounds exp - iat. Default and maximum 300 s.
	MaxLifetime time.Duration
	// MaxTokenBytes bounds the compact token. Default 8 KiB, at most 64 KiB.
	MaxTokenBytes int
	// MaxSubjectBytes bounds "sub". Default 256.
	MaxSubjectBytes int
	// CacheSize is the number of repeat-token cache entries. Default 65,536;
	// negative disables the cache.
	CacheSize int
	// MaxKidlessKeys bounds how many keys are tried for a token without
	// kid. Default 8.
	MaxKidlessKeys int
}

// Verifier verifies PA JWTs (PACT §3). It is safe for concurrent use.
type Verifier struct {
	keys        KeySource
	now         func() time.Time
	skew        float64 // seconds
	maxLifetime float64 // seconds
	maxToken    int
	maxSub      int
	maxKidless  int
	cache       *tokenCache // nil when disabled
}

// New builds a Verifier from cfg.
func New(cfg Config) (*Verifier, error) {
	if cfg.Keys == nil {
		return nil, errors.New("pajwt: Config.Keys is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Skew == 0 {
		cfg.Skew = DefaultSkew
	}
	if cfg.MaxLifetime == 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if cfg.MaxTokenBytes == 0 {
		cfg.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if cfg.MaxSubjectBytes == 0 {
		cfg.MaxSubjectBytes = DefaultMaxSubjectBytes
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.CacheSize > MaxCacheSize {
		return nil, fmt.Errorf("pajwt: CacheSize %d is above MaxCacheSize (%d)", cfg.CacheSize, MaxCacheSize)
	}
	if cfg.MaxKidlessKeys == 0 {
		cfg.MaxKidlessKeys = DefaultMaxKidlessKeys
	}
	switch {
	case cfg.Skew < 0 || cfg.Skew > DefaultSkew:
		return nil, fmt.Errorf("pajwt: Skew must be in (0, %s]", DefaultSkew)
	case cfg.MaxLifetime < 0 || cfg.MaxLifetime > DefaultMaxLifetime:
		return nil, fmt.Errorf("pajwt: MaxLifetime must be in (0, %s]", DefaultMaxLifetime)
	case cfg.MaxTokenBytes < 0 || cfg.MaxTokenBytes > 64<<10:
		return nil, errors.New("pajwt: MaxTokenBytes must be in (0, 65536]")
	case cfg.MaxSubjectBytes < 0, cfg.MaxKidlessKeys < 0:
		return nil, errors.New("pajwt: negative bound in Config")
	}
	v := &Verifier{
		keys:        cfg.Keys,
		now:         cfg.Now,
		skew:        cfg.Skew.Seconds(),
		maxLifetime: cfg.MaxLifetime.Seconds(),
		maxToken:    cfg.MaxTokenBytes,
		maxSub:      cfg.MaxSubjectBytes,
		maxKidless:  cfg.MaxKidlessKeys,
	}
	if cfg.CacheSize > 0 {
		v.cache = newTokenCache(cfg.CacheSize)
	}
	return v, nil
}

// CacheEntries returns how many tokens the repeat-token cache holds now (0
// when it is disabled), which operators watch as the cache fills under
// load. Its memory is at most about CacheSize × 830 bytes however many it
// holds (cache.go).
func (v *Verifier) CacheEntries() int {
	if v.cache == nil {
		return 0
	}
	return v.cache.len()
}

// Verify checks the raw Authorization header value of a request and returns
// the verified caller. A refusal is an *[Error] carrying the [Reason]; an
// infrastructure fault of lookup, or the end of ctx, is returned as a plain
// error. The token itself never appears in an error.
//
// Checks, in order (each failure stops with the reason in brackets):
//
//  1. size of the raw value, then "Bearer" (case-insensitive), one or more
//     spaces and exactly one token, the token within MaxTokenBytes
//     [TooLarge, Malformed];
//  2. exactly three strict base64url segments, header and claims non-empty
//     [Malformed];
//  3. the header is a JSON object of unique members with nothing around it
//     [Malformed]; "alg" is ES256 or RS256 before any key is touched
//     [Algorithm]; no jwk, jku, x5u, x5c, crit, b64, zip or enc, and "typ"
//     absent or JWT [ForbiddenHeader]; "kid" a non-empty string if present,
//     and "cty", "x5t" and "x5t#S256" strings if present (RFC 7515 §4.1)
//     [Malformed];
//  4. the claims are a JSON object of unique members [Malformed]; "iss" a non-empty string [UnknownIssuer];
//  5. lookup by exact issuer [UnknownIssuer], enabled [AgentDisabled];
//  6. the key: by kid, refetching once (subject to the source's cooldown)
//     when unknown [UnknownKey]; without kid, each key fitting alg, at most
//     MaxKidlessKeys of them; a key of the wrong type or curve
//     [UnknownKey]; keys not obtainable [JWKSUnavailable];
//  7. the signature (ES256 raw 64-byte R||S, RS256 PKCS#1 v1.5) [Signature];
//  8. "aud" a single string equal to the agent's audience [Audience];
//  9. "sub" a non-empty string of at most MaxSubjectBytes [Subject];
//  10. "iat" a positive number not after now+skew [NotYetValid];
//  11. "exp" a positive number not before now-skew [Expired];
//  12. "nbf", if present, a number not after now+skew [Claims, NotYetValid];
//  13. exp - iat in (0, MaxLifetime] [Lifetime];
//  14. "jti", if present, a string [Claims]; it is never required or tracked.
//
// Repeated tokens: a token that passed every check is remembered (keyed by
// SHA-256 of its signing input, its signature segment compared exactly and
// in constant time; tokens holding more than 1 KiB of strings are not
// cached). ES256 signatures are malleable ((r, s) and (r, n-s) both verify);
// that yields no new capability, since PACT allows replay within a token's
// lifetime and jti is never tracked.
// When the very same token comes again, steps 3-4 and 7 are skipped, and
// everything else runs again: the agent lookup (so disabling takes effect at
// once), issuer and enabled checks, the agent's current JWKS must still
// publish the exact key (same RFC 7638 thumbprint, and under the same kid when
// the token names one) that verified it [UnknownKey], and steps 8-14 against
// the current clock and the agent's current audience.
func (v *Verifier) Verify(ctx context.Context, authorization string, lookup AgentLookup) (Result, error) {
	if lookup == nil {
		return Result{}, errors.New("pajwt: nil AgentLookup")
	}
	tok, rerr := v.bearerToken(authorization)
	if rerr != nil {
		return Result{}, rerr
	}
	// bearerToken has bounded the size; Split checks it again for free.
	parts, err := jws.Split(tok, v.maxToken)
	if err != nil {
		return Result{}, refuse(ReasonMalformed, "not a compact JWS of three segments")
	}
	sigSeg := parts.Signature // may be empty ("alg":"none" tokens): refused later
	digest := sha256.Sum256([]byte(parts.SigningInput))

	if v.cache != nil {
		if ct, gen, ok := v.cache.get(&digest, sigSeg); ok {
			return v.verifyCached(ctx, &digest, &ct, gen, lookup)
		}
	}

	var hbuf [256]byte
	var pbuf [1024]byte
	var sbuf [512]byte
	hdrJSON, ok1 := jws.AppendDecode(hbuf[:0], parts.Header)
	payload, ok2 := jws.AppendDecode(pbuf[:0], parts.Payload)
	sig, ok3 := jws.AppendDecode(sbuf[:0], sigSeg)
	if !(ok1 && ok2 && ok3) {
		return Result{}, refuse(ReasonMalformed, "segment is not strict base64url")
	}
	h, rerr := parseHeader(hdrJSON)
	if rerr != nil {
		return Result{}, rerr
	}
	claims, rerr := parseClaims(payload)
	if rerr != nil {
		return Result{}, rerr
	}
	iss, ok := claims.issuer()
	if !ok {
		return Result{}, refuse(ReasonUnknownIssuer, "iss missing or not a non-empty string")
	}
	agent, err := v.agent(ctx, lookup, iss)
	if err != nil {
		return Result{}, err
	}
	key, err := v.verifySignature(ctx, agent.JWKSURI, h, &digest, sig)
	if err != nil {
		return Result{}, err
	}
	if rerr := v.checkClaims(&claims, &agent); rerr != nil {
		return Result{}, rerr
	}
	if v.cache != nil {
		v.cache.put(&digest, &cachedToken{
			sig:    sigSeg, // put copies every string
			claims: claims,
			alg:    h.alg,
			kid:    h.kid,
			keyKID: key.KID(),
			thumb:  key.Thumbprint(),
		})
	}
	return result(agent, &claims, key.KID(), false), nil
}

// verifyCached re-runs every check but the signature for a token that
// passed before.
func (v *Verifier) verifyCached(ctx context.Context, digest *[32]byte, ct *cachedToken, gen uint32, lookup AgentLookup) (Result, error) {
	agent, err := v.agent(ctx, lookup, ct.claims.iss)
	if err != nil {
		return Result{}, err
	}
	ks, err := v.keys.Keys(ctx, agent.JWKSURI)
	if err != nil {
		return Result{}, keysError(ctx, err)
	}
	var still bool
	if ct.kid != "" {
		k, ok := ks.Lookup(ct.kid)
		still = ok && k.Thumbprint() == ct.thumb
	} else {
		_, still = ks.LookupThumbprint(ct.thumb)
	}
	if !still {
		v.cache.remove(digest, gen)
		return Result{}, refuse(ReasonUnknownKey, "verifying key no longer published")
	}
	if rerr := v.checkClaims(&ct.claims, &agent); rerr != nil {
		if rerr.Reason == ReasonExpired {
			v.cache.remove(digest, gen)
		}
		return Result{}, rerr
	}
	return result(agent, &ct.claims, ct.keyKID, true), nil
}

// bearerToken extracts the token from the raw Authorization value.
func (v *Verifier) bearerToken(h string) (string, *Error) {
	if len(h) > v.maxToken+authOverhead {
		return "", refuse(ReasonTooLarge, "Authorization value too large")
	}
	h = trimOWS(h)
	if h == "" {
		return "", refuse(ReasonMalformed, "no Authorization value")
	}
	if len(h) < 7 || !asciiEqualFold(h[:6], "bearer") || h[6] != ' ' {
		return "", refuse(ReasonMalformed, "not a Bearer credential")
	}
	t := strings.TrimLeft(h[7:], " ")
	if t == "" {
		return "", refuse(ReasonMalformed, "empty Bearer token")
	}
	if len(t) > v.maxToken {
		return "", refuse(ReasonTooLarge, "token too large")
	}
	return t, nil
}

// trimOWS trims spaces and tabs (HTTP optional whitespace) at both ends.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func asciiEqualFold(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// agent looks up and vets the agent for an exact issuer.
func (v *Verifier) agent(ctx context.Context, lookup AgentLookup, iss string) (Agent, error) {
	// The issuer is unauthenticated here: never hand the lookup (its cache,
	// the database) a string no registered issuer can be.
	if len(iss) > MaxIssuerBytes || hasControl(iss) {
		return Agent{}, refuse(ReasonUnknownIssuer, "iss too long or holds control characters")
	}
	a, err := lookup(ctx, iss)
	if err != nil {
		if errors.Is(err, ErrUnknownAgent) {
			return Agent{}, &Error{Reason: ReasonUnknownIssuer, Err: err}
		}
		return Agent{}, fmt.Errorf("pajwt: agent lookup: %w", err)
	}
	if a.Issuer != iss {
		return Agent{}, refuse(ReasonUnknownIssuer, "lookup returned an agent with another issuer")
	}
	if !a.Enabled {
		return Agent{}, refuse(ReasonAgentDisabled, "agent disabled")
	}
	return a, nil
}

// keysError maps a key-source failure: the caller's own cancellation stays a
// plain error, anything else is ReasonJWKSUnavailable.
func keysError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return fmt.Errorf("pajwt: keys: %w", err)
	}
	return &Error{Reason: ReasonJWKSUnavailable, Err: err}
}

// verifySignature selects the key and checks the signature.
func (v *Verifier) verifySignature(ctx context.Context, uri string, h header, digest *[32]byte, sig []byte) (*jose.Key, error) {
	if uri == "" {
		return nil, refuse(ReasonJWKSUnavailable, "agent has no JWKS URI")
	}
	ks, err := v.keys.Keys(ctx, uri)
	if err != nil {
		return nil, keysError(ctx, err)
	}
	want := h.alg.String()
	if h.kid != "" {
		k, ok := ks.Lookup(h.kid)
		if !ok {
			if ks, err = v.keys.Refresh(ctx, uri); err != nil {
				return nil, keysError(ctx, err)
			}
			if k, ok = ks.Lookup(h.kid); !ok {
				return nil, refuse(ReasonUnknownKey, "kid not published")
			}
		}
		if k.Algorithm() != want {
			return nil, refuse(ReasonUnknownKey, "key type does not fit alg")
		}
		if !verifyWith(k, h.alg, digest, sig) {
			return nil, refuse(ReasonSignature, "signature does not verify")
		}
		return k, nil
	}
	if countFitting(ks, want) == 0 {
		if ks, err = v.keys.Refresh(ctx, uri); err != nil {
			return nil, keysError(ctx, err)
		}
		if countFitting(ks, want) == 0 {
			return nil, refuse(ReasonUnknownKey, "no key fits alg")
		}
	}
	tries := 0
	for i := 0; i < ks.Len() && tries < v.maxKidless; i++ {
		k := ks.At(i)
		if k.Algorithm() != want {
			continue
		}
		tries++
		if verifyWith(k, h.alg, digest, sig) {
			return k, nil
		}
	}
	return nil, refuse(ReasonSignature, "signature does not verify with any key")
}

func countFitting(ks *jose.KeySet, alg string) int {
	n := 0
	for i := 0; i < ks.Len(); i++ {
		if ks.At(i).Algorithm() == alg {
			n++
		}
	}
	return n
}

// verifyWith checks sig over digest with k for a. PA keys are a third
// party's: either ECDSA S form verifies (the low-S policy in package jws).
func verifyWith(k *jose.Key, a alg, digest *[32]byte, sig []byte) bool {
	switch a {
	case algES256:
		return k.VerifyES256(digest, sig, jws.ThirdParty)
	case algRS256:
		return jws.VerifyRS256(k.RSA(), digest, sig)
	}
	return false
}

// MaxIssuerBytes bounds iss: no registered issuer is longer (registration
// caps URLs at 2048 bytes).
const MaxIssuerBytes = 2048

// hasControl reports whether s holds an ASCII control character (NUL
// included), which no issuer or subject pactd accepts may contain.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// checkClaims judges the claims after the signature, in the documented
// order, against the agent and the current clock.
func (v *Verifier) checkClaims(c *claimSet, a *Agent) *Error {
	switch {
	case c.audK == jws.KindOther:
		return refuse(ReasonAudience, "aud is not a single string")
	case c.audK != jws.KindString || c.audBad || c.aud == "" || c.aud != a.Audience:
		return refuse(ReasonAudience, "aud missing or not the assigned audience")
	}
	if c.subK != jws.KindString || c.subBad || c.sub == "" || len(c.sub) > v.maxSub || hasControl(c.sub) {
		return refuse(ReasonSubject, "sub missing, not a string, empty, too long or holds control characters")
	}
	now := v.now()
	t := jws.Seconds(now)
	if c.iatK != jws.KindNumber || c.iatBad || c.iat <= 0 {
		return refuse(ReasonNotYetValid, "iat missing or not a positive number")
	}
	if c.iat > t+v.skew {
		return refuse(ReasonNotYetValid, "iat in the future")
	}
	if c.expK != jws.KindNumber || c.expBad || c.exp <= 0 {
		return refuse(ReasonExpired, "exp missing or not a positive number")
	}
	if c.exp < t-v.skew {
		return refuse(ReasonExpired, "token expired")
	}
	switch c.nbfK {
	case jws.KindAbsent:
	case jws.KindNumber:
		if c.nbfBad {
			return refuse(ReasonClaims, "nbf out of range")
		}
		if c.nbf > t+v.skew {
			return refuse(ReasonNotYetValid, "nbf in the future")
		}
	default:
		return refuse(ReasonClaims, "nbf not a number")
	}
	if life := c.exp - c.iat; life <= 0 || life > v.maxLifetime {
		return refuse(ReasonLifetime, "exp - iat out of range")
	}
	if c.jtiK != jws.KindAbsent && (c.jtiK != jws.KindString || c.jtiBad) {
		return refuse(ReasonClaims, "jti not a string")
	}
	return nil
}

func result(a Agent, c *claimSet, kid string, cached bool) Result {
	return Result{
		Agent:     a,
		Subject:   c.sub,
		IssuedAt:  jws.Time(c.iat),
		ExpiresAt: jws.Time(c.exp),
		JTI:       c.jti,
		KeyID:     kid,
		Cached:    cached,
	}
}
