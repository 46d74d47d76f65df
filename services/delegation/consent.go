package delegation

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd/db"
	pactv1 "pactd/gen/pact/v1"
	"pactd/internal/ids"
	"pactd/internal/rpcerr"
)

// pending finds the pending authorization a consent call names. Every
// lookup of a well-formed code that matches nothing counts against the
// Brand's guessing limit and is audited (without the code); while the limit
// is exhausted every lookup of the Brand is refused with ResourceExhausted
// before the store is asked. A code that exists but was decided, consumed
// or has expired is FailedPrecondition.
func (s *Service) pending(ctx context.Context, op, brandID, userCode string) (db.Brand, db.DeviceAuthorization, error) {
	var v rpcerr.Violations
	if brandID == "" {
		v.Add("brand_id", "is required")
	}
	if userCode == "" {
		v.Add("user_code", "is required")
	}
	if err := v.Err(); err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, err
	}
	b, err := s.loadBrand(ctx, op, brandID)
	if err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, err
	}
	norm, ok := NormalizeUserCode(userCode)
	if !ok {
		// No code has this form; nothing to guess, nothing to look up.
		return db.Brand{}, db.DeviceAuthorization{}, rpcerr.NotFound("user code")
	}
	now := s.now()
	if wait := s.guesses.wait(b.ID, now); wait > 0 {
		s.d.Logger.WarnContext(ctx, "user code lookup refused: guessing limit", slog.String("op", op), slog.String("brand_id", b.ID))
		return db.Brand{}, db.DeviceAuthorization{}, tooManyGuesses(wait)
	}
	d, err := s.d.Store.GetDeviceAuthorizationByUserCode(ctx, b.ID, userCodeHash(b.ID, norm))
	if errors.Is(err, db.ErrNotFound) {
		s.guesses.fail(b.ID, now)
		s.d.Logger.WarnContext(ctx, "user code lookup failed", slog.String("op", op), slog.String("brand_id", b.ID))
		return db.Brand{}, db.DeviceAuthorization{}, rpcerr.NotFound("user code")
	}
	if err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, s.fault(ctx, op+": load authorization", err)
	}
	if err := decidable(d, now); err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, err
	}
	return b, d, nil
}

// decidable is nil for a pending, unexpired authorization, else the
// FailedPrecondition error that says why it cannot be decided.
func decidable(d db.DeviceAuthorization, now time.Time) error {
	switch {
	case d.Status != db.DevicePending:
		return failedPrecondition("the authorization was already decided")
	case !now.Before(d.ExpiresAt):
		return failedPrecondition("the authorization has expired")
	}
	return nil
}

// DescribeConsent returns what the consent page shows for a pending user
// code: the PA, its issuer's origin, the Brand and the requested scopes
// with their descriptions (scopes the Brand no longer defines are left out).
func (s *Service) DescribeConsent(ctx context.Context, req *pactv1.DescribeConsentRequest) (*pactv1.DescribeConsentResponse, error) {
	const op = "describe consent"
	b, d, err := s.pending(ctx, op, req.GetBrandId(), req.GetUserCode())
	if err != nil {
		return nil, err
	}
	a, err := s.d.Store.GetAgent(ctx, d.AgentID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, rpcerr.NotFound("user code")
	}
	if err != nil {
		return nil, s.fault(ctx, op+": load agent", err)
	}
	norm, _ := NormalizeUserCode(req.GetUserCode())
	resp := &pactv1.DescribeConsentResponse{
		AgentDisplayName: a.DisplayName, AgentOrigin: origin(a.Issuer), BrandDisplayName: b.DisplayName,
		UserCode: FormatUserCode(norm), ExpiresAt: timestamppb.New(d.ExpiresAt),
	}
	defined := brandScopes(b)
	for _, sc := range d.Scopes {
		if desc, ok := defined[sc]; ok {
			resp.Scopes = append(resp.Scopes, &pactv1.Scope{Id: sc, Description: desc})
		}
	}
	return resp, nil
}

