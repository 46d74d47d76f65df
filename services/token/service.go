// Package token implements pact.v1.TokenService: delegation-token
// introspection (RFC 7662), receipt signing (PACT §5.6), the Provider's
// JWKS, each Brand's RFC 8414 authorization-server metadata (§5.2), and
// signing-key rotation.
package token

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/brandid"
	"pactd.dev/pactd/internal/jcs"
	"pactd.dev/pactd/internal/pacturl"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/token/authzdetails"
	"pactd.dev/pactd/token/delegtoken"
)

// Literals clients compare byte for byte.
const (
	// CacheControl is served with the JWKS and the metadata (PACT §5,
	// reference constants: public, max-age=300).
	CacheControl = provkeys.JWKSCacheControl
	// TokenTypeBearer is the token_type of an active token.
	TokenTypeBearer = "Bearer"
	// DeviceCodeGrantType is the RFC 8628 grant type.
	DeviceCodeGrantType = "urn:ietf:params:oauth:grant-type:device_code"
)

// Deps are the service's collaborators.
type Deps struct {
	// Brands finds Brands.
	Brands BrandStore
	// Grants checks grant liveness (required): no token is called active,
	// and no receipt is signed, without a live grant.
	Grants GrantChecker
	// Keys publishes and rotates the signing keys.
	Keys KeyRing
	// Verifier verifies delegation tokens.
	Verifier TokenVerifier
	// Signer signs receipts.
	Signer ReceiptSigner
	// Audit records every receipt signed (required): a receipt whose event
	// could not be stored is not returned.
	Audit AuditRecorder
	// OnAudit is called once for each audit event stored (for the metric);
	// may be nil.
	OnAudit func(kind db.AuditKind)
	// PublicURL is the Provider's public base URL (no trailing slash);
	// interface URLs are {PublicURL}/a2a/{brandId}.
	PublicURL string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives one line per unexpected fault, and refusal reasons
	// at debug level (never a token).
	Logger *slog.Logger
}

// Service implements pactv1connect.TokenServiceHandler.
type Service struct {
	pactv1connect.UnimplementedTokenServiceHandler
	d Deps
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{d: d}
}

// interfaceURL is a Brand's A2A interface URL.
func (s *Service) interfaceURL(brandID string) string {
	return pacturl.Interface(s.d.PublicURL, brandID)
}

// brandOf returns the Brand id of one of this Provider's interface URLs.
func (s *Service) brandOf(aud string) (string, bool) {
	id, ok := strings.CutPrefix(aud, pacturl.Interface(s.d.PublicURL, ""))
	return id, ok && brandid.Valid(id)
}

// inactive is the whole answer for any token that is not valid now.
func inactive() *pactv1.IntrospectTokenResponse {
	return &pactv1.IntrospectTokenResponse{Active: false}
}

