package hdtp

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/hdtp/card"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/invite"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/paging"
	"pactd.dev/pactd/internal/rpcerr"
)

var contactStates = map[db.HDTPContactState]hdtpv1.ContactState{
	db.HDTPContactActive: hdtpv1.ContactState_CONTACT_STATE_ACTIVE, db.HDTPContactPendingIn: hdtpv1.ContactState_CONTACT_STATE_PENDING_IN,
	db.HDTPContactPendingOut: hdtpv1.ContactState_CONTACT_STATE_PENDING_OUT, db.HDTPContactBlocked: hdtpv1.ContactState_CONTACT_STATE_BLOCKED,
}

func contactToProto(c db.HDTPContact) *hdtpv1.Contact {
	out := &hdtpv1.Contact{IdentityId: c.IdentityID, Root: c.Root, Endpoint: c.Endpoint, LeafKid: c.LeafKID, Leaf: c.Leaf,
		State: contactStates[c.State], Permissions: c.Permissions, Preset: c.Preset, TheirPermissions: c.TheirPermissions,
		DisplayName: c.DisplayName, InviteLabel: c.InviteLabel, Note: c.Note, WasActive: c.WasActive,
		CreateTime: timestamppb.New(c.CreateTime), UpdateTime: timestamppb.New(c.UpdateTime)}
	if !c.RequestTime.IsZero() {
		out.RequestTime = timestamppb.New(c.RequestTime)
	}
	if c.PendingLeafKID == "" {
		out.BorrowedFromRoot = c.PendingBorrowedFrom
	} else {
		out.PendingAddress = &hdtpv1.PendingAddress{Endpoint: c.PendingEndpoint, LeafKid: c.PendingLeafKID, Leaf: c.PendingLeaf,
			SeenTime: timestamppb.New(c.PendingSeenTime), BorrowedFromRoot: c.PendingBorrowedFrom}
	}
	return out
}

// ownerAction runs fn on the identity's contact with the root in one
// transaction, and records the audit event it returns.
func (s *Contacts) ownerAction(ctx context.Context, action, identityID, root string,
	fn func(tx db.HDTPTx, st *identityState, pin db.HDTPContact, now time.Time) (*db.AuditEvent, error)) (*identityState, error) {
	if _, ok := wire.ParseFingerprint(root); !ok {
		return nil, rpcerr.InvalidField("root", "is a root fingerprint: sha256: and 43 base64url characters")
	}
	h := s.h
	st, err := h.loadIdentity(ctx, identityID, "")
	if err != nil {
		return nil, err
	}
	now := h.d.Now()
	var kind db.AuditKind
	err = h.d.Store.InHDTPTx(ctx, st.id.ID, func(tx db.HDTPTx) error {
		pin, err := tx.Contact(root)
		if err != nil {
			return err
		}
		ev, err := fn(tx, st, pin, now)
		if err != nil || ev == nil {
			return err
		}
		ev.Time, ev.IdentityID, ev.Peer, ev.Actor = now, st.id.ID, root, db.ActorAdmin
		kind = ev.Kind
		return tx.RecordAudit(*ev)
	})
	var pe *preconditionError
	var ce *connect.Error
	switch {
	case errors.Is(err, db.ErrNotFound):
		return nil, rpcerr.NotFound("contact")
	case errors.As(err, &pe):
		return nil, precondition(pe.msg, "refusal", pe.refusal)
	case errors.As(err, &ce):
		return nil, ce
	case err != nil:
		return nil, rpcerr.Fault(ctx, h.d.Logger, "hdtp "+action, err)
	}
	h.m.owner.WithLabelValues(action).Inc()
	if kind != "" {
		h.d.OnAudit(kind)
	}
	return st, nil
}

// preconditionError refuses an owner action for the contact's state.
type preconditionError struct{ msg, refusal string }

func (e *preconditionError) Error() string { return e.msg }

func notIn(refusal, msg string) error { return &preconditionError{msg: msg, refusal: refusal} }

