package delegation

import (
	"context"

	"pactd/core/auth"
	"pactd/db"
)

// auditGrant returns ctx carrying the audit event of a change to grant g
// (db.WithAudit): the store records it in the change's transaction, so an
// acknowledged change never lacks its row. actor is who caused it.
func (s *Service) auditGrant(ctx context.Context, kind db.AuditKind, g db.Grant, actor, detail string) context.Context {
	return db.WithAudit(ctx, db.AuditEvent{
		Kind: kind, BrandID: g.BrandID, BrandUser: g.BrandUser, AgentID: g.AgentID, ClientID: g.ClientID,
		GrantID: g.ID, Scopes: g.Scopes, Actor: actor, Detail: detail,
	})
}

// recorded counts an audit event that was stored (Deps.OnAudit).
func (s *Service) recorded(kind db.AuditKind) {
	if s.d.OnAudit != nil {
		s.d.OnAudit(kind)
	}
}

// callerActor is the actor of an RPC's change: the caller's role (a Brand's
// frontend acting for its User, or an operator).
func callerActor(ctx context.Context) string {
	if auth.RoleFrom(ctx) == db.RoleAdmin {
		return db.ActorAdmin
	}
	return db.ActorFrontend
}
