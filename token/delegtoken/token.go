package delegtoken

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"pactd.dev/pactd/internal/scopeid"
)

// Token kinds and limits.
const (
	// TokenType is the typ header of a delegation token (RFC 9068).
	TokenType = "at+jwt"
	// MaxTokenBytes bounds a delegation token; longer input is refused
	// before anything is decoded.
	MaxTokenBytes = 8 << 10
	// DefaultLifetime is the lifetime Mint uses when ExpiresAt is zero.
	DefaultLifetime = time.Hour
	// MaxLifetime is the longest lifetime Mint issues and Verify accepts.
	MaxLifetime = time.Hour
	// IssuedAtSkew is how far in the future iat may be (clock differences
	// between replicas). exp gets no skew.
	IssuedAtSkew = 30 * time.Second
	// IssuerSuffix turns an interface URL into the Brand's authorization
	// server issuer: iss = aud + IssuerSuffix.
	IssuerSuffix = "/oauth"
)

// Claims are the claims of a delegation token.
type Claims struct {
	// Issuer is iss: the Brand's authorization server, {interfaceUrl}/oauth.
	Issuer string
	// Audience is aud: the Brand's interface URL.
	Audience string
	// Subject is sub: the User's id at the Brand.
	Subject string
	// ClientID is client_id: the PA's issuer.
	ClientID string
	// GrantID is grant_id.
	GrantID string
	// Scopes are the granted scope ids (scope, space-separated on the wire).
	Scopes []string
	// IssuedAt is iat (whole seconds). Mint uses now when zero.
	IssuedAt time.Time
	// ExpiresAt is exp (whole seconds). Mint uses IssuedAt + 1 h when zero.
	ExpiresAt time.Time
	// ID is jti (RFC 9068 §2.2 requires it): unique per token. Mint draws
	// 128 random bits when it is empty. Verify returns "" for a token
	// without one (minted before pactd added jti; such a token lives at
	// most MaxLifetime).
	ID string
	// AuthorizationDetails is the approved RFC 9396 authorization_details
	// JSON array (§5.7); nil for scope-only grants. Added to the agreed
	// shape; code that omits it is unaffected.
	AuthorizationDetails json.RawMessage
}

// Minter mints delegation tokens.
type Minter interface {
	// Mint signs c as a delegation token.
	Mint(ctx context.Context, c Claims) (string, error)
}

// FieldError is a claim that Mint or SignReceipt refuses to sign.
type FieldError struct {
	// Field is the claim, for example "client_id" or "actions[2].tool".
	Field string
	// Problem says which rule it breaks.
	Problem string
}

// Error implements error.
func (e *FieldError) Error() string { return "delegtoken: " + e.Field + ": " + e.Problem }

// Signer mints delegation tokens and signs receipts with the Provider's
// active key. It implements Minter.
type Signer struct {
	keys SigningKeys
	now  func() time.Time
}

// NewSigner returns a Signer; now is the clock (time.Now when nil).
func NewSigner(keys SigningKeys, now func() time.Time) *Signer {
	if now == nil {
		now = time.Now
	}
	return &Signer{keys: keys, now: now}
}

// wireClaims is the JSON of a delegation token, members in this order.
type wireClaims struct {
	Iss                  string          `json:"iss"`
	Sub                  string          `json:"sub"`
	Aud                  string          `json:"aud"`
	ClientID             string          `json:"client_id"`
	Scope                string          `json:"scope"`
	GrantID              string          `json:"grant_id"`
	Jti                  string          `json:"jti"`
	Iat                  int64           `json:"iat"`
	Exp                  int64           `json:"exp"`
	AuthorizationDetails json.RawMessage `json:"authorization_details,omitempty"`
}

