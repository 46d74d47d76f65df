// Package token is the token endpoint of the delegation service (RFC 6749
// §3.2, RFC 8628 §3.4, PACT §5.4): it redeems approved device codes,
// rotates refresh tokens (a reused one revokes its grant), mints
// delegation tokens, and revokes tokens (RFC 7009).
package token

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/codes"
	"pactd.dev/pactd/token/delegtoken"
	"pactd.dev/pactd/token/jws"
)

// Service answers IssueDelegation and RevokeToken.
type Service struct{ env *base.Env }

// New returns the token endpoint over env.
func New(env *base.Env) *Service { return &Service{env: env} }

// IssueDelegation is the token endpoint (RFC 6749 §3.2, RFC 8628 §3.4,
// PACT §5.3). After the checks every PA endpoint shares (bare 401, 401
// invalid_client, bare 404, 400 unauthorized_client): no grant_type is
// invalid_request and an unknown one unsupported_grant_type.
//
// Device-code grant, looked up by hash and Brand: unknown, of another Brand,
// or issued to another PA or client_id → invalid_grant; consumed →
// invalid_grant; expired → expired_token; denied → access_denied; pending →
// authorization_pending, or slow_down when polled before the interval has
// passed since the previous poll (and the stored interval grows by 5 s);
// approved → one guarded approved → consumed update (exactly one of any
// number of concurrent redemptions wins; the others get invalid_grant) and a
// token response.
//
// Refresh grant, rotated on every use: unknown, expired, of another Brand or
// client, or of a revoked or expired grant → invalid_grant (without burning
// the token). A token used before (including the loser of two concurrent
// refreshes) → invalid_grant, and the whole grant is revoked (RFC 9700
// §4.14.2): the server cannot tell the legitimate client from a thief.
func (s *Service) IssueDelegation(ctx context.Context, req *pactv1.IssueDelegationRequest) (*pactv1.IssueDelegationResponse, error) {
	const op = "issue delegation"
	c, refusal, err := s.env.Authenticate(ctx, op, req.GetBrandId(), req.GetAuthorization(), req.GetClientId())
	if err != nil || refusal != nil {
		return &pactv1.IssueDelegationResponse{Error: refusal}, err
	}
	switch req.GetGrantType() {
	case oauthwire.GrantTypeDeviceCode:
		return s.redeemDeviceCode(ctx, c, req.GetDeviceCode())
	case oauthwire.GrantTypeRefreshToken:
		return s.refresh(ctx, c, req.GetRefreshToken())
	case "":
		return refuseToken(oauthwire.ErrInvalidRequest, "grant_type is required"), nil
	default:
		return refuseToken(oauthwire.ErrUnsupportedGrantType, "grant_type must be "+oauthwire.GrantTypeDeviceCode+" or "+oauthwire.GrantTypeRefreshToken), nil
	}
}

func refuseToken(code, description string) *pactv1.IssueDelegationResponse {
	return &pactv1.IssueDelegationResponse{Error: oauthwire.Refusal(code, description)}
}

func (s *Service) redeemDeviceCode(ctx context.Context, c base.Client, deviceCode string) (*pactv1.IssueDelegationResponse, error) {
	const op = "redeem device code"
	if deviceCode == "" {
		return refuseToken(oauthwire.ErrInvalidRequest, "device_code is required"), nil
	}
	unknown := refuseToken(oauthwire.ErrInvalidGrant, "device_code is unknown, expired for good, or not this client's")
	if !codes.WellFormedSecret(deviceCode, codes.DeviceCodePrefix) {
		return unknown, nil
	}
	hash := codes.SecretHash(deviceCode)
	d, err := s.env.D.Store.GetDeviceAuthorizationByDeviceCode(ctx, c.Brand.ID, hash)
	if errors.Is(err, db.ErrNotFound) {
		return unknown, nil
	}
	if err != nil {
		return nil, s.env.Fault(ctx, op+": load", err)
	}
	if d.AgentID != c.PA.Agent.ID || d.ClientID != c.ID {
		return unknown, nil
	}
	now := s.env.Now()
	// At most two rounds: a guarded update that matches nothing means the
	// state changed under us (a decision landed), so look again once.
	for round := 0; ; round++ {
		switch {
		case d.Status == db.DeviceConsumed:
			return refuseToken(oauthwire.ErrInvalidGrant, "device_code was already redeemed"), nil
		case !now.Before(d.ExpiresAt):
			return refuseToken(oauthwire.ErrExpiredToken, "device_code has expired; start a new device authorization"), nil
		case d.Status == db.DeviceDenied:
			return refuseToken(oauthwire.ErrAccessDenied, "the User denied the request"), nil
		case d.Status == db.DeviceApproved:
			return s.issueForDevice(ctx, c, d, now)
		}
		_, outcome, err := s.env.D.Store.PollDeviceAuthorization(ctx, d.ID, now, base.SlowDownStep)
		switch {
		case err == nil && outcome == db.PollSlowDown:
			return refuseToken(oauthwire.ErrSlowDown, "polling too fast; add 5 seconds to the interval"), nil
		case err == nil:
			return refuseToken(oauthwire.ErrAuthorizationPending, "the User has not decided yet"), nil
		case !errors.Is(err, db.ErrNotFound):
			return nil, s.env.Fault(ctx, op+": poll", err)
		case round > 0:
			return nil, s.env.Fault(ctx, op, errors.New("authorization state keeps changing"))
		}
		if d, err = s.env.D.Store.GetDeviceAuthorizationByDeviceCode(ctx, c.Brand.ID, hash); err != nil {
			return nil, s.env.Fault(ctx, op+": reload", err)
		}
	}
}

