// Package consent is the User's side of the delegation service: the
// consent page (DescribeConsent, ApproveConsent, DenyConsent), its consent
// session (BeginConsent), the connected page where a User sees and revokes
// grants (BeginConnected, RevokeConnected), Brand login assertions
// (verified by token/brandassert), and approving a request an existing
// grant covers (package skip decides which).
package consent

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/codes"
	"pactd.dev/pactd/services/delegation/skip"
)

// Service answers the consent and connected pages' calls.
type Service struct{ env *base.Env }

// New returns the consent part over env.
func New(env *base.Env) *Service { return &Service{env: env} }

// consentBrand checks the fields every consent RPC shares (brand_id and
// user_code required, source bounded) and loads the Brand: NotFound when
// unknown, FailedPrecondition when it does not offer delegation.
func (s *Service) consentBrand(ctx context.Context, op, brandID, userCode, source string) (db.Brand, error) {
	var v rpcerr.Violations
	if brandID == "" {
		v.Add("brand_id", "is required")
	}
	if userCode == "" {
		v.Add("user_code", "is required")
	}
	checkSource(&v, source)
	if err := v.Err(); err != nil {
		return db.Brand{}, err
	}
	return s.env.LoadBrand(ctx, op, brandID)
}

// lookup finds the authorization a user code names at Brand b. Every
// lookup of a well-formed code that matches nothing counts against the
// Brand's guessing limit and, when the call names a source, against the
// (Brand, source) limit too (guesslimit: counted in the store, before
// the lookup), and is audited with the source (never the code).
func (s *Service) lookup(ctx context.Context, op string, b db.Brand, userCode, source string) (db.DeviceAuthorization, error) {
	norm, ok := codes.NormalizeUserCode(userCode)
	if !ok {
		// No code has this form; nothing to guess, nothing to look up.
		return db.DeviceAuthorization{}, rpcerr.NotFound("user code")
	}
	r, err := s.env.Guesses.Reserve(ctx, op, b.ID, source, s.env.Now())
	if err != nil {
		return db.DeviceAuthorization{}, err
	}
	d, err := s.env.D.Store.GetDeviceAuthorizationByUserCode(ctx, b.ID, codes.UserCodeHash(b.ID, norm))
	if errors.Is(err, db.ErrNotFound) {
		// The reservation stays counted: this was a failed guess.
		s.env.D.Logger.WarnContext(ctx, "user code lookup failed", slog.String("op", op), slog.String("brand_id", b.ID),
			slog.String("source", source))
		return db.DeviceAuthorization{}, rpcerr.NotFound("user code")
	}
	// Found (or the store failed): not a guess.
	s.env.Guesses.Release(ctx, r)
	if err != nil {
		return db.DeviceAuthorization{}, s.env.Fault(ctx, op+": load authorization", err)
	}
	return d, nil
}

// pending finds the pending authorization a consent call names: the shared
// checks, the guess-limited lookup, and FailedPrecondition when the code
// exists but was decided, consumed or has expired.
func (s *Service) pending(ctx context.Context, op, brandID, userCode, source string) (db.Brand, db.DeviceAuthorization, error) {
	b, err := s.consentBrand(ctx, op, brandID, userCode, source)
	if err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, err
	}
	d, err := s.lookup(ctx, op, b, userCode, source)
	if err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, err
	}
	if err := decidable(d, s.env.Now()); err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, err
	}
	return b, d, nil
}

// checkSource bounds the optional source: at most 128 bytes of printable
// ASCII without spaces.
func checkSource(v *rpcerr.Violations, src string) {
	switch {
	case len(src) > base.MaxSource:
		v.Add("source", "at most %d bytes", base.MaxSource)
	case strings.ContainsFunc(src, func(r rune) bool { return r <= ' ' || r > '~' }):
		v.Add("source", "must be printable ASCII without spaces")
	}
}

// decidable is nil for a pending, unexpired authorization, else the
// FailedPrecondition error that says why it cannot be decided.
func decidable(d db.DeviceAuthorization, now time.Time) error {
	switch {
	case d.Status != db.DevicePending:
		return base.FailedPrecondition("the authorization was already decided")
	case !now.Before(d.ExpiresAt):
		return base.FailedPrecondition("the authorization has expired")
	}
	return nil
}

