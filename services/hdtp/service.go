// Package hdtp implements hdtp.v1: IdentityService (the identities a host
// serves, their keys, signing requests, chains and cards) and TrustService
// (the protocol's trust core as stateless helpers). The protocol logic is
// in internal/hdtp/...; this package validates requests, keeps the
// ledger in the store, and holds the leaf keys, sealed under the
// key-encryption key (internal/keyseal) at rest and unsealed only in
// memory for the one signature or decryption that needs them.
package hdtp

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	"pactd.dev/pactd/internal/hdtp/address"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/keyseal"
	"pactd.dev/pactd/internal/rpcerr"
)

// Store is the storage the identity service needs.
type Store interface {
	CreateHDTPIdentity(ctx context.Context, id db.HDTPIdentity) (db.HDTPIdentity, error)
	GetHDTPIdentity(ctx context.Context, id string) (db.HDTPIdentity, error)
	ListHDTPIdentities(ctx context.Context, afterID string, limit int) ([]db.HDTPIdentity, error)
	UpdateHDTPIdentity(ctx context.Context, id db.HDTPIdentity) (db.HDTPIdentity, error)
	DeleteHDTPIdentity(ctx context.Context, id string) error
	PutHDTPPendingLeaf(ctx context.Context, l db.HDTPLeaf) error
	InstallHDTPLeaf(ctx context.Context, in db.HDTPInstall) (db.HDTPLeaf, error)
	ListHDTPLeaves(ctx context.Context, identityID string) ([]db.HDTPLeaf, error)
	GetHDTPLeaf(ctx context.Context, kid string) (db.HDTPLeaf, error)
	SweepHDTPLeaves(ctx context.Context, now time.Time) (int64, error)
	// HDTPHostStore is the host wire's block (contacts, invites, replay
	// records, calls, budgets), all of which the host, contact and invite
	// services use.
	db.HDTPHostStore
}

// Deps are the services' collaborators.
type Deps struct {
	// Store holds identities and leaves (identity service only).
	Store Store
	// Sealer seals and opens leaf keys under the key-encryption key
	// (identity service only).
	Sealer *keyseal.Sealer
	// IsPublic is the one public-address rule (internal/urlrule's
	// IsPublicAddr), for the address guard.
	IsPublic func(netip.Addr) bool
	// AllowHosts are endpoint hosts the operator serves on purpose inside
	// its network; the guard lets them through.
	AllowHosts []string
	// Limits are the limits identities advertise; DefaultLimits when zero.
	Limits wire.Limits
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives one line per fault; never a key, a state or a token.
	Logger *slog.Logger
	// Registerer receives the services' metrics; none when nil.
	Registerer prometheus.Registerer
	// HandleSecret keys the host service's call handles (at least 32
	// bytes, the same on every replica).
	HandleSecret []byte
	// OnAudit is told of every audit event recorded; nil for none.
	OnAudit func(db.AuditKind)
}

func (d *Deps) complete() {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Limits == (wire.Limits{}) {
		d.Limits = wire.DefaultLimits()
	}
	if d.OnAudit == nil {
		d.OnAudit = func(db.AuditKind) {}
	}
}

func (d *Deps) guard() address.Guard {
	return address.Guard{IsPublic: d.IsPublic, AllowHosts: d.AllowHosts}
}

// Identities implements hdtpv1connect.IdentityServiceHandler.
type Identities struct {
	hdtpv1connect.UnimplementedIdentityServiceHandler
	d Deps
	m *metrics
}

// NewIdentities returns the identity service.
func NewIdentities(d Deps) *Identities {
	d.complete()
	return &Identities{d: d, m: newMetrics(d.Registerer)}
}

// Trust implements hdtpv1connect.TrustServiceHandler.
type Trust struct {
	hdtpv1connect.UnimplementedTrustServiceHandler
	d Deps
	m *metrics
}

// NewTrust returns the stateless trust service. It shares the metrics of
// the identity service it is built beside, so one registerer holds each
// collector once; with no identity service it registers its own.
func NewTrust(d Deps, with *Identities) *Trust {
	d.complete()
	if with == nil {
		return &Trust{d: d, m: newMetrics(d.Registerer)}
	}
	return &Trust{d: d, m: with.m}
}

// generation reads a request's generation; unset is INVALID_ARGUMENT.
func generation(g hdtpv1.Generation) (wire.Generation, error) {
	switch g {
	case hdtpv1.Generation_GENERATION_PACT2:
		return wire.PACT2, nil
	case hdtpv1.Generation_GENERATION_HDTP1:
		return wire.HDTP1, nil
	}
	return 0, rpcerr.InvalidField("generation", "is required: GENERATION_PACT2 or GENERATION_HDTP1")
}

func generationToProto(g string) hdtpv1.Generation {
	switch g {
	case "PACT2":
		return hdtpv1.Generation_GENERATION_PACT2
	case "HDTP1":
		return hdtpv1.Generation_GENERATION_HDTP1
	}
	return hdtpv1.Generation_GENERATION_UNSPECIFIED
}

func generationOf(g string) wire.Generation {
	if g == "PACT2" {
		return wire.PACT2
	}
	return wire.HDTP1
}

// stateHash is how a signing request's state is kept.
func stateHash(state string) []byte {
	h := sha256.Sum256([]byte(state))
	return h[:]
}
