package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
)

// AuditKind names what an audit event records.
type AuditKind string

// The audit event kinds. The values are stored; never change one.
const (
	// AuditReceiptSigned: pactd signed a receipt (PACT §5.6) for a
	// delegated reply. Scopes are scopesUsed, Actions the receipt's
	// actions, Detail the base64url SHA-256 of the receipt's compact JWS.
	AuditReceiptSigned AuditKind = "receipt.signed"
	// AuditGrantCreated: a User approved on the consent page and a grant
	// was made. Scopes are the granted scopes.
	AuditGrantCreated AuditKind = "grant.created"
	// AuditConsentSkipped: a grant was made without a consent page because
	// a live grant of the same User to the same PA covered the request.
	// Detail is the covering grant's id.
	AuditConsentSkipped AuditKind = "grant.consent_skipped"
	// AuditGrantRedeemed: the PA redeemed the device code and received its
	// first delegation and refresh tokens for the grant.
	AuditGrantRedeemed AuditKind = "grant.redeemed"
	// AuditGrantRefreshed: the PA rotated a refresh token of the grant.
	AuditGrantRefreshed AuditKind = "grant.refreshed"
	// AuditStepUp: a turn needed scopes the caller lacked and pactd
	// prepared the AUTH_REQUIRED task (PACT §5.5). Scopes are the missing
	// scopes, Detail the task id.
	AuditStepUp AuditKind = "grant.step_up"
	// AuditGrantRevoked: the grant was revoked (RevokeGrant, or the PA's
	// RFC 7009 revocation of one of its tokens).
	AuditGrantRevoked AuditKind = "grant.revoked"
	// AuditGrantReuseRevoked: a rotated refresh token was presented again,
	// so the grant was revoked (refresh-token reuse detection).
	AuditGrantReuseRevoked AuditKind = "grant.reuse_revoked"
)

// The HDTP kinds (docs/hdtp.md): trust changes of an identity's contacts
// and invites, and refusals to proven callers. IdentityID names the
// identity, Peer the contact's root.
const (
	// AuditHDTPContactRequested: a caller asked to become a contact
	// (request_contact, or redeem_invite without auto-accept). Detail is
	// another root its endpoint is pinned for, if any, or "invite <id>".
	AuditHDTPContactRequested AuditKind = "hdtp.contact.requested"
	// AuditHDTPContactApproved: the owner approved a request, or an
	// auto-accept invite made the caller a contact. Scopes are the
	// permissions granted.
	AuditHDTPContactApproved AuditKind = "hdtp.contact.approved"
	// AuditHDTPContactDenied: the owner rejected a request.
	AuditHDTPContactDenied AuditKind = "hdtp.contact.denied"
	// AuditHDTPContactAccepted: a contact accepted the identity's request
	// (contact_accepted). Detail is what it granted.
	AuditHDTPContactAccepted AuditKind = "hdtp.contact.accepted"
	// AuditHDTPContactRejected: a contact rejected the identity's request
	// (contact_rejected); its pin is blocked.
	AuditHDTPContactRejected AuditKind = "hdtp.contact.rejected"
	// AuditHDTPContactBlocked and AuditHDTPContactUnblocked: the owner
	// blocked or unblocked a contact.
	AuditHDTPContactBlocked   AuditKind = "hdtp.contact.blocked"
	AuditHDTPContactUnblocked AuditKind = "hdtp.contact.unblocked"
	// AuditHDTPContactRemoved: the contact was removed (by the owner, or
	// by its remove_contact); a tombstone is kept 30 days.
	AuditHDTPContactRemoved AuditKind = "hdtp.contact.removed"
	// AuditHDTPPermissionsChanged: the owner set a contact's permissions
	// (Scopes).
	AuditHDTPPermissionsChanged AuditKind = "hdtp.contact.permissions"
	// AuditHDTPLeafRenewed: a contact's later leaf at its pinned endpoint
	// was pinned as it passed. Detail is the new kid.
	AuditHDTPLeafRenewed AuditKind = "hdtp.contact.renewed"
	// AuditHDTPContactMoved: a contact's later leaf at another endpoint
	// was re-pinned under accept-new-hosts "auto". Detail is the new kid.
	AuditHDTPContactMoved AuditKind = "hdtp.contact.moved"
	// AuditHDTPAddressPending: a contact's new address waits for the
	// owner. Detail is the endpoint.
	AuditHDTPAddressPending AuditKind = "hdtp.address.pending"
	// AuditHDTPAddressDecided: the owner approved ("approved") or
	// rejected ("rejected") a new address (Detail).
	AuditHDTPAddressDecided AuditKind = "hdtp.address.decided"
	// AuditHDTPRequestSent: the identity asked someone (request_contact
	// or redeem_invite sent).
	AuditHDTPRequestSent AuditKind = "hdtp.request.sent"
	// AuditHDTPInviteCreated and AuditHDTPInviteRevoked: Detail is the
	// invite's id.
	AuditHDTPInviteCreated AuditKind = "hdtp.invite.created"
	AuditHDTPInviteRevoked AuditKind = "hdtp.invite.revoked"
	// AuditHDTPRefused: a proven caller's call was refused after it was
	// admitted (a sealed refusal). Detail is "<code> <reason>".
	AuditHDTPRefused AuditKind = "hdtp.call.refused"
)