// IntrospectToken reports whether a delegation token is active: genuine
// (delegtoken.Verify), for an existing Brand with delegation enabled,
// carrying a live grant of that Brand, client and Brand user, and with an
// authorization_details claim equal to the grant's (authzdetails.Match:
// both absent, or the same canonical JSON). Anything else is active=false
// and nothing more; the reason goes to the log. The details returned are
// the grant's, from the store.
func (s *Service) IntrospectToken(ctx context.Context, req *pactv1.IntrospectTokenRequest) (*pactv1.IntrospectTokenResponse, error) {
	if req.GetToken() == "" {
		return nil, rpcerr.InvalidField("token", "is required")
	}
	var (
		want  delegtoken.Expect
		b     db.Brand
		known bool // b is loaded
	)
	if id := req.GetBrandId(); id != "" {
		var err error
		if b, err = s.load(ctx, id); err != nil {
			return nil, err
		}
		known = true
		want.Audience = s.interfaceURL(id)
		want.Issuer = want.Audience + delegtoken.IssuerSuffix
	}
	want.ClientID = req.GetClientId()
	c, err := s.d.Verifier.Verify(ctx, req.GetToken(), want)
	var refused *delegtoken.Error
	if errors.As(err, &refused) {
		s.d.Logger.DebugContext(ctx, "token inactive", slog.String("reason", string(refused.Reason)))
		return inactive(), nil
	}
	if err != nil {
		return nil, s.fault(ctx, "introspect token: keys", err)
	}
	brandID, ok := s.brandOf(c.Audience)
	if !ok {
		s.d.Logger.DebugContext(ctx, "token inactive", slog.String("reason", "foreign_audience"))
		return inactive(), nil
	}
	if !known {
		b, err = s.d.Brands.GetBrand(ctx, brandID)
	}
	if errors.Is(err, db.ErrNotFound) || (err == nil && !b.Delegation.Enabled) {
		s.d.Logger.DebugContext(ctx, "token inactive", slog.String("reason", "brand_without_delegation"), slog.String("brand_id", brandID))
		return inactive(), nil
	}
	if err != nil {
		return nil, s.fault(ctx, "introspect token: load brand", err)
	}
	details, live, err := s.d.Grants.LiveGrantDetails(ctx, c.GrantID, brandID, c.ClientID, c.Subject, s.d.Now())
	if err != nil {
		return nil, s.fault(ctx, "introspect token: check grant", err)
	}
	if !live {
		s.d.Logger.DebugContext(ctx, "token inactive", slog.String("reason", "grant_not_live"), slog.String("grant_id", c.GrantID))
		return inactive(), nil
	}
	entries, same := authzdetails.Match(details, c.AuthorizationDetails)
	if !same {
		s.d.Logger.WarnContext(ctx, "token inactive", slog.String("reason", "authorization_details_mismatch"), slog.String("grant_id", c.GrantID))
		return inactive(), nil
	}
	resp := &pactv1.IntrospectTokenResponse{
		Active: true, Scope: strings.Join(c.Scopes, " "), ClientId: c.ClientID, Sub: c.Subject,
		Aud: c.Audience, Iss: c.Issuer, Exp: timestamppb.New(c.ExpiresAt), Iat: timestamppb.New(c.IssuedAt),
		GrantId: c.GrantID, TokenType: TokenTypeBearer, AuthorizationDetailsJson: details, Jti: c.ID,
	}
	for _, e := range entries {
		resp.AuthorizationDetails = append(resp.AuthorizationDetails, authzdetails.Proto(e))
	}
	return resp, nil
}

// receiptFields maps receipt claim names to request fields.
var receiptFields = map[string]string{
	"grantId": "grant_id", "user": "brand_user", "pa": "pa_issuer", "brand": "brand_id",
	"scopesUsed": "scopes_used", "actions": "actions", "ts": "ts",
}

// requestField turns a delegtoken claim path (actions[2].argsHash) into
// the request field path (actions[2].args_hash).
func requestField(claim string) string {
	head, rest, _ := strings.Cut(claim, "[")
	f, ok := receiptFields[head]
	if !ok {
		f = head
	}
	if rest != "" {
		f += "[" + strings.Replace(rest, ".argsHash", ".args_hash", 1)
	}
	return f
}

// MaxArgsJSONBytes bounds one action's args_json.
const MaxArgsJSONBytes = 64 << 10

