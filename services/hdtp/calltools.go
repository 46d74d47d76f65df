package hdtp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/card"
	"pactd.dev/pactd/internal/hdtp/invite"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/jws"
)

// Bounds pactd puts on arguments the spec leaves open (§12 lets a host
// bound other strings without advertising them).
const (
	maxShortString  = 1024
	maxURLBytes     = 2048
	maxMsgIDBytes   = 256
	maxThreadBytes  = 256
	maxTheirPerms   = 64
	maxWaitingCalls = 1000
)

// args are a call's arguments object, member by member.
type args map[string]json.RawMessage

func readArgs(raw json.RawMessage) args {
	m, ok := jws.Members(raw)
	if !ok {
		return args{}
	}
	return m
}

// str reads a string member: present, and whether it is a string.
func (a args) str(name string) (v string, present, ok bool) {
	v, present, ok = jws.StringMember(a, name)
	return v, present, ok
}

// optString checks an optional string member against a bound: a wrong
// type is bad_request, a longer one too_large.
func (a args) optString(name string, limit int) *refusal {
	if v, present, ok := a.str(name); present && !ok {
		return badRequest("arg_" + name)
	} else if len(v) > limit {
		return &refusal{code: wire.CodeTooLarge, reason: "arg_" + name}
	}
	return nil
}

func badRequest(reason string) *refusal { return &refusal{code: wire.CodeBadRequest, reason: reason} }

func refuse(code wire.Code, reason string) toolOutcome {
	return toolOutcome{ref: &refusal{code: code, reason: reason}}
}

func refusalOutcome(r *refusal) toolOutcome { return toolOutcome{ref: r} }

// runTool runs tier gating, the trust tools, and the checks of a content
// tool before it is dispatched (§6.1, §6.2).
func (h *Host) runTool(ctx context.Context, tx db.HDTPTx, c *call) (toolOutcome, error) {
	a := readArgs(c.args)
	switch c.tier.tier {
	case hdtpv1.Tier_TIER_GUEST:
		switch c.name {
		case toolRequestContact:
			return h.requestContact(tx, c, a)
		case toolRedeemInvite:
			return h.redeemInvite(ctx, tx, c, a)
		}
		return refuse(wire.CodeBlockedOrUnknown, "guest_tool"), nil
	case hdtpv1.Tier_TIER_PENDING:
		switch c.name {
		case toolContactAccepted:
			return h.contactAccepted(tx, c, a)
		case toolContactRejected:
			return h.contactRejected(tx, c, a)
		}
		return refuse(wire.CodePendingApproval, "pending_tool"), nil
	case hdtpv1.Tier_TIER_NEW_ADDRESS:
		if c.name == toolUpdateContact {
			return h.updateContact(tx, c, a)
		}
		return refuse(wire.CodePendingApproval, "new_address_tool"), nil
	}
	switch c.name {
	case toolUpdateContact:
		return h.updateContact(tx, c, a)
	case toolRemoveContact:
		return h.removeContact(tx, c)
	case toolGetCard:
		res, err := h.getCardResult(c.st)
		if err != nil {
			return toolOutcome{}, err
		}
		return toolOutcome{result: res, reason: "get_card"}, nil
	case toolContactAccepted, toolContactRejected:
		// A pinned caller whose request record is gone (§10.5).
		return refuse(wire.CodeUnknownContact, "no_request"), nil
	}
	return h.contentTool(tx, c, a)
}

// intake reads a card argument for intake (§3): bad_request for any
// refusal, including the address guard and a guest's card naming the
// receiver's own endpoint; the card must carry the caller's own leaf.
func (h *Host) intake(c *call, a args) (*card.Card, *refusal) {
	text, _, ok := a.str("card")
	if !ok || len(text) > maxCardBytes {
		return nil, badRequest("card")
	}
	cd, err := card.Read(c.st.gen, text)
	if err != nil {
		return nil, badRequest("card_" + string(card.ReasonOf(err)))
	}
	if err := h.d.guard().Check(cd.Leaf.Endpoint, nil); err != nil {
		return nil, badRequest("card_address")
	}
	if cd.Leaf.Endpoint == c.st.id.Endpoint {
		return nil, badRequest("card_own_endpoint")
	}
	if !bytes.Equal(cd.Leaf.Raw, c.leaf.Raw) {
		return nil, badRequest("card_not_caller")
	}
	return cd, nil
}