// Mint signs c as a delegation token. It refuses (with a *FieldError)
// claims it would not accept back: empty iss/aud/sub/client_id/grant_id,
// iss ≠ aud + "/oauth", non-URL iss/aud/client_id, no scope or a bad scope
// id, a lifetime that is not in (0, 1 h], authorization_details that is
// not a non-empty JSON array.
func (s *Signer) Mint(ctx context.Context, c Claims) (string, error) {
	if c.IssuedAt.IsZero() {
		c.IssuedAt = s.now()
	}
	c.IssuedAt = c.IssuedAt.Truncate(time.Second)
	if c.ExpiresAt.IsZero() {
		c.ExpiresAt = c.IssuedAt.Add(DefaultLifetime)
	}
	c.ExpiresAt = c.ExpiresAt.Truncate(time.Second)
	if c.ID == "" {
		c.ID = newTokenID()
	}
	if err := checkClaims(c); err != nil {
		return "", err
	}
	w := wireClaims{
		Iss: c.Issuer, Sub: c.Subject, Aud: c.Audience, ClientID: c.ClientID,
		Scope: strings.Join(c.Scopes, " "), GrantID: c.GrantID, Jti: c.ID,
		Iat: c.IssuedAt.Unix(), Exp: c.ExpiresAt.Unix(), AuthorizationDetails: c.AuthorizationDetails,
	}
	payload, err := json.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("delegtoken: encode claims: %w", err)
	}
	tok, err := s.keys.Sign(ctx, TokenType, payload)
	if err != nil {
		return "", fmt.Errorf("delegtoken: sign: %w", err)
	}
	return tok, nil
}

func checkClaims(c Claims) error {
	for _, f := range []struct{ name, v string }{
		{"aud", c.Audience}, {"iss", c.Issuer}, {"client_id", c.ClientID},
	} {
		if !isHTTPURL(f.v) {
			return &FieldError{f.name, "must be an absolute http(s) URL"}
		}
	}
	if c.Issuer != c.Audience+IssuerSuffix {
		return &FieldError{"iss", "must be aud + " + IssuerSuffix}
	}
	for _, f := range []struct{ name, v string }{{"sub", c.Subject}, {"grant_id", c.GrantID}} {
		if f.v == "" || len(f.v) > 512 {
			return &FieldError{f.name, "must be 1 to 512 bytes"}
		}
	}
	if !validTokenID(c.ID) {
		return &FieldError{"jti", "must be 1 to 256 printable ASCII bytes"}
	}
	if len(c.Scopes) == 0 || len(c.Scopes) > 100 {
		return &FieldError{"scope", "must hold 1 to 100 scope ids"}
	}
	for i, sc := range c.Scopes {
		if !scopeid.Valid(sc) {
			return &FieldError{fmt.Sprintf("scope[%d]", i), "is not a valid scope id"}
		}
	}
	if life := c.ExpiresAt.Sub(c.IssuedAt); life <= 0 || life > MaxLifetime {
		return &FieldError{"exp", "must be after iat and at most 1 h after it"}
	}
	if c.AuthorizationDetails != nil && !isNonEmptyArray(c.AuthorizationDetails) {
		return &FieldError{"authorization_details", "must be a non-empty JSON array"}
	}
	return nil
}