// AuditKinds are every kind, in the order the API lists them.
var AuditKinds = []AuditKind{
	AuditReceiptSigned, AuditGrantCreated, AuditConsentSkipped, AuditGrantRedeemed,
	AuditGrantRefreshed, AuditStepUp, AuditGrantRevoked, AuditGrantReuseRevoked,
	AuditHDTPContactRequested, AuditHDTPContactApproved, AuditHDTPContactDenied, AuditHDTPContactAccepted, AuditHDTPContactRejected,
	AuditHDTPContactBlocked, AuditHDTPContactUnblocked, AuditHDTPContactRemoved, AuditHDTPPermissionsChanged, AuditHDTPLeafRenewed,
	AuditHDTPContactMoved, AuditHDTPAddressPending, AuditHDTPAddressDecided, AuditHDTPRequestSent, AuditHDTPInviteCreated,
	AuditHDTPInviteRevoked, AuditHDTPRefused,
}

// The actors an audit event names: who caused it.
const (
	// ActorAdmin is an admin credential's RPC.
	ActorAdmin = "admin"
	// ActorFrontend is a frontend credential's RPC (the Brand's frontend
	// acting for its User).
	ActorFrontend = "frontend"
	// ActorPA is the PA itself, on an OAuth endpoint.
	ActorPA = "pa"
	// ActorPeer is an HDTP caller (Peer), by its own call.
	ActorPeer = "peer"
)

// AuditAction is one tool call a receipt recorded.
type AuditAction struct {
	// Tool is the tool name.
	Tool string `json:"tool"`
	// ArgsHash is the optional base64url SHA-256 of the arguments' JSON.
	ArgsHash string `json:"args_hash,omitempty"`
}

// AuditEvent is one row of the audit trail. Empty strings mean "does not
// apply" (a step-up has no grant yet).
type AuditEvent struct {
	// ID orders the trail: it only grows. Set by the store.
	ID int64
	// Kind is what happened.
	Kind AuditKind
	// Time is when it happened (whole seconds); the store sets the
	// operation's now when zero.
	Time time.Time
	// BrandID is the Brand.
	BrandID string
	// BrandUser is the User's id at the Brand.
	BrandUser string
	// AgentID is pactd's id of the PA. The store fills BrandID, BrandUser,
	// AgentID and ClientID from the grant when empty and GrantID names one.
	AgentID string
	// ClientID is the PA's issuer (the OAuth client_id).
	ClientID string
	// GrantID is the grant; the store fills it from the operation's result
	// (the redeemed authorization, the rotated token) when empty.
	GrantID string
	// Scopes are the scope ids the kind names (see the kinds).
	Scopes []string
	// Actions are a receipt's actions.
	Actions []AuditAction
	// Actor is who caused the event (ActorAdmin, ActorFrontend, ActorPA).
	Actor string
	// Detail is the kind's detail (see the kinds).
	Detail string
	// IdentityID is the HDTP identity the event is about ("" for PACT
	// 1.0 events); Peer the contact's root fingerprint it involves.
	IdentityID, Peer string
}

// AuditFilter selects audit events; a zero field matches every event.
type AuditFilter struct {
	BrandID, BrandUser, AgentID, GrantID string
	Kind                                 AuditKind
	// IdentityID selects one HDTP identity's events.
	IdentityID string
	// Start (inclusive) and End (exclusive) bound Time.
	Start, End time.Time
}

// AuditStore holds the audit trail.
//
// The store methods that change a grant (ApproveDeviceAuthorization and its
// WithAssertion twin, RedeemDeviceAuthorization, RotateRefreshToken,
// RevokeGrant) record the audit event their ctx carries (WithAudit) in the
// same transaction as the change, so an acknowledged change never lacks its
// row and a failed one leaves none. RevokeGrant records only when it
// revoked.
type AuditStore interface {
	// RecordAuditEvent stores an event on its own (receipts and step-ups
	// change no other state) and returns it as stored.
	RecordAuditEvent(ctx context.Context, e AuditEvent) (AuditEvent, error)
	// ListAuditEvents returns up to limit events matching f with ids after
	// afterID, oldest first.
	ListAuditEvents(ctx context.Context, f AuditFilter, afterID int64, limit int) ([]AuditEvent, error)
	// PruneAuditEvents deletes the events whose Time is before before and
	// returns how many went.
	PruneAuditEvents(ctx context.Context, before time.Time) (int64, error)
}

