package delegtoken

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Consent sessions (PACT §5 "Brand login → consent"): what the consent page
// of a Brand in signed-assertion mode carries from the verified Brand
// assertion to the User's decision, so the browser needs no cookie.
const (
	// SessionType is the typ header of a consent session. No other kind of
	// Provider JWS has it, and Verify and VerifyReceipt refuse it.
	SessionType = "pact-consent+jwt"
	// MaxSessionBytes bounds a consent session; longer input is refused
	// before anything is decoded.
	MaxSessionBytes = 8 << 10
	// SessionLifetime is the longest lifetime of a consent session, and of
	// a connected session.
	SessionLifetime = 600 * time.Second
	// ConnectedSessionType is the typ header of a connected session: what
	// the connected page of a signed-assertion Brand carries from the
	// verified Brand assertion to its revoke forms. It has no user_code,
	// and neither kind verifies as the other.
	ConnectedSessionType = "pact-connected+jwt"
)

// SessionClaims are the claims of a consent session.
type SessionClaims struct {
	// Issuer is iss: the Brand's authorization server, {interfaceUrl}/oauth.
	Issuer string
	// Audience is aud: the Brand's decision URL,
	// {interfaceUrl}/oauth/consent/decision.
	Audience string
	// Subject is sub: the User's id at the Brand (the assertion's sub).
	Subject string
	// UserCode is user_code: the authorization the session decides.
	UserCode string
	// Email is email, from the Brand's assertion ("" when it had none).
	Email string
	// JTI is jti: the session's id (for logs; not tracked, the pending-only
	// decision makes a session decide once).
	JTI string
	// IssuedAt is iat (whole seconds).
	IssuedAt time.Time
	// ExpiresAt is exp (whole seconds), at most SessionLifetime after iat.
	ExpiresAt time.Time
}

// SessionExpect is what a consent session must say besides being genuine.
// Both fields are required.
type SessionExpect struct {
	// Issuer is the expected iss.
	Issuer string
	// Audience is the expected aud, the decision URL of the Brand.
	Audience string
}

// wireSession is the JSON of a consent session, members in this order.
type wireSession struct {
	Iss      string `json:"iss"`
	Sub      string `json:"sub"`
	Aud      string `json:"aud"`
	UserCode string `json:"user_code,omitempty"`
	Email    string `json:"email,omitempty"`
	JTI      string `json:"jti"`
	Iat      int64  `json:"iat"`
	Exp      int64  `json:"exp"`
}

// SignConsentSession signs c as a consent session (typ pact-consent+jwt).
// It refuses (with a *FieldError) claims Verify would not accept back:
// non-URL iss or aud, empty sub, user_code or jti, a lifetime not in
// (0, SessionLifetime].
func (s *Signer) SignConsentSession(ctx context.Context, c SessionClaims) (string, error) {
	return s.signSession(ctx, SessionType, c)
}

// SignConnectedSession signs c as a connected session (typ
// pact-connected+jwt): the rules of SignConsentSession, except that
// user_code must be empty.
func (s *Signer) SignConnectedSession(ctx context.Context, c SessionClaims) (string, error) {
	return s.signSession(ctx, ConnectedSessionType, c)
}

// signSession signs a session of type typ; only a consent session has a
// user code.
func (s *Signer) signSession(ctx context.Context, typ string, c SessionClaims) (string, error) {
	consent := typ == SessionType
	if !consent && c.UserCode != "" {
		return "", &FieldError{"user_code", "must be empty in a connected session"}
	}
	if c.IssuedAt.IsZero() {
		c.IssuedAt = s.now()
	}
	c.IssuedAt = c.IssuedAt.Truncate(time.Second)
	if c.ExpiresAt.IsZero() {
		c.ExpiresAt = c.IssuedAt.Add(SessionLifetime)
	}
	c.ExpiresAt = c.ExpiresAt.Truncate(time.Second)
	for _, f := range []struct{ name, v string }{{"iss", c.Issuer}, {"aud", c.Audience}} {
		if !isHTTPURL(f.v) {
			return "", &FieldError{f.name, "must be an absolute http(s) URL"}
		}
	}
	for _, f := range []struct{ name, v string }{{"sub", c.Subject}, {"user_code", c.UserCode}, {"jti", c.JTI}} {
		if f.name == "user_code" && !consent {
			continue
		}
		if f.v == "" || len(f.v) > 512 {
			return "", &FieldError{f.name, "must be 1 to 512 bytes"}
		}
	}
	if life := c.ExpiresAt.Sub(c.IssuedAt); life <= 0 || life > SessionLifetime {
		return "", &FieldError{"exp", "must be after iat and at most 600 s after it"}
	}
	payload, err := json.Marshal(wireSession{
		Iss: c.Issuer, Sub: c.Subject, Aud: c.Audience, UserCode: c.UserCode, Email: c.Email, JTI: c.JTI,
		Iat: c.IssuedAt.Unix(), Exp: c.ExpiresAt.Unix(),
	})
	if err != nil {
		return "", fmt.Errorf("delegtoken: encode %s session: %w", typ, err)
	}
	tok, err := s.keys.Sign(ctx, typ, payload)
	if err != nil {
		return "", fmt.Errorf("delegtoken: sign %s session: %w", typ, err)
	}
	return tok, nil
}