// ListContacts lists an identity's contacts.
func (s *Contacts) ListContacts(ctx context.Context, req *hdtpv1.ListContactsRequest) (*hdtpv1.ListContactsResponse, error) {
	p, err := paging.Parse(&pactv1.PageRequest{PageSize: req.GetPageSize(), PageToken: req.GetPageToken()})
	if err != nil {
		return nil, err
	}
	st, err := s.h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	var state db.HDTPContactState
	if req.GetState() != hdtpv1.ContactState_CONTACT_STATE_UNSPECIFIED {
		for k, v := range contactStates {
			if v == req.GetState() {
				state = k
			}
		}
		if state == "" {
			return nil, rpcerr.InvalidField("state", "is not a contact state")
		}
	}
	list, err := s.h.d.Store.ListHDTPContacts(ctx, st.id.ID, state, p.AfterID, p.Size)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.h.d.Logger, "list hdtp contacts", err)
	}
	resp := &hdtpv1.ListContactsResponse{Contacts: make([]*hdtpv1.Contact, len(list))}
	for i, c := range list {
		resp.Contacts[i] = contactToProto(c)
	}
	if len(list) > 0 {
		resp.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].Root)
	}
	return resp, nil
}

// GetContact returns one contact.
func (s *Contacts) GetContact(ctx context.Context, req *hdtpv1.GetContactRequest) (*hdtpv1.GetContactResponse, error) {
	c, err := s.contact(ctx, req.GetIdentityId(), req.GetRoot())
	if err != nil {
		return nil, err
	}
	return &hdtpv1.GetContactResponse{Contact: contactToProto(c)}, nil
}

func (s *Contacts) contact(ctx context.Context, identityID, root string) (db.HDTPContact, error) {
	if _, ok := wire.ParseFingerprint(root); !ok {
		return db.HDTPContact{}, rpcerr.InvalidField("root", "is a root fingerprint: sha256: and 43 base64url characters")
	}
	st, err := s.h.loadIdentity(ctx, identityID, "")
	if err != nil {
		return db.HDTPContact{}, err
	}
	c, err := s.h.d.Store.GetHDTPContact(ctx, st.id.ID, root)
	if errors.Is(err, db.ErrNotFound) {
		return db.HDTPContact{}, rpcerr.NotFound("contact")
	}
	if err != nil {
		return db.HDTPContact{}, rpcerr.Fault(ctx, s.h.d.Logger, "load hdtp contact", err)
	}
	return c, nil
}

// ApproveContact approves a waiting request and returns the
// contact_accepted call.
func (s *Contacts) ApproveContact(ctx context.Context, req *hdtpv1.ApproveContactRequest) (*hdtpv1.ApproveContactResponse, error) {
	perms, preset, err := permissionsFrom("preset", req.GetPreset(), req.GetPermissions(), nil)
	if err != nil {
		return nil, err
	}
	if req.GetPreset() == "" && len(req.GetPermissions()) == 0 {
		return nil, rpcerr.InvalidField("preset", "set a preset or a list of permissions")
	}
	var approved db.HDTPContact
	st, err := s.ownerAction(ctx, "approve", req.GetIdentityId(), req.GetRoot(), func(tx db.HDTPTx, _ *identityState, pin db.HDTPContact,
		now time.Time) (*db.AuditEvent, error) {
		if pin.State != db.HDTPContactPendingIn || pin.PendingLeafKID != "" {
			return nil, notIn("not_pending", "the contact has no waiting request")
		}
		pin.State, pin.Permissions, pin.Preset, pin.Note, pin.UpdateTime = db.HDTPContactActive, perms, preset, "", now
		approved = pin
		return &db.AuditEvent{Kind: db.AuditHDTPContactApproved, Scopes: perms}, tx.PutContact(pin)
	})
	if err != nil {
		return nil, err
	}
	call, err := s.notify(ctx, st, approved, toolContactAccepted, func() (json.RawMessage, error) {
		cr, err := s.h.ids.card(st.id, st.leaves)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(`{"card":` + string(jsonString(cr.text)) + `,"permissions":` + string(stringArray(perms)) + `}`), nil
	})
	if err != nil {
		return nil, err
	}
	return &hdtpv1.ApproveContactResponse{Contact: contactToProto(approved), Call: call}, nil
}