// DescribeConsent returns what the consent page shows for a pending user
// code: the PA, its issuer's origin, the Brand, the requested scopes with
// their descriptions (scopes the Brand no longer defines are left out) and
// the requested authorization_details with their scope and their words.
func (s *Service) DescribeConsent(ctx context.Context, req *pactv1.DescribeConsentRequest) (*pactv1.DescribeConsentResponse, error) {
	const op = "describe consent"
	if u := req.GetBrandUser(); u != "" {
		var v rpcerr.Violations
		base.CheckBrandUser(&v, "brand_user", u)
		if err := v.Err(); err != nil {
			return nil, err
		}
	}
	b, d, err := s.pending(ctx, op, req.GetBrandId(), req.GetUserCode(), req.GetSource())
	if err != nil {
		return nil, err
	}
	norm, _ := codes.NormalizeUserCode(req.GetUserCode())
	resp, err := s.describe(ctx, op, b, d, norm)
	if err != nil {
		return nil, err
	}
	// Consent skipping is for the User the trusted frontend signed in; a
	// signed-assertion Brand skips in BeginConsent, on the assertion's sub.
	if req.GetBrandUser() != "" && base.TrustedFrontend(b) {
		if _, resp.CoveredByGrant, err = skip.CoveringGrant(ctx, s.env.D.Store, b, d, req.GetBrandUser(), s.env.Now()); err != nil {
			return nil, s.env.Fault(ctx, op+": covering grant", err)
		}
	}
	return resp, nil
}

