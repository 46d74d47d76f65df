package hdtp

import (
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
	d Deps
	m *metrics
}

// NewHost returns the host service, sharing the identity service's
// metrics.
func NewHost(d Deps, with *Identities) *Host {
	d.complete()
	return &Host{d: d, m: with.m}
}

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
