package db

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/db/internal/liteq"
)

// ---------------------------------------------------------------------------
// The HDTP / PACT 2 host wire (migration 0021; docs/hdtp.md): contacts,
// former pins, invites, replay records, dispatched calls, threads and token
// buckets. Every change an inbound call makes happens in one HDTPTx, which
// holds the identity's row lock (FOR UPDATE on PostgreSQL, BEGIN IMMEDIATE
// on SQLite) for its length: the calls to one identity are admitted one at
// a time on every replica, and the unique keys (replay records, inner
// msg_ids) hold besides.

// HDTPContactState is where a contact stands.
type HDTPContactState string

// The contact states.
const (
	// HDTPContactActive: an approved contact.
	HDTPContactActive HDTPContactState = "active"
	// HDTPContactPendingIn: they asked; the owner decides.
	HDTPContactPendingIn HDTPContactState = "pending_in"
	// HDTPContactPendingOut: the identity asked; waiting for them.
	HDTPContactPendingOut HDTPContactState = "pending_out"
	// HDTPContactBlocked: answered as a stranger.
	HDTPContactBlocked HDTPContactState = "blocked"
)

// HDTPContact is a pin: a root the identity knows, at an endpoint, with
// the latest leaf it accepted.
type HDTPContact struct {
	IdentityID string
	// Root is the contact's root fingerprint.
	Root string
	// Endpoint, Leaf, LeafKID and LeafNotBefore are the pinned endpoint
	// and leaf.
	Endpoint      string
	Leaf          []byte
	LeafKID       string
	LeafNotBefore time.Time
	State         HDTPContactState
	// WasActive is whether it was active before it was blocked.
	WasActive bool
	// Permissions are what the owner granted; Preset the preset they came
	// from ("" for a list); TheirPermissions what the contact granted.
	Permissions      []string
	Preset           string
	TheirPermissions []string
	// DisplayName is its card's FN; InviteLabel the label of the invite it
	// came through; Note its request's note.
	DisplayName, InviteLabel, Note string
	// PendingEndpoint, PendingLeaf and PendingLeafKID are a newer leaf at
	// another endpoint held for the owner ("" / nil when none), first seen
	// at PendingSeenTime; PendingBorrowedFrom is another root that
	// endpoint is or was pinned for.
	PendingEndpoint     string
	PendingLeaf         []byte
	PendingLeafKID      string
	PendingSeenTime     time.Time
	PendingBorrowedFrom string
	// RequestTime is when the request was made (pending states).
	RequestTime time.Time
	CreateTime  time.Time
	UpdateTime  time.Time
}

// HDTPFormerPin is an endpoint a root was pinned at and left, kept 30
// days: moved away, or removed (Tombstone, with its permissions).
type HDTPFormerPin struct {
	IdentityID, Root, Endpoint string
	LeafKID                    string
	LeafNotBefore              time.Time
	Tombstone                  bool
	Permissions                []string
	Preset                     string
	ExpireTime                 time.Time
}

// HDTPInvite is an invite; its token is kept only as TokenHash.
type HDTPInvite struct {
	ID, IdentityID string
	TokenHash      []byte
	ExpireTime     time.Time
	MaxUses, Uses  int64
	AutoAccept     bool
	Preset, Label  string
	CreateTime     time.Time
}

// HDTPReplayKey names an envelope replay record.
type HDTPReplayKey struct {
	// SenderRoot is the proven sender's root fingerprint; MsgID the
	// envelope header's msg_id.
	SenderRoot, MsgID string
}

// HDTPReplay is an envelope replay record.
type HDTPReplay struct {
	HDTPReplayKey
	// CallID is the dispatched call the envelope led to ("" for none).
	CallID string
	// Answer is the stored CallToolResult JSON; nil while CallID is in
	// flight.
	Answer     []byte
	ExpireTime time.Time
}

// HDTPCallState is where a dispatched call is.
type HDTPCallState string

// The call states.
const (
	// HDTPCallDispatched: handed to the host; no result yet.
	HDTPCallDispatched HDTPCallState = "dispatched"
	// HDTPCallCompleted: the host's result is stored.
	HDTPCallCompleted HDTPCallState = "completed"
	// HDTPCallFailed: the host refused it; the refusal is stored and the
	// inner msg_id is free again.
	HDTPCallFailed HDTPCallState = "failed"
)

