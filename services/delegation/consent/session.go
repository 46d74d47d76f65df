package consent

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/pacturl"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/codes"
	"pactd.dev/pactd/services/delegation/skip"
	"pactd.dev/pactd/token/delegtoken"
)

// decisionURL is the Brand's consent decision URL, the aud of its consent
// sessions.
func (s *Service) decisionURL(brandID string) string {
	return pacturl.ConsentDecision(s.env.D.PublicURL, brandID)
}

// BeginConsent opens the consent page of a signed-assertion Brand: the
// Brand's assertion is verified (every rule of ApproveConsent, user code
// taken from its claim), the authorization it names must be pending, then
// its single use is recorded, and the page's description comes back with a
// consent session bound to the Brand, the User and the user code.
func (s *Service) BeginConsent(ctx context.Context, req *pactv1.BeginConsentRequest) (*pactv1.BeginConsentResponse, error) {
	const op = "begin consent"
	var v rpcerr.Violations
	if req.GetBrandId() == "" {
		v.Add("brand_id", "is required")
	}
	if req.GetBrandAssertion() == "" {
		v.Add("brand_assertion", "is required")
	}
	checkSource(&v, req.GetSource())
	if err := v.Err(); err != nil {
		return nil, err
	}
	b, err := s.env.LoadBrand(ctx, op, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	if base.TrustedFrontend(b) {
		return nil, base.FailedPrecondition("BeginConsent is for Brands in BRAND_LOGIN_MODE_SIGNED_ASSERTION; this Brand is in " +
			"BRAND_LOGIN_MODE_TRUSTED_FRONTEND, whose frontend signs the User in itself and uses DescribeConsent")
	}
	if s.env.D.Sessions == nil {
		return nil, rpcerr.Unavailable("consent sessions are not configured")
	}
	a, err := s.assertion(ctx, op, b, req.GetBrandAssertion(), "", req.GetSource())
	if err != nil {
		return nil, err
	}
	d, err := s.lookup(ctx, op, b, a.userCode, req.GetSource())
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	if err := decidable(d, now); err != nil {
		// Not used up: the User may still decide another pending code.
		return nil, s.assertionDecisionErr(ctx, op, b, d, a, req.GetSource(), db.ErrNotFound)
	}
	desc, err := s.describe(ctx, op, b, d, a.userCode)
	if err != nil {
		return nil, err
	}
	// Consent skipping: a live grant of this User to this PA covers the
	// request already, so it is approved with exactly what was requested,
	// the assertion used up in the same transaction.
	cover, covered, err := skip.CoveringGrant(ctx, s.env.D.Store, b, d, a.subject, now)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": covering grant", err)
	}
	if covered {
		g, err := newGrant(b, d, a.subject, grantedScopes(b, d, d.Scopes), now)
		if err != nil {
			return nil, s.env.Fault(ctx, op+": stored authorization_details", err)
		}
		if cover.ExpireTime.Before(g.ExpireTime) {
			g.ExpireTime = cover.ExpireTime // a skip never extends the PA's access
		}
		actx := s.env.AuditGrant(ctx, db.AuditConsentSkipped, g, base.CallerActor(ctx), cover.ID)
		if _, g, err = s.env.D.Store.ApproveDeviceAuthorizationWithAssertion(actx, d.ID, g, a.use, now); err != nil {
			return nil, s.assertionDecisionErr(ctx, op, b, d, a, req.GetSource(), err)
		}
		s.env.Recorded(db.AuditConsentSkipped)
		s.env.D.Logger.InfoContext(ctx, "consent skipped: an existing grant covers the request", slog.String("brand_id", b.ID),
			slog.String("agent_id", d.AgentID), slog.String("grant_id", g.ID), slog.String("jti", a.jti))
		return &pactv1.BeginConsentResponse{Consent: desc, BrandUser: a.subject, Email: a.email, ClientId: d.ClientID,
			SkippedGrantId: g.ID, GrantedScopes: g.Scopes}, nil
	}
	if err := s.env.D.Store.UseBrandAssertion(ctx, a.use, now); err != nil {
		return nil, s.assertionDecisionErr(ctx, op, b, d, a, req.GetSource(), err)
	}
	exp := now.Add(delegtoken.SessionLifetime)
	if d.ExpiresAt.Before(exp) {
		exp = d.ExpiresAt
	}
	sc := delegtoken.SessionClaims{
		Issuer: s.env.Issuer(b.ID), Audience: s.decisionURL(b.ID), Subject: a.subject, UserCode: codes.FormatUserCode(a.userCode), Email: a.email,
		JTI: ids.New("cs_", now), IssuedAt: now, ExpiresAt: exp,
	}
	tok, err := s.env.D.Sessions.Sign(ctx, sc)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": sign consent session", err)
	}
	s.env.D.Logger.InfoContext(ctx, "consent session opened", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID),
		slog.String("kid", a.kid), slog.String("jti", a.jti), slog.String("session", sc.JTI))
	return &pactv1.BeginConsentResponse{
		Consent: desc, BrandUser: a.subject, Email: a.email, ConsentSession: tok,
		SessionExpiresAt: timestamppb.New(exp), DecisionUrl: sc.Audience, ClientId: d.ClientID,
	}, nil
}

