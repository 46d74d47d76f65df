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
// JWKS are public. Each handler is thin: it parses the form
// (oauthwire.ReadForm: at most oauthwire.MaxFormBytes,
// application/x-www-form-urlencoded, no repeated parameter), calls the same
// service method the RPC uses, and writes the answer the service decided
// (oauthwire.WriteError, WriteJSON). OAuth responses carry Cache-Control:
// no-store and Pragma: no-cache.
package oauthhttp

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/server/reqlog"
)

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
	f, ok := oauthwire.ReadForm(w, r)
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
		oauthwire.WriteError(w, resp.GetError())
		return
	}
	oauthwire.WriteJSON(w, resp.GetBodyJson())
}

func (h *Handler) tokenEndpoint(w http.ResponseWriter, r *http.Request) {
	f, ok := oauthwire.ReadForm(w, r)
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
		oauthwire.WriteError(w, resp.GetError())
		return
	}
	oauthwire.WriteJSON(w, resp.GetBodyJson())
}

func (h *Handler) revoke(w http.ResponseWriter, r *http.Request) {
	f, ok := oauthwire.ReadForm(w, r)
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
		oauthwire.WriteError(w, resp.GetError())
		return
	}
	oauthwire.NoStore(w.Header())
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

// rpcError answers an RPC error of a service: a malformed call is 400
// invalid_request, an unknown Brand (or one without delegation, which has
// no authorization server) a bare 404, a missing service 501, a
// rate limit 429, anything else 503 or 500 server_error (logged once).
func (h *Handler) rpcError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch connect.CodeOf(err) {
	case connect.CodeInvalidArgument:
		oauthwire.WriteError(w, oauthwire.Error(http.StatusBadRequest, oauthwire.ErrInvalidRequest, "the request is malformed"))
		return
	case connect.CodeNotFound, connect.CodeFailedPrecondition:
		oauthwire.NoStore(w.Header())
		w.WriteHeader(http.StatusNotFound)
		return
	case connect.CodeUnimplemented:
		oauthwire.NoStore(w.Header())
		w.WriteHeader(http.StatusNotImplemented)
		return
	case connect.CodeResourceExhausted:
		status = http.StatusTooManyRequests
	case connect.CodeUnavailable, connect.CodeCanceled, connect.CodeDeadlineExceeded:
		status = http.StatusServiceUnavailable
	}
	if rpcerr.Logged(err) {
		reqlog.MarkFaultLogged(r.Context()) // the HTTP boundary need not log it again
	}
	h.log.WarnContext(r.Context(), "oauth endpoint failed", slog.String("path", r.Pattern),
		slog.String("code", connect.CodeOf(err).String()))
	oauthwire.WriteError(w, oauthwire.Error(int32(status), oauthwire.ErrServerError, "temporarily unable to answer; retry"))
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
