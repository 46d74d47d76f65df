// Package oauthwire is pactd's OAuth 2.0 wire vocabulary, in one place for
// the services that decide OAuth answers (delegation, verification) and the
// HTTP endpoints that send them (server/oauthhttp): the error codes and
// grant types, the WWW-Authenticate challenges, the error JSON (RFC 6749
// §5.2), and the form a token-endpoint request is read from (RFC 6749
// §3.2). A refusal is a pact.v1.OAuthError: the HTTP status, challenge and
// body a frontend or the endpoints send as they are.
package oauthwire

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// OAuth error codes pactd answers with (RFC 6749 §5.2, RFC 8628 §3.5,
// RFC 9396 §5, and server_error of RFC 6749 §4.1.2.1).
const (
	ErrInvalidRequest              = "invalid_request"
	ErrInvalidClient               = "invalid_client"
	ErrInvalidGrant                = "invalid_grant"
	ErrUnauthorizedClient          = "unauthorized_client"
	ErrUnsupportedGrantType        = "unsupported_grant_type"
	ErrInvalidScope                = "invalid_scope"
	ErrAuthorizationPending        = "authorization_pending"
	ErrSlowDown                    = "slow_down"
	ErrAccessDenied                = "access_denied"
	ErrExpiredToken                = "expired_token"
	ErrInvalidAuthorizationDetails = "invalid_authorization_details"
	ErrServerError                 = "server_error"
)

// Grant types of the token endpoint.
const (
	// GrantTypeDeviceCode is RFC 8628's grant type.
	GrantTypeDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"
	// GrantTypeRefreshToken is RFC 6749's refresh grant.
	GrantTypeRefreshToken = "refresh_token"
)

// Challenges: the WWW-Authenticate values a frontend copies byte for byte
// (PACT §3.2, §5.5).
const (
	// Challenge is sent with every 401 for the PA JWT, on A2A requests and
	// on the OAuth endpoints alike.
	Challenge = `Bearer realm="a2a"`
	// ChallengeInvalidToken is sent with a 401 for the delegation token.
	ChallengeInvalidToken = `Bearer realm="a2a", error="invalid_token"`
)

// DeviceAuthorizationBody is the RFC 8628 §3.2 response, members in this order.
type DeviceAuthorizationBody struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int32  `json:"expires_in"`
	Interval                int32  `json:"interval"`
}

// TokenBody is the RFC 6749 §5.1 response, members in the reference order.
type TokenBody struct {
	TokenType    string `json:"token_type"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int32  `json:"expires_in"`
	Scope        string `json:"scope"`
	// AuthorizationDetails are the grant's approved details (RFC 9396 §6),
	// omitted for a scope-only grant.
	AuthorizationDetails json.RawMessage `json:"authorization_details,omitempty"`
}

// MaxFormBytes bounds a form body.
const MaxFormBytes = 16 << 10

// Error is an OAuth JSON error with the given status: the body holds
// error and, when not empty, error_description.
func Error(status int32, code, description string) *pactv1.OAuthError {
	body, _ := json.Marshal(struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description,omitempty"`
	}{code, description})
	return &pactv1.OAuthError{HttpStatus: status, Error: code, ErrorDescription: description, BodyJson: string(body)}
}

// Refusal is the OAuth error a client is refused with at an endpoint:
// invalid_client is 401 with the challenge (RFC 6749 §5.2: the client
// authenticated with the Authorization header); every other code is 400.
func Refusal(code, description string) *pactv1.OAuthError {
	if code == ErrInvalidClient {
		e := Error(http.StatusUnauthorized, code, description)
		e.WwwAuthenticate = Challenge
		return e
	}
	return Error(http.StatusBadRequest, code, description)
}

// Bare401 is the answer to a missing or refused PA JWT: 401 with the
// challenge and no body.
func Bare401() *pactv1.OAuthError {
	return &pactv1.OAuthError{HttpStatus: http.StatusUnauthorized, WwwAuthenticate: Challenge}
}

// Bare404 is the answer for an unknown Brand: 404 with no body, as for
// every route of an unknown Brand.
func Bare404() *pactv1.OAuthError {
	return &pactv1.OAuthError{HttpStatus: http.StatusNotFound}
}

// ReadForm reads an application/x-www-form-urlencoded body of at most
// MaxFormBytes in which no parameter repeats (RFC 6749 §3.2). On failure it
// has written a 400 (413 when too large) invalid_request.
func ReadForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		WriteError(w, Error(http.StatusBadRequest, ErrInvalidRequest, "Content-Type must be application/x-www-form-urlencoded"))
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxFormBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			WriteError(w, Error(http.StatusRequestEntityTooLarge, ErrInvalidRequest, "the request body is too large"))
		} else {
			WriteError(w, Error(http.StatusBadRequest, ErrInvalidRequest, "the request body could not be read"))
		}
		return nil, false
	}
	f, err := url.ParseQuery(string(body))
	if err != nil {
		WriteError(w, Error(http.StatusBadRequest, ErrInvalidRequest, "the request body is not a valid form"))
		return nil, false
	}
	for _, v := range f {
		if len(v) > 1 {
			WriteError(w, Error(http.StatusBadRequest, ErrInvalidRequest, "a parameter is repeated"))
			return nil, false
		}
	}
	return f, true
}

// NoStore marks an OAuth response as not to be cached (RFC 6749 §5.1).
func NoStore(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}

// WriteError sends a refusal exactly as the service decided it.
func WriteError(w http.ResponseWriter, e *pactv1.OAuthError) {
	h := w.Header()
	NoStore(h)
	if e.GetWwwAuthenticate() != "" {
		h.Set("WWW-Authenticate", e.GetWwwAuthenticate())
	}
	if e.GetBodyJson() != "" {
		h.Set("Content-Type", "application/json")
	}
	status := int(e.GetHttpStatus())
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, e.GetBodyJson())
}

// WriteJSON sends a successful OAuth JSON response.
func WriteJSON(w http.ResponseWriter, body string) {
	h := w.Header()
	NoStore(h)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}