// notify seals a trust tool call to a contact's pin.
func (s *Contacts) notify(ctx context.Context, st *identityState, pin db.HDTPContact, tool string,
	args func() (json.RawMessage, error)) (*hdtpv1.OutboundCall, error) {
	a, err := args()
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.h.d.Logger, "write hdtp "+tool, err)
	}
	to, err := pinTarget(st, pin)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.h.d.Logger, "read hdtp pin", err)
	}
	call, err := s.h.sealOut(st, to, "tools/call", tool, a, "", false, false)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.h.d.Logger, "seal hdtp "+tool, err)
	}
	return call, nil
}

// RejectContact rejects a waiting request and returns the
// contact_rejected call.
func (s *Contacts) RejectContact(ctx context.Context, req *hdtpv1.RejectContactRequest) (*hdtpv1.RejectContactResponse, error) {
	if int64(len(req.GetReason())) > s.h.d.Limits.NoteBytes {
		return nil, rpcerr.InvalidField("reason", "at most %d bytes", s.h.d.Limits.NoteBytes)
	}
	var rejected db.HDTPContact
	st, err := s.ownerAction(ctx, "reject", req.GetIdentityId(), req.GetRoot(), func(tx db.HDTPTx, _ *identityState, pin db.HDTPContact,
		_ time.Time) (*db.AuditEvent, error) {
		if pin.State != db.HDTPContactPendingIn {
			return nil, notIn("not_pending", "the contact has no waiting request")
		}
		rejected = pin
		_, err := tx.DeleteContact(pin.Root)
		return &db.AuditEvent{Kind: db.AuditHDTPContactDenied}, err
	})
	if err != nil {
		return nil, err
	}
	call, err := s.notify(ctx, st, rejected, toolContactRejected, func() (json.RawMessage, error) {
		if req.GetReason() == "" {
			return json.RawMessage("{}"), nil
		}
		return json.RawMessage(`{"reason":` + string(jsonString(req.GetReason())) + `}`), nil
	})
	if err != nil {
		return nil, err
	}
	return &hdtpv1.RejectContactResponse{Call: call}, nil
}

// BlockContact blocks a contact in any state.
func (s *Contacts) BlockContact(ctx context.Context, req *hdtpv1.BlockContactRequest) (*hdtpv1.BlockContactResponse, error) {
	var out db.HDTPContact
	_, err := s.ownerAction(ctx, "block", req.GetIdentityId(), req.GetRoot(), func(tx db.HDTPTx, _ *identityState, pin db.HDTPContact,
		now time.Time) (*db.AuditEvent, error) {
		if pin.State == db.HDTPContactBlocked {
			out = pin
			return nil, nil
		}
		pin.WasActive, pin.State, pin.UpdateTime = pin.State == db.HDTPContactActive, db.HDTPContactBlocked, now
		out = pin
		return &db.AuditEvent{Kind: db.AuditHDTPContactBlocked}, tx.PutContact(pin)
	})
	if err != nil {
		return nil, err
	}
	return &hdtpv1.BlockContactResponse{Contact: contactToProto(out)}, nil
}

// UnblockContact lifts a block.
func (s *Contacts) UnblockContact(ctx context.Context, req *hdtpv1.UnblockContactRequest) (*hdtpv1.UnblockContactResponse, error) {
	var out *db.HDTPContact
	_, err := s.ownerAction(ctx, "unblock", req.GetIdentityId(), req.GetRoot(), func(tx db.HDTPTx, _ *identityState, pin db.HDTPContact,
		now time.Time) (*db.AuditEvent, error) {
		if pin.State != db.HDTPContactBlocked {
			return nil, notIn("not_blocked", "the contact is not blocked")
		}
		ev := &db.AuditEvent{Kind: db.AuditHDTPContactUnblocked}
		if !pin.WasActive {
			_, err := tx.DeleteContact(pin.Root)
			return ev, err
		}
		pin.State, pin.WasActive, pin.UpdateTime = db.HDTPContactActive, false, now
		out = &pin
		return ev, tx.PutContact(pin)
	})
	if err != nil {
		return nil, err
	}
	resp := &hdtpv1.UnblockContactResponse{}
	if out != nil {
		resp.Contact = contactToProto(*out)
	}
	return resp, nil
}

