package hdtp

import (
	"context"
	"time"

	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
)

// MaxHostRequestBytes bounds a HostService request: an inbound body of up
// to MaxInboundBodyBytes (a sealed send_media carrying 5 MiB of data) and
// room for the rest.
const MaxHostRequestBytes = MaxInboundBodyBytes + 1<<20

// MaxInboundBodyBytes bounds the JSON-RPC body OpenInbound and
// OpenOutboundResult read: a sealed_call's arguments at their bound
// (internal/hdtp/envelope.MaxArgumentsBytes) and the JSON-RPC framing.
const MaxInboundBodyBytes = 11 << 20

// Host implements hdtpv1connect.HostServiceHandler: the protocol on the
// wire for a host's MCP server.
type Host struct {
	hdtpv1connect.UnimplementedHostServiceHandler
	d    Deps
	m    *metrics
	ids  *Identities
	keys handleKeys
}

// NewHost returns the host service over the identity service (whose keys
// it uses and whose metrics it shares). d.HandleSecret keys its handles:
// every replica must be given the same one.
func NewHost(d Deps, ids *Identities) (*Host, error) {
	d.complete()
	keys, err := newHandleKeys(d.HandleSecret)
	if err != nil {
		return nil, err
	}
	return &Host{d: d, m: ids.m, ids: ids, keys: keys}, nil
}

// budgets are the identity's budgets.
func (h *Host) budgets(st *identityState) budgets { return budgets{limits: h.d.Limits, gen: st.gen} }

// Contacts implements hdtpv1connect.ContactServiceHandler: the owner's
// side of contacts.
type Contacts struct {
	hdtpv1connect.UnimplementedContactServiceHandler
	h *Host
}

// NewContacts returns the contact service over the host service's state.
func NewContacts(h *Host) *Contacts { return &Contacts{h: h} }

// Invites implements hdtpv1connect.InviteServiceHandler: the owner's
// invites.
type Invites struct {
	hdtpv1connect.UnimplementedInviteServiceHandler
	h *Host
}

// NewInvites returns the invite service over the host service's state.
func NewInvites(h *Host) *Invites { return &Invites{h: h} }

// Retention of host wire state past its use.
const (
	// callRetention is how long a dispatched call (its inner msg_id and
	// stored result) is kept: a sender that reuses a msg_id within it
	// gets the original result (§6.2; the text names no retention).
	callRetention = 30 * 24 * time.Hour
	// inviteRetention is how long an expired invite stays listed.
	inviteRetention = 30 * 24 * time.Hour
)

// Purge deletes replay records and former pins past their windows, full
// buckets, invites expired a while ago and calls past their retention;
// server runs it hourly.
func (h *Host) Purge(ctx context.Context) (int64, error) {
	now := h.d.Now()
	return h.d.Store.PurgeHDTP(ctx, now, now.Add(-inviteRetention), now.Add(-callRetention))
}