// HDTPCall is a content tool call pactd dispatched to the host.
type HDTPCall struct {
	ID, IdentityID string
	CallerRoot     string
	// MsgID is the inner msg_id ("" for a tool without one, and once
	// failed).
	MsgID string
	Tool  string
	State HDTPCallState
	// Result is the tool's result object, or the error object when
	// IsError.
	Result  []byte
	IsError bool
	// ReplyLeaf is the caller's leaf to seal the answer to (nil for a
	// plaintext call); ReplyChain asks for the full form; EnvMsgID is the
	// request envelope's msg_id.
	ReplyLeaf  []byte
	ReplyChain bool
	EnvMsgID   string
	// RPCID is the JSON-RPC id of the dispatching request, as JSON.
	RPCID        string
	CreateTime   time.Time
	CompleteTime time.Time
}

// HDTPBucket is a token bucket to charge: one token every Interval, at
// most Burst.
type HDTPBucket struct {
	Scope    string
	Interval time.Duration
	Burst    int64
}

// microTokens is how many stored units make one token.
const microTokens = 1_000_000

// HDTPHostStore is the storage of the host wire.
type HDTPHostStore interface {
	// GetHDTPIdentityByEndpoint returns the identity with the endpoint.
	GetHDTPIdentityByEndpoint(ctx context.Context, endpoint string) (HDTPIdentity, error)
	// SetHDTPIdentityPolicy writes AcceptNewHosts and ClientCert.
	SetHDTPIdentityPolicy(ctx context.Context, id HDTPIdentity) error
	// SetHDTPContentTools writes the identity's content tools (JSON).
	SetHDTPContentTools(ctx context.Context, identityID, tools string, now time.Time) error
	// GetHDTPContact returns the contact with the root.
	GetHDTPContact(ctx context.Context, identityID, root string) (HDTPContact, error)
	// GetHDTPContactByLeaf returns the contact whose pinned leaf has the
	// kid.
	GetHDTPContactByLeaf(ctx context.Context, identityID, kid string) (HDTPContact, error)
	// ListHDTPContacts returns up to limit contacts with roots after
	// afterRoot, by root, in the state ("" for every state).
	ListHDTPContacts(ctx context.Context, identityID string, state HDTPContactState, afterRoot string, limit int) ([]HDTPContact, error)
	// ListHDTPPendingAddresses returns the contacts with a pending address.
	ListHDTPPendingAddresses(ctx context.Context, identityID string) ([]HDTPContact, error)
	// CreateHDTPInvite stores an invite.
	CreateHDTPInvite(ctx context.Context, inv HDTPInvite) error
	// GetHDTPInviteByHash returns the invite with the token hash.
	GetHDTPInviteByHash(ctx context.Context, hash []byte) (HDTPInvite, error)
	// ListHDTPInvites returns the identity's invites, newest first.
	ListHDTPInvites(ctx context.Context, identityID string) ([]HDTPInvite, error)
	// DeleteHDTPInvite deletes an invite; ErrNotFound when the identity
	// has none with the id.
	DeleteHDTPInvite(ctx context.Context, identityID, id string) error
	// GetHDTPCall returns the dispatched call with the id.
	GetHDTPCall(ctx context.Context, id string) (HDTPCall, error)
	// GetHDTPReplay returns a replay record.
	GetHDTPReplay(ctx context.Context, identityID string, key HDTPReplayKey) (HDTPReplay, error)
	// PeekHDTPBucket reports whether b holds a whole token at now without
	// taking one, and if not, how long until it does.
	PeekHDTPBucket(ctx context.Context, b HDTPBucket, now time.Time) (ok bool, wait time.Duration, err error)
	// InHDTPTx runs fn in one transaction holding the identity's lock: its
	// changes all happen or none do. ErrNotFound when the identity does
	// not exist. fn's error rolls back and is returned.
	InHDTPTx(ctx context.Context, identityID string, fn func(HDTPTx) error) error
	// PurgeHDTP deletes replay records and former pins past their expiry,
	// full buckets, invites expired before inviteBefore and calls made
	// before callBefore; it returns how many rows went.
	PurgeHDTP(ctx context.Context, now, inviteBefore, callBefore time.Time) (int64, error)
}