// issueForDevice redeems an approved authorization. The token is minted
// before the guarded consume, so a failure to sign never burns the code,
// and a lost race discards a token nobody saw.
func (s *Service) issueForDevice(ctx context.Context, c base.Client, d db.DeviceAuthorization, now time.Time) (*pactv1.IssueDelegationResponse, error) {
	const op = "redeem device code"
	g, err := s.env.D.Store.GetGrant(ctx, d.GrantID)
	if errors.Is(err, db.ErrNotFound) {
		return refuseToken(oauthwire.ErrInvalidGrant, "the grant no longer exists"), nil
	}
	if err != nil {
		return nil, s.env.Fault(ctx, op+": load grant", err)
	}
	if !grantLive(g, now) {
		return refuseToken(oauthwire.ErrInvalidGrant, "the grant was revoked or has expired"), nil
	}
	access, rt, body, err := s.mint(ctx, c, g, now)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": mint", err)
	}
	if _, err := s.env.D.Store.RedeemDeviceAuthorization(s.env.AuditGrant(ctx, db.AuditGrantRedeemed, g, db.ActorPA, ""), d.ID, now, rt.record); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return refuseToken(oauthwire.ErrInvalidGrant, "device_code was already redeemed"), nil
		}
		return nil, s.env.Fault(ctx, op+": consume", err)
	}
	s.env.Recorded(db.AuditGrantRedeemed)
	s.env.D.Logger.InfoContext(ctx, "delegation issued", slog.String("brand_id", c.Brand.ID), slog.String("agent_id", c.PA.Agent.ID),
		slog.String("grant_id", g.ID), slog.String("grant_type", "device_code"))
	return tokenResponse(access, rt.secret, body), nil
}

func (s *Service) refresh(ctx context.Context, c base.Client, token string) (*pactv1.IssueDelegationResponse, error) {
	const op = "refresh delegation"
	if token == "" {
		return refuseToken(oauthwire.ErrInvalidRequest, "refresh_token is required"), nil
	}
	bad := refuseToken(oauthwire.ErrInvalidGrant, "refresh_token is unknown, expired, used, revoked or not this client's")
	if !codes.WellFormedSecret(token, codes.RefreshTokenPrefix) {
		return bad, nil
	}
	hash := codes.SecretHash(token)
	old, err := s.env.D.Store.GetRefreshToken(ctx, hash)
	if errors.Is(err, db.ErrNotFound) {
		return bad, nil
	}
	if err != nil {
		return nil, s.env.Fault(ctx, op+": load token", err)
	}
	g, err := s.env.D.Store.GetGrant(ctx, old.GrantID)
	if errors.Is(err, db.ErrNotFound) {
		return bad, nil
	}
	if err != nil {
		return nil, s.env.Fault(ctx, op+": load grant", err)
	}
	if g.BrandID != c.Brand.ID || g.ClientID != c.ID || g.AgentID != c.PA.Agent.ID {
		// Not this client's: refuse without touching the token or grant.
		return bad, nil
	}
	now := s.env.Now()
	if !old.UsedAt.IsZero() {
		return s.reuse(ctx, g, now, bad)
	}
	if !now.Before(old.ExpiresAt) || !grantLive(g, now) {
		return bad, nil
	}
	access, rt, body, err := s.mint(ctx, c, g, now)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": mint", err)
	}
	if _, err := s.env.D.Store.RotateRefreshToken(s.env.AuditGrant(ctx, db.AuditGrantRefreshed, g, db.ActorPA, ""), hash, c.Brand.ID, c.ID, now, rt.record); err != nil {
		if !errors.Is(err, db.ErrNotFound) {
			return nil, s.env.Fault(ctx, op+": rotate", err)
		}
		// The guard failed: used meanwhile (a concurrent refresh or a
		// replay), or the grant was revoked.
		again, gerr := s.env.D.Store.GetRefreshToken(ctx, hash)
		if gerr == nil && !again.UsedAt.IsZero() {
			return s.reuse(ctx, g, now, bad)
		}
		return bad, nil
	}
	s.env.Recorded(db.AuditGrantRefreshed)
	s.env.D.Logger.InfoContext(ctx, "delegation refreshed", slog.String("brand_id", c.Brand.ID), slog.String("agent_id", c.PA.Agent.ID),
		slog.String("grant_id", g.ID))
	return tokenResponse(access, rt.secret, body), nil
}

