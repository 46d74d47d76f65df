// The host wire's queries, one interface for both engines.

package db

import (
	"context"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// hostQueries are the host wire's queries in the SQLite shapes; the SQLite
// queries are them, the PostgreSQL ones go through hostPG.
type hostQueries interface {
	CountHDTPContacts(ctx context.Context, arg liteq.CountHDTPContactsParams) (int64, error)
	CreateHDTPInvite(ctx context.Context, arg liteq.CreateHDTPInviteParams) error
	DeleteHDTPContact(ctx context.Context, arg liteq.DeleteHDTPContactParams) (int64, error)
	DeleteHDTPInvite(ctx context.Context, arg liteq.DeleteHDTPInviteParams) (int64, error)
	DeleteHDTPTombstones(ctx context.Context, arg liteq.DeleteHDTPTombstonesParams) error
	EnsureHDTPBucket(ctx context.Context, arg liteq.EnsureHDTPBucketParams) error
	FinishHDTPCall(ctx context.Context, arg liteq.FinishHDTPCallParams) (int64, error)
	GetHDTPBucket(ctx context.Context, scope string) (liteq.HDTPBucket, error)
	GetHDTPCall(ctx context.Context, id string) (liteq.HDTPCall, error)
	GetHDTPCallByMsgID(ctx context.Context, arg liteq.GetHDTPCallByMsgIDParams) (liteq.HDTPCall, error)
	GetHDTPContact(ctx context.Context, arg liteq.GetHDTPContactParams) (liteq.HDTPContact, error)
	GetHDTPContactsByLeaf(ctx context.Context, arg liteq.GetHDTPContactsByLeafParams) ([]liteq.HDTPContact, error)
	GetHDTPIdentityByEndpoint(ctx context.Context, endpoint string) (liteq.HDTPIdentity, error)
	GetHDTPInviteByHash(ctx context.Context, tokenHash []byte) (liteq.HDTPInvite, error)
	GetHDTPReplay(ctx context.Context, arg liteq.GetHDTPReplayParams) (liteq.HDTPReplay, error)
	GetHDTPThreadOwner(ctx context.Context, arg liteq.GetHDTPThreadOwnerParams) (string, error)
	InsertHDTPCall(ctx context.Context, arg liteq.InsertHDTPCallParams) (int64, error)
	InsertHDTPReplay(ctx context.Context, arg liteq.InsertHDTPReplayParams) (int64, error)
	InsertHDTPThread(ctx context.Context, arg liteq.InsertHDTPThreadParams) error
	ListHDTPContactRootsAt(ctx context.Context, arg liteq.ListHDTPContactRootsAtParams) ([]string, error)
	ListHDTPContacts(ctx context.Context, arg liteq.ListHDTPContactsParams) ([]liteq.HDTPContact, error)
	ListHDTPFormerPins(ctx context.Context, arg liteq.ListHDTPFormerPinsParams) ([]liteq.HDTPFormerPin, error)
	ListHDTPFormerRootsAt(ctx context.Context, arg liteq.ListHDTPFormerRootsAtParams) ([]string, error)
	ListHDTPInvites(ctx context.Context, identityID string) ([]liteq.HDTPInvite, error)
	ListHDTPPendingAddresses(ctx context.Context, identityID string) ([]liteq.HDTPContact, error)
	LockHDTPBucket(ctx context.Context, scope string) (liteq.HDTPBucket, error)
	PurgeHDTPBuckets(ctx context.Context, nowMs int64) (int64, error)
	PurgeHDTPCalls(ctx context.Context, before int64) (int64, error)
	PurgeHDTPFormerPins(ctx context.Context, now int64) (int64, error)
	PurgeHDTPInvites(ctx context.Context, before int64) (int64, error)
	PurgeHDTPReplays(ctx context.Context, now int64) (int64, error)
	PutHDTPFormerPin(ctx context.Context, arg liteq.PutHDTPFormerPinParams) error
	SetHDTPBucket(ctx context.Context, arg liteq.SetHDTPBucketParams) error
	SetHDTPContentTools(ctx context.Context, arg liteq.SetHDTPContentToolsParams) (int64, error)
	SetHDTPIdentityPolicy(ctx context.Context, arg liteq.SetHDTPIdentityPolicyParams) (int64, error)
	SetHDTPReplayAnswer(ctx context.Context, arg liteq.SetHDTPReplayAnswerParams) (int64, error)
	SetHDTPReplayCall(ctx context.Context, arg liteq.SetHDTPReplayCallParams) (int64, error)
	UpsertHDTPContact(ctx context.Context, arg liteq.UpsertHDTPContactParams) error
	UseHDTPInvite(ctx context.Context, arg liteq.UseHDTPInviteParams) (int64, error)
	InsertAuditEvent(ctx context.Context, arg liteq.InsertAuditEventParams) (int64, error)
	GetHDTPIdentity(ctx context.Context, id string) (liteq.HDTPIdentity, error)
	LockHDTPIdentity(ctx context.Context, id string) (string, error)
}

// hostPG adapts the PostgreSQL queries to hostQueries.
type hostPG struct{ q *pgq.Queries }

func (h hostPG) CountHDTPContacts(ctx context.Context, arg liteq.CountHDTPContactsParams) (int64, error) {
	return h.q.CountHDTPContacts(ctx, pgq.CountHDTPContactsParams(arg))
}

func (h hostPG) CreateHDTPInvite(ctx context.Context, arg liteq.CreateHDTPInviteParams) error {
	return h.q.CreateHDTPInvite(ctx, pgq.CreateHDTPInviteParams(arg))
}

func (h hostPG) DeleteHDTPContact(ctx context.Context, arg liteq.DeleteHDTPContactParams) (int64, error) {
	return h.q.DeleteHDTPContact(ctx, pgq.DeleteHDTPContactParams(arg))
}

func (h hostPG) DeleteHDTPInvite(ctx context.Context, arg liteq.DeleteHDTPInviteParams) (int64, error) {
	return h.q.DeleteHDTPInvite(ctx, pgq.DeleteHDTPInviteParams(arg))
}

func (h hostPG) DeleteHDTPTombstones(ctx context.Context, arg liteq.DeleteHDTPTombstonesParams) error {
	return h.q.DeleteHDTPTombstones(ctx, pgq.DeleteHDTPTombstonesParams(arg))
}

func (h hostPG) EnsureHDTPBucket(ctx context.Context, arg liteq.EnsureHDTPBucketParams) error {
	return h.q.EnsureHDTPBucket(ctx, pgq.EnsureHDTPBucketParams(arg))
}

func (h hostPG) FinishHDTPCall(ctx context.Context, arg liteq.FinishHDTPCallParams) (int64, error) {
	return h.q.FinishHDTPCall(ctx, pgq.FinishHDTPCallParams(arg))
}

func (h hostPG) GetHDTPBucket(ctx context.Context, scope string) (liteq.HDTPBucket, error) {
	r, err := h.q.GetHDTPBucket(ctx, scope)
	return liteq.HDTPBucket(r), err
}

func (h hostPG) GetHDTPCall(ctx context.Context, id string) (liteq.HDTPCall, error) {
	r, err := h.q.GetHDTPCall(ctx, id)
	return liteq.HDTPCall(r), err
}

func (h hostPG) GetHDTPCallByMsgID(ctx context.Context, arg liteq.GetHDTPCallByMsgIDParams) (liteq.HDTPCall, error) {
	r, err := h.q.GetHDTPCallByMsgID(ctx, pgq.GetHDTPCallByMsgIDParams(arg))
	return liteq.HDTPCall(r), err
}

func (h hostPG) GetHDTPContact(ctx context.Context, arg liteq.GetHDTPContactParams) (liteq.HDTPContact, error) {
	r, err := h.q.GetHDTPContact(ctx, pgq.GetHDTPContactParams(arg))
	return liteq.HDTPContact(r), err
}

func (h hostPG) GetHDTPContactsByLeaf(ctx context.Context, arg liteq.GetHDTPContactsByLeafParams) ([]liteq.HDTPContact, error) {
	rows, err := h.q.GetHDTPContactsByLeaf(ctx, pgq.GetHDTPContactsByLeafParams(arg))
	out := make([]liteq.HDTPContact, len(rows))
	for i, r := range rows {
		out[i] = liteq.HDTPContact(r)
	}
	return out, err
}

func (h hostPG) GetHDTPIdentityByEndpoint(ctx context.Context, endpoint string) (liteq.HDTPIdentity, error) {
	r, err := h.q.GetHDTPIdentityByEndpoint(ctx, endpoint)
	return liteq.HDTPIdentity(r), err
}

func (h hostPG) GetHDTPInviteByHash(ctx context.Context, tokenHash []byte) (liteq.HDTPInvite, error) {
	r, err := h.q.GetHDTPInviteByHash(ctx, tokenHash)
	return liteq.HDTPInvite(r), err
}

func (h hostPG) GetHDTPReplay(ctx context.Context, arg liteq.GetHDTPReplayParams) (liteq.HDTPReplay, error) {
	r, err := h.q.GetHDTPReplay(ctx, pgq.GetHDTPReplayParams(arg))
	return liteq.HDTPReplay(r), err
}

func (h hostPG) GetHDTPThreadOwner(ctx context.Context, arg liteq.GetHDTPThreadOwnerParams) (string, error) {
	return h.q.GetHDTPThreadOwner(ctx, pgq.GetHDTPThreadOwnerParams(arg))
}

func (h hostPG) InsertHDTPCall(ctx context.Context, arg liteq.InsertHDTPCallParams) (int64, error) {
	return h.q.InsertHDTPCall(ctx, pgq.InsertHDTPCallParams(arg))
}

func (h hostPG) InsertHDTPReplay(ctx context.Context, arg liteq.InsertHDTPReplayParams) (int64, error) {
	return h.q.InsertHDTPReplay(ctx, pgq.InsertHDTPReplayParams(arg))
}

func (h hostPG) InsertHDTPThread(ctx context.Context, arg liteq.InsertHDTPThreadParams) error {
	return h.q.InsertHDTPThread(ctx, pgq.InsertHDTPThreadParams(arg))
}

func (h hostPG) ListHDTPContactRootsAt(ctx context.Context, arg liteq.ListHDTPContactRootsAtParams) ([]string, error) {
	return h.q.ListHDTPContactRootsAt(ctx, pgq.ListHDTPContactRootsAtParams(arg))
}

func (h hostPG) ListHDTPContacts(ctx context.Context, arg liteq.ListHDTPContactsParams) ([]liteq.HDTPContact, error) {
	rows, err := h.q.ListHDTPContacts(ctx, pgq.ListHDTPContactsParams{IdentityID: arg.IdentityID, AfterRoot: arg.AfterRoot, State: arg.State, PageLimit: int32(arg.PageLimit)})
	out := make([]liteq.HDTPContact, len(rows))
	for i, r := range rows {
		out[i] = liteq.HDTPContact(r)
	}
	return out, err
}

func (h hostPG) ListHDTPFormerPins(ctx context.Context, arg liteq.ListHDTPFormerPinsParams) ([]liteq.HDTPFormerPin, error) {
	rows, err := h.q.ListHDTPFormerPins(ctx, pgq.ListHDTPFormerPinsParams(arg))
	out := make([]liteq.HDTPFormerPin, len(rows))
	for i, r := range rows {
		out[i] = liteq.HDTPFormerPin(r)
	}
	return out, err
}

func (h hostPG) ListHDTPFormerRootsAt(ctx context.Context, arg liteq.ListHDTPFormerRootsAtParams) ([]string, error) {
	return h.q.ListHDTPFormerRootsAt(ctx, pgq.ListHDTPFormerRootsAtParams(arg))
}

func (h hostPG) ListHDTPInvites(ctx context.Context, identityID string) ([]liteq.HDTPInvite, error) {
	rows, err := h.q.ListHDTPInvites(ctx, identityID)
	out := make([]liteq.HDTPInvite, len(rows))
	for i, r := range rows {
		out[i] = liteq.HDTPInvite(r)
	}
	return out, err
}

func (h hostPG) ListHDTPPendingAddresses(ctx context.Context, identityID string) ([]liteq.HDTPContact, error) {
	rows, err := h.q.ListHDTPPendingAddresses(ctx, identityID)
	out := make([]liteq.HDTPContact, len(rows))
	for i, r := range rows {
		out[i] = liteq.HDTPContact(r)
	}
	return out, err
}

func (h hostPG) LockHDTPBucket(ctx context.Context, scope string) (liteq.HDTPBucket, error) {
	r, err := h.q.LockHDTPBucket(ctx, scope)
	return liteq.HDTPBucket(r), err
}

func (h hostPG) PurgeHDTPBuckets(ctx context.Context, nowMs int64) (int64, error) {
	return h.q.PurgeHDTPBuckets(ctx, nowMs)
}

func (h hostPG) PurgeHDTPCalls(ctx context.Context, before int64) (int64, error) {
	return h.q.PurgeHDTPCalls(ctx, before)
}

func (h hostPG) PurgeHDTPFormerPins(ctx context.Context, now int64) (int64, error) {
	return h.q.PurgeHDTPFormerPins(ctx, now)
}

func (h hostPG) PurgeHDTPInvites(ctx context.Context, before int64) (int64, error) {
	return h.q.PurgeHDTPInvites(ctx, before)
}

func (h hostPG) PurgeHDTPReplays(ctx context.Context, now int64) (int64, error) {
	return h.q.PurgeHDTPReplays(ctx, now)
}

func (h hostPG) PutHDTPFormerPin(ctx context.Context, arg liteq.PutHDTPFormerPinParams) error {
	return h.q.PutHDTPFormerPin(ctx, pgq.PutHDTPFormerPinParams(arg))
}

func (h hostPG) SetHDTPBucket(ctx context.Context, arg liteq.SetHDTPBucketParams) error {
	return h.q.SetHDTPBucket(ctx, pgq.SetHDTPBucketParams(arg))
}

func (h hostPG) SetHDTPContentTools(ctx context.Context, arg liteq.SetHDTPContentToolsParams) (int64, error) {
	return h.q.SetHDTPContentTools(ctx, pgq.SetHDTPContentToolsParams(arg))
}

func (h hostPG) SetHDTPIdentityPolicy(ctx context.Context, arg liteq.SetHDTPIdentityPolicyParams) (int64, error) {
	return h.q.SetHDTPIdentityPolicy(ctx, pgq.SetHDTPIdentityPolicyParams(arg))
}

func (h hostPG) SetHDTPReplayAnswer(ctx context.Context, arg liteq.SetHDTPReplayAnswerParams) (int64, error) {
	return h.q.SetHDTPReplayAnswer(ctx, pgq.SetHDTPReplayAnswerParams(arg))
}

func (h hostPG) SetHDTPReplayCall(ctx context.Context, arg liteq.SetHDTPReplayCallParams) (int64, error) {
	return h.q.SetHDTPReplayCall(ctx, pgq.SetHDTPReplayCallParams(arg))
}

func (h hostPG) UpsertHDTPContact(ctx context.Context, arg liteq.UpsertHDTPContactParams) error {
	return h.q.UpsertHDTPContact(ctx, pgq.UpsertHDTPContactParams(arg))
}

func (h hostPG) UseHDTPInvite(ctx context.Context, arg liteq.UseHDTPInviteParams) (int64, error) {
	return h.q.UseHDTPInvite(ctx, pgq.UseHDTPInviteParams(arg))
}

func (h hostPG) InsertAuditEvent(ctx context.Context, arg liteq.InsertAuditEventParams) (int64, error) {
	return h.q.InsertAuditEvent(ctx, pgq.InsertAuditEventParams(arg))
}

func (h hostPG) GetHDTPIdentity(ctx context.Context, id string) (liteq.HDTPIdentity, error) {
	r, err := h.q.GetHDTPIdentity(ctx, id)
	return liteq.HDTPIdentity(r), err
}

func (h hostPG) LockHDTPIdentity(ctx context.Context, id string) (string, error) {
	return h.q.LockHDTPIdentity(ctx, id)
}
