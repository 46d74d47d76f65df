package consent

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/pacturl"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/grants"
	"pactd.dev/pactd/token/delegtoken"
)

// maxConnectedGrants bounds the grants a connected page lists (and a
// RevokeConnected reads for the PA's live grants).
const maxConnectedGrants = 1000

// connectedURL is the Brand's connected page: the aud of the Brand
// assertions that open it and of connected sessions.
func (s *Service) connectedURL(brandID string) string {
	return pacturl.Connected(s.env.D.PublicURL, brandID)
}

// BeginConnected opens the connected page of a signed-assertion Brand with
// the Brand's assertion (used up here) or a connected session, and
// answers the User's grants and a connected session.
func (s *Service) BeginConnected(ctx context.Context, req *pactv1.BeginConnectedRequest) (*pactv1.BeginConnectedResponse, error) {
	const op = "begin connected"
	var v rpcerr.Violations
	if req.GetBrandId() == "" {
		v.Add("brand_id", "is required")
	}
	switch hasA, hasS := req.GetBrandAssertion() != "", req.GetConnectedSession() != ""; {
	case !hasA && !hasS:
		v.Add("brand_assertion", "is required (or connected_session)")
	case hasA && hasS:
		v.Add("connected_session", "must be empty with brand_assertion (give one of the two)")
	}
	checkSource(&v, req.GetSource())
	if err := v.Err(); err != nil {
		return nil, err
	}
	b, err := s.connectedBrand(ctx, op, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	resp := &pactv1.BeginConnectedResponse{ConnectedUrl: s.connectedURL(b.ID)}
	if req.GetConnectedSession() != "" {
		c, err := s.verifyConnected(ctx, op, b, req.GetConnectedSession(), req.GetSource())
		if err != nil {
			return nil, err
		}
		resp.BrandUser, resp.ConnectedSession, resp.SessionExpiresAt = c.Subject, req.GetConnectedSession(), timestamppb.New(c.ExpiresAt)
	} else {
		a, err := s.assertionFor(ctx, op, b, req.GetBrandAssertion(), assertionPurpose{aud: s.connectedURL(b.ID), connected: true}, req.GetSource())
		if err != nil {
			return nil, err
		}
		if err := s.env.D.Store.UseBrandAssertion(ctx, a.use, now); err != nil {
			if errors.Is(err, db.ErrAssertionReplayed) {
				s.env.D.Logger.WarnContext(ctx, "brand assertion replayed", slog.String("op", op), slog.String("brand_id", b.ID),
					slog.String("jti", a.jti), slog.String("source", req.GetSource()))
				return nil, refuse(reasonReplayed, "the assertion was used already").RPCError(b.ID)
			}
			return nil, s.env.Fault(ctx, op+": use assertion", err)
		}
		sc := delegtoken.SessionClaims{Issuer: s.env.Issuer(b.ID), Audience: s.connectedURL(b.ID), Subject: a.subject, Email: a.email,
			JTI: ids.New("cn_", now), IssuedAt: now, ExpiresAt: now.Add(delegtoken.SessionLifetime)}
		tok, err := s.env.D.Sessions.SignConnected(ctx, sc)
		if err != nil {
			return nil, s.env.Fault(ctx, op+": sign connected session", err)
		}
		s.env.D.Logger.InfoContext(ctx, "connected session opened", slog.String("brand_id", b.ID), slog.String("kid", a.kid),
			slog.String("jti", a.jti), slog.String("session", sc.JTI))
		resp.BrandUser, resp.ConnectedSession, resp.SessionExpiresAt = a.subject, tok, timestamppb.New(sc.ExpiresAt)
	}
	if resp.Grants, resp.Truncated, err = s.connectedGrants(ctx, op, b, resp.BrandUser); err != nil {
		return nil, err
	}
	return resp, nil
}

// RevokeConnected revokes every live grant of one PA to the User of a
// connected session and answers the User's grants after it.
func (s *Service) RevokeConnected(ctx context.Context, req *pactv1.RevokeConnectedRequest) (*pactv1.RevokeConnectedResponse, error) {
	const op = "revoke connected"
	var v rpcerr.Violations
	if req.GetBrandId() == "" {
		v.Add("brand_id", "is required")
	}
	if req.GetConnectedSession() == "" {
		v.Add("connected_session", "is required")
	}
	if req.GetAgentId() == "" {
		v.Add("agent_id", "is required")
	} else if len(req.GetAgentId()) > base.MaxIDLen {
		v.Add("agent_id", "is too long")
	}
	checkSource(&v, req.GetSource())
	if err := v.Err(); err != nil {
		return nil, err
	}
	b, err := s.connectedBrand(ctx, op, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	c, err := s.verifyConnected(ctx, op, b, req.GetConnectedSession(), req.GetSource())
	if err != nil {
		return nil, err
	}
	list, _, err := s.userGrants(ctx, op, b.ID, c.Subject)
	if err != nil {
		return nil, err
	}
	resp := &pactv1.RevokeConnectedResponse{BrandUser: c.Subject, RevokedGrantIds: []string{}}
	now := s.env.Now()
	for _, g := range list {
		if g.AgentID != req.GetAgentId() || !g.RevokeTime.IsZero() || !now.Before(g.ExpireTime) {
			continue
		}
		revoked, err := s.env.D.Store.RevokeGrant(s.env.AuditGrant(ctx, db.AuditGrantRevoked, g, base.CallerActor(ctx), ""), g.ID, now)
		if err != nil {
			return nil, s.env.Fault(ctx, op, err)
		}
		if revoked {
			s.env.Recorded(db.AuditGrantRevoked)
			resp.RevokedGrantIds = append(resp.RevokedGrantIds, g.ID)
			s.env.D.Logger.InfoContext(ctx, "grant revoked", slog.String("brand_id", g.BrandID), slog.String("agent_id", g.AgentID),
				slog.String("grant_id", g.ID), slog.String("session", c.JTI))
		}
	}
	if resp.Grants, resp.Truncated, err = s.connectedGrants(ctx, op, b, c.Subject); err != nil {
		return nil, err
	}
	return resp, nil
}

// connectedBrand loads a Brand whose connected page is opened with Brand
// assertions: not a trusted-frontend Brand, and sessions configured.
func (s *Service) connectedBrand(ctx context.Context, op, brandID string) (db.Brand, error) {
	b, err := s.env.LoadBrand(ctx, op, brandID)
	if err != nil {
		return db.Brand{}, err
	}
	if base.TrustedFrontend(b) {
		return db.Brand{}, base.FailedPrecondition("the connected page of this Brand is opened by its frontend's own sign-in " +
			"(BRAND_LOGIN_MODE_TRUSTED_FRONTEND, ListGrants and RevokeGrant); BeginConnected and RevokeConnected are for " +
			"BRAND_LOGIN_MODE_SIGNED_ASSERTION")
	}
	if s.env.D.Sessions == nil {
		return db.Brand{}, rpcerr.Unavailable("consent sessions are not configured")
	}
	return b, nil
}

// verifyConnected verifies a connected session of Brand b; refusals carry
// ConsentSessionRefusal reasons (a consent session is TYPE).
func (s *Service) verifyConnected(ctx context.Context, op string, b db.Brand, tok, source string) (delegtoken.SessionClaims, error) {
	c, err := s.env.D.Sessions.VerifyConnected(ctx, tok, delegtoken.SessionExpect{Issuer: s.env.Issuer(b.ID), Audience: s.connectedURL(b.ID)})
	var refused *delegtoken.Error
	switch {
	case errors.As(err, &refused):
		return delegtoken.SessionClaims{}, s.sessionRefused(ctx, op, b, source, sessionReason(refused.Reason),
			"the connected session is not valid: "+string(refused.Reason))
	case err != nil:
		return delegtoken.SessionClaims{}, s.env.Fault(ctx, op+": verify connected session", err)
	}
	return c, nil
}

// userGrants reads a Brand user's grants, newest first, at most
// maxConnectedGrants; truncated when there are more.
func (s *Service) userGrants(ctx context.Context, op, brandID, user string) ([]db.Grant, bool, error) {
	const page = 500
	var out []db.Grant
	after := ""
	for len(out) < maxConnectedGrants {
		list, err := s.env.D.Store.ListGrants(ctx, brandID, user, after, page)
		if err != nil {
			return nil, false, s.env.Fault(ctx, op+": list grants", err)
		}
		out = append(out, list...)
		if len(list) < page {
			return out, false, nil
		}
		after = list[len(list)-1].ID
	}
	if len(out) > maxConnectedGrants {
		out = out[:maxConnectedGrants]
	}
	more, err := s.env.D.Store.ListGrants(ctx, brandID, user, out[len(out)-1].ID, 1)
	if err != nil {
		return nil, false, s.env.Fault(ctx, op+": list grants", err)
	}
	return out, len(more) > 0, nil
}

// connectedGrants are the User's grants as ListGrants answers them.
func (s *Service) connectedGrants(ctx context.Context, op string, b db.Brand, user string) ([]*pactv1.Grant, bool, error) {
	list, truncated, err := s.userGrants(ctx, op, b.ID, user)
	if err != nil {
		return nil, false, err
	}
	out := make([]*pactv1.Grant, 0, len(list))
	for _, g := range list {
		pg := grants.ToProto(g)
		if pg.AuthorizationDetails, err = base.ConsentDetails(b, g.AuthorizationDetails, g.AuthorizationDetailsScopes); err != nil {
			return nil, false, s.env.Fault(ctx, op+": stored authorization_details", err)
		}
		out = append(out, pg)
	}
	return out, truncated, nil
}