// requestContact is request_contact (§5.1): the caller asks to become a
// contact. A blocked or superseded caller gets the stranger's answer and
// nothing is recorded; a caller whose request waits gets
// pending_approval.
func (h *Host) requestContact(tx db.HDTPTx, c *call, a args) (toolOutcome, error) {
	if ref := a.optString("note", int(h.d.Limits.NoteBytes)); ref != nil {
		return refusalOutcome(ref), nil
	}
	cd, ref := h.intake(c, a)
	if ref != nil {
		return refusalOutcome(ref), nil
	}
	note, _, _ := a.str("note")
	if pin := c.tier.pin; pin != nil {
		if pin.State == db.HDTPContactPendingIn {
			return refuse(wire.CodePendingApproval, "request_waiting"), nil
		}
		// Blocked, or a superseded leaf: as if never met.
		return toolOutcome{result: statusResult("pending"), reason: "request_" + c.tier.why}, nil
	}
	if n, err := tx.CountContacts(db.HDTPContactPendingIn); err != nil {
		return toolOutcome{}, err
	} else if n >= maxWaitingCalls {
		return refuse(wire.CodeUnavailable, "waiting_cap"), nil
	}
	borrowed, err := h.borrowed(tx, c, cd.Leaf.Endpoint)
	if err != nil {
		return toolOutcome{}, err
	}
	if err := tx.PutContact(db.HDTPContact{Root: c.root, Endpoint: cd.Leaf.Endpoint, Leaf: c.leaf.Raw, LeafKID: c.leaf.Fingerprint(),
		LeafNotBefore: c.leaf.NotBefore, State: db.HDTPContactPendingIn, Permissions: []string{}, TheirPermissions: []string{},
		DisplayName: cd.Name, Note: note, PendingBorrowedFrom: borrowed, RequestTime: c.now, CreateTime: c.now, UpdateTime: c.now}); err != nil {
		return toolOutcome{}, err
	}
	return toolOutcome{result: statusResult("pending"), reason: "request_recorded",
		audit: &db.AuditEvent{Kind: db.AuditHDTPContactRequested, Detail: borrowed}}, nil
}

// borrowed is another root the endpoint is pinned for, now or within the
// last 30 days, or "".
func (h *Host) borrowed(tx db.HDTPTx, c *call, endpoint string) (string, error) {
	roots, err := tx.OtherRootsAt(endpoint, c.root, c.now)
	if err != nil || len(roots) == 0 {
		return "", err
	}
	return roots[0], nil
}