// origin is scheme://host[:port] of a URL, or "" if it has none.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// ApproveConsent records the User's approval. Granted = requested ∩ chosen
// ∩ the Brand's current scopes; chosen scopes that were not requested are
// ignored, and nothing granted is a deny. The pending → approved change and
// the new grant are one transaction guarded by the pending state, so a
// second decision, a decision after expiry or after a deny changes nothing
// and is FailedPrecondition.
//
// BRAND_LOGIN_MODE_TRUSTED_FRONTEND: brand_user is the User id the calling
// (authenticated) frontend established. BRAND_LOGIN_MODE_SIGNED_ASSERTION:
// verifying the Brand's assertion is not implemented yet (Unimplemented).
func (s *Service) ApproveConsent(ctx context.Context, req *pactv1.ApproveConsentRequest) (*pactv1.ApproveConsentResponse, error) {
	const op = "approve consent"
	var v rpcerr.Violations
	if len(req.GetScopes()) > MaxScopes {
		v.Add("scopes", "at most %d scopes", MaxScopes)
	}
	for i, sc := range req.GetScopes() {
		if len(sc) > MaxScopeID {
			v.Add("scopes", "scope %d is longer than %d bytes", i, MaxScopeID)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	b, d, err := s.pending(ctx, op, req.GetBrandId(), req.GetUserCode())
	if err != nil {
		return nil, err
	}
	if !trustedFrontend(b) {
		return nil, connect.NewError(connect.CodeUnimplemented,
			errors.New("verification of signed Brand login assertions is not implemented yet; use BRAND_LOGIN_MODE_TRUSTED_FRONTEND"))
	}
	checkBrandUser(&v, "brand_user", req.GetBrandUser())
	if req.GetBrandAssertion() != "" {
		v.Add("brand_assertion", "must be empty in BRAND_LOGIN_MODE_TRUSTED_FRONTEND")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	chosen := make(map[string]bool, len(req.GetScopes()))
	for _, sc := range req.GetScopes() {
		chosen[sc] = true
	}
	defined := brandScopes(b)
	granted := []string{}
	for _, sc := range d.Scopes {
		if _, ok := defined[sc]; ok && chosen[sc] {
			granted = append(granted, sc)
		}
	}
	now := s.now()
	if len(granted) == 0 {
		if _, err := s.d.Store.DenyDeviceAuthorization(ctx, d.ID, now); err != nil {
			return nil, s.decisionErr(ctx, op, err)
		}
		s.d.Logger.InfoContext(ctx, "consent denied (nothing granted)", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID))
		return &pactv1.ApproveConsentResponse{Scopes: []string{}}, nil
	}
	g := db.Grant{
		ID: ids.New("a2agrant_", now), BrandID: b.ID, AgentID: d.AgentID, ClientID: d.ClientID,
		BrandUser: req.GetBrandUser(), Scopes: granted, CreateTime: now, ExpireTime: now.Add(GrantTTL),
	}
	if _, g, err = s.d.Store.ApproveDeviceAuthorization(ctx, d.ID, g, now); err != nil {
		return nil, s.decisionErr(ctx, op, err)
	}
	s.d.Logger.InfoContext(ctx, "consent approved", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID),
		slog.String("grant_id", g.ID), slog.Int("scopes", len(granted)))
	return &pactv1.ApproveConsentResponse{GrantId: g.ID, Scopes: g.Scopes}, nil
}

// DenyConsent records the User's refusal; the PA's next poll gets
// access_denied. Like ApproveConsent it only moves a pending, unexpired
// authorization.
func (s *Service) DenyConsent(ctx context.Context, req *pactv1.DenyConsentRequest) (*pactv1.DenyConsentResponse, error) {
	const op = "deny consent"
	b, d, err := s.pending(ctx, op, req.GetBrandId(), req.GetUserCode())
	if err != nil {
		return nil, err
	}
	if _, err := s.d.Store.DenyDeviceAuthorization(ctx, d.ID, s.now()); err != nil {
		return nil, s.decisionErr(ctx, op, err)
	}
	s.d.Logger.InfoContext(ctx, "consent denied", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID))
	return &pactv1.DenyConsentResponse{}, nil
}

// decisionErr maps a failed guarded decision: another decision won the race
// (or the code expired meanwhile).
func (s *Service) decisionErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return failedPrecondition("the authorization was already decided or has expired")
	}
	return s.fault(ctx, op+": store", err)
}

// checkBrandUser requires a Brand user id: 1 to 256 bytes of UTF-8 without
// control characters.
func checkBrandUser(v *rpcerr.Violations, field, u string) {
	switch {
	case u == "":
		v.Add(field, "is required")
	case len(u) > MaxBrandUser || !utf8.ValidString(u):
		v.Add(field, "must be valid UTF-8 of at most %d bytes", MaxBrandUser)
	case strings.ContainsFunc(u, func(r rune) bool { return r < ' ' || r == 0x7f }):
		v.Add(field, "must not contain control characters")
	}
}
