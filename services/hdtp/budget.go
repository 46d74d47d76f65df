package hdtp

import (
	"net/netip"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/hdtp/wire"
)

// Budgets (HDTP §12; PACT §12), token buckets in the store so every
// replica charges the same ones. HDTP (and PACT from 2.2.4) names four:
//
//	contact   (identity, contact root)   ContactCallsPerSecond, burst ContactBurst
//	identity  identity, contacts only    ContactCap × ContactCallsPerSecond, burst one second of it
//	guest     (identity, source, root)   GuestCallsPerHour, burst the same; the pending tier too
//	source    (identity, source)         GuestSourceCallsPerHour, burst the same; chain_required
//
// PACT 2.2.1, the text pactd follows for PACT identities, has hourly
// budgets: ContactCallsPerHour per contact, GuestCallsPerHour per address
// and root, and chain_required answers counted against the guest budget of
// the source address; it names no identity budget. A guest whose source or
// root is unknown is metered by the other alone (both unknown: one bucket
// per identity for such callers).

// bucketsFor are the buckets a call at the tier spends.
type budgets struct {
	limits wire.Limits
	gen    wire.Generation
}

func perHour(n int64) time.Duration { return time.Hour / time.Duration(max(1, n)) }

// contact is the per-contact and per-identity budget of a contact-tier
// call.
func (b budgets) contact(identityID, root string) []db.HDTPBucket {
	if b.gen == wire.PACT2 {
		return []db.HDTPBucket{{Scope: "c|" + identityID + "|" + root, Interval: perHour(b.limits.ContactCallsPerHour),
			Burst: b.limits.ContactCallsPerHour}}
	}
	rate := max(1, b.limits.ContactCallsPerSecond)
	identityRate := max(1, b.limits.IdentityCallsPerSecond())
	return []db.HDTPBucket{
		{Scope: "c|" + identityID + "|" + root, Interval: time.Second / time.Duration(rate), Burst: b.limits.ContactBurst},
		{Scope: "i|" + identityID, Interval: max(time.Microsecond, time.Second/time.Duration(identityRate)), Burst: identityRate},
	}
}

// guest is the guest budget of a guest-, pending- or new-address-tier
// call: (source, root), or whichever is known.
func (b budgets) guest(identityID string, source netip.Addr, root string) db.HDTPBucket {
	src := ""
	if source.IsValid() {
		src = source.Unmap().String()
	}
	return db.HDTPBucket{Scope: "g|" + identityID + "|" + src + "|" + root, Interval: perHour(b.limits.GuestCallsPerHour),
		Burst: b.limits.GuestCallsPerHour}
}

// source is the source address's budget, charged by chain_required
// answers and checked before any envelope is opened; nil when the source
// is unknown.
func (b budgets) source(identityID string, source netip.Addr) *db.HDTPBucket {
	if !source.IsValid() {
		return nil
	}
	n := b.limits.GuestSourceCallsPerHour
	if b.gen == wire.PACT2 {
		n = b.limits.GuestCallsPerHour
	}
	return &db.HDTPBucket{Scope: "s|" + identityID + "|" + source.Unmap().String(), Interval: perHour(n), Burst: n}
}

// retryAfter is a wait in whole seconds, at least one.
func retryAfter(d time.Duration) int64 { return max(1, int64((d+time.Second-1)/time.Second)) }