// reuse answers a refresh token presented after it was rotated: the grant
// is revoked (RFC 9700 §4.14.2), then invalid_grant.
func (s *Service) reuse(ctx context.Context, g db.Grant, now time.Time, bad *pactv1.IssueDelegationResponse) (*pactv1.IssueDelegationResponse, error) {
	revoked, err := s.env.D.Store.RevokeGrant(s.env.AuditGrant(ctx, db.AuditGrantReuseRevoked, g, db.ActorPA, ""), g.ID, now)
	if err != nil {
		return nil, s.env.Fault(ctx, "refresh delegation: revoke on reuse", err)
	}
	if revoked {
		s.env.Recorded(db.AuditGrantReuseRevoked)
	}
	s.env.D.Logger.WarnContext(ctx, "refresh token reused; grant revoked", slog.String("brand_id", g.BrandID),
		slog.String("agent_id", g.AgentID), slog.String("grant_id", g.ID))
	return bad, nil
}

func grantLive(g db.Grant, now time.Time) bool {
	return g.RevokeTime.IsZero() && now.Before(g.ExpireTime)
}

// newRefresh is a fresh refresh token: the secret for the PA and the
// record (hash only) for the store.
type newRefresh struct {
	secret string
	record db.RefreshToken
}

// mint signs a delegation token for the grant (at most an hour, never past
// the grant) and draws the next refresh token (expiring with the grant).
func (s *Service) mint(ctx context.Context, c base.Client, g db.Grant, now time.Time) (string, newRefresh, oauthwire.TokenBody, error) {
	if s.env.D.Minter == nil {
		return "", newRefresh{}, oauthwire.TokenBody{}, errors.New("no delegation token signer is configured")
	}
	exp := now.Add(base.AccessTokenTTL)
	if g.ExpireTime.Before(exp) {
		exp = g.ExpireTime
	}
	access, err := s.env.D.Minter.Mint(ctx, delegtoken.Claims{
		Issuer: s.env.Issuer(c.Brand.ID), Audience: s.env.InterfaceURL(c.Brand.ID), Subject: g.BrandUser,
		ClientID: g.ClientID, GrantID: g.ID, Scopes: g.Scopes, IssuedAt: now, ExpiresAt: exp,
		AuthorizationDetails: rawDetails(g.AuthorizationDetails),
	})
	if err != nil {
		return "", newRefresh{}, oauthwire.TokenBody{}, err
	}
	secret, err := codes.RandomSecret(s.env.D.Rand, codes.RefreshTokenPrefix)
	if err != nil {
		return "", newRefresh{}, oauthwire.TokenBody{}, err
	}
	rt := newRefresh{secret: secret, record: db.RefreshToken{
		TokenHash: codes.SecretHash(secret), GrantID: g.ID, ExpiresAt: g.ExpireTime, CreateTime: now,
	}}
	body := oauthwire.TokenBody{
		TokenType: "Bearer", AccessToken: access, RefreshToken: secret,
		ExpiresIn: int32(exp.Sub(now) / time.Second), Scope: strings.Join(g.Scopes, " "),
		AuthorizationDetails: rawDetails(g.AuthorizationDetails),
	}
	return access, rt, body, nil
}

