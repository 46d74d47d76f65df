// Package audit implements pact.v1.AuditService: reading the audit trail
// the delegation and token services write (every signed receipt and every
// grant event), across Brands for operators and one Brand at a time for
// that Brand's frontend, and pruning it to the retention setting.
package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/paging"
	"pactd.dev/pactd/internal/rpcerr"
)

// maxFilterLen bounds every string filter (ids and Brand user ids are far
// shorter); a longer one can match nothing and is refused.
const maxFilterLen = 256

// Store is the storage the service needs.
type Store interface {
	GetBrand(ctx context.Context, id string) (db.Brand, error)
	ListAuditEvents(ctx context.Context, f db.AuditFilter, afterID int64, limit int) ([]db.AuditEvent, error)
	PruneAuditEvents(ctx context.Context, before time.Time) (int64, error)
}

// Deps are the service's collaborators.
type Deps struct {
	// Store holds the trail.
	Store Store
	// Retention is how long events are kept; zero keeps them for ever.
	Retention time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives one line per unexpected fault.
	Logger *slog.Logger
	// OnPrune is called with the number of events each prune deleted (for
	// the metric); may be nil.
	OnPrune func(n int64)
}

// Service implements pactv1connect.AuditServiceHandler.
type Service struct {
	pactv1connect.UnimplementedAuditServiceHandler
	d Deps
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Service{d: d}
}

// kinds maps the API's kinds to the stored ones.
var kinds = map[pactv1.AuditEventKind]db.AuditKind{
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED:      db.AuditReceiptSigned,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_CREATED:       db.AuditGrantCreated,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_CONSENT_SKIPPED:     db.AuditConsentSkipped,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REDEEMED:      db.AuditGrantRedeemed,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REFRESHED:     db.AuditGrantRefreshed,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_STEP_UP:             db.AuditStepUp,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REVOKED:       db.AuditGrantRevoked,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REUSE_REVOKED: db.AuditGrantReuseRevoked,

	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_REQUESTED:   db.AuditHDTPContactRequested,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_APPROVED:    db.AuditHDTPContactApproved,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_DENIED:      db.AuditHDTPContactDenied,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_ACCEPTED:    db.AuditHDTPContactAccepted,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_REJECTED:    db.AuditHDTPContactRejected,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_BLOCKED:     db.AuditHDTPContactBlocked,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_UNBLOCKED:   db.AuditHDTPContactUnblocked,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_REMOVED:     db.AuditHDTPContactRemoved,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_PERMISSIONS_CHANGED: db.AuditHDTPPermissionsChanged,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_LEAF_RENEWED:        db.AuditHDTPLeafRenewed,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CONTACT_MOVED:       db.AuditHDTPContactMoved,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_ADDRESS_PENDING:     db.AuditHDTPAddressPending,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_ADDRESS_DECIDED:     db.AuditHDTPAddressDecided,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_REQUEST_SENT:        db.AuditHDTPRequestSent,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_INVITE_CREATED:      db.AuditHDTPInviteCreated,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_INVITE_REVOKED:      db.AuditHDTPInviteRevoked,
	pactv1.AuditEventKind_AUDIT_EVENT_KIND_HDTP_CALL_REFUSED:        db.AuditHDTPRefused,
}

// kindOf is the API kind of a stored one (UNSPECIFIED for a kind this
// build does not know, written by a newer replica).
func kindOf(k db.AuditKind) pactv1.AuditEventKind {
	for p, d := range kinds {
		if d == k {
			return p
		}
	}
	return pactv1.AuditEventKind_AUDIT_EVENT_KIND_UNSPECIFIED
}

// ListAuditEvents lists the whole trail (admin role).
func (s *Service) ListAuditEvents(ctx context.Context, req *pactv1.ListAuditEventsRequest) (*pactv1.ListAuditEventsResponse, error) {
	events, next, err := s.list(ctx, "list audit events", req.GetBrandId(), req.GetFilter(), req.GetPage())
	if err != nil {
		return nil, err
	}
	return &pactv1.ListAuditEventsResponse{Events: events, NextPageToken: next}, nil
}

// ListBrandAuditEvents lists one Brand's trail (frontend role): brand_id
// is required and the Brand must exist.
func (s *Service) ListBrandAuditEvents(ctx context.Context, req *pactv1.ListBrandAuditEventsRequest) (*pactv1.ListBrandAuditEventsResponse, error) {
	const op = "list brand audit events"
	if req.GetBrandId() == "" {
		return nil, rpcerr.InvalidField("brand_id", "is required")
	}
	if len(req.GetBrandId()) > maxFilterLen {
		return nil, rpcerr.NotFound("brand")
	}
	if _, err := s.d.Store.GetBrand(ctx, req.GetBrandId()); errors.Is(err, db.ErrNotFound) {
		return nil, rpcerr.NotFound("brand")
	} else if err != nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, op+": load brand", err)
	}
	events, next, err := s.list(ctx, op, req.GetBrandId(), req.GetFilter(), req.GetPage())
	if err != nil {
		return nil, err
	}
	return &pactv1.ListBrandAuditEventsResponse{Events: events, NextPageToken: next}, nil
}

