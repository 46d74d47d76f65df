package base

import (
	"context"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/db"
)

// AuditGrant returns ctx carrying the audit event of a change to grant g
// (db.WithAudit): the store records it in the change's transaction, so an
// acknowledged change never lacks its row. actor is who caused it.
func (e *Env) AuditGrant(ctx context.Context, kind db.AuditKind, g db.Grant, actor, detail string) context.Context {
	return db.WithAudit(ctx, db.AuditEvent{
		Kind: kind, BrandID: g.BrandID, BrandUser: g.BrandUser, AgentID: g.AgentID, ClientID: g.ClientID,
		GrantID: g.ID, Scopes: g.Scopes, Actor: actor, Detail: detail,
	})
}

// Recorded counts an audit event that was stored (Deps.OnAudit).
func (e *Env) Recorded(kind db.AuditKind) {
	if e.D.OnAudit != nil {
		e.D.OnAudit(kind)
	}
}

// CallerActor is the actor of an RPC's change: the caller's role (a Brand's
// frontend acting for its User, or an operator).
func CallerActor(ctx context.Context) string {
	if auth.RoleFrom(ctx) == db.RoleAdmin {
		return db.ActorAdmin
	}
	return db.ActorFrontend
}