// HDTPTx is what one transaction of the host wire may do, for its
// identity.
type HDTPTx interface {
	// Contact returns the contact with the root (ErrNotFound).
	Contact(root string) (HDTPContact, error)
	// PutContact inserts or replaces a contact.
	PutContact(c HDTPContact) error
	// DeleteContact deletes a contact; false when there was none.
	DeleteContact(root string) (bool, error)
	// CountContacts counts the contacts in a state.
	CountContacts(state HDTPContactState) (int64, error)
	// OtherRootsAt returns the roots other than root pinned at the
	// endpoint now, or within their former pins' window at now.
	OtherRootsAt(endpoint, root string, now time.Time) ([]string, error)
	// FormerPins returns the root's unexpired former pins.
	FormerPins(root string, now time.Time) ([]HDTPFormerPin, error)
	// PutFormerPin inserts or replaces a former pin.
	PutFormerPin(p HDTPFormerPin) error
	// DeleteTombstones deletes the root's tombstones.
	DeleteTombstones(root string) error
	// UseInvite consumes one use of the invite, if it has one left and is
	// unexpired at now; false otherwise.
	UseInvite(id string, now time.Time) (bool, error)
	// ClaimReplay inserts the replay record if it is absent (claimed
	// true), else returns the stored one.
	ClaimReplay(key HDTPReplayKey, expire time.Time) (r HDTPReplay, claimed bool, err error)
	// SetReplayAnswer stores the answer if none is stored yet, and returns
	// the one stored (this one, or the one that was there); ErrNotFound
	// when the record is gone (purged past its window).
	SetReplayAnswer(key HDTPReplayKey, answer []byte) ([]byte, error)
	// Replay returns a replay record (ErrNotFound).
	Replay(key HDTPReplayKey) (HDTPReplay, error)
	// SetReplayCall links the replay record to a dispatched call.
	SetReplayCall(key HDTPReplayKey, callID string) error
	// ClaimCall inserts a dispatched call unless one with the same
	// (caller root, msg_id) exists (a non-empty MsgID), which it returns
	// (claimed false).
	ClaimCall(c HDTPCall) (existing HDTPCall, claimed bool, err error)
	// Call returns the dispatched call with the id.
	Call(id string) (HDTPCall, error)
	// FinishCall stores a dispatched call's outcome (state completed or
	// failed); false when it was not dispatched any more.
	FinishCall(id string, state HDTPCallState, result []byte, isError bool, now time.Time) (bool, error)
	// ThreadOwner returns the root a thread belongs to (ErrNotFound).
	ThreadOwner(threadID string) (string, error)
	// AddThread records a thread for root unless it has an owner.
	AddThread(threadID, root string, now time.Time) error
	// Take takes one token from every bucket, or none: ok false names the
	// first empty bucket's wait until a whole token.
	Take(now time.Time, buckets ...HDTPBucket) (ok bool, wait time.Duration, err error)
	// RecordAudit records an audit event in the transaction.
	RecordAudit(e AuditEvent) error
}

// hostStore implements HDTPHostStore for both engines over hostQueries.
type hostStore struct {
	q  hostQueries
	tx func(ctx context.Context, fn func(hostQueries) error) error
}

// hostErr turns either engine's errors into the package's sentinels.
func hostErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return pgErr(liteErr(err))
}

func (s hostStore) GetHDTPIdentityByEndpoint(ctx context.Context, endpoint string) (HDTPIdentity, error) {
	r, err := s.q.GetHDTPIdentityByEndpoint(ctx, endpoint)
	return hdtpIdentityFromRow(r), hostErr(err)
}

func (s hostStore) SetHDTPIdentityPolicy(ctx context.Context, id HDTPIdentity) error {
	n, err := s.q.SetHDTPIdentityPolicy(ctx, liteq.SetHDTPIdentityPolicyParams{AcceptNewHosts: id.AcceptNewHosts, ClientCert: id.ClientCert,
		UpdateTime: unix(id.UpdateTime), ID: id.ID})
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return hostErr(err)
}