// redeemInvite is redeem_invite (§4, §5.1): a use is consumed atomically;
// an auto_accept invite makes the caller a contact at once (never from a
// borrowed address), else its request waits with the invite's label. An
// unknown, expired, revoked or used-up token is invite_invalid, one answer
// for all. A blocked caller gets the stranger's answer (a fake accepted for
// auto_accept) with nothing recorded and no use consumed (§10.6).
func (h *Host) redeemInvite(ctx context.Context, tx db.HDTPTx, c *call, a args) (toolOutcome, error) {
	token, _, ok := a.str("token")
	if !ok {
		return refusalOutcome(badRequest("token")), nil
	}
	cd, ref := h.intake(c, a)
	if ref != nil {
		return refusalOutcome(ref), nil
	}
	hash, ok := invite.Parse(token)
	if !ok {
		return refuse(wire.CodeInviteInvalid, "invite_token"), nil
	}
	inv, err := h.d.Store.GetHDTPInviteByHash(ctx, hash[:])
	if errors.Is(err, db.ErrNotFound) || err == nil && (inv.IdentityID != c.st.id.ID || !c.now.Before(inv.ExpireTime) || inv.Uses >= inv.MaxUses) {
		return refuse(wire.CodeInviteInvalid, "invite_unknown"), nil
	}
	if err != nil {
		return toolOutcome{}, err
	}
	perms := slices.Clone(presets[inv.Preset])
	answer := func(status string, granted []string) (toolOutcome, error) {
		res, err := h.redeemResult(c.st, status, granted)
		return toolOutcome{result: res, reason: "redeem_" + status}, err
	}
	if pin := c.tier.pin; pin != nil {
		if pin.State == db.HDTPContactPendingIn {
			return answer("pending", nil)
		}
		if inv.AutoAccept {
			return answer("accepted", perms)
		}
		return answer("pending", nil)
	}
	borrowed, err := h.borrowed(tx, c, cd.Leaf.Endpoint)
	if err != nil {
		return toolOutcome{}, err
	}
	accept := inv.AutoAccept && borrowed == ""
	state, capState, capLimit := db.HDTPContactPendingIn, db.HDTPContactPendingIn, int64(maxWaitingCalls)
	if accept {
		state, capState, capLimit = db.HDTPContactActive, db.HDTPContactActive, h.d.Limits.ContactCap
	}
	if n, err := tx.CountContacts(capState); err != nil {
		return toolOutcome{}, err
	} else if n >= capLimit {
		return refuse(wire.CodeUnavailable, "contact_cap"), nil
	}
	if used, err := tx.UseInvite(inv.ID, c.now); err != nil {
		return toolOutcome{}, err
	} else if !used {
		return refuse(wire.CodeInviteInvalid, "invite_used"), nil
	}
	row := db.HDTPContact{Root: c.root, Endpoint: cd.Leaf.Endpoint, Leaf: c.leaf.Raw, LeafKID: c.leaf.Fingerprint(), LeafNotBefore: c.leaf.NotBefore,
		State: state, Permissions: []string{}, TheirPermissions: []string{}, DisplayName: cd.Name, InviteLabel: inv.Label,
		PendingBorrowedFrom: borrowed, RequestTime: c.now, CreateTime: c.now, UpdateTime: c.now}
	status, kind := "pending", db.AuditHDTPContactRequested
	if accept {
		row.Permissions, row.Preset, row.PendingBorrowedFrom, row.RequestTime = perms, inv.Preset, "", c.now
		status, kind = "accepted", db.AuditHDTPContactApproved
	}
	if err := tx.PutContact(row); err != nil {
		return toolOutcome{}, err
	}
	out, err := answer(status, row.Permissions)
	out.audit = &db.AuditEvent{Kind: kind, Detail: "invite " + inv.ID}
	return out, err
}