// argsHashes computes each action's receipt argsHash from its args_json:
// base64url (no padding) of the SHA-256 of the RFC 8785 canonical form, so
// a PA that knows the arguments recomputes it in any language; "" for an
// action without arguments. A caller-supplied args_hash is refused: a hash
// pactd did not compute is one no PA can recompute.
func argsHashes(actions []*pactv1.ReceiptAction) ([]string, error) {
	out := make([]string, len(actions))
	for i, a := range actions {
		field := fmt.Sprintf("actions[%d]", i)
		if a.GetArgsHash() != "" {
			return nil, rpcerr.InvalidField(field+".args_hash", "is computed by pactd: send the arguments as args_json")
		}
		if a.GetArgsJson() == "" {
			continue
		}
		if len(a.GetArgsJson()) > MaxArgsJSONBytes {
			return nil, rpcerr.InvalidField(field+".args_json", "is longer than %d bytes", MaxArgsJSONBytes)
		}
		canon, err := jcs.Canonicalize([]byte(a.GetArgsJson()))
		if err != nil {
			return nil, rpcerr.InvalidField(field+".args_json", "is not I-JSON (RFC 7493): %s", err.Error())
		}
		sum := sha256.Sum256(canon)
		out[i] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return out, nil
}

// SignReceipt signs the receipt of a delegated reply. The claims are
// grantId, user (brand_user), pa (pa_issuer), brand (the Brand's interface
// URL), scopesUsed and actions (always arrays) and ts (RFC 3339, UTC).
func (s *Service) SignReceipt(ctx context.Context, req *pactv1.SignReceiptRequest) (*pactv1.SignReceiptResponse, error) {
	var v rpcerr.Violations
	for _, f := range []struct{ name, val string }{
		{"brand_id", req.GetBrandId()}, {"grant_id", req.GetGrantId()},
		{"pa_issuer", req.GetPaIssuer()}, {"brand_user", req.GetBrandUser()},
	} {
		if f.val == "" {
			v.Add(f.name, "is required")
		}
	}
	if req.Ts != nil && req.GetTs().CheckValid() != nil {
		v.Add("ts", "must be a valid timestamp")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	rc := delegtoken.ReceiptClaims{
		GrantID: req.GetGrantId(), User: req.GetBrandUser(), PA: req.GetPaIssuer(),
		Brand: s.interfaceURL(req.GetBrandId()), ScopesUsed: req.GetScopesUsed(), TS: s.d.Now(),
	}
	if req.Ts != nil {
		rc.TS = req.GetTs().AsTime()
	}
	hashes, err := argsHashes(req.GetActions())
	if err != nil {
		return nil, err
	}
	for i, a := range req.GetActions() {
		rc.Actions = append(rc.Actions, delegtoken.ReceiptAction{Tool: a.GetTool(), ArgsHash: hashes[i]})
	}
	var fe *delegtoken.FieldError
	if err := rc.Validate(); errors.As(err, &fe) {
		return nil, rpcerr.InvalidField(requestField(fe.Field), "%s", fe.Problem)
	}
	b, err := s.load(ctx, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	live, err := s.d.Grants.GrantLiveAt(ctx, req.GetGrantId(), b.ID, req.GetPaIssuer(), req.GetBrandUser(), s.d.Now())
	if err != nil {
		return nil, s.fault(ctx, "sign receipt: check grant", err)
	}
	if !live {
		return nil, rpcerr.FailedPrecondition.Err(
			"the grant is not live for this Brand, PA and Brand user")
	}
	jws, claims, err := s.d.Signer.SignReceipt(ctx, rc)
	if errors.As(err, &fe) {
		return nil, rpcerr.InvalidField(requestField(fe.Field), "%s", fe.Problem)
	}
	if err != nil {
		return nil, s.fault(ctx, "sign receipt", err)
	}
	if err := s.auditReceipt(ctx, req, hashes, jws); err != nil {
		return nil, s.fault(ctx, "sign receipt: audit", err)
	}
	receipt, err := json.Marshal(struct {
		JWS    string          `json:"jws"`
		Claims json.RawMessage `json:"claims"`
	}{jws, claims})
	if err != nil {
		return nil, s.fault(ctx, "sign receipt: encode", err)
	}
	return &pactv1.SignReceiptResponse{Jws: jws, ClaimsJson: string(claims), ReceiptJson: string(receipt)}, nil
}

// auditReceipt records a signed receipt on the audit trail: the grant's
// parties (the store fills the PA's agent id from the grant), the scopes
// used, the actions, and the SHA-256 of the JWS, by which a Brand holding
// the receipt finds its event.
func (s *Service) auditReceipt(ctx context.Context, req *pactv1.SignReceiptRequest, hashes []string, jws string) error {
	sum := sha256.Sum256([]byte(jws))
	e := db.AuditEvent{
		Kind: db.AuditReceiptSigned, Time: s.d.Now(), BrandID: req.GetBrandId(), BrandUser: req.GetBrandUser(),
		ClientID: req.GetPaIssuer(), GrantID: req.GetGrantId(), Scopes: req.GetScopesUsed(),
		Actor: callerActor(ctx), Detail: base64.RawURLEncoding.EncodeToString(sum[:]),
	}
	for i, a := range req.GetActions() {
		e.Actions = append(e.Actions, db.AuditAction{Tool: a.GetTool(), ArgsHash: hashes[i]})
	}
	if _, err := s.d.Audit.RecordAuditEvent(ctx, e); err != nil {
		return err
	}
	if s.d.OnAudit != nil {
		s.d.OnAudit(db.AuditReceiptSigned)
	}
	return nil
}

// callerActor is the actor of an RPC: the caller's role.
func callerActor(ctx context.Context) string {
	if auth.RoleFrom(ctx) == db.RoleAdmin {
		return db.ActorAdmin
	}
	return db.ActorFrontend
}

// GetJwks returns the Provider's JWKS: the active key, the next key and
// the retired keys whose tokens may still be live.
func (s *Service) GetJwks(ctx context.Context, _ *pactv1.GetJwksRequest) (*pactv1.GetJwksResponse, error) {
	doc, err := s.d.Keys.JWKS(ctx)
	if err != nil {
		return nil, s.fault(ctx, "get jwks", err)
	}
	return &pactv1.GetJwksResponse{JwksJson: string(doc), CacheControl: CacheControl}, nil
}

// asMetadata is a Brand's RFC 8414 metadata, members in this order. It
// carries every member RFC 8414 §2 marks REQUIRED, and every member that
// it makes REQUIRED by what it lists:
//   - issuer;
//   - token_endpoint (REQUIRED unless only the implicit grant is offered);
//   - response_types_supported, REQUIRED although no grant pactd offers
//     (device code, refresh) uses the authorization endpoint, so it is the
//     empty list (and authorization_endpoint, REQUIRED only when a grant
//     uses it, is absent);
//   - token_endpoint_auth_signing_alg_values_supported and its revocation
//     twin, which MUST be present when private_key_jwt is listed: the PA
//     authenticates with its PA JWT, ES256 or RS256.
//
// device_authorization_endpoint is RFC 8628 §4's.
type asMetadata struct {
	Issuer                                    string   `json:"issuer"`
	DeviceAuthorizationEndpoint               string   `json:"device_authorization_endpoint"`
	TokenEndpoint                             string   `json:"token_endpoint"`
	JWKSURI                                   string   `json:"jwks_uri"`
	RevocationEndpoint                        string   `json:"revocation_endpoint"`
	ScopesSupported                           []string `json:"scopes_supported"`
	ResponseTypesSupported                    []string `json:"response_types_supported"`
	GrantTypesSupported                       []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported         []string `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthSigningAlgValues         []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	RevocationEndpointAuthMethodsSupported    []string `json:"revocation_endpoint_auth_methods_supported"`
	RevocationEndpointAuthSigningAlgSupported []string `json:"revocation_endpoint_auth_signing_alg_values_supported"`
	// AuthorizationDetailsTypesSupported (RFC 9396 §10) is listed only when
	// the Brand declares types (PACT §5.7).
	AuthorizationDetailsTypesSupported []string `json:"authorization_details_types_supported,omitempty"`
}

// clientAuthAlgs are the algorithms of the PA JWT that authenticates a PA
// at the token and revocation endpoints (spec §3: ES256 or RS256).
var clientAuthAlgs = []string{"ES256", "RS256"}

// GetAuthorizationServerMetadata returns a Brand's RFC 8414 metadata
// (PACT §5.2; served at {issuer}/.well-known/oauth-authorization-server):
// issuer {interfaceUrl}/oauth and the endpoints under it, the Brand's
// scopes, no response types, the device-code and refresh grants,
// private_key_jwt with ES256 and RS256, and, when the Brand declares any,
// its authorization_details types. NotFound for an unknown Brand,
// FailedPrecondition for a Brand without delegation.
func (s *Service) GetAuthorizationServerMetadata(ctx context.Context, req *pactv1.GetAuthorizationServerMetadataRequest) (*pactv1.GetAuthorizationServerMetadataResponse, error) {
	b, err := s.load(ctx, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	if !b.Delegation.Enabled {
		return nil, rpcerr.FailedPrecondition.Err(
			"delegation is not enabled for this Brand")
	}
	iss := s.interfaceURL(b.ID) + delegtoken.IssuerSuffix
	md := asMetadata{
		Issuer: iss, DeviceAuthorizationEndpoint: iss + "/device_authorization", TokenEndpoint: iss + "/token",
		JWKSURI: iss + "/jwks.json", RevocationEndpoint: iss + "/revoke",
		ScopesSupported:                           make([]string, 0, len(b.Delegation.Scopes)),
		ResponseTypesSupported:                    []string{},
		GrantTypesSupported:                       []string{DeviceCodeGrantType, "refresh_token"},
		TokenEndpointAuthMethodsSupported:         []string{"private_key_jwt"},
		TokenEndpointAuthSigningAlgValues:         clientAuthAlgs,
		RevocationEndpointAuthMethodsSupported:    []string{"private_key_jwt"},
		RevocationEndpointAuthSigningAlgSupported: clientAuthAlgs,
	}
	for _, sc := range b.Delegation.Scopes {
		md.ScopesSupported = append(md.ScopesSupported, sc.ID)
	}
	for _, t := range b.Delegation.AuthorizationDetailsTypes {
		md.AuthorizationDetailsTypesSupported = append(md.AuthorizationDetailsTypesSupported, t.Type)
	}
	doc, err := json.Marshal(md)
	if err != nil {
		return nil, s.fault(ctx, "encode metadata", err)
	}
	return &pactv1.GetAuthorizationServerMetadataResponse{MetadataJson: string(doc), CacheControl: CacheControl}, nil
}

// RotateSigningKey adds a signing key that is published now and signs
// once it has been published for the publish delay.
func (s *Service) RotateSigningKey(ctx context.Context, _ *pactv1.RotateSigningKeyRequest) (*pactv1.RotateSigningKeyResponse, error) {
	info, err := s.d.Keys.Rotate(ctx)
	if errors.Is(err, provkeys.ErrConcurrentRotation) {
		return nil, rpcerr.Conflict.Err(
			"another rotation happened at the same time; check the JWKS before rotating again")
	}
	if err != nil {
		return nil, s.fault(ctx, "rotate signing key", err)
	}
	s.d.Logger.InfoContext(ctx, "signing key rotated", slog.String("kid", info.KID), slog.Time("activate_time", info.ActivateTime))
	return &pactv1.RotateSigningKeyResponse{Kid: info.KID, ActivateTime: timestamppb.New(info.ActivateTime)}, nil
}

func (s *Service) load(ctx context.Context, id string) (db.Brand, error) {
	if id == "" {
		return db.Brand{}, rpcerr.InvalidField("brand_id", "is required")
	}
	if !brandid.Valid(id) {
		return db.Brand{}, rpcerr.NotFound("brand")
	}
	b, err := s.d.Brands.GetBrand(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Brand{}, rpcerr.NotFound("brand")
	}
	if err != nil {
		return db.Brand{}, s.fault(ctx, "load brand", err)
	}
	return b, nil
}

func (s *Service) fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, s.d.Logger, op, err)
}