func (s hostStore) SetHDTPContentTools(ctx context.Context, identityID, tools string, now time.Time) error {
	n, err := s.q.SetHDTPContentTools(ctx, liteq.SetHDTPContentToolsParams{ContentTools: tools, UpdateTime: unix(now), ID: identityID})
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return hostErr(err)
}

func (s hostStore) GetHDTPContact(ctx context.Context, identityID, root string) (HDTPContact, error) {
	r, err := s.q.GetHDTPContact(ctx, liteq.GetHDTPContactParams{IdentityID: identityID, Root: root})
	return contactFromRow(r), hostErr(err)
}

func (s hostStore) GetHDTPContactByLeaf(ctx context.Context, identityID, kid string) (HDTPContact, error) {
	rows, err := s.q.GetHDTPContactsByLeaf(ctx, liteq.GetHDTPContactsByLeafParams{IdentityID: identityID, LeafKid: kid})
	if err != nil {
		return HDTPContact{}, hostErr(err)
	}
	if len(rows) == 0 {
		return HDTPContact{}, ErrNotFound
	}
	return contactFromRow(rows[0]), nil
}

func (s hostStore) ListHDTPContacts(ctx context.Context, identityID string, state HDTPContactState, afterRoot string, limit int) ([]HDTPContact, error) {
	rows, err := s.q.ListHDTPContacts(ctx, liteq.ListHDTPContactsParams{IdentityID: identityID, AfterRoot: afterRoot, State: string(state),
		PageLimit: int64(limit)})
	return contactsFromRows(rows), hostErr(err)
}

func (s hostStore) ListHDTPPendingAddresses(ctx context.Context, identityID string) ([]HDTPContact, error) {
	rows, err := s.q.ListHDTPPendingAddresses(ctx, identityID)
	return contactsFromRows(rows), hostErr(err)
}

func (s hostStore) CreateHDTPInvite(ctx context.Context, inv HDTPInvite) error {
	return hostErr(s.q.CreateHDTPInvite(ctx, liteq.CreateHDTPInviteParams{ID: inv.ID, IdentityID: inv.IdentityID, TokenHash: inv.TokenHash,
		ExpireTime: unix(inv.ExpireTime), MaxUses: inv.MaxUses, AutoAccept: boolInt(inv.AutoAccept), Preset: inv.Preset, Label: inv.Label,
		CreateTime: unix(inv.CreateTime)}))
}

func (s hostStore) GetHDTPInviteByHash(ctx context.Context, hash []byte) (HDTPInvite, error) {
	r, err := s.q.GetHDTPInviteByHash(ctx, hash)
	return inviteFromRow(r), hostErr(err)
}

func (s hostStore) ListHDTPInvites(ctx context.Context, identityID string) ([]HDTPInvite, error) {
	rows, err := s.q.ListHDTPInvites(ctx, identityID)
	out := make([]HDTPInvite, len(rows))
	for i, r := range rows {
		out[i] = inviteFromRow(r)
	}
	return out, hostErr(err)
}

func (s hostStore) DeleteHDTPInvite(ctx context.Context, identityID, id string) error {
	n, err := s.q.DeleteHDTPInvite(ctx, liteq.DeleteHDTPInviteParams{IdentityID: identityID, ID: id})
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return hostErr(err)
}

func (s hostStore) GetHDTPCall(ctx context.Context, id string) (HDTPCall, error) {
	r, err := s.q.GetHDTPCall(ctx, id)
	return callFromRow(r), hostErr(err)
}

func (s hostStore) GetHDTPReplay(ctx context.Context, identityID string, key HDTPReplayKey) (HDTPReplay, error) {
	r, err := s.q.GetHDTPReplay(ctx, liteq.GetHDTPReplayParams{IdentityID: identityID, SenderRoot: key.SenderRoot, MsgID: key.MsgID})
	return replayFromRow(r), hostErr(err)
}