// sessionDecision is a consent decision made with a consent session.
type sessionDecision struct {
	brandID, userCode, brandUser, assertion, session, source string
}

// decideWithSession checks the fields and the session of a decision made
// with consent_session and finds its authorization. brand_user and
// brand_assertion must be empty; the Brand must be in signed-assertion
// mode.
func (s *Service) decideWithSession(ctx context.Context, op string, r sessionDecision) (db.Brand, db.DeviceAuthorization, delegtoken.SessionClaims, error) {
	var v rpcerr.Violations
	if r.brandID == "" {
		v.Add("brand_id", "is required")
	}
	if r.brandUser != "" {
		v.Add("brand_user", "must be empty with consent_session: the User is the session's sub")
	}
	if r.assertion != "" {
		v.Add("brand_assertion", "must be empty with consent_session (give one of the two)")
	}
	checkSource(&v, r.source)
	if err := v.Err(); err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, delegtoken.SessionClaims{}, err
	}
	b, err := s.env.LoadBrand(ctx, op, r.brandID)
	if err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, delegtoken.SessionClaims{}, err
	}
	if base.TrustedFrontend(b) {
		return db.Brand{}, db.DeviceAuthorization{}, delegtoken.SessionClaims{},
			rpcerr.InvalidField("consent_session", "must be empty in BRAND_LOGIN_MODE_TRUSTED_FRONTEND")
	}
	c, err := s.verifySession(ctx, op, b, r.session, r.userCode, r.source)
	if err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, delegtoken.SessionClaims{}, err
	}
	d, err := s.lookup(ctx, op, b, c.UserCode, r.source)
	if err != nil {
		return db.Brand{}, db.DeviceAuthorization{}, delegtoken.SessionClaims{}, err
	}
	return b, d, c, nil
}

// verifySession verifies a consent session for Brand b and, when the
// request names one, its user code. Refusals are logged (reason and
// source, never the session) and returned as ConsentSessionRefusal errors.
func (s *Service) verifySession(ctx context.Context, op string, b db.Brand, tok, userCode, source string) (delegtoken.SessionClaims, error) {
	if s.env.D.Sessions == nil {
		return delegtoken.SessionClaims{}, rpcerr.Unavailable("consent sessions are not configured")
	}
	c, err := s.env.D.Sessions.Verify(ctx, tok, delegtoken.SessionExpect{Issuer: s.env.Issuer(b.ID), Audience: s.decisionURL(b.ID)})
	var refused *delegtoken.Error
	switch {
	case errors.As(err, &refused):
		return delegtoken.SessionClaims{}, s.sessionRefused(ctx, op, b, source, sessionReason(refused.Reason), "the consent session is not valid: "+string(refused.Reason))
	case err != nil:
		return delegtoken.SessionClaims{}, s.env.Fault(ctx, op+": verify consent session", err)
	}
	if userCode != "" {
		want, ok := codes.NormalizeUserCode(userCode)
		if got, _ := codes.NormalizeUserCode(c.UserCode); !ok || got != want {
			return delegtoken.SessionClaims{}, s.sessionRefused(ctx, op, b, source, sessionUserCodeMismatch,
				"the consent session is for another user code")
		}
	}
	return c, nil
}

// Shorthands for the session refusal reasons.
const (
	sessionMalformed        = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_MALFORMED
	sessionType             = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_TYPE
	sessionSignature        = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_SIGNATURE
	sessionAudience         = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_AUDIENCE
	sessionIssuer           = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_ISSUER
	sessionExpired          = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_EXPIRED
	sessionClaims           = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_CLAIMS
	sessionUserCodeMismatch = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_USER_CODE_MISMATCH
	sessionNotPending       = pactv1.ConsentSessionRefusal_CONSENT_SESSION_REFUSAL_NOT_PENDING
)

// sessionReason maps a validator's reason to the API's.
func sessionReason(r delegtoken.Reason) pactv1.ConsentSessionRefusal {
	switch r {
	case delegtoken.ReasonOversized, delegtoken.ReasonMalformed:
		return sessionMalformed
	case delegtoken.ReasonType:
		return sessionType
	case delegtoken.ReasonAlgorithm, delegtoken.ReasonHeader, delegtoken.ReasonUnknownKey, delegtoken.ReasonSignature:
		return sessionSignature
	case delegtoken.ReasonAudience:
		return sessionAudience
	case delegtoken.ReasonIssuer:
		return sessionIssuer
	case delegtoken.ReasonExpired:
		return sessionExpired
	}
	return sessionClaims
}