// RemoveContact removes a contact, keeping its tombstone.
func (s *Contacts) RemoveContact(ctx context.Context, req *hdtpv1.RemoveContactRequest) (*hdtpv1.RemoveContactResponse, error) {
	var removed db.HDTPContact
	st, err := s.ownerAction(ctx, "remove", req.GetIdentityId(), req.GetRoot(), func(tx db.HDTPTx, _ *identityState, pin db.HDTPContact,
		now time.Time) (*db.AuditEvent, error) {
		removed = pin
		return &db.AuditEvent{Kind: db.AuditHDTPContactRemoved, Actor: db.ActorAdmin}, s.h.tombstone(tx, pin, now)
	})
	if err != nil {
		return nil, err
	}
	resp := &hdtpv1.RemoveContactResponse{}
	if removed.State == db.HDTPContactActive {
		if resp.Call, err = s.notify(ctx, st, removed, toolRemoveContact, func() (json.RawMessage, error) { return json.RawMessage("{}"), nil }); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// SetContactPermissions sets an active contact's permissions.
func (s *Contacts) SetContactPermissions(ctx context.Context, req *hdtpv1.SetContactPermissionsRequest) (*hdtpv1.SetContactPermissionsResponse, error) {
	if req.GetPreset() == "" && req.GetPermissions() == nil {
		return nil, rpcerr.InvalidField("preset", "set a preset or a list of permissions (an empty list is none)")
	}
	var out db.HDTPContact
	_, err := s.ownerAction(ctx, "permissions", req.GetIdentityId(), req.GetRoot(), func(tx db.HDTPTx, _ *identityState, pin db.HDTPContact,
		now time.Time) (*db.AuditEvent, error) {
		if pin.State != db.HDTPContactActive {
			return nil, notIn("not_active", "only an active contact has permissions")
		}
		perms, preset, err := permissionsFrom("preset", req.GetPreset(), req.GetPermissions(), pin.Permissions)
		if err != nil {
			return nil, err
		}
		pin.Permissions, pin.Preset, pin.UpdateTime = perms, preset, now
		out = pin
		return &db.AuditEvent{Kind: db.AuditHDTPPermissionsChanged, Scopes: perms}, tx.PutContact(pin)
	})
	if err != nil {
		return nil, err
	}
	return &hdtpv1.SetContactPermissionsResponse{Contact: contactToProto(out)}, nil
}

// ListPendingAddresses lists the contacts with an address waiting.
func (s *Contacts) ListPendingAddresses(ctx context.Context, req *hdtpv1.ListPendingAddressesRequest) (*hdtpv1.ListPendingAddressesResponse, error) {
	st, err := s.h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	list, err := s.h.d.Store.ListHDTPPendingAddresses(ctx, st.id.ID)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.h.d.Logger, "list hdtp pending addresses", err)
	}
	resp := &hdtpv1.ListPendingAddressesResponse{Contacts: make([]*hdtpv1.Contact, len(list))}
	for i, c := range list {
		resp.Contacts[i] = contactToProto(c)
	}
	return resp, nil
}

// DecidePendingAddress approves or rejects a contact's new address.
func (s *Contacts) DecidePendingAddress(ctx context.Context, req *hdtpv1.DecidePendingAddressRequest) (*hdtpv1.DecidePendingAddressResponse, error) {
	var out *db.HDTPContact
	_, err := s.ownerAction(ctx, "decide_address", req.GetIdentityId(), req.GetRoot(), func(tx db.HDTPTx, st *identityState, pin db.HDTPContact,
		now time.Time) (*db.AuditEvent, error) {
		if pin.PendingLeafKID == "" {
			return nil, notIn("no_pending_address", "the contact has no address waiting")
		}
		// A row made for a tombstoned root that came back (§5.3) holds
		// only the waiting address: rejecting it forgets the root again.
		returned := pin.State == db.HDTPContactPendingIn
		ev := &db.AuditEvent{Kind: db.AuditHDTPAddressDecided, Detail: "rejected"}
		if !req.GetApprove() {
			if returned {
				_, err := tx.DeleteContact(pin.Root)
				return ev, err
			}
			pin.PendingEndpoint, pin.PendingLeaf, pin.PendingLeafKID, pin.PendingSeenTime, pin.PendingBorrowedFrom = "", nil, "", time.Time{}, ""
			pin.UpdateTime = now
			out = &pin
			return ev, tx.PutContact(pin)
		}
		ev.Detail = "approved"
		if pin.Endpoint != pin.PendingEndpoint && !returned {
			if err := tx.PutFormerPin(db.HDTPFormerPin{Root: pin.Root, Endpoint: pin.Endpoint, LeafKID: pin.LeafKID, LeafNotBefore: pin.LeafNotBefore,
				Permissions: pin.Permissions, Preset: pin.Preset, ExpireTime: now.Add(formerPinWindow)}); err != nil {
				return nil, err
			}
		}
		leaf, err := cert.Parse(pin.PendingLeaf, cert.KindLeaf, st.gen)
		if err != nil {
			return nil, err
		}
		if returned {
			pin.State = db.HDTPContactActive
			if err := tx.DeleteTombstones(pin.Root); err != nil {
				return nil, err
			}
		}
		pin.Endpoint, pin.Leaf, pin.LeafKID, pin.LeafNotBefore = pin.PendingEndpoint, pin.PendingLeaf, pin.PendingLeafKID, leaf.NotBefore
		pin.PendingEndpoint, pin.PendingLeaf, pin.PendingLeafKID, pin.PendingSeenTime, pin.PendingBorrowedFrom = "", nil, "", time.Time{}, ""
		pin.UpdateTime = now
		out = &pin
		return ev, tx.PutContact(pin)
	})
	if err != nil {
		return nil, err
	}
	resp := &hdtpv1.DecidePendingAddressResponse{}
	if out != nil {
		resp.Contact = contactToProto(*out)
	}
	return resp, nil
}