// rawDetails is a grant's details as a JSON value; nil (omitted) for a
// scope-only grant.
func rawDetails(canonical string) json.RawMessage {
	if canonical == "" {
		return nil
	}
	return json.RawMessage(canonical)
}

func tokenResponse(access, refresh string, body oauthwire.TokenBody) *pactv1.IssueDelegationResponse {
	raw, _ := json.Marshal(body) // strings, ints and details pactd canonicalized: cannot fail
	return &pactv1.IssueDelegationResponse{
		AccessToken: access, TokenType: body.TokenType, RefreshToken: refresh, ExpiresIn: body.ExpiresIn,
		Scope: body.Scope, BodyJson: string(raw), AuthorizationDetailsJson: string(body.AuthorizationDetails),
	}
}

// RevokeToken is the PA's revocation endpoint (RFC 7009). After the checks
// every PA endpoint shares, a missing token is invalid_request; otherwise
// the answer is always success (200, empty body). A refresh token, or a
// delegation token, whose grant belongs to this Brand and this client
// revokes that grant; anything else (unknown, expired, malformed, another
// client's) changes nothing. A delegation token's grant_id is read without
// verifying its signature: that is safe because only a grant of the
// authenticated client at this Brand is ever revoked, which that client may
// do anyway.
func (s *Service) RevokeToken(ctx context.Context, req *pactv1.RevokeTokenRequest) (*pactv1.RevokeTokenResponse, error) {
	const op = base.RevokeTokenOp
	c, refusal, err := s.env.Authenticate(ctx, op, req.GetBrandId(), req.GetAuthorization(), req.GetClientId())
	if err != nil || refusal != nil {
		return &pactv1.RevokeTokenResponse{Error: refusal}, err
	}
	tok := req.GetToken()
	if tok == "" {
		return &pactv1.RevokeTokenResponse{Error: oauthwire.Refusal(oauthwire.ErrInvalidRequest, "token is required")}, nil
	}
	var grantID string
	switch {
	case codes.WellFormedSecret(tok, codes.RefreshTokenPrefix):
		rt, err := s.env.D.Store.GetRefreshToken(ctx, codes.SecretHash(tok))
		if errors.Is(err, db.ErrNotFound) {
			return &pactv1.RevokeTokenResponse{}, nil
		}
		if err != nil {
			return nil, s.env.Fault(ctx, op+": load token", err)
		}
		grantID = rt.GrantID
	default:
		grantID = unverifiedGrantID(tok)
	}
	if grantID == "" {
		return &pactv1.RevokeTokenResponse{}, nil
	}
	g, err := s.env.D.Store.GetGrant(ctx, grantID)
	if errors.Is(err, db.ErrNotFound) {
		return &pactv1.RevokeTokenResponse{}, nil
	}
	if err != nil {
		return nil, s.env.Fault(ctx, op+": load grant", err)
	}
	if g.BrandID != c.Brand.ID || g.ClientID != c.ID || g.AgentID != c.PA.Agent.ID {
		return &pactv1.RevokeTokenResponse{}, nil
	}
	revoked, err := s.env.D.Store.RevokeGrant(s.env.AuditGrant(ctx, db.AuditGrantRevoked, g, db.ActorPA, "revoked by its client (RFC 7009)"), g.ID, s.env.Now())
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return nil, s.env.Fault(ctx, op+": revoke", err)
	}
	if revoked {
		s.env.Recorded(db.AuditGrantRevoked)
		s.env.D.Logger.InfoContext(ctx, "grant revoked by its client", slog.String("brand_id", g.BrandID),
			slog.String("agent_id", g.AgentID), slog.String("grant_id", g.ID))
	}
	return &pactv1.RevokeTokenResponse{}, nil
}

// unverifiedGrantID reads grant_id from a compact JWS payload without
// checking the signature; "" when there is none. It goes through the same
// parser front end as every verified token (size bound, three segments,
// strict base64url, a JSON object of unique members), so it never reads a
// grant id that the token's own verifier would read differently.
func unverifiedGrantID(tok string) string {
	parts, err := jws.Split(tok, delegtoken.MaxTokenBytes)
	if err != nil {
		return ""
	}
	payload, ok := jws.Decode(parts.Payload)
	if !ok {
		return ""
	}
	claims, ok := jws.Members(payload)
	if !ok {
		return ""
	}
	id, _, ok := jws.StringMember(claims, "grant_id")
	if !ok || len(id) > base.MaxIDLen {
		return ""
	}
	return id
}