// sessionRefused logs a refused session and returns its RPC error:
// INVALID_ARGUMENT (with a BadRequest naming consent_session) for
// MALFORMED, else FAILED_PRECONDITION; the ErrorInfo reason is the
// ConsentSessionRefusal name.
func (s *Service) sessionRefused(ctx context.Context, op string, b db.Brand, source string, reason pactv1.ConsentSessionRefusal, msg string) error {
	s.env.D.Logger.InfoContext(ctx, "consent session refused", slog.String("op", op), slog.String("brand_id", b.ID),
		slog.String("reason", reason.String()), slog.String("source", source))
	r := rpcerr.Refusal{Code: connect.CodeFailedPrecondition, Reason: reason.String()}
	if reason == sessionMalformed {
		r.Code = connect.CodeInvalidArgument
		return r.FieldErr("consent_session", msg, "brand_id", b.ID)
	}
	return r.Err(msg, "brand_id", b.ID)
}

// sessionDecisionErr maps a failed pending-only decision made with a
// session: another decision won (or the code expired) — NOT_PENDING.
func (s *Service) sessionDecisionErr(ctx context.Context, op string, b db.Brand, source string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return s.sessionRefused(ctx, op, b, source, sessionNotPending, "the authorization was already decided or has expired")
	}
	return s.env.Fault(ctx, op+": store", err)
}

// approveWithSession is ApproveConsent with a consent session. There is
// no pre-check of the state: the guarded pending → approved update is what
// lets a session decide once.
func (s *Service) approveWithSession(ctx context.Context, op string, req *pactv1.ApproveConsentRequest) (*pactv1.ApproveConsentResponse, error) {
	b, d, c, err := s.decideWithSession(ctx, op, sessionDecision{brandID: req.GetBrandId(), userCode: req.GetUserCode(),
		brandUser: req.GetBrandUser(), assertion: req.GetBrandAssertion(), session: req.GetConsentSession(), source: req.GetSource()})
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	granted := grantedScopes(b, d, req.GetScopes())
	if len(granted) == 0 {
		if _, err := s.env.D.Store.DenyDeviceAuthorization(ctx, d.ID, now); err != nil {
			return nil, s.sessionDecisionErr(ctx, op, b, req.GetSource(), err)
		}
		s.env.D.Logger.InfoContext(ctx, "consent denied (nothing granted)", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID),
			slog.String("session", c.JTI))
		return &pactv1.ApproveConsentResponse{Scopes: []string{}, ClientId: d.ClientID}, nil
	}
	g, err := newGrant(b, d, c.Subject, granted, now)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": stored authorization_details", err)
	}
	if _, g, err = s.env.D.Store.ApproveDeviceAuthorization(s.env.AuditGrant(ctx, db.AuditGrantCreated, g, base.CallerActor(ctx), ""), d.ID, g, now); err != nil {
		return nil, s.sessionDecisionErr(ctx, op, b, req.GetSource(), err)
	}
	s.env.Recorded(db.AuditGrantCreated)
	s.env.D.Logger.InfoContext(ctx, "consent approved", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID),
		slog.String("grant_id", g.ID), slog.Int("scopes", len(granted)), slog.String("session", c.JTI))
	return &pactv1.ApproveConsentResponse{GrantId: g.ID, Scopes: g.Scopes, ClientId: d.ClientID, AuthorizationDetailsJson: g.AuthorizationDetails}, nil
}

// denyWithSession is DenyConsent with a consent session.
func (s *Service) denyWithSession(ctx context.Context, op string, req *pactv1.DenyConsentRequest) (*pactv1.DenyConsentResponse, error) {
	b, d, c, err := s.decideWithSession(ctx, op, sessionDecision{brandID: req.GetBrandId(), userCode: req.GetUserCode(),
		assertion: req.GetBrandAssertion(), session: req.GetConsentSession(), source: req.GetSource()})
	if err != nil {
		return nil, err
	}
	if _, err := s.env.D.Store.DenyDeviceAuthorization(ctx, d.ID, s.env.Now()); err != nil {
		return nil, s.sessionDecisionErr(ctx, op, b, req.GetSource(), err)
	}
	s.env.D.Logger.InfoContext(ctx, "consent denied", slog.String("brand_id", b.ID), slog.String("agent_id", d.AgentID), slog.String("session", c.JTI))
	return &pactv1.DenyConsentResponse{ClientId: d.ClientID}, nil
}