// redeemResult writes redeem_invite's result: status, card, card_sig,
// chain and, when accepted, the permissions granted.
func (h *Host) redeemResult(st *identityState, status string, granted []string) ([]byte, error) {
	cr, err := h.ids.card(st.id, st.leaves)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"status":"` + status + `","card":`)
	b.Write(jsonString(cr.text))
	b.WriteString(`,"card_sig":"` + cr.sig + `","chain":["` + cr.chain[0] + `","` + cr.chain[1] + `"]`)
	if status == "accepted" {
		b.WriteString(`,"permissions":`)
		b.Write(stringArray(granted))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// getCardResult is get_card's result.
func (h *Host) getCardResult(st *identityState) ([]byte, error) {
	cr, err := h.ids.card(st.id, st.leaves)
	if err != nil {
		return nil, err
	}
	return []byte(cr.result), nil
}

func stringArray(ss []string) []byte {
	if ss == nil {
		ss = []string{}
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(s))
	}
	b.WriteByte(']')
	return b.Bytes()
}

// contactAccepted is contact_accepted (pending tier): the identity's
// request was accepted; the pin becomes active, with what the caller
// granted recorded.
func (h *Host) contactAccepted(tx db.HDTPTx, c *call, a args) (toolOutcome, error) {
	var theirs []string
	if raw, present := a["permissions"]; present {
		var list []string
		if json.Unmarshal(raw, &list) != nil || len(list) > maxTheirPerms {
			return refusalOutcome(badRequest("arg_permissions")), nil
		}
		for _, p := range list {
			if validPermission(p) && !slices.Contains(theirs, p) {
				theirs = append(theirs, p)
			}
		}
	}
	pin := *c.tier.pin
	if text, present, ok := a.str("card"); present {
		if !ok || len(text) > maxCardBytes {
			return refusalOutcome(badRequest("card")), nil
		}
		if cd, err := card.Read(c.st.gen, text); err == nil && bytes.Equal(cd.Leaf.Raw, c.leaf.Raw) {
			pin.DisplayName = cd.Name
		}
	}
	if theirs == nil {
		theirs = []string{}
	}
	pin.State, pin.TheirPermissions, pin.RequestTime, pin.UpdateTime = db.HDTPContactActive, theirs, c.now, c.now
	if len(pin.Permissions) == 0 && pin.Preset == "" {
		pin.Permissions, pin.Preset = slices.Clone(presets["basic"]), "basic"
	}
	if err := tx.PutContact(pin); err != nil {
		return toolOutcome{}, err
	}
	return toolOutcome{result: statusResult("ok"), reason: "contact_accepted",
		audit: &db.AuditEvent{Kind: db.AuditHDTPContactAccepted, Detail: strings.Join(theirs, " ")}}, nil
}

// contactRejected is contact_rejected (pending tier): the request was
// turned down; the pin becomes blocked (§6.2).
func (h *Host) contactRejected(tx db.HDTPTx, c *call, a args) (toolOutcome, error) {
	if ref := a.optString("reason", int(h.d.Limits.NoteBytes)); ref != nil {
		return refusalOutcome(ref), nil
	}
	pin := *c.tier.pin
	pin.State, pin.WasActive, pin.UpdateTime = db.HDTPContactBlocked, false, c.now
	if err := tx.PutContact(pin); err != nil {
		return toolOutcome{}, err
	}
	return toolOutcome{result: statusResult("ok"), reason: "contact_rejected", audit: &db.AuditEvent{Kind: db.AuditHDTPContactRejected}}, nil
}

// updateContact is update_contact: the caller's new card, which must
// carry the caller's own leaf (so its root). From a new address held for
// the owner the answer is {"status":"pending"} and the address waits.
func (h *Host) updateContact(tx db.HDTPTx, c *call, a args) (toolOutcome, error) {
	text, _, ok := a.str("card")
	if !ok || len(text) > maxCardBytes {
		return refusalOutcome(badRequest("card")), nil
	}
	cd, err := card.Read(c.st.gen, text)
	if err != nil {
		return refusalOutcome(badRequest("card_" + string(card.ReasonOf(err)))), nil
	}
	if !bytes.Equal(cd.Leaf.Raw, c.leaf.Raw) || cd.Leaf.AuthorityKeyID.Fingerprint() != c.root {
		return refusalOutcome(badRequest("card_mismatch")), nil
	}
	if c.tier.tier == hdtpv1.Tier_TIER_NEW_ADDRESS {
		if err := h.holdAddress(tx, c, cd); err != nil {
			return toolOutcome{}, err
		}
		return toolOutcome{result: statusResult("pending"), reason: "address_pending",
			audit: &db.AuditEvent{Kind: db.AuditHDTPAddressPending, Detail: c.leaf.Endpoint}}, nil
	}
	pin := *c.tier.pin
	pin.DisplayName, pin.UpdateTime = cd.Name, c.now
	if err := tx.PutContact(pin); err != nil {
		return toolOutcome{}, err
	}
	return toolOutcome{result: statusResult("ok"), reason: "contact_updated"}, nil
}

// holdAddress records a new address for the owner (§5.3): on the pin, or
// for a tombstoned root on a waiting row that keeps its old permissions.
func (h *Host) holdAddress(tx db.HDTPTx, c *call, cd *card.Card) error {
	var pin db.HDTPContact
	switch {
	case c.tier.pin != nil:
		pin = *c.tier.pin
	case c.tier.tombstone != nil:
		ts := c.tier.tombstone
		pin = db.HDTPContact{Root: c.root, Endpoint: ts.Endpoint, Leaf: c.leaf.Raw, LeafKID: ts.LeafKID, LeafNotBefore: ts.LeafNotBefore,
			State: db.HDTPContactPendingIn, Permissions: ts.Permissions, Preset: ts.Preset, TheirPermissions: []string{},
			RequestTime: c.now, CreateTime: c.now}
	default:
		return errors.New("a new address without a pin or tombstone")
	}
	if pin.PendingLeafKID != c.leaf.Fingerprint() {
		pin.PendingSeenTime = c.now
	}
	pin.PendingEndpoint, pin.PendingLeaf, pin.PendingLeafKID = c.leaf.Endpoint, c.leaf.Raw, c.leaf.Fingerprint()
	pin.PendingBorrowedFrom, pin.DisplayName, pin.UpdateTime = c.tier.borrowedFrom, cd.Name, c.now
	return tx.PutContact(pin)
}

// removeContact is remove_contact: the pin goes, a tombstone stays 30
// days.
func (h *Host) removeContact(tx db.HDTPTx, c *call) (toolOutcome, error) {
	if err := h.tombstone(tx, *c.tier.pin, c.now); err != nil {
		return toolOutcome{}, err
	}
	return toolOutcome{result: statusResult("ok"), reason: "contact_removed", audit: &db.AuditEvent{Kind: db.AuditHDTPContactRemoved}}, nil
}

// tombstone deletes a pin and keeps its tombstone.
func (h *Host) tombstone(tx db.HDTPTx, pin db.HDTPContact, now time.Time) error {
	if _, err := tx.DeleteContact(pin.Root); err != nil {
		return err
	}
	return tx.PutFormerPin(db.HDTPFormerPin{Root: pin.Root, Endpoint: pin.Endpoint, LeafKID: pin.LeafKID, LeafNotBefore: pin.LeafNotBefore,
		Tombstone: true, Permissions: pin.Permissions, Preset: pin.Preset, ExpireTime: now.Add(formerPinWindow)})
}

// contentTool gates a content tool by the contact's permissions, checks
// its arguments (§6.2) and thread ownership (§7), reserves its inner
// msg_id, and admits it for dispatch.
func (h *Host) contentTool(tx db.HDTPTx, c *call, a args) (toolOutcome, error) {
	perms := c.tier.permissions()
	idx := slices.IndexFunc(c.st.tools, func(t contentTool) bool { return t.Name == c.name })
	if idx < 0 {
		if want, ok := specTools[c.name]; ok && slices.Contains(perms, want) {
			return refuse(wire.CodeUnavailable, "tool_not_run"), nil
		}
		return refuse(wire.CodePermissionDenied, "tool_unknown"), nil
	}
	if !slices.Contains(perms, c.st.tools[idx].Permission) {
		return refuse(wire.CodePermissionDenied, "tool_not_granted"), nil
	}
	if ref := h.checkArgs(c.name, a); ref != nil {
		return refusalOutcome(ref), nil
	}
	if thread, present, ok := a.str("thread_id"); present && ok {
		owner, err := tx.ThreadOwner(thread)
		if err == nil && owner != c.root {
			return refusalOutcome(badRequest("thread_owner")), nil
		}
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return toolOutcome{}, err
		}
	}
	msgID := ""
	if msgIDTools[c.name] {
		msgID, _, _ = a.str("msg_id")
	}
	call := db.HDTPCall{ID: newCallID(c.now), CallerRoot: c.root, MsgID: msgID, Tool: c.name, RPCID: string(c.rpcID), CreateTime: c.now}
	if c.sealed() {
		call.ReplyLeaf, call.ReplyChain, call.EnvMsgID = c.leaf.Raw, h.fullForm(c), c.env.Header.MsgID
	}
	existing, claimed, err := tx.ClaimCall(call)
	if err != nil {
		return toolOutcome{}, err
	}
	if !claimed {
		// The inner msg_id was used: its original result, never a second
		// run; while it runs, unavailable.
		if existing.State == db.HDTPCallDispatched {
			return toolOutcome{ref: &refusal{code: wire.CodeUnavailable}, reason: "msg_id_in_flight", callID: existing.ID, inFlight: true}, nil
		}
		return toolOutcome{stored: existing.Result, storedIsError: existing.IsError, reason: "msg_id_replay"}, nil
	}
	return toolOutcome{dispatch: &dispatchCall{callID: call.ID, msgID: msgID, tool: c.name, args: c.args}}, nil
}

// checkArgs checks the spec's content tools' arguments (§6.2): a missing
// or mistyped argument or a value not allowed is bad_request, a string or
// decoded data past its bound too_large. An integration's arguments are
// its own.
func (h *Host) checkArgs(tool string, a args) *refusal {
	l := h.d.Limits
	requireMsgID := func() *refusal {
		v, _, ok := a.str("msg_id")
		if !ok || v == "" {
			return badRequest("arg_msg_id")
		}
		if len(v) > maxMsgIDBytes {
			return &refusal{code: wire.CodeTooLarge, reason: "arg_msg_id"}
		}
		return nil
	}
	common := func() *refusal {
		for _, f := range []struct {
			name  string
			limit int
		}{{"thread_id", maxThreadBytes}, {"topic", maxShortString}, {"reply_to", maxShortString}} {
			if ref := a.optString(f.name, f.limit); ref != nil {
				return ref
			}
		}
		if v, present, ok := a.str("sender"); present && (!ok || v != "agent" && v != "human") {
			return badRequest("arg_sender")
		}
		return nil
	}
	switch tool {
	case "send_message":
		if ref := requireMsgID(); ref != nil {
			return ref
		}
		text, _, ok := a.str("text")
		if !ok {
			return badRequest("arg_text")
		}
		if int64(len(text)) > l.TextBytes {
			return &refusal{code: wire.CodeTooLarge, reason: "arg_text"}
		}
		return common()
	case "send_media":
		if ref := requireMsgID(); ref != nil {
			return ref
		}
		_, hasData := a["data"]
		_, hasURL := a["url"]
		if hasData == hasURL {
			return badRequest("arg_data_or_url")
		}
		if hasData {
			data, _, ok := a.str("data")
			if !ok || strings.ContainsAny(data, "\r\n") {
				return badRequest("arg_data")
			}
			if int64(base64.StdEncoding.DecodedLen(len(data))) > l.MediaInlineBytes+2 {
				return &refusal{code: wire.CodeTooLarge, reason: "arg_data"}
			}
			raw, err := base64.StdEncoding.Strict().DecodeString(data)
			if err != nil {
				return badRequest("arg_data")
			}
			if int64(len(raw)) > l.MediaInlineBytes {
				return &refusal{code: wire.CodeTooLarge, reason: "arg_data"}
			}
		} else if ref := a.optString("url", maxURLBytes); ref != nil {
			return ref
		} else if u, _, _ := a.str("url"); u == "" {
			return badRequest("arg_url")
		}
		for _, f := range []string{"filename", "mime"} {
			if ref := a.optString(f, 255); ref != nil {
				return ref
			}
		}
		return common()
	case "check_availability":
		if !slot(a["window"], "from", "to") {
			return badRequest("arg_window")
		}
		var d json.Number
		if json.Unmarshal(a["duration_min"], &d) != nil {
			return badRequest("arg_duration_min")
		}
		if n, err := d.Int64(); err != nil || n <= 0 || n > 7*24*60 {
			return badRequest("arg_duration_min")
		}
		return nil
	case "book_slot":
		if ref := requireMsgID(); ref != nil {
			return ref
		}
		if !slot(a["slot"], "start", "end") {
			return badRequest("arg_slot")
		}
		if s, _, ok := a.str("subject"); !ok || s == "" {
			return badRequest("arg_subject")
		} else if len(s) > maxShortString {
			return &refusal{code: wire.CodeTooLarge, reason: "arg_subject"}
		}
		return a.optString("thread_id", maxThreadBytes)
	case "cancel_booking":
		if b, _, ok := a.str("booking_id"); !ok || b == "" || len(b) > maxShortString {
			return badRequest("arg_booking_id")
		}
		return a.optString("reason", int(l.NoteBytes))
	}
	return nil
}

// slot reads a {from|start, to|end, tz} object of strings.
func slot(raw json.RawMessage, from, to string) bool {
	if !isObject(raw) {
		return false
	}
	m := readArgs(raw)
	for _, k := range []string{from, to, "tz"} {
		if v, _, ok := m.str(k); !ok || v == "" || len(v) > 64 {
			return false
		}
	}
	return true
}