// describe is what the consent page shows for authorization d (found by
// the normalized user code norm): the PA, its issuer's origin, the Brand
// and the requested scopes the Brand still defines, in the Brand's order.
func (s *Service) describe(ctx context.Context, op string, b db.Brand, d db.DeviceAuthorization, norm string) (*pactv1.DescribeConsentResponse, error) {
	a, err := s.env.D.Store.GetAgent(ctx, d.AgentID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, rpcerr.NotFound("user code")
	}
	if err != nil {
		return nil, s.env.Fault(ctx, op+": load agent", err)
	}
	resp := &pactv1.DescribeConsentResponse{
		AgentDisplayName: a.DisplayName, AgentOrigin: origin(a.Issuer), BrandDisplayName: b.DisplayName,
		UserCode: codes.FormatUserCode(norm), ExpiresAt: timestamppb.New(d.ExpiresAt),
	}
	// In the Brand's scope order, so the page reads the same whatever order
	// the PA asked in.
	requested := make(map[string]bool, len(d.Scopes))
	for _, sc := range d.Scopes {
		requested[sc] = true
	}
	for _, sc := range b.Delegation.Scopes {
		if requested[sc.ID] {
			resp.Scopes = append(resp.Scopes, &pactv1.Scope{Id: sc.ID, Description: sc.Description})
		}
	}
	if resp.AuthorizationDetails, err = base.ConsentDetails(b, d.AuthorizationDetails, d.AuthorizationDetailsScopes); err != nil {
		return nil, s.env.Fault(ctx, op+": stored authorization_details", err)
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
// (authenticated) frontend established. BRAND_LOGIN_MODE_SIGNED_ASSERTION
// (and UNSPECIFIED): brand_user must be empty, the User is the sub of the
// verified brand_assertion (see verifyAssertionFor), and the assertion's jti
// is recorded in the decision's transaction, so it decides once.
func (s *Service) ApproveConsent(ctx context.Context, req *pactv1.ApproveConsentRequest) (*pactv1.ApproveConsentResponse, error) {
	const op = "approve consent"
	var v rpcerr.Violations
	if len(req.GetScopes()) > codes.MaxScopes {
		v.Add("scopes", "at most %d scopes", codes.MaxScopes)
	}
	for i, sc := range req.GetScopes() {
		if len(sc) > codes.MaxScopeID {
			v.Add("scopes", "scope %d is longer than %d bytes", i, codes.MaxScopeID)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if req.GetConsentSession() != "" {
		return s.approveWithSession(ctx, op, req)
	}
	b, err := s.consentBrand(ctx, op, req.GetBrandId(), req.GetUserCode(), req.GetSource())
	if err != nil {
		return nil, err
	}
	if !base.TrustedFrontend(b) {
		return s.approveSigned(ctx, op, b, req)
	}
	base.CheckBrandUser(&v, "brand_user", req.GetBrandUser())
	if req.GetBrandAssertion() != "" {
		v.Add("brand_assertion", "must be empty in BRAND_LOGIN_MODE_TRUSTED_FRONTEND")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	d, err := s.lookup(ctx, op, b, req.GetUserCode(), req.GetSource())
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	if err := decidable(d, now); err != nil {
		return nil, err
	}
	if req.GetSkipConsent() {
		return s.approveSkipped(ctx, op, b, d, req.GetBrandUser(), now)
	}
	granted := grantedScopes(b, d, req.GetScopes())
	if len(granted) == 0 {
		if _, err := s.env.D.Store.DenyDeviceAuthorization(ctx, d.ID, now); err != nil {
			return nil, s.decisionErr(ctx, op, err)
		}
		s.env.D.Logger.InfoContext(ctx, "consent denied (nothing granted)", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID))
		return &pactv1.ApproveConsentResponse{Scopes: []string{}, ClientId: d.ClientID}, nil
	}
	g, err := newGrant(b, d, req.GetBrandUser(), granted, now)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": stored authorization_details", err)
	}
	if _, g, err = s.env.D.Store.ApproveDeviceAuthorization(s.env.AuditGrant(ctx, db.AuditGrantCreated, g, base.CallerActor(ctx), ""), d.ID, g, now); err != nil {
		return nil, s.decisionErr(ctx, op, err)
	}
	s.env.Recorded(db.AuditGrantCreated)
	s.env.D.Logger.InfoContext(ctx, "consent approved", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID),
		slog.String("grant_id", g.ID), slog.Int("scopes", len(granted)))
	return &pactv1.ApproveConsentResponse{GrantId: g.ID, Scopes: g.Scopes, ClientId: d.ClientID, AuthorizationDetailsJson: g.AuthorizationDetails}, nil
}

// approveSigned is ApproveConsent for a Brand whose login signs
// assertions: the assertion is verified before the user code is looked up
// (so a caller without one learns nothing about codes here), and the
// decision records its single use in the same transaction. The pending
// state is judged by that transaction, after the single use, so a replay
// is always reported as one.
func (s *Service) approveSigned(ctx context.Context, op string, b db.Brand, req *pactv1.ApproveConsentRequest) (*pactv1.ApproveConsentResponse, error) {
	var v rpcerr.Violations
	if req.GetBrandUser() != "" {
		v.Add("brand_user", "must be empty in BRAND_LOGIN_MODE_SIGNED_ASSERTION: the User is the sub of brand_assertion")
	}
	if req.GetBrandAssertion() == "" {
		v.Add("brand_assertion", "is required in BRAND_LOGIN_MODE_SIGNED_ASSERTION")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	a, err := s.assertion(ctx, op, b, req.GetBrandAssertion(), req.GetUserCode(), req.GetSource())
	if err != nil {
		return nil, err
	}
	d, err := s.lookup(ctx, op, b, req.GetUserCode(), req.GetSource())
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	granted := grantedScopes(b, d, req.GetScopes())
	if len(granted) == 0 {
		if _, err := s.env.D.Store.DenyDeviceAuthorizationWithAssertion(ctx, d.ID, a.use, now); err != nil {
			return nil, s.assertionDecisionErr(ctx, op, b, d, a, req.GetSource(), err)
		}
		s.env.D.Logger.InfoContext(ctx, "consent denied (nothing granted)", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID),
			slog.String("kid", a.kid), slog.String("jti", a.jti))
		return &pactv1.ApproveConsentResponse{Scopes: []string{}, ClientId: d.ClientID}, nil
	}
	g, err := newGrant(b, d, a.subject, granted, now)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": stored authorization_details", err)
	}
	if _, g, err = s.env.D.Store.ApproveDeviceAuthorizationWithAssertion(s.env.AuditGrant(ctx, db.AuditGrantCreated, g, base.CallerActor(ctx), ""), d.ID, g, a.use, now); err != nil {
		return nil, s.assertionDecisionErr(ctx, op, b, d, a, req.GetSource(), err)
	}
	s.env.Recorded(db.AuditGrantCreated)
	s.env.D.Logger.InfoContext(ctx, "consent approved", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID),
		slog.String("grant_id", g.ID), slog.Int("scopes", len(granted)), slog.String("kid", a.kid), slog.String("jti", a.jti))
	return &pactv1.ApproveConsentResponse{GrantId: g.ID, Scopes: g.Scopes, ClientId: d.ClientID, AuthorizationDetailsJson: g.AuthorizationDetails}, nil
}