// pruneBatch bounds the rows one prune statement deletes.
const pruneBatch = 5000

type auditKey struct{}

// WithAudit returns ctx carrying e: the next grant-changing store call
// made with the returned ctx records e in its transaction (see
// AuditStore).
func WithAudit(ctx context.Context, e AuditEvent) context.Context {
	return context.WithValue(ctx, auditKey{}, &e)
}

// auditFrom returns the event ctx carries, completed with the
// operation's now and grant, or nil.
func auditFrom(ctx context.Context, now time.Time, grantID string) *AuditEvent {
	e, _ := ctx.Value(auditKey{}).(*AuditEvent)
	if e == nil {
		return nil
	}
	out := *e
	if out.Time.IsZero() {
		out.Time = now
	}
	if out.GrantID == "" {
		out.GrantID = grantID
	}
	return &out
}

// auditParams encodes e for the insert.
func auditParams(e AuditEvent) (liteq.InsertAuditEventParams, error) {
	actions := ""
	if len(e.Actions) > 0 {
		b, err := json.Marshal(e.Actions)
		if err != nil {
			return liteq.InsertAuditEventParams{}, fmt.Errorf("encode audit actions: %w", err)
		}
		actions = string(b)
	}
	return liteq.InsertAuditEventParams{
		Kind: string(e.Kind), Time: unix(e.Time), BrandID: e.BrandID, BrandUser: e.BrandUser, AgentID: e.AgentID,
		ClientID: e.ClientID, GrantID: e.GrantID, Scopes: delegJoinScopes(e.Scopes), Actions: actions, Actor: e.Actor, Detail: e.Detail,
		IdentityID: e.IdentityID, Peer: e.Peer,
	}, nil
}

func auditFromRow(r liteq.AuditEvent) (AuditEvent, error) {
	e := AuditEvent{
		ID: r.ID, Kind: AuditKind(r.Kind), Time: fromUnix(r.Time), BrandID: r.BrandID, BrandUser: r.BrandUser,
		AgentID: r.AgentID, ClientID: r.ClientID, GrantID: r.GrantID, Scopes: delegSplitScopes(r.Scopes),
		Actor: r.Actor, Detail: r.Detail, IdentityID: r.IdentityID, Peer: r.Peer,
	}
	if r.Actions != "" {
		if err := json.Unmarshal([]byte(r.Actions), &e.Actions); err != nil {
			return AuditEvent{}, fmt.Errorf("audit event %d: stored actions: %w", r.ID, err)
		}
	}
	return e, nil
}

func auditListParams(f AuditFilter, afterID int64, limit int) liteq.ListAuditEventsParams {
	p := liteq.ListAuditEventsParams{
		AfterID: afterID, BrandID: f.BrandID, BrandUser: f.BrandUser, AgentID: f.AgentID, GrantID: f.GrantID,
		Kind: string(f.Kind), IdentityID: f.IdentityID, PageLimit: int64(limit),
	}
	if !f.Start.IsZero() {
		p.StartTime = unix(f.Start)
	}
	if !f.End.IsZero() {
		p.EndTime = unix(f.End)
	}
	return p
}

// fillFromGrant sets the parties e lacks to the grant's.
func (e *AuditEvent) fillFromGrant(brandID, brandUser, agentID, clientID string) {
	for _, f := range []struct {
		dst *string
		v   string
	}{{&e.BrandID, brandID}, {&e.BrandUser, brandUser}, {&e.AgentID, agentID}, {&e.ClientID, clientID}} {
		if *f.dst == "" {
			*f.dst = f.v
		}
	}
}

// finishAudit is e as recordAudit stored it under id.
func finishAudit(e AuditEvent, p liteq.InsertAuditEventParams, id int64) AuditEvent {
	e.ID = id
	e.Time = fromUnix(p.Time)
	if e.Scopes == nil {
		e.Scopes = []string{}
	}
	return e
}

// AuditPageToken is the paging key of an event id (internal/paging carries
// it as a string).
func AuditPageToken(id int64) string { return strconv.FormatInt(id, 10) }

// ParseAuditPageToken reads AuditPageToken back; ok is false for anything
// else.
func ParseAuditPageToken(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0 && AuditPageToken(id) == s
}
