package hdtp

import (
	"errors"
	"slices"
	"time"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/card"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/envelope"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/jws"
)

// formerPinWindow is how long a removed root's tombstone and a left
// endpoint are kept (§5.3).
const formerPinWindow = 30 * 24 * time.Hour

// tierResult is a caller's tier (§6.1) and what reaching it changes.
type tierResult struct {
	tier hdtpv1.Tier
	// pin is the caller's contact row; nil when none.
	pin *db.HDTPContact
	// why names how the tier was reached, for logs and metrics.
	why string
	// refuse is the answer when the caller's leaf conflicts with its pin.
	refuse *outcome
	// renew re-pins the presented leaf (a later notBefore at the pinned
	// endpoint); move re-pins endpoint and leaf (a new address under
	// "auto"); askAddress holds the new address for the owner.
	renew, move, askAddress bool
	// tombstone is a removed root back with a newer leaf within the
	// window, handled as a new address under "ask".
	tombstone *db.HDTPFormerPin
	// borrowedFrom is another root the new endpoint is or was pinned for.
	borrowedFrom string
}

// permissions are the caller's granted permissions (contact tier only).
func (t tierResult) permissions() []string {
	if t.tier == hdtpv1.Tier_TIER_CONTACT && t.pin != nil {
		return t.pin.Permissions
	}
	return []string{}
}

func guest(why string, pin *db.HDTPContact) tierResult {
	return tierResult{tier: hdtpv1.Tier_TIER_GUEST, why: why, pin: pin}
}

// resolveTier places the proven caller (§6.1, §14.3, §5.3):
//
//	no proof (a plaintext call without a client chain)        guest
//	unpinned root                                             guest; new address when a tombstone of
//	                                                          that root is older than its leaf
//	pinned but blocked, pending_in, or an older leaf           guest
//	equal notBefore, other bytes                               envelope_invalid (a refused handshake over TLS)
//	the pending address's leaf                                 new address
//	a later leaf at another endpoint                           under auto (and not borrowed) re-pinned;
//	                                                          else new address, held for the owner
//	pending_out                                                pending
//	active                                                     contact
func (h *Host) resolveTier(tx db.HDTPTx, c *call) (tierResult, error) {
	if c.leaf == nil {
		return guest("anonymous", nil), nil
	}
	pin, err := tx.Contact(c.root)
	if errors.Is(err, db.ErrNotFound) {
		fps, err := tx.FormerPins(c.root, c.now)
		if err != nil {
			return tierResult{}, err
		}
		for i := range fps {
			if fps[i].Tombstone && c.leaf.NotBefore.After(fps[i].LeafNotBefore) {
				return tierResult{tier: hdtpv1.Tier_TIER_NEW_ADDRESS, why: "tombstone", tombstone: &fps[i], askAddress: true}, nil
			}
		}
		return guest("unpinned", nil), nil
	}
	if err != nil {
		return tierResult{}, err
	}
	if pin.State == db.HDTPContactBlocked {
		return guest("blocked", &pin), nil
	}
	if pin.PendingLeafKID != "" && pin.PendingLeafKID == c.leaf.Fingerprint() {
		return tierResult{tier: hdtpv1.Tier_TIER_NEW_ADDRESS, why: "pending_address", pin: &pin}, nil
	}
	pinned, err := cert.Parse(pin.Leaf, cert.KindLeaf, c.st.gen)
	if err != nil {
		return tierResult{}, err
	}
	cmp := cert.Compare(pinned, c.leaf)
	switch cmp {
	case cert.Conflict:
		if c.sealed() {
			return tierResult{refuse: plaintext(wire.CodeEnvelopeInvalid, "leaf_conflict", nil)}, nil
		}
		return tierResult{refuse: &outcome{reject: true, reason: "transport_leaf_conflict"}}, nil
	case cert.Superseded:
		return guest("superseded", &pin), nil
	}
	if pin.State == db.HDTPContactPendingIn {
		return guest("pending_in", &pin), nil
	}
	t := tierResult{pin: &pin, why: string(pin.State)}
	switch cmp {
	case cert.Renewal:
		t.renew = true
	case cert.NewAddress:
		roots, err := tx.OtherRootsAt(c.leaf.Endpoint, c.root, c.now)
		if err != nil {
			return tierResult{}, err
		}
		if len(roots) > 0 {
			t.borrowedFrom = roots[0]
		}
		if c.st.id.AcceptNewHosts == "ask" || t.borrowedFrom != "" {
			t.tier, t.askAddress, t.why = hdtpv1.Tier_TIER_NEW_ADDRESS, true, "new_address"
			return t, nil
		}
		t.move = true
	}
	if pin.State == db.HDTPContactPendingOut {
		t.tier = hdtpv1.Tier_TIER_PENDING
	} else {
		t.tier = hdtpv1.Tier_TIER_CONTACT
	}
	return t, nil
}

