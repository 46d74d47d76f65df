// Package oauthhttp serves pactd's OAuth endpoints in their RFC wire form,
// so a frontend can mount them by reverse proxy instead of re-implementing
// form parsing and OAuth error JSON:
//
//	POST /a2a/{brandId}/oauth/device_authorization          RFC 8628 §3.1
//	POST /a2a/{brandId}/oauth/token                         RFC 6749 §3.2, RFC 8628 §3.4
//	POST /a2a/{brandId}/oauth/revoke                        RFC 7009
//	GET  /a2a/{brandId}/oauth/.well-known/oauth-authorization-server   RFC 8414 (PACT's path-appended form)
//	GET  /a2a/{brandId}/oauth/jwks.json                     the Provider's JWKS
//
// These endpoints take no pactd caller credential: the PA JWT in the
// Authorization header is the OAuth client authentication, checked by the
// delegation service exactly as its RPCs check it, and the metadata and
// JWKS are public. Each handler is thin: it parses the form (at most
// MaxBodyBytes, application/x-www-form-urlencoded, no repeated parameter),
// calls the same service method the RPC uses, and writes the answer the
// service decided. OAuth responses carry Cache-Control: no-store and
// Pragma: no-cache.
package oauthhttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"

	"connectrpc.com/connect"

	pactv1 "pactd/gen/pact/v1"
)

// MaxBodyBytes bounds a form body.
const MaxBodyBytes = 16 << 10

// Delegation is the part of pact.v1.DelegationService the endpoints call.
type Delegation interface {
	StartDeviceAuthorization(context.Context, *pactv1.StartDeviceAuthorizationRequest) (*pactv1.StartDeviceAuthorizationResponse, error)
	IssueDelegation(context.Context, *pactv1.IssueDelegationRequest) (*pactv1.IssueDelegationResponse, error)
	RevokeToken(context.Context, *pactv1.RevokeTokenRequest) (*pactv1.RevokeTokenResponse, error)
}

// Token is the part of pact.v1.TokenService the endpoints call.
type Token interface {
	GetAuthorizationServerMetadata(context.Context, *pactv1.GetAuthorizationServerMetadataRequest) (*pactv1.GetAuthorizationServerMetadataResponse, error)
	GetJwks(context.Context, *pactv1.GetJwksRequest) (*pactv1.GetJwksResponse, error)
}

// Handler serves the endpoints.
type Handler struct {
	deleg Delegation
	token Token
	log   *slog.Logger
}

// New returns the endpoints over the two services; log receives one line
// per server-side failure (never a form value or header).
func New(deleg Delegation, token Token, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{deleg: deleg, token: token, log: log}
}

// Register mounts the endpoints on mux. Other methods on these paths get
// the mux's 405.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /a2a/{brandId}/oauth/device_authorization", h.deviceAuthorization)
	mux.HandleFunc("POST /a2a/{brandId}/oauth/token", h.tokenEndpoint)
	mux.HandleFunc("POST /a2a/{brandId}/oauth/revoke", h.revoke)
	mux.HandleFunc("GET /a2a/{brandId}/oauth/.well-known/oauth-authorization-server", h.metadata)
	mux.HandleFunc("GET /a2a/{brandId}/oauth/jwks.json", h.jwks)
}

func (h *Handler) deviceAuthorization(w http.ResponseWriter, r *http.Request) {
	f, ok := readForm(w, r)
	if !ok {
		return
	}
	req := &pactv1.StartDeviceAuthorizationRequest{
		BrandId: r.PathValue("brandId"), Authorization: authorization(r),
		ClientId: f.Get("client_id"), Scope: f.Get("scope"),
	}
	if v, present := f["authorization_details"]; present {
		req.AuthorizationDetails = &v[0]
	}
	resp, err := h.deleg.StartDeviceAuthorization(r.Context(), req)
	if err != nil {
		h.rpcError(w, r, err)
		return
	}
	if resp.GetError() != nil {
		writeOAuthError(w, resp.GetError())
		return
	}
	writeOAuthJSON(w, resp.GetBodyJson())
}

func (h *Handler) tokenEndpoint(w http.ResponseWriter, r *http.Request) {
	f, ok := readForm(w, r)
	if !ok {
		return
	}
	resp, err := h.deleg.IssueDelegation(r.Context(), &pactv1.IssueDelegationRequest{
		BrandId: r.PathValue("brandId"), Authorization: authorization(r), GrantType: f.Get("grant_type"),
		DeviceCode: f.Get("device_code"), RefreshToken: f.Get("refresh_token"), ClientId: f.Get("client_id"),
	})
	if err != nil {
		h.rpcError(w, r, err)
		return
	}
	if resp.GetError() != nil {
		writeOAuthError(w, resp.GetError())
		return
	}
	writeOAuthJSON(w, resp.GetBodyJson())
}