// VerifyConsentSession checks a consent session and returns its claims. In
// order: the header and signature rules of Verify with typ
// pact-consent+jwt (so a delegation token or a receipt signed by the same
// key is ReasonType), aud then iss equal to want's, exp in the future (no
// skew), iat at most 30 s ahead and exp - iat in (0, SessionLifetime]
// (ReasonLifetime), sub, user_code and jti present (ReasonClaims). A
// refusal is an *Error; any other error means the keys could not be
// loaded.
func (v *Verifier) VerifyConsentSession(ctx context.Context, token string, want SessionExpect) (SessionClaims, error) {
	return v.verifySession(ctx, SessionType, token, want)
}

// VerifyConnectedSession checks a connected session and returns its
// claims: the rules of VerifyConsentSession with typ pact-connected+jwt
// (so a consent session is ReasonType), except that a user_code member is
// ReasonClaims (a connected session has none).
func (v *Verifier) VerifyConnectedSession(ctx context.Context, token string, want SessionExpect) (SessionClaims, error) {
	return v.verifySession(ctx, ConnectedSessionType, token, want)
}

// verifySession checks a session of type typ.
func (v *Verifier) verifySession(ctx context.Context, typ, token string, want SessionExpect) (SessionClaims, error) {
	consent := typ == SessionType
	jws, err := verifyJWS(ctx, v.keys, token, typ, MaxSessionBytes)
	if err != nil {
		return SessionClaims{}, err
	}
	m, err := objectMembers(jws.payload)
	if err != nil {
		return SessionClaims{}, refuse(ReasonMalformed)
	}
	var c SessionClaims
	var ok bool
	if c.Audience, ok = stringMember(m, "aud"); !ok || c.Audience == "" || c.Audience != want.Audience {
		return SessionClaims{}, refuse(ReasonAudience)
	}
	if c.Issuer, ok = stringMember(m, "iss"); !ok || c.Issuer == "" || c.Issuer != want.Issuer {
		return SessionClaims{}, refuse(ReasonIssuer)
	}
	exp, ok := intMember(m, "exp")
	if !ok {
		return SessionClaims{}, refuse(ReasonClaims)
	}
	now := v.now()
	if now.Unix() >= exp {
		return SessionClaims{}, refuse(ReasonExpired)
	}
	iat, ok := intMember(m, "iat")
	if !ok {
		return SessionClaims{}, refuse(ReasonClaims)
	}
	if iat > now.Add(IssuedAtSkew).Unix() {
		return SessionClaims{}, refuse(ReasonIssuedAt)
	}
	if exp <= iat || exp-iat > int64(SessionLifetime/time.Second) {
		return SessionClaims{}, refuse(ReasonLifetime)
	}
	c.IssuedAt, c.ExpiresAt = time.Unix(iat, 0).UTC(), time.Unix(exp, 0).UTC()
	for _, f := range []struct {
		name string
		dst  *string
	}{{"sub", &c.Subject}, {"user_code", &c.UserCode}, {"jti", &c.JTI}} {
		if f.name == "user_code" && !consent {
			if _, present := m["user_code"]; present {
				return SessionClaims{}, refuse(ReasonClaims)
			}
			continue
		}
		if *f.dst, ok = stringMember(m, f.name); !ok || *f.dst == "" {
			return SessionClaims{}, refuse(ReasonClaims)
		}
	}
	if raw, present := m["email"]; present {
		if c.Email, ok = stringMember(m, "email"); !ok || len(raw) == 0 {
			return SessionClaims{}, refuse(ReasonClaims)
		}
	}
	return c, nil
}

// ConsentSessions signs consent and connected sessions with the
// Provider's active key and verifies them against its published keys.
type ConsentSessions struct {
	// Signer signs.
	Signer *Signer
	// Verifier verifies.
	Verifier *Verifier
}

// Sign signs c (see Signer.SignConsentSession).
func (c ConsentSessions) Sign(ctx context.Context, s SessionClaims) (string, error) {
	return c.Signer.SignConsentSession(ctx, s)
}

// Verify verifies a session (see Verifier.VerifyConsentSession).
func (c ConsentSessions) Verify(ctx context.Context, token string, want SessionExpect) (SessionClaims, error) {
	return c.Verifier.VerifyConsentSession(ctx, token, want)
}

// SignConnected signs c (see Signer.SignConnectedSession).
func (c ConsentSessions) SignConnected(ctx context.Context, s SessionClaims) (string, error) {
	return c.Signer.SignConnectedSession(ctx, s)
}

// VerifyConnected verifies a connected session (see
// Verifier.VerifyConnectedSession).
func (c ConsentSessions) VerifyConnected(ctx context.Context, token string, want SessionExpect) (SessionClaims, error) {
	return c.Verifier.VerifyConnectedSession(ctx, token, want)
}