// newTokenID is a fresh jti: 128 random bits, base64url.
func newTokenID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// validTokenID reports whether s is an acceptable jti: 1 to 256 bytes of
// printable ASCII (no space), so it can go into logs and receipts as is.
func validTokenID(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func isHTTPURL(s string) bool {
	if len(s) > 2048 {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

func isNonEmptyArray(raw json.RawMessage) bool {
	var arr []json.RawMessage
	return json.Unmarshal(raw, &arr) == nil && len(arr) > 0 && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("["))
}

// Expect is what a delegation token must say besides being genuine. An
// empty field is not checked (introspection without a Brand or a PA).
type Expect struct {
	// Issuer is the expected iss, {interfaceUrl}/oauth.
	Issuer string
	// Audience is the expected aud, the Brand's interface URL.
	Audience string
	// ClientID is the expected client_id, the calling PA's issuer.
	ClientID string
}

// Verifier verifies delegation tokens and receipts against the
// Provider's published keys.
type Verifier struct {
	keys VerificationKeys
	now  func() time.Time
}

// NewVerifier returns a Verifier; now is the clock (time.Now when nil).
func NewVerifier(keys VerificationKeys, now func() time.Time) *Verifier {
	if now == nil {
		now = time.Now
	}
	return &Verifier{keys: keys, now: now}
}

// Verify checks a delegation token (the rules and their order are in the
// package documentation) and returns its claims. A refusal is an *Error
// naming the rule; any other error means the keys could not be loaded.
//
// Verify does NOT check the grant: a valid token may carry a grant that
// has since been revoked or has expired, or that does not belong to this
// Brand, client and Brand user. The caller must check the grant in the
// store (DelegationStore) before honouring the token.
func (v *Verifier) Verify(ctx context.Context, token string, want Expect) (Claims, error) {
	jws, err := verifyJWS(ctx, v.keys, token, TokenType, MaxTokenBytes)
	if err != nil {
		return Claims{}, err
	}
	m, err := objectMembers(jws.payload)
	if err != nil {
		return Claims{}, refuse(ReasonMalformed)
	}
	var c Claims
	var ok bool
	// aud first: a token of another Brand replayed here is an audience
	// refusal, whatever its (consistent) iss says.
	if c.Audience, ok = stringMember(m, "aud"); !ok || c.Audience == "" {
		return Claims{}, refuse(ReasonAudience) // missing, an array, or not a string
	}
	if want.Audience != "" && c.Audience != want.Audience {
		return Claims{}, refuse(ReasonAudience)
	}
	if c.Issuer, ok = stringMember(m, "iss"); !ok || c.Issuer == "" {
		return Claims{}, refuse(ReasonIssuer)
	}
	if (want.Issuer != "" && c.Issuer != want.Issuer) || c.Issuer != c.Audience+IssuerSuffix {
		return Claims{}, refuse(ReasonIssuer)
	}
	exp, ok := intMember(m, "exp")
	if !ok {
		return Claims{}, refuse(ReasonClaims)
	}
	now := v.now()
	if now.Unix() >= exp { // no skew: exp is the first second it is invalid
		return Claims{}, refuse(ReasonExpired)
	}
	iat, ok := intMember(m, "iat")
	if !ok {
		return Claims{}, refuse(ReasonClaims)
	}
	if iat > now.Add(IssuedAtSkew).Unix() {
		return Claims{}, refuse(ReasonIssuedAt)
	}
	if exp <= iat || exp-iat > int64(MaxLifetime/time.Second) {
		return Claims{}, refuse(ReasonLifetime)
	}
	c.IssuedAt, c.ExpiresAt = time.Unix(iat, 0).UTC(), time.Unix(exp, 0).UTC()
	if c.ClientID, ok = stringMember(m, "client_id"); !ok || c.ClientID == "" {
		return Claims{}, refuse(ReasonClaims)
	}
	if want.ClientID != "" && c.ClientID != want.ClientID {
		return Claims{}, refuse(ReasonClientID)
	}
	if c.GrantID, ok = stringMember(m, "grant_id"); !ok || c.GrantID == "" {
		return Claims{}, refuse(ReasonClaims)
	}
	if c.Subject, ok = stringMember(m, "sub"); !ok || c.Subject == "" {
		return Claims{}, refuse(ReasonClaims)
	}
	if _, present := m["jti"]; present {
		if c.ID, ok = stringMember(m, "jti"); !ok || !validTokenID(c.ID) {
			return Claims{}, refuse(ReasonClaims)
		}
	}
	scope, ok := stringMember(m, "scope")
	if !ok || scope == "" {
		return Claims{}, refuse(ReasonClaims)
	}
	c.Scopes = strings.Split(scope, " ")
	for _, sc := range c.Scopes {
		if !scopeid.Valid(sc) {
			return Claims{}, refuse(ReasonClaims)
		}
	}
	if raw, present := m["authorization_details"]; present {
		if !isNonEmptyArray(raw) {
			return Claims{}, refuse(ReasonClaims)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return Claims{}, refuse(ReasonClaims)
		}
		c.AuthorizationDetails = buf.Bytes()
	}
	return c, nil
}

// intMember returns a member that is an integer JSON number in a sane
// NumericDate range.
func intMember(m map[string]json.RawMessage, name string) (int64, bool) {
	raw, ok := m[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n <= 0 || n > 1<<40 {
		return 0, false
	}
	return n, true
}
