package db

import (
	"context"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// ---------------------------------------------------------------------------
// HDTP / PACT 2 identities and their leaf ledger (migration 0020;
// docs/hdtp.md). The leaf keys are stored only sealed under the
// key-encryption key (internal/keyseal); db neither seals nor opens them.

// HDTPIdentity is an identity a host serves through pactd: one person's
// agent at one endpoint.
type HDTPIdentity struct {
	ID string
	// Generation is "PACT2" or "HDTP1".
	Generation string
	// Endpoint is the https URL the identity answers at, in normal form;
	// unique.
	Endpoint string
	// DisplayName is the card's FN and the signing requests' commonName.
	DisplayName string
	// Seal is the card's seal policy: "none", "optional" or "required".
	Seal string
	// KeyAlg is the algorithm of the leaf keys pactd makes: "ed25519" or
	// "p256".
	KeyAlg string
	// RootDER is the person's root, from the first chain installed; nil
	// before. RootFingerprint is its fingerprint, "" before.
	RootDER         []byte
	RootFingerprint string
	// AcceptNewHosts is "auto" or "ask": what a contact's newer leaf at
	// another endpoint gets.
	AcceptNewHosts string
	// ClientCert is the client-certificate posture: "off", "preferred" or
	// "required".
	ClientCert string
	// ContentTools is the host's declared content tools, a JSON array.
	ContentTools string
	CreateTime   time.Time
	UpdateTime   time.Time
}

// HDTPLeafState is where a leaf is in its life.
type HDTPLeafState string

// The leaf states.
const (
	// HDTPLeafPending: a key and its signing request, awaiting the chain.
	HDTPLeafPending HDTPLeafState = "pending"
	// HDTPLeafCurrent: the leaf the identity serves.
	HDTPLeafCurrent HDTPLeafState = "current"
	// HDTPLeafSuperseded: a newer leaf was installed; the key is kept until
	// NotAfter, so envelopes sealed to it still open.
	HDTPLeafSuperseded HDTPLeafState = "superseded"
	// HDTPLeafFormer: the key is destroyed; the kid is kept so an envelope
	// sealed to it is answered certificate_renewed.
	HDTPLeafFormer HDTPLeafState = "former"
)

// HDTPLeaf is one row of an identity's leaf ledger.
type HDTPLeaf struct {
	// KID is the leaf key's fingerprint; unique across identities.
	KID        string
	IdentityID string
	KeyAlg     string
	State      HDTPLeafState
	// SealedKey is the PKCS #8 private key sealed under the KEK; nil once
	// destroyed.
	SealedKey []byte
	// Certificate is the leaf's DER; nil while pending.
	Certificate []byte
	// NotBefore and NotAfter are the leaf's validity; zero while pending.
	NotBefore, NotAfter time.Time
	// RequestStateHash is SHA-256 of the pending signing request's state;
	// RequestExpireTime is when it stops accepting its chain.
	RequestStateHash  []byte
	RequestExpireTime time.Time
	CreateTime        time.Time
	// InstallTime is when its chain was installed; zero while pending.
	InstallTime time.Time
}

// HDTPInstall is a chain to install for an identity's pending leaf.
type HDTPInstall struct {
	IdentityID string
	// KID is the pending leaf's kid (the chain leaf's key).
	KID string
	// StateHash is SHA-256 of the state the answer carries.
	StateHash []byte
	// Certificate, NotBefore and NotAfter are the new leaf's.
	Certificate         []byte
	NotBefore, NotAfter time.Time
	// RootDER and RootFingerprint are the chain's root.
	RootDER         []byte
	RootFingerprint string
	// ExpectCurrentKID is the current leaf the caller compared the new one
	// against ("" when it saw none).
	ExpectCurrentKID string
	Now              time.Time
}

// HDTPStore holds HDTP identities and their leaf ledger.
type HDTPStore interface {
	// CreateHDTPIdentity inserts an identity (no root yet); ErrConflict
	// when the id or the endpoint exists.
	CreateHDTPIdentity(ctx context.Context, id HDTPIdentity) (HDTPIdentity, error)
	// GetHDTPIdentity returns the identity with the id.
	GetHDTPIdentity(ctx context.Context, id string) (HDTPIdentity, error)
	// ListHDTPIdentities returns up to limit identities with ids after
	// afterID, by id.
	ListHDTPIdentities(ctx context.Context, afterID string, limit int) ([]HDTPIdentity, error)
	// UpdateHDTPIdentity writes Generation, DisplayName, Seal, KeyAlg and
	// UpdateTime of the identity with id.ID (never its endpoint or root).
	UpdateHDTPIdentity(ctx context.Context, id HDTPIdentity) (HDTPIdentity, error)
	// DeleteHDTPIdentity erases the identity and every leaf it had, keys
	// and former kids included.
	DeleteHDTPIdentity(ctx context.Context, id string) error
	// PutHDTPPendingLeaf stores a pending leaf (a fresh key and its
	// signing request), replacing the identity's pending leaf if it has
	// one; ErrNotFound when the identity does not exist.
	PutHDTPPendingLeaf(ctx context.Context, l HDTPLeaf) error
	// InstallHDTPLeaf installs a chain in one transaction: the pending
	// leaf with in.KID and in.StateHash, unexpired at in.Now, becomes
	// current (ErrNotFound otherwise); the current leaf, which must be
	// in.ExpectCurrentKID (ErrConflict otherwise: another install won),
	// becomes superseded; the identity's root is set, or must already be
	// in.RootFingerprint (ErrConflict). A refusal changes nothing.
	InstallHDTPLeaf(ctx context.Context, in HDTPInstall) (HDTPLeaf, error)
	// ListHDTPLeaves returns the identity's leaves, oldest first.
	ListHDTPLeaves(ctx context.Context, identityID string) ([]HDTPLeaf, error)
	// GetHDTPLeaf returns the leaf with the kid.
	GetHDTPLeaf(ctx context.Context, kid string) (HDTPLeaf, error)
	// SweepHDTPLeaves destroys the keys of current and superseded leaves
	// whose NotAfter is not after now (they become former, the kid kept)
	// and deletes pending requests past their expiry; it returns how many
	// rows it changed.
	SweepHDTPLeaves(ctx context.Context, now time.Time) (int64, error)
}

func hdtpIdentityFromRow(r liteq.HDTPIdentity) HDTPIdentity {
	return HDTPIdentity{ID: r.ID, Generation: r.Generation, Endpoint: r.Endpoint, DisplayName: r.DisplayName, Seal: r.Seal, KeyAlg: r.KeyAlg,
		RootDER: r.RootDer, RootFingerprint: r.RootFingerprint, AcceptNewHosts: r.AcceptNewHosts, ClientCert: r.ClientCert,
		ContentTools: r.ContentTools, CreateTime: fromUnix(r.CreateTime), UpdateTime: fromUnix(r.UpdateTime)}
}

func hdtpIdentityFromPG(r pgq.HDTPIdentity) HDTPIdentity {
	return hdtpIdentityFromRow(liteq.HDTPIdentity(r))
}

func hdtpLeafFromRow(r liteq.HDTPLeaf) HDTPLeaf {
	return HDTPLeaf{KID: r.Kid, IdentityID: r.IdentityID, KeyAlg: r.KeyAlg, State: HDTPLeafState(r.State), SealedKey: r.SealedKey,
		Certificate: r.Certificate, NotBefore: fromUnixOrZero(r.NotBefore), NotAfter: fromUnixOrZero(r.NotAfter),
		RequestStateHash: r.RequestStateHash, RequestExpireTime: fromUnixOrZero(r.RequestExpireTime),
		CreateTime: fromUnix(r.CreateTime), InstallTime: fromUnixOrZero(r.InstallTime)}
}

func hdtpLeafFromPG(r pgq.HDTPLeaf) HDTPLeaf { return hdtpLeafFromRow(liteq.HDTPLeaf(r)) }

func createHDTPIdentityParams(id HDTPIdentity) liteq.CreateHDTPIdentityParams {
	return liteq.CreateHDTPIdentityParams{ID: id.ID, Generation: id.Generation, Endpoint: id.Endpoint, DisplayName: id.DisplayName,
		Seal: id.Seal, KeyAlg: id.KeyAlg, CreateTime: unix(id.CreateTime), UpdateTime: unix(id.UpdateTime)}
}

func updateHDTPIdentityParams(id HDTPIdentity) liteq.UpdateHDTPIdentityParams {
	return liteq.UpdateHDTPIdentityParams{Generation: id.Generation, DisplayName: id.DisplayName, Seal: id.Seal, KeyAlg: id.KeyAlg,
		UpdateTime: unix(id.UpdateTime), ID: id.ID}
}

func createHDTPLeafParams(l HDTPLeaf) liteq.CreateHDTPLeafParams {
	return liteq.CreateHDTPLeafParams{Kid: l.KID, IdentityID: l.IdentityID, KeyAlg: l.KeyAlg, State: string(l.State), SealedKey: l.SealedKey,
		Certificate: l.Certificate, NotBefore: unixOrZero(l.NotBefore), NotAfter: unixOrZero(l.NotAfter),
		RequestStateHash: l.RequestStateHash, RequestExpireTime: unixOrZero(l.RequestExpireTime),
		CreateTime: unix(l.CreateTime), InstallTime: unixOrZero(l.InstallTime)}
}

func promoteHDTPLeafParams(in HDTPInstall) liteq.PromoteHDTPPendingLeafParams {
	return liteq.PromoteHDTPPendingLeafParams{Certificate: in.Certificate, NotBefore: unix(in.NotBefore), NotAfter: unix(in.NotAfter),
		InstallTime: unix(in.Now), Kid: in.KID, IdentityID: in.IdentityID, RequestStateHash: in.StateHash}
}

func setHDTPRootParams(in HDTPInstall) liteq.SetHDTPIdentityRootParams {
	return liteq.SetHDTPIdentityRootParams{RootDer: in.RootDER, RootFingerprint: in.RootFingerprint, UpdateTime: unix(in.Now), ID: in.IdentityID}
}

// hdtpQueries are the queries InstallHDTPLeaf runs, which both engines'
// generated code has with the same shapes (pgq's through hdtpPG).
type hdtpQueries interface {
	LockHDTPIdentity(ctx context.Context, id string) (string, error)
	GetHDTPCurrentLeafKID(ctx context.Context, identityID string) ([]string, error)
	SupersedeHDTPCurrentLeaf(ctx context.Context, identityID string) (int64, error)
	PromoteHDTPPendingLeaf(ctx context.Context, arg liteq.PromoteHDTPPendingLeafParams) (int64, error)
	SetHDTPIdentityRoot(ctx context.Context, arg liteq.SetHDTPIdentityRootParams) (int64, error)
	GetHDTPLeaf(ctx context.Context, kid string) (HDTPLeaf, error)
}

// installHDTPLeaf is InstallHDTPLeaf's transaction body, one for both
// engines: lock the identity, check the current leaf is the one expected,
// supersede it, promote the pending leaf, set or check the root.
func installHDTPLeaf(ctx context.Context, q hdtpQueries, in HDTPInstall) (HDTPLeaf, error) {
	if _, err := q.LockHDTPIdentity(ctx, in.IdentityID); err != nil {
		return HDTPLeaf{}, err
	}
	current, err := q.GetHDTPCurrentLeafKID(ctx, in.IdentityID)
	if err != nil {
		return HDTPLeaf{}, err
	}
	if cur := firstOrEmpty(current); cur != in.ExpectCurrentKID {
		return HDTPLeaf{}, ErrConflict
	}
	if _, err := q.SupersedeHDTPCurrentLeaf(ctx, in.IdentityID); err != nil {
		return HDTPLeaf{}, err
	}
	n, err := q.PromoteHDTPPendingLeaf(ctx, promoteHDTPLeafParams(in))
	if err != nil {
		return HDTPLeaf{}, err
	}
	if n == 0 {
		return HDTPLeaf{}, ErrNotFound
	}
	if n, err := q.SetHDTPIdentityRoot(ctx, setHDTPRootParams(in)); err != nil {
		return HDTPLeaf{}, err
	} else if n == 0 {
		return HDTPLeaf{}, ErrConflict
	}
	return q.GetHDTPLeaf(ctx, in.KID)
}

func firstOrEmpty(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// hdtpLite adapts the SQLite queries to hdtpQueries.
type hdtpLite struct{ q *liteq.Queries }

func (h hdtpLite) LockHDTPIdentity(ctx context.Context, id string) (string, error) {
	return h.q.LockHDTPIdentity(ctx, id)
}
func (h hdtpLite) GetHDTPCurrentLeafKID(ctx context.Context, id string) ([]string, error) {
	return h.q.GetHDTPCurrentLeafKID(ctx, id)
}
func (h hdtpLite) SupersedeHDTPCurrentLeaf(ctx context.Context, id string) (int64, error) {
	return h.q.SupersedeHDTPCurrentLeaf(ctx, id)
}
func (h hdtpLite) PromoteHDTPPendingLeaf(ctx context.Context, arg liteq.PromoteHDTPPendingLeafParams) (int64, error) {
	return h.q.PromoteHDTPPendingLeaf(ctx, arg)
}
func (h hdtpLite) SetHDTPIdentityRoot(ctx context.Context, arg liteq.SetHDTPIdentityRootParams) (int64, error) {
	return h.q.SetHDTPIdentityRoot(ctx, arg)
}
func (h hdtpLite) GetHDTPLeaf(ctx context.Context, kid string) (HDTPLeaf, error) {
	r, err := h.q.GetHDTPLeaf(ctx, kid)
	return hdtpLeafFromRow(r), err
}

// hdtpPG adapts the PostgreSQL queries to hdtpQueries.
type hdtpPG struct{ q *pgq.Queries }

func (h hdtpPG) LockHDTPIdentity(ctx context.Context, id string) (string, error) {
	return h.q.LockHDTPIdentity(ctx, id)
}
func (h hdtpPG) GetHDTPCurrentLeafKID(ctx context.Context, id string) ([]string, error) {
	return h.q.GetHDTPCurrentLeafKID(ctx, id)
}
func (h hdtpPG) SupersedeHDTPCurrentLeaf(ctx context.Context, id string) (int64, error) {
	return h.q.SupersedeHDTPCurrentLeaf(ctx, id)
}
func (h hdtpPG) PromoteHDTPPendingLeaf(ctx context.Context, arg liteq.PromoteHDTPPendingLeafParams) (int64, error) {
	return h.q.PromoteHDTPPendingLeaf(ctx, pgq.PromoteHDTPPendingLeafParams(arg))
}
func (h hdtpPG) SetHDTPIdentityRoot(ctx context.Context, arg liteq.SetHDTPIdentityRootParams) (int64, error) {
	return h.q.SetHDTPIdentityRoot(ctx, pgq.SetHDTPIdentityRootParams(arg))
}
func (h hdtpPG) GetHDTPLeaf(ctx context.Context, kid string) (HDTPLeaf, error) {
	r, err := h.q.GetHDTPLeaf(ctx, kid)
	return hdtpLeafFromPG(r), err
}