// grantedScopes is requested ∩ chosen ∩ the Brand's current scopes, in
// request order.
func grantedScopes(b db.Brand, d db.DeviceAuthorization, chosenList []string) []string {
	chosen := make(map[string]bool, len(chosenList))
	for _, sc := range chosenList {
		chosen[sc] = true
	}
	defined := base.BrandScopes(b)
	granted := []string{}
	for _, sc := range d.Scopes {
		if _, ok := defined[sc]; ok && chosen[sc] {
			granted = append(granted, sc)
		}
	}
	return granted
}

// newGrant is the grant an approval makes, with the requested details
// whose recorded scope was granted (base.GrantDetails). Its id takes the wall
// clock to the millisecond (now is whole seconds), so ListGrants, newest
// first by id, orders grants made within one second, on any replica.
func newGrant(b db.Brand, d db.DeviceAuthorization, brandUser string, scopes []string, now time.Time) (db.Grant, error) {
	details, detailScopes, err := base.GrantDetails(d, scopes)
	if err != nil {
		return db.Grant{}, err
	}
	return db.Grant{
		ID: ids.New("a2agrant_", time.Now()), BrandID: b.ID, AgentID: d.AgentID, ClientID: d.ClientID,
		BrandUser: brandUser, Scopes: scopes, CreateTime: now, ExpireTime: now.Add(base.GrantTTL),
		AuthorizationDetails: details, AuthorizationDetailsScopes: detailScopes,
	}, nil
}

// DenyConsent records the User's refusal; the PA's next poll gets
// access_denied. Like ApproveConsent it only moves a pending, unexpired
// authorization. In BRAND_LOGIN_MODE_SIGNED_ASSERTION it needs a verified
// brand_assertion bound to the user code, exactly as ApproveConsent, and
// uses it up: otherwise anyone who knows a user code could deny it.
func (s *Service) DenyConsent(ctx context.Context, req *pactv1.DenyConsentRequest) (*pactv1.DenyConsentResponse, error) {
	const op = "deny consent"
	if req.GetConsentSession() != "" {
		return s.denyWithSession(ctx, op, req)
	}
	b, err := s.consentBrand(ctx, op, req.GetBrandId(), req.GetUserCode(), req.GetSource())
	if err != nil {
		return nil, err
	}
	signed := !base.TrustedFrontend(b)
	switch {
	case signed && req.GetBrandAssertion() == "":
		return nil, rpcerr.InvalidField("brand_assertion", "is required in BRAND_LOGIN_MODE_SIGNED_ASSERTION")
	case !signed && req.GetBrandAssertion() != "":
		return nil, rpcerr.InvalidField("brand_assertion", "must be empty in BRAND_LOGIN_MODE_TRUSTED_FRONTEND")
	}
	if !signed {
		d, err := s.lookup(ctx, op, b, req.GetUserCode(), req.GetSource())
		if err != nil {
			return nil, err
		}
		if err := decidable(d, s.env.Now()); err != nil {
			return nil, err
		}
		if _, err := s.env.D.Store.DenyDeviceAuthorization(ctx, d.ID, s.env.Now()); err != nil {
			return nil, s.decisionErr(ctx, op, err)
		}
		s.env.D.Logger.InfoContext(ctx, "consent denied", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID))
		return &pactv1.DenyConsentResponse{ClientId: d.ClientID}, nil
	}
	a, err := s.assertion(ctx, op, b, req.GetBrandAssertion(), req.GetUserCode(), req.GetSource())
	if err != nil {
		return nil, err
	}
	d, err := s.lookup(ctx, op, b, req.GetUserCode(), req.GetSource())
	if err != nil {
		return nil, err
	}
	if _, err := s.env.D.Store.DenyDeviceAuthorizationWithAssertion(ctx, d.ID, a.use, s.env.Now()); err != nil {
		return nil, s.assertionDecisionErr(ctx, op, b, d, a, req.GetSource(), err)
	}
	s.env.D.Logger.InfoContext(ctx, "consent denied", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID),
		slog.String("kid", a.kid), slog.String("jti", a.jti))
	return &pactv1.DenyConsentResponse{ClientId: d.ClientID}, nil
}