// RequestContact asks someone to become a contact, from their card.
func (s *Contacts) RequestContact(ctx context.Context, req *hdtpv1.RequestContactRequest) (*hdtpv1.RequestContactResponse, error) {
	h := s.h
	if int64(len(req.GetNote())) > h.d.Limits.NoteBytes {
		return nil, rpcerr.InvalidField("note", "at most %d bytes", h.d.Limits.NoteBytes)
	}
	resolved, err := addrs("resolved_addresses", req.GetResolvedAddresses())
	if err != nil {
		return nil, err
	}
	st, err := h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	if len(req.GetCard()) > maxCardBytes {
		return nil, rpcerr.InvalidField("card", "at most %d bytes", maxCardBytes)
	}
	cd, err := card.Read(st.gen, req.GetCard())
	if err != nil {
		return nil, rpcerr.InvalidField("card", "is refused at intake (%s)", card.ReasonOf(err))
	}
	if err := h.d.guard().Check(cd.Leaf.Endpoint, resolved); err != nil {
		return nil, rpcerr.InvalidField("card", "names an endpoint the address guard refuses")
	}
	if cd.Leaf.Endpoint == st.id.Endpoint {
		return nil, rpcerr.InvalidField("card", "is the identity's own")
	}
	note := req.GetNote()
	return s.request(ctx, st, cd, nil, "", func() (json.RawMessage, string, error) {
		cr, err := h.ids.card(st.id, st.leaves)
		if err != nil {
			return nil, "", err
		}
		a := `{"card":` + string(jsonString(cr.text))
		if note != "" {
			a += `,"note":` + string(jsonString(note))
		}
		return json.RawMessage(a + "}"), toolRequestContact, nil
	})
}