func (s hostStore) PeekHDTPBucket(ctx context.Context, b HDTPBucket, now time.Time) (bool, time.Duration, error) {
	r, err := s.q.GetHDTPBucket(ctx, b.Scope)
	if err := hostErr(err); errors.Is(err, ErrNotFound) {
		return true, 0, nil
	} else if err != nil {
		return false, 0, err
	}
	tokens := refill(r, b, now)
	if tokens >= microTokens {
		return true, 0, nil
	}
	return false, waitFor(tokens, b), nil
}

func (s hostStore) InHDTPTx(ctx context.Context, identityID string, fn func(HDTPTx) error) error {
	return hostErr(s.tx(ctx, func(q hostQueries) error {
		if _, err := q.LockHDTPIdentity(ctx, identityID); err != nil {
			return err
		}
		return fn(&hostTx{ctx: ctx, q: q, identityID: identityID})
	}))
}

func (s hostStore) PurgeHDTP(ctx context.Context, now, inviteBefore, callBefore time.Time) (int64, error) {
	var total int64
	for _, f := range []func() (int64, error){
		func() (int64, error) { return s.q.PurgeHDTPReplays(ctx, unix(now)) },
		func() (int64, error) { return s.q.PurgeHDTPFormerPins(ctx, unix(now)) },
		func() (int64, error) { return s.q.PurgeHDTPBuckets(ctx, now.UnixMilli()) },
		func() (int64, error) { return s.q.PurgeHDTPInvites(ctx, unix(inviteBefore)) },
		func() (int64, error) { return s.q.PurgeHDTPCalls(ctx, unix(callBefore)) },
	} {
		n, err := f()
		total += n
		if err != nil {
			return total, hostErr(err)
		}
	}
	return total, nil
}

// hostTx implements HDTPTx inside one transaction.
type hostTx struct {
	ctx        context.Context
	q          hostQueries
	identityID string
}

func (t *hostTx) Contact(root string) (HDTPContact, error) {
	r, err := t.q.GetHDTPContact(t.ctx, liteq.GetHDTPContactParams{IdentityID: t.identityID, Root: root})
	return contactFromRow(r), hostErr(err)
}

func (t *hostTx) PutContact(c HDTPContact) error {
	c.IdentityID = t.identityID
	return hostErr(t.q.UpsertHDTPContact(t.ctx, contactParams(c)))
}

func (t *hostTx) DeleteContact(root string) (bool, error) {
	n, err := t.q.DeleteHDTPContact(t.ctx, liteq.DeleteHDTPContactParams{IdentityID: t.identityID, Root: root})
	return n > 0, hostErr(err)
}

func (t *hostTx) CountContacts(state HDTPContactState) (int64, error) {
	n, err := t.q.CountHDTPContacts(t.ctx, liteq.CountHDTPContactsParams{IdentityID: t.identityID, State: string(state)})
	return n, hostErr(err)
}

func (t *hostTx) OtherRootsAt(endpoint, root string, now time.Time) ([]string, error) {
	a, err := t.q.ListHDTPContactRootsAt(t.ctx, liteq.ListHDTPContactRootsAtParams{IdentityID: t.identityID, Endpoint: endpoint, Root: root})
	if err != nil {
		return nil, hostErr(err)
	}
	b, err := t.q.ListHDTPFormerRootsAt(t.ctx, liteq.ListHDTPFormerRootsAtParams{IdentityID: t.identityID, Endpoint: endpoint, Root: root,
		Now: unix(now)})
	if err != nil {
		return nil, hostErr(err)
	}
	out := append(a, b...)
	slices.Sort(out)
	return slices.Compact(out), nil
}

func (t *hostTx) FormerPins(root string, now time.Time) ([]HDTPFormerPin, error) {
	rows, err := t.q.ListHDTPFormerPins(t.ctx, liteq.ListHDTPFormerPinsParams{IdentityID: t.identityID, Root: root, Now: unix(now)})
	out := make([]HDTPFormerPin, len(rows))
	for i, r := range rows {
		out[i] = HDTPFormerPin{IdentityID: r.IdentityID, Root: r.Root, Endpoint: r.Endpoint, LeafKID: r.LeafKid,
			LeafNotBefore: fromUnix(r.LeafNotBefore), Tombstone: r.Tombstone != 0, Permissions: splitWords(r.Permissions), Preset: r.Preset,
			ExpireTime: fromUnix(r.ExpireTime)}
	}
	return out, hostErr(err)
}