func (h *Handler) revoke(w http.ResponseWriter, r *http.Request) {
	f, ok := readForm(w, r)
	if !ok {
		return
	}
	resp, err := h.deleg.RevokeToken(r.Context(), &pactv1.RevokeTokenRequest{
		BrandId: r.PathValue("brandId"), Authorization: authorization(r), ClientId: f.Get("client_id"),
		Token: f.Get("token"), TokenTypeHint: f.Get("token_type_hint"),
	})
	if err != nil {
		h.rpcError(w, r, err)
		return
	}
	if resp.GetError() != nil {
		writeOAuthError(w, resp.GetError())
		return
	}
	noStore(w.Header())
	w.WriteHeader(http.StatusOK)
}

func (h *Handler) metadata(w http.ResponseWriter, r *http.Request) {
	resp, err := h.token.GetAuthorizationServerMetadata(r.Context(), &pactv1.GetAuthorizationServerMetadataRequest{BrandId: r.PathValue("brandId")})
	if err != nil {
		h.rpcError(w, r, err)
		return
	}
	writePublicJSON(w, resp.GetMetadataJson(), resp.GetCacheControl())
}

func (h *Handler) jwks(w http.ResponseWriter, r *http.Request) {
	resp, err := h.token.GetJwks(r.Context(), &pactv1.GetJwksRequest{})
	if err != nil {
		h.rpcError(w, r, err)
		return
	}
	writePublicJSON(w, resp.GetJwksJson(), resp.GetCacheControl())
}

// authorization is the raw Authorization header; a repeated header is
// passed as empty, which the service refuses like a missing one.
func authorization(r *http.Request) string {
	if v := r.Header.Values("Authorization"); len(v) == 1 {
		return v[0]
	}
	return ""
}

// readForm reads an application/x-www-form-urlencoded body of at most
// MaxBodyBytes in which no parameter repeats (RFC 6749 §3.2). On failure it
// has written a 400 (413 when too large) invalid_request.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		writeOAuthError(w, formError(http.StatusBadRequest, "Content-Type must be application/x-www-form-urlencoded"))
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeOAuthError(w, formError(http.StatusRequestEntityTooLarge, "the request body is too large"))
		} else {
			writeOAuthError(w, formError(http.StatusBadRequest, "the request body could not be read"))
		}
		return nil, false
	}
	f, err := url.ParseQuery(string(body))
	if err != nil {
		writeOAuthError(w, formError(http.StatusBadRequest, "the request body is not a valid form"))
		return nil, false
	}
	for _, v := range f {
		if len(v) > 1 {
			writeOAuthError(w, formError(http.StatusBadRequest, "a parameter is repeated"))
			return nil, false
		}
	}
	return f, true
}

func formError(status int32, description string) *pactv1.OAuthError {
	body, _ := json.Marshal(map[string]string{"error": "invalid_request", "error_description": description})
	return &pactv1.OAuthError{HttpStatus: status, Error: "invalid_request", ErrorDescription: description, BodyJson: string(body)}
}

// rpcError answers an RPC error of a service: a malformed call is 400
// invalid_request, an unknown Brand (or one without delegation, which has
// no authorization server) a bare 404, a missing service 501, a
// rate limit 429, anything else 503 or 500 server_error (logged once).
func (h *Handler) rpcError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch connect.CodeOf(err) {
	case connect.CodeInvalidArgument:
		writeOAuthError(w, formError(http.StatusBadRequest, "the request is malformed"))
		return
	case connect.CodeNotFound, connect.CodeFailedPrecondition:
		noStore(w.Header())
		w.WriteHeader(http.StatusNotFound)
		return
	case connect.CodeUnimplemented:
		noStore(w.Header())
		w.WriteHeader(http.StatusNotImplemented)
		return
	case connect.CodeResourceExhausted:
		status = http.StatusTooManyRequests
	case connect.CodeUnavailable, connect.CodeCanceled, connect.CodeDeadlineExceeded:
		status = http.StatusServiceUnavailable
	}
	h.log.WarnContext(r.Context(), "oauth endpoint failed", slog.String("path", r.Pattern),
		slog.String("code", connect.CodeOf(err).String()))
	writeOAuthError(w, &pactv1.OAuthError{
		HttpStatus: int32(status), Error: "server_error",
		BodyJson: `{"error":"server_error","error_description":"temporarily unable to answer; retry"}`,
	})
}

func noStore(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}

// writeOAuthError sends a refusal exactly as the service decided it.
func writeOAuthError(w http.ResponseWriter, e *pactv1.OAuthError) {
	h := w.Header()
	noStore(h)
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

func writeOAuthJSON(w http.ResponseWriter, body string) {
	h := w.Header()
	noStore(h)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}

// writePublicJSON sends a public document (metadata, JWKS) that browsers
// may read from any origin.
func writePublicJSON(w http.ResponseWriter, body, cacheControl string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Access-Control-Allow-Origin", "*")
	if cacheControl != "" {
		h.Set("Cache-Control", cacheControl)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}