// RedeemInvite redeems someone's invite from its landing.
func (s *Contacts) RedeemInvite(ctx context.Context, req *hdtpv1.RedeemInviteRequest) (*hdtpv1.RedeemInviteResponse, error) {
	h := s.h
	resolved, err := addrs("resolved_addresses", req.GetResolvedAddresses())
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(req.GetInviteUrl())
	if err != nil || len(req.GetInviteUrl()) > maxURLBytes || u.Scheme != "https" || u.RawQuery != "" || u.Fragment != "" ||
		!strings.HasPrefix(u.EscapedPath(), invite.PathPrefix) {
		return nil, rpcerr.InvalidField("invite_url", "is https://<host>/i/<token>")
	}
	token := strings.TrimPrefix(u.EscapedPath(), invite.PathPrefix)
	if token == "" || len(token) > 256 || strings.ContainsAny(token, `/%"\`) {
		return nil, rpcerr.InvalidField("invite_url", "is https://<host>/i/<token>")
	}
	st, err := h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	l, err := h.readLanding(st, req.GetLandingJson())
	if err != nil {
		return nil, err
	}
	if err := h.d.guard().Check(l.leaf.Endpoint, resolved); err != nil {
		return nil, rpcerr.InvalidField("landing_json", "its endpoint is refused by the address guard")
	}
	if !strings.EqualFold(u.Host, hostOf(l.leaf.Endpoint)) {
		return nil, rpcerr.InvalidField("invite_url", "its host is not the landing card's endpoint host")
	}
	if l.leaf.Endpoint == st.id.Endpoint {
		return nil, rpcerr.InvalidField("landing_json", "is the identity's own")
	}
	resp, err := s.request(ctx, st, l.card, l.leaf.Raw, l.root, func() (json.RawMessage, string, error) {
		cr, err := h.ids.card(st.id, st.leaves)
		if err != nil {
			return nil, "", err
		}
		return json.RawMessage(`{"token":` + string(jsonString(token)) + `,"card":` + string(jsonString(cr.text)) + `}`), toolRedeemInvite, nil
	})
	if err != nil {
		return nil, err
	}
	return &hdtpv1.RedeemInviteResponse{Contact: resp.Contact, Call: resp.Call}, nil
}

func hostOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return u.Host
}

// request records an outgoing request (pending_out) and seals its call.
// leafDER is the validated chain's leaf when there is one (a landing), else
// the card's.
func (s *Contacts) request(ctx context.Context, st *identityState, cd *card.Card, leafDER []byte, root string,
	args func() (json.RawMessage, string, error)) (*hdtpv1.RequestContactResponse, error) {
	h := s.h
	if st.chainDER() == nil {
		return nil, precondition("the identity has no chain yet", "refusal", "no_chain")
	}
	if root == "" {
		root = cd.Leaf.AuthorityKeyID.Fingerprint()
	}
	if leafDER == nil {
		leafDER = cd.Leaf.Raw
	}
	a, tool, err := args()
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "write hdtp request", err)
	}
	now := h.d.Now()
	var row db.HDTPContact
	err = h.d.Store.InHDTPTx(ctx, st.id.ID, func(tx db.HDTPTx) error {
		pin, err := tx.Contact(root)
		switch {
		case err == nil && pin.State == db.HDTPContactActive:
			return notIn("already_contact", "the root is a contact already")
		case err == nil && pin.State == db.HDTPContactBlocked:
			return notIn("blocked", "the root is blocked: unblock it first")
		case err != nil && !errors.Is(err, db.ErrNotFound):
			return err
		}
		if n, err := tx.CountContacts(db.HDTPContactActive); err != nil {
			return err
		} else if n >= h.d.Limits.ContactCap {
			return notIn("contact_cap", "the identity holds as many contacts as it may")
		}
		row = db.HDTPContact{Root: root, Endpoint: cd.Leaf.Endpoint, Leaf: leafDER, LeafKID: cd.Leaf.Fingerprint(), LeafNotBefore: cd.Leaf.NotBefore,
			State: db.HDTPContactPendingOut, Permissions: slices.Clone(presets["basic"]), Preset: "basic", TheirPermissions: []string{},
			DisplayName: cd.Name, RequestTime: now, CreateTime: now, UpdateTime: now}
		if err == nil {
			row.CreateTime = pin.CreateTime
		}
		if err := tx.PutContact(row); err != nil {
			return err
		}
		return tx.RecordAudit(db.AuditEvent{Kind: db.AuditHDTPRequestSent, Time: now, IdentityID: st.id.ID, Peer: root, Actor: db.ActorAdmin,
			Detail: tool})
	})
	var pe *preconditionError
	switch {
	case errors.As(err, &pe):
		return nil, precondition(pe.msg, "refusal", pe.refusal)
	case err != nil:
		return nil, rpcerr.Fault(ctx, h.d.Logger, "record hdtp request", err)
	}
	h.d.OnAudit(db.AuditHDTPRequestSent)
	h.m.owner.WithLabelValues(tool).Inc()
	to := outTarget{root: root, endpoint: cd.Leaf.Endpoint, leaf: cd.Leaf, expectRoot: root}
	call, err := h.sealOut(st, to, "tools/call", tool, a, "", false, false)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "seal hdtp "+tool, err)
	}
	return &hdtpv1.RequestContactResponse{Contact: contactToProto(row), Call: call}, nil
}