func (t *hostTx) PutFormerPin(p HDTPFormerPin) error {
	return hostErr(t.q.PutHDTPFormerPin(t.ctx, liteq.PutHDTPFormerPinParams{IdentityID: t.identityID, Root: p.Root, Endpoint: p.Endpoint,
		LeafKid: p.LeafKID, LeafNotBefore: unix(p.LeafNotBefore), Tombstone: boolInt(p.Tombstone), Permissions: strings.Join(p.Permissions, " "),
		Preset: p.Preset, ExpireTime: unix(p.ExpireTime)}))
}

func (t *hostTx) DeleteTombstones(root string) error {
	return hostErr(t.q.DeleteHDTPTombstones(t.ctx, liteq.DeleteHDTPTombstonesParams{IdentityID: t.identityID, Root: root}))
}

func (t *hostTx) UseInvite(id string, now time.Time) (bool, error) {
	n, err := t.q.UseHDTPInvite(t.ctx, liteq.UseHDTPInviteParams{ID: id, Now: unix(now)})
	return n == 1, hostErr(err)
}

func (t *hostTx) ClaimReplay(key HDTPReplayKey, expire time.Time) (HDTPReplay, bool, error) {
	n, err := t.q.InsertHDTPReplay(t.ctx, liteq.InsertHDTPReplayParams{IdentityID: t.identityID, SenderRoot: key.SenderRoot, MsgID: key.MsgID,
		ExpireTime: unix(expire)})
	if err != nil {
		return HDTPReplay{}, false, hostErr(err)
	}
	r, err := t.q.GetHDTPReplay(t.ctx, liteq.GetHDTPReplayParams{IdentityID: t.identityID, SenderRoot: key.SenderRoot, MsgID: key.MsgID})
	return replayFromRow(r), n == 1, hostErr(err)
}

func (t *hostTx) SetReplayAnswer(key HDTPReplayKey, answer []byte) ([]byte, error) {
	if _, err := t.q.SetHDTPReplayAnswer(t.ctx, liteq.SetHDTPReplayAnswerParams{Answer: answer, IdentityID: t.identityID,
		SenderRoot: key.SenderRoot, MsgID: key.MsgID}); err != nil {
		return nil, hostErr(err)
	}
	r, err := t.q.GetHDTPReplay(t.ctx, liteq.GetHDTPReplayParams{IdentityID: t.identityID, SenderRoot: key.SenderRoot, MsgID: key.MsgID})
	return r.Answer, hostErr(err)
}

func (t *hostTx) Replay(key HDTPReplayKey) (HDTPReplay, error) {
	r, err := t.q.GetHDTPReplay(t.ctx, liteq.GetHDTPReplayParams{IdentityID: t.identityID, SenderRoot: key.SenderRoot, MsgID: key.MsgID})
	return replayFromRow(r), hostErr(err)
}

func (t *hostTx) SetReplayCall(key HDTPReplayKey, callID string) error {
	_, err := t.q.SetHDTPReplayCall(t.ctx, liteq.SetHDTPReplayCallParams{CallID: callID, IdentityID: t.identityID, SenderRoot: key.SenderRoot,
		MsgID: key.MsgID})
	return hostErr(err)
}

func (t *hostTx) ClaimCall(c HDTPCall) (HDTPCall, bool, error) {
	n, err := t.q.InsertHDTPCall(t.ctx, liteq.InsertHDTPCallParams{ID: c.ID, IdentityID: t.identityID, CallerRoot: c.CallerRoot, MsgID: c.MsgID,
		Tool: c.Tool, ReplyLeaf: c.ReplyLeaf, ReplyChain: boolInt(c.ReplyChain), EnvMsgID: c.EnvMsgID, RpcID: c.RPCID, CreateTime: unix(c.CreateTime)})
	if err != nil {
		return HDTPCall{}, false, hostErr(err)
	}
	if n == 1 {
		return HDTPCall{}, true, nil
	}
	if c.MsgID == "" {
		return HDTPCall{}, false, ErrConflict // an id collision: ids are random, so never
	}
	r, err := t.q.GetHDTPCallByMsgID(t.ctx, liteq.GetHDTPCallByMsgIDParams{IdentityID: t.identityID, CallerRoot: c.CallerRoot, MsgID: c.MsgID})
	return callFromRow(r), false, hostErr(err)
}

