package wire

import (
	"strconv"
	"strings"
)

// Limits are the bounds and budgets an identity enforces and advertises as
// the "limits" object of get_card (HDTP §12; PACT §12). The zero value is
// not useful: start from DefaultLimits.
type Limits struct {
	// TextBytes bounds a send_message text (UTF-8 bytes).
	TextBytes int64
	// NoteBytes bounds a request_contact note and a contact_rejected reason.
	NoteBytes int64
	// MediaInlineBytes bounds send_media data, decoded.
	MediaInlineBytes int64
	// AvailabilitySlots bounds the slots of one check_availability answer.
	AvailabilitySlots int64
	// InviteTTLDays is the longest lifetime an invite may be given.
	InviteTTLDays int64
	// ContactCallsPerSecond and ContactBurst are the per-contact token
	// bucket (HDTP; PACT from 2.2.4).
	ContactCallsPerSecond, ContactBurst int64
	// ContactCap is how many contacts (active and pending_out) the identity
	// may hold. It is never advertised; it sizes the identity budget.
	ContactCap int64
	// GuestCallsPerHour is the guest budget per address and root.
	GuestCallsPerHour int64
	// GuestSourceCallsPerHour is the budget of a source address alone.
	GuestSourceCallsPerHour int64
	// ContactCallsPerHour is PACT 2.2.1's hourly per-contact budget.
	ContactCallsPerHour int64
}

// DefaultLimits are the defaults of HDTP §12 and PACT §12, with a contact
// cap of 1000 (the identity budget is that many contacts' rate).
func DefaultLimits() Limits {
	return Limits{
		TextBytes: 16384, NoteBytes: 1024, MediaInlineBytes: 5242880, AvailabilitySlots: 5, InviteTTLDays: 90,
		ContactCallsPerSecond: 1, ContactBurst: 10, ContactCap: 1000,
		GuestCallsPerHour: 10, GuestSourceCallsPerHour: 60, ContactCallsPerHour: 60,
	}
}

// IdentityCallsPerSecond is the per-identity budget's rate: the contacts
// the identity may hold times the per-contact rate (HDTP §12).
func (l Limits) IdentityCallsPerSecond() int64 { return l.ContactCap * l.ContactCallsPerSecond }

// JSON writes the limits object as the generation advertises it, members
// in the order of its §12 table. HDTP (and PACT from 2.2.4) uses token
// buckets; PACT 2.2.1, the text pactd follows for PACT identities, uses
// hourly budgets and names them contact_calls_per_hour and
// guest_calls_per_hour. The contact cap is never advertised.
func (l Limits) JSON(g Generation) string {
	type member struct {
		name string
		v    int64
	}
	ms := []member{
		{"text_bytes", l.TextBytes}, {"note_bytes", l.NoteBytes}, {"media_inline_bytes", l.MediaInlineBytes},
		{"availability_slots", l.AvailabilitySlots}, {"invite_ttl_days", l.InviteTTLDays},
	}
	if g == PACT2 {
		ms = append(ms, member{"contact_calls_per_hour", l.ContactCallsPerHour}, member{"guest_calls_per_hour", l.GuestCallsPerHour})
	} else {
		ms = append(ms, member{"contact_calls_per_second", l.ContactCallsPerSecond}, member{"contact_burst", l.ContactBurst},
			member{"identity_calls_per_second", l.IdentityCallsPerSecond()}, member{"guest_calls_per_hour", l.GuestCallsPerHour},
			member{"guest_source_calls_per_hour", l.GuestSourceCallsPerHour})
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + m.name + `":` + strconv.FormatInt(m.v, 10))
	}
	b.WriteByte('}')
	return b.String()
}
