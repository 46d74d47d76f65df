package delegation

import (
	"encoding/json"
	"net/http"

	pactv1 "pactd/gen/pact/v1"
)

// OAuth error codes pactd answers with (RFC 6749 §5.2, RFC 8628 §3.5,
// RFC 9396 §5).
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
)

// Grant types of the token endpoint.
const (
	// GrantTypeDeviceCode is RFC 8628's grant type.
	GrantTypeDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"
	// GrantTypeRefreshToken is RFC 6749's refresh grant.
	GrantTypeRefreshToken = "refresh_token"
)

// WWWAuthenticate is the challenge of every 401 pactd tells a frontend to
// send on the OAuth endpoints, exactly as for A2A requests (PACT §3).
const WWWAuthenticate = `Bearer realm="a2a"`

// bare401 is the answer to a missing or refused PA JWT: 401 with the
// challenge and no body.
func bare401() *pactv1.OAuthError {
	return &pactv1.OAuthError{HttpStatus: http.StatusUnauthorized, WwwAuthenticate: WWWAuthenticate}
}

// bare404 is the answer for an unknown Brand: 404 with no body, as for
// every route of an unknown Brand.
func bare404() *pactv1.OAuthError {
	return &pactv1.OAuthError{HttpStatus: http.StatusNotFound}
}

// oauthError builds an OAuth JSON error. invalid_client is 401 with the
// challenge (RFC 6749 §5.2: the client authenticated with the
// Authorization header); every other code is 400.
func oauthError(code, description string) *pactv1.OAuthError {
	e := &pactv1.OAuthError{HttpStatus: http.StatusBadRequest, Error: code, ErrorDescription: description}
	if code == ErrInvalidClient {
		e.HttpStatus = http.StatusUnauthorized
		e.WwwAuthenticate = WWWAuthenticate
	}
	body, _ := json.Marshal(struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description,omitempty"`
	}{code, description})
	e.BodyJson = string(body)
	return e
}

// deviceBody is the RFC 8628 §3.2 response, members in this order.
type deviceBody struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int32  `json:"expires_in"`
	Interval                int32  `json:"interval"`
}

// tokenBody is the RFC 6749 §5.1 response, members in the reference order.
type tokenBody struct {
	TokenType    string `json:"token_type"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int32  `json:"expires_in"`
	Scope        string `json:"scope"`
	// AuthorizationDetails are the grant's approved details (RFC 9396 §6),
	// omitted for a scope-only grant.
	AuthorizationDetails json.RawMessage `json:"authorization_details,omitempty"`
}
