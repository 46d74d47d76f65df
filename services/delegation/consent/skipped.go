package consent

import (
	"context"
	"log/slog"
	"time"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/skip"
)

// approveSkipped is ApproveConsent with skip_consent (trusted-frontend
// mode): pactd, not the frontend, decides that the request is covered, and
// the new grant, of every requested scope, expires no later than the grant
// that covers it. Not covered (or the Brand does not skip consent) is
// FailedPrecondition and changes nothing.
func (s *Service) approveSkipped(ctx context.Context, op string, b db.Brand, d db.DeviceAuthorization, brandUser string, now time.Time) (*pactv1.ApproveConsentResponse, error) {
	cover, covered, err := skip.CoveringGrant(ctx, s.env.D.Store, b, d, brandUser, now)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": covering grant", err)
	}
	if !covered {
		return nil, base.FailedPrecondition("skip_consent: no live grant of this User to this PA covers the request (or the Brand does not skip consent)")
	}
	g, err := newGrant(b, d, brandUser, grantedScopes(b, d, d.Scopes), now)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": stored authorization_details", err)
	}
	if cover.ExpireTime.Before(g.ExpireTime) {
		g.ExpireTime = cover.ExpireTime // a skip never extends the PA's access
	}
	if _, g, err = s.env.D.Store.ApproveDeviceAuthorization(s.env.AuditGrant(ctx, db.AuditConsentSkipped, g, base.CallerActor(ctx), cover.ID), d.ID, g, now); err != nil {
		return nil, s.decisionErr(ctx, op, err)
	}
	s.env.Recorded(db.AuditConsentSkipped)
	s.env.D.Logger.InfoContext(ctx, "consent skipped: an existing grant covers the request", slog.String("brand_id", b.ID),
		slog.String("agent_id", d.AgentID), slog.String("grant_id", g.ID))
	return &pactv1.ApproveConsentResponse{GrantId: g.ID, Scopes: g.Scopes, ClientId: d.ClientID, AuthorizationDetailsJson: g.AuthorizationDetails}, nil
}