// assertion verifies a Brand login assertion for the RPC (userCode ""
// takes the user code from the assertion's claim): a refusal is
// logged (operation, Brand, reason, source; never the assertion or the
// code) and returned as its RPC error; a keys fault is logged once and
// returned as KEYS_UNAVAILABLE; the end of ctx is returned as it is.
func (s *Service) assertion(ctx context.Context, op string, b db.Brand, tok, userCode, source string) (brandAssertion, error) {
	return s.assertionFor(ctx, op, b, tok, assertionPurpose{aud: s.env.ConsentURL(b.ID), userCode: userCode}, source)
}

// assertionFor is assertion for purpose p (consent or the connected page).
func (s *Service) assertionFor(ctx context.Context, op string, b db.Brand, tok string, p assertionPurpose, source string) (brandAssertion, error) {
	a, err := s.verifyAssertionFor(ctx, b, tok, p)
	if err == nil {
		return a, nil
	}
	var r *assertionRefusal
	var kf *keysFault
	switch {
	case errors.As(err, &r):
	case ctx.Err() != nil:
		return brandAssertion{}, ctx.Err()
	case errors.As(err, &kf):
		s.env.D.Logger.WarnContext(ctx, op+": brand assertion keys", slog.String("brand_id", b.ID), slog.String("error", kf.Error()))
		r = kf.Refusal()
	default:
		s.env.D.Logger.ErrorContext(ctx, op+": verify brand assertion", slog.String("brand_id", b.ID), slog.String("error", err.Error()))
		r = (&keysFault{Err: err}).Refusal()
	}
	s.env.D.Logger.InfoContext(ctx, "brand assertion refused", slog.String("op", op), slog.String("brand_id", b.ID),
		slog.String("reason", r.Reason.String()), slog.String("source", source))
	return brandAssertion{}, r.RPCError(b.ID)
}

// assertionDecisionErr maps a failed decision of the signed mode: the
// assertion's jti was used already (REPLAYED), or the authorization is no
// longer pending (NOT_PENDING; the assertion is not used up).
func (s *Service) assertionDecisionErr(ctx context.Context, op string, b db.Brand, d db.DeviceAuthorization, a brandAssertion, source string, err error) error {
	var r *assertionRefusal
	switch {
	case errors.Is(err, db.ErrAssertionReplayed):
		s.env.D.Logger.WarnContext(ctx, "brand assertion replayed", slog.String("op", op), slog.String("brand_id", b.ID),
			slog.String("jti", a.jti), slog.String("source", source))
		r = refuse(reasonReplayed, "the assertion was used already")
	case errors.Is(err, db.ErrNotFound):
		msg := "the authorization was already decided or has expired"
		var ce *connect.Error
		if errors.As(decidable(d, s.env.Now()), &ce) {
			msg = ce.Message()
		}
		s.env.D.Logger.InfoContext(ctx, "brand assertion refused", slog.String("op", op), slog.String("brand_id", b.ID),
			slog.String("reason", reasonNotPending.String()), slog.String("source", source))
		r = refuse(reasonNotPending, msg)
	default:
		return s.env.Fault(ctx, op+": store", err)
	}
	return r.RPCError(b.ID)
}

// decisionErr maps a failed guarded decision: another decision won the race
// (or the code expired meanwhile).
func (s *Service) decisionErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return base.FailedPrecondition("the authorization was already decided or has expired")
	}
	return s.env.Fault(ctx, op+": store", err)
}
