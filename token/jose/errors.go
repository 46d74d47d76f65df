package jose

import (
	"errors"
	"fmt"
)

// Error classes. Every error returned by this package wraps exactly one of
// them, so callers can tell a refused URI, an unavailable JWKS and a bad
// document apart with errors.Is.
var (
	// ErrInvalidURI is the class of errors for a JWKS URI refused by the
	// transport policy before any network traffic.
	ErrInvalidURI = errors.New("jose: JWKS URI refused")
	// ErrUnavailable is the class of errors for a JWKS that could not be
	// fetched: network failure, timeout, HTTP status, refused redirect or
	// forbidden address.
	ErrUnavailable = errors.New("jose: JWKS unavailable")
	// ErrBadDocument is the class of errors for a JWKS response that is not
	// an acceptable key set.
	ErrBadDocument = errors.New("jose: bad JWKS document")
)

// classError is a specific sentinel that also matches its class.
type classError struct {
	msg   string
	class error
}

// Error returns the sentinel's message.
func (e *classError) Error() string { return e.msg }

// Unwrap returns the sentinel's class.
func (e *classError) Unwrap() error { return e.class }

// Specific sentinels for refused documents; each wraps [ErrBadDocument].
var (
	// ErrMalformedDocument means the document is not a JSON object with a
	// "keys" array of JSON objects, or has duplicate member names.
	ErrMalformedDocument error = &classError{"jose: JWKS is not a well-formed key set", ErrBadDocument}
	// ErrDocumentTooLarge means the response body exceeded the size cap.
	ErrDocumentTooLarge error = &classError{"jose: JWKS document too large", ErrBadDocument}
	// ErrTooManyKeys means the set holds more keys than allowed.
	ErrTooManyKeys error = &classError{"jose: JWKS holds too many keys", ErrBadDocument}
	// ErrPrivateKeyMaterial means a key carries private members (d, p, q,
	// dp, dq, qi, oth, or k outside an oct key).
	ErrPrivateKeyMaterial error = &classError{"jose: JWKS key carries private key material", ErrBadDocument}
	// ErrSymmetricKey means a key has kty "oct".
	ErrSymmetricKey error = &classError{"jose: JWKS holds a symmetric key", ErrBadDocument}
	// ErrUnsupportedKeyType means a key has a kty other than EC or RSA.
	ErrUnsupportedKeyType error = &classError{"jose: JWKS key type not supported", ErrBadDocument}
	// ErrUnsupportedCurve means an EC key is on a curve other than P-256.
	ErrUnsupportedCurve error = &classError{"jose: JWKS EC key curve not supported", ErrBadDocument}
	// ErrWeakRSAKey means an RSA modulus is shorter than 2048 bits.
	ErrWeakRSAKey error = &classError{"jose: JWKS RSA key shorter than 2048 bits", ErrBadDocument}
	// ErrInvalidKey means a key's members are missing, mistyped, badly
	// encoded or do not describe a valid public key (point not on the curve,
	// bad exponent, oversized modulus, empty kid).
	ErrInvalidKey error = &classError{"jose: JWKS key invalid", ErrBadDocument}
	// ErrDuplicateKID means two keys share a "kid".
	ErrDuplicateKID error = &classError{"jose: JWKS has duplicate kid", ErrBadDocument}
	// ErrKeyUse means a key's "use" is not "sig" or its "key_ops" lacks
	// "verify".
	ErrKeyUse error = &classError{"jose: JWKS key not for signature verification", ErrBadDocument}
	// ErrKeyAlgorithm means a key's "alg" does not fit the key (EC P-256
	// keys must be ES256, RSA keys RS256).
	ErrKeyAlgorithm error = &classError{"jose: JWKS key alg does not fit the key", ErrBadDocument}
)

// Specific sentinels for failed fetches; each wraps [ErrUnavailable].
var (
	// ErrForbiddenAddress means the host resolved to, or is, an address the
	// dial guard refuses (private, loopback, link-local, CGNAT, ...).
	ErrForbiddenAddress error = &classError{"jose: JWKS address forbidden", ErrUnavailable}
	// ErrRedirect means a redirect left the origin or exceeded the limit.
	ErrRedirect error = &classError{"jose: JWKS redirect refused", ErrUnavailable}
	// ErrTimeout means the fetch did not finish within the HTTP timeout.
	ErrTimeout error = &classError{"jose: JWKS fetch timed out", ErrUnavailable}
)

// StatusError reports a JWKS response whose HTTP status was not 200. It wraps
// [ErrUnavailable].
type StatusError struct {
	// Code is the HTTP status code received.
	Code int
}

// Error implements error.
func (e *StatusError) Error() string { return fmt.Sprintf("jose: JWKS HTTP status %d", e.Code) }

// Unwrap returns [ErrUnavailable].
func (e *StatusError) Unwrap() error { return ErrUnavailable }
