package pajwt

import (
	"errors"
	"strconv"
)

// ErrUnknownAgent is what an [AgentLookup] returns (possibly wrapped) when no
// agent is registered for the issuer. Any other lookup error is treated as an
// infrastructure fault and returned as a plain error, not a refusal.
var ErrUnknownAgent = errors.New("pajwt: unknown agent")

// Reason says why a PA JWT was refused. It mirrors the verification reason
// enum of pactd's API one to one; the zero value is never returned.
type Reason int

// The refusal reasons, in the order the checks run.
const (
	// ReasonUnspecified is the zero value; [Verifier.Verify] never returns it.
	ReasonUnspecified Reason = iota
	// ReasonMalformed: no or non-Bearer Authorization, not exactly one
	// token, not three strict base64url segments, header or claims not a
	// well-formed JSON object, mistyped kid or typ, duplicate registered
	// member names.
	ReasonMalformed
	// ReasonTooLarge: the Authorization value or the token exceeds the size
	// bound (checked before any decoding).
	ReasonTooLarge
	// ReasonAlgorithm: "alg" missing, not a string, or not ES256/RS256
	// (none, HS*, PS*, ES384, EdDSA, ...).
	ReasonAlgorithm
	// ReasonForbiddenHeader: the header carries jwk, jku, x5u, x5c, crit,
	// b64, zip or enc, or a "typ" other than JWT.
	ReasonForbiddenHeader
	// ReasonUnknownIssuer: "iss" missing, not a non-empty string, or no
	// agent registered under exactly that string.
	ReasonUnknownIssuer
	// ReasonAgentDisabled: the agent exists but is disabled.
	ReasonAgentDisabled
	// ReasonUnknownKey: no key for the token's kid even after a
	// (rate-limited) refetch, a key whose type or curve does not fit "alg",
	// no key of the right type for a token without kid, or (for a cached
	// token) the verifying key is no longer published.
	ReasonUnknownKey
	// ReasonSignature: the signature does not verify (wrong key, tampered
	// token, truncated or DER-encoded ES256 signature, wrong length).
	ReasonSignature
	// ReasonAudience: "aud" is not a single string equal to the agent's
	// audience (arrays are refused even when they contain it).
	ReasonAudience
	// ReasonSubject: "sub" missing, not a string, empty or too long.
	ReasonSubject
	// ReasonExpired: "exp" missing, not a positive number, or more than the
	// skew in the past.
	ReasonExpired
	// ReasonNotYetValid: "iat" missing, not a positive number, or more than
	// the skew in the future; or "nbf" more than the skew in the future.
	ReasonNotYetValid
	// ReasonLifetime: exp - iat is not in (0, max lifetime].
	ReasonLifetime
	// ReasonJWKSUnavailable: the agent's JWKS could not be fetched and no
	// usable keys are cached.
	ReasonJWKSUnavailable
	// ReasonClaims: an optional claim has the wrong type ("jti" not a
	// string, "nbf" not a number).
	ReasonClaims
)

// String returns the reason as a stable snake_case label for logs and
// metrics.
func (r Reason) String() string {
	switch r {
	case ReasonUnspecified:
		return "unspecified"
	case ReasonMalformed:
		return "malformed"
	case ReasonTooLarge:
		return "too_large"
	case ReasonAlgorithm:
		return "algorithm"
	case ReasonForbiddenHeader:
		return "forbidden_header"
	case ReasonUnknownIssuer:
		return "unknown_issuer"
	case ReasonAgentDisabled:
		return "agent_disabled"
	case ReasonUnknownKey:
		return "unknown_key"
	case ReasonSignature:
		return "signature"
	case ReasonAudience:
		return "audience"
	case ReasonSubject:
		return "subject"
	case ReasonExpired:
		return "expired"
	case ReasonNotYetValid:
		return "not_yet_valid"
	case ReasonLifetime:
		return "lifetime"
	case ReasonJWKSUnavailable:
		return "jwks_unavailable"
	case ReasonClaims:
		return "claims"
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// Error is a refusal: the token is not acceptable for Reason. Err, when not
// nil, carries detail for logs (never token contents).
type Error struct {
	// Reason is why the token was refused.
	Reason Reason
	// Err is the underlying cause, if any.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err == nil {
		return "pajwt: refused: " + e.Reason.String()
	}
	return "pajwt: refused: " + e.Reason.String() + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// refuse builds a refusal with a static detail.
func refuse(r Reason, detail string) *Error {
	return &Error{Reason: r, Err: errors.New(detail)}
}

// ReasonOf returns the Reason of err if it is (or wraps) an *Error, else
// ReasonUnspecified.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonUnspecified
}