func (t *hostTx) Call(id string) (HDTPCall, error) {
	r, err := t.q.GetHDTPCall(t.ctx, id)
	if err == nil && r.IdentityID != t.identityID {
		return HDTPCall{}, ErrNotFound
	}
	return callFromRow(r), hostErr(err)
}

func (t *hostTx) FinishCall(id string, state HDTPCallState, result []byte, isError bool, now time.Time) (bool, error) {
	n, err := t.q.FinishHDTPCall(t.ctx, liteq.FinishHDTPCallParams{State: string(state), Result: result, IsError: boolInt(isError),
		CompleteTime: unix(now), ID: id})
	return n == 1, hostErr(err)
}

func (t *hostTx) ThreadOwner(threadID string) (string, error) {
	root, err := t.q.GetHDTPThreadOwner(t.ctx, liteq.GetHDTPThreadOwnerParams{IdentityID: t.identityID, ThreadID: threadID})
	return root, hostErr(err)
}

func (t *hostTx) AddThread(threadID, root string, now time.Time) error {
	return hostErr(t.q.InsertHDTPThread(t.ctx, liteq.InsertHDTPThreadParams{IdentityID: t.identityID, ThreadID: threadID, Root: root,
		CreateTime: unix(now)}))
}

func (t *hostTx) Take(now time.Time, buckets ...HDTPBucket) (bool, time.Duration, error) {
	// Lock in scope order, so two transactions never wait on each other.
	bs := slices.Clone(buckets)
	slices.SortFunc(bs, func(a, b HDTPBucket) int { return strings.Compare(a.Scope, b.Scope) })
	tokens := make([]int64, len(bs))
	for i, b := range bs {
		if err := t.q.EnsureHDTPBucket(t.ctx, liteq.EnsureHDTPBucketParams{Scope: b.Scope, Tokens: b.Burst * microTokens,
			NowMs: now.UnixMilli()}); err != nil {
			return false, 0, hostErr(err)
		}
		r, err := t.q.LockHDTPBucket(t.ctx, b.Scope)
		if err != nil {
			return false, 0, hostErr(err)
		}
		tokens[i] = refill(r, b, now)
	}
	for i, b := range bs {
		if tokens[i] < microTokens {
			return false, waitFor(tokens[i], b), nil
		}
	}
	for i, b := range bs {
		left := tokens[i] - microTokens
		full := now.UnixMilli() + ceilDiv((b.Burst*microTokens-left)*intervalMs(b), microTokens)
		if err := t.q.SetHDTPBucket(t.ctx, liteq.SetHDTPBucketParams{Tokens: left, UpdateMs: now.UnixMilli(), FullMs: full,
			Scope: b.Scope}); err != nil {
			return false, 0, hostErr(err)
		}
	}
	return true, 0, nil
}

func (t *hostTx) RecordAudit(e AuditEvent) error {
	p, err := auditParams(e)
	if err != nil {
		return err
	}
	_, err = t.q.InsertAuditEvent(t.ctx, p)
	return hostErr(err)
}

// refill is a bucket's tokens (in millionths) at now: the stored ones
// plus what the rate added since, at most the burst. A clock that went
// back adds nothing.
func refill(r liteq.HDTPBucket, b HDTPBucket, now time.Time) int64 {
	elapsed := max(0, now.UnixMilli()-r.UpdateMs)
	// A bucket idle for longer than it takes to fill is full (and the
	// product below stays far from overflowing).
	if elapsed >= b.Burst*intervalMs(b) {
		return b.Burst * microTokens
	}
	return min(b.Burst*microTokens, r.Tokens+elapsed*microTokens/intervalMs(b))
}

// waitFor is how long until tokens reach one whole token, rounded up to
// whole seconds, at least one.
func waitFor(tokens int64, b HDTPBucket) time.Duration {
	ms := ceilDiv((microTokens-tokens)*intervalMs(b), microTokens)
	return time.Duration(max(1, ceilDiv(ms, 1000))) * time.Second
}