// list validates the filter and the page, then reads one page.
func (s *Service) list(ctx context.Context, op, brandID string, pf *pactv1.AuditFilter, page *pactv1.PageRequest) ([]*pactv1.AuditEvent, string, error) {
	f, v := filter(brandID, pf)
	p, perr := paging.Parse(page)
	var afterID int64
	if perr == nil {
		var ok bool
		if afterID, ok = db.ParseAuditPageToken(p.AfterID); !ok {
			v.Add("page.page_token", "is not a token this listing returned")
		}
	}
	if err := v.Err(); err != nil {
		return nil, "", err
	}
	if perr != nil {
		return nil, "", perr
	}
	list, err := s.d.Store.ListAuditEvents(ctx, f, afterID, p.Size)
	if err != nil {
		return nil, "", rpcerr.Fault(ctx, s.d.Logger, op, err)
	}
	out := make([]*pactv1.AuditEvent, 0, len(list))
	for _, e := range list {
		out = append(out, eventToProto(e))
	}
	next := ""
	if len(list) > 0 {
		next = paging.Next(len(list), p.Size, db.AuditPageToken(list[len(list)-1].ID))
	}
	return out, next, nil
}

// filter checks the request's filter and turns it into the store's.
func filter(brandID string, pf *pactv1.AuditFilter) (db.AuditFilter, *rpcerr.Violations) {
	v := &rpcerr.Violations{}
	f := db.AuditFilter{BrandID: brandID, BrandUser: pf.GetBrandUser(), AgentID: pf.GetAgentId(), GrantID: pf.GetGrantId(),
		IdentityID: pf.GetHdtpIdentityId()}
	for _, c := range []struct{ field, val string }{
		{"brand_id", brandID}, {"filter.brand_user", f.BrandUser}, {"filter.agent_id", f.AgentID}, {"filter.grant_id", f.GrantID},
		{"filter.hdtp_identity_id", f.IdentityID},
	} {
		if len(c.val) > maxFilterLen {
			v.Add(c.field, "must be at most %d bytes", maxFilterLen)
		}
	}
	if f.BrandUser != "" && brandID == "" {
		// A User's id means something only at its Brand.
		v.Add("filter.brand_user", "needs brand_id: a User's id is the Brand's")
	}
	if k := pf.GetKind(); k != pactv1.AuditEventKind_AUDIT_EVENT_KIND_UNSPECIFIED {
		if f.Kind = kinds[k]; f.Kind == "" {
			v.Add("filter.kind", "%d is not an audit event kind", int32(k))
		}
	}
	if t := pf.GetStartTime(); t != nil {
		if t.CheckValid() != nil {
			v.Add("filter.start_time", "must be a valid timestamp")
		} else {
			f.Start = t.AsTime()
		}
	}
	if t := pf.GetEndTime(); t != nil {
		if t.CheckValid() != nil {
			v.Add("filter.end_time", "must be a valid timestamp")
		} else {
			f.End = t.AsTime()
		}
	}
	if !f.Start.IsZero() && !f.End.IsZero() && !f.Start.Before(f.End) {
		v.Add("filter.end_time", "must be after start_time")
	}
	// The store keeps whole unix seconds from 1970 on; times outside that
	// (0 means "no bound" there) are refused rather than misread.
	for _, c := range []struct {
		field string
		t     time.Time
	}{{"filter.start_time", f.Start}, {"filter.end_time", f.End}} {
		if !c.t.IsZero() && c.t.Unix() <= 0 {
			v.Add(c.field, "must be after 1970-01-01T00:00:00Z")
		}
	}
	return f, v
}

func eventToProto(e db.AuditEvent) *pactv1.AuditEvent {
	out := &pactv1.AuditEvent{
		Id: db.AuditPageToken(e.ID), Kind: kindOf(e.Kind), Time: timestamppb.New(e.Time), BrandId: e.BrandID,
		BrandUser: e.BrandUser, AgentId: e.AgentID, PaIssuer: e.ClientID, GrantId: e.GrantID, Scopes: e.Scopes,
		Actor: e.Actor, Detail: e.Detail, HdtpIdentityId: e.IdentityID, HdtpPeer: e.Peer,
	}
	for _, a := range e.Actions {
		out.Actions = append(out.Actions, &pactv1.AuditAction{Tool: a.Tool, ArgsHash: a.ArgsHash})
	}
	return out
}

// Prune deletes the events older than the retention setting (nothing when
// it is zero) and returns how many went. Run it periodically.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	if s.d.Retention <= 0 {
		return 0, nil
	}
	n, err := s.d.Store.PruneAuditEvents(ctx, s.d.Now().Add(-s.d.Retention))
	if n > 0 && s.d.OnPrune != nil {
		s.d.OnPrune(n)
	}
	if err != nil {
		return n, fmt.Errorf("prune audit events: %w", err)
	}
	return n, nil
}