// applyTier re-pins a renewed leaf or an accepted move, as the call
// passes, with its audit event.
func (h *Host) applyTier(tx db.HDTPTx, c *call) error {
	t := &c.tier
	if !t.renew && !t.move {
		return nil
	}
	pin := t.pin
	kind := db.AuditHDTPLeafRenewed
	if t.move {
		kind = db.AuditHDTPContactMoved
		if err := tx.PutFormerPin(db.HDTPFormerPin{Root: pin.Root, Endpoint: pin.Endpoint, LeafKID: pin.LeafKID, LeafNotBefore: pin.LeafNotBefore,
			Permissions: pin.Permissions, Preset: pin.Preset, ExpireTime: c.now.Add(formerPinWindow)}); err != nil {
			return err
		}
		pin.Endpoint = c.leaf.Endpoint
	}
	pin.Leaf, pin.LeafKID, pin.LeafNotBefore, pin.UpdateTime = c.leaf.Raw, c.leaf.Fingerprint(), c.leaf.NotBefore, c.now
	if err := tx.PutContact(*pin); err != nil {
		return err
	}
	return h.record(tx, c, db.AuditEvent{Kind: kind, Detail: pin.LeafKID})
}

// guestBinding checks a sealed guest call (§13.2): only redeem_invite and
// request_contact, in the full form, whose arguments' card carries the
// envelope's own leaf. A caller whose request waits (pending_in) was bound
// when it asked, so its pinned leaf in the small form passes too. Every
// failure is envelope_invalid, in plaintext.
func (h *Host) guestBinding(c *call) *outcome {
	if !c.sealed() || c.tier.tier != hdtpv1.Tier_TIER_GUEST {
		return nil
	}
	if c.method != "tools/call" {
		return plaintext(wire.CodeEnvelopeInvalid, "guest_list", nil)
	}
	if c.name != toolRedeemInvite && c.name != toolRequestContact {
		return plaintext(wire.CodeEnvelopeInvalid, "guest_tool", nil)
	}
	if pin := c.tier.pin; pin != nil && pin.State == db.HDTPContactPendingIn && pin.LeafKID == c.leaf.Fingerprint() {
		return nil
	}
	if c.env.Form != envelope.FormChain {
		return plaintext(wire.CodeEnvelopeInvalid, "guest_small_form", nil)
	}
	cd, ok := argCard(c.st.gen, c.args)
	if !ok || !slices.Equal(cd.Leaf.Raw, c.leaf.Raw) {
		return plaintext(wire.CodeEnvelopeInvalid, "guest_binding", nil)
	}
	return nil
}

// argCard reads the card argument; false when absent or unreadable.
func argCard(gen wire.Generation, args []byte) (*card.Card, bool) {
	m, ok := jws.Members(args)
	if !ok {
		return nil, false
	}
	text, _, ok := jws.StringMember(m, "card")
	if !ok || len(text) > maxCardBytes {
		return nil, false
	}
	cd, err := card.Read(gen, text)
	return cd, err == nil
}

// maxCardBytes bounds a card argument (a card is under 1 KB; room for
// long names and folding).
const maxCardBytes = 8 << 10