func intervalMs(b HDTPBucket) int64 { return max(1, b.Interval.Milliseconds()) }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func splitWords(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, " ")
}

func contactFromRow(r liteq.HDTPContact) HDTPContact {
	return HDTPContact{IdentityID: r.IdentityID, Root: r.Root, Endpoint: r.Endpoint, Leaf: r.Leaf, LeafKID: r.LeafKid,
		LeafNotBefore: fromUnix(r.LeafNotBefore), State: HDTPContactState(r.State), WasActive: r.WasActive != 0,
		Permissions: splitWords(r.Permissions), Preset: r.Preset, TheirPermissions: splitWords(r.TheirPermissions), DisplayName: r.DisplayName,
		InviteLabel: r.InviteLabel, Note: r.Note, PendingEndpoint: r.PendingEndpoint, PendingLeaf: r.PendingLeaf,
		PendingLeafKID: r.PendingLeafKid, PendingSeenTime: fromUnixOrZero(r.PendingSeenTime), PendingBorrowedFrom: r.PendingBorrowedFrom,
		RequestTime: fromUnixOrZero(r.RequestTime), CreateTime: fromUnix(r.CreateTime), UpdateTime: fromUnix(r.UpdateTime)}
}

func contactsFromRows(rows []liteq.HDTPContact) []HDTPContact {
	out := make([]HDTPContact, len(rows))
	for i, r := range rows {
		out[i] = contactFromRow(r)
	}
	return out
}

func contactParams(c HDTPContact) liteq.UpsertHDTPContactParams {
	return liteq.UpsertHDTPContactParams{IdentityID: c.IdentityID, Root: c.Root, Endpoint: c.Endpoint, Leaf: c.Leaf, LeafKid: c.LeafKID,
		LeafNotBefore: unix(c.LeafNotBefore), State: string(c.State), WasActive: boolInt(c.WasActive),
		Permissions: strings.Join(c.Permissions, " "), Preset: c.Preset, TheirPermissions: strings.Join(c.TheirPermissions, " "),
		DisplayName: c.DisplayName, InviteLabel: c.InviteLabel, Note: c.Note, PendingEndpoint: c.PendingEndpoint, PendingLeaf: c.PendingLeaf,
		PendingLeafKid: c.PendingLeafKID, PendingSeenTime: unixOrZero(c.PendingSeenTime), PendingBorrowedFrom: c.PendingBorrowedFrom,
		RequestTime: unixOrZero(c.RequestTime), CreateTime: unix(c.CreateTime), UpdateTime: unix(c.UpdateTime)}
}

func inviteFromRow(r liteq.HDTPInvite) HDTPInvite {
	return HDTPInvite{ID: r.ID, IdentityID: r.IdentityID, TokenHash: r.TokenHash, ExpireTime: fromUnix(r.ExpireTime), MaxUses: r.MaxUses,
		Uses: r.Uses, AutoAccept: r.AutoAccept != 0, Preset: r.Preset, Label: r.Label, CreateTime: fromUnix(r.CreateTime)}
}

func replayFromRow(r liteq.HDTPReplay) HDTPReplay {
	return HDTPReplay{HDTPReplayKey: HDTPReplayKey{SenderRoot: r.SenderRoot, MsgID: r.MsgID}, CallID: r.CallID, Answer: r.Answer,
		ExpireTime: fromUnix(r.ExpireTime)}
}

func callFromRow(r liteq.HDTPCall) HDTPCall {
	return HDTPCall{ID: r.ID, IdentityID: r.IdentityID, CallerRoot: r.CallerRoot, MsgID: r.MsgID, Tool: r.Tool, State: HDTPCallState(r.State),
		Result: r.Result, IsError: r.IsError != 0, ReplyLeaf: r.ReplyLeaf, ReplyChain: r.ReplyChain != 0, EnvMsgID: r.EnvMsgID, RPCID: r.RpcID,
		CreateTime: fromUnix(r.CreateTime), CompleteTime: fromUnixOrZero(r.CompleteTime)}
}
