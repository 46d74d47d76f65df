package db

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"pactd.dev/pactd/db/internal/liteq"
)

// DeliveryState is where a webhook delivery is in its life.
type DeliveryState string

// The delivery states. The values are stored; never change one.
const (
	// DeliveryPending is to be sent at NextAttempt or later.
	DeliveryPending DeliveryState = "pending"
	// DeliveryDelivered was acknowledged by the receiver (a 2xx answer).
	DeliveryDelivered DeliveryState = "delivered"
	// DeliveryDead reached the attempt or age bound; an operator may
	// retry it (RetryDeadWebhookDeliveries).
	DeliveryDead DeliveryState = "dead"
)

// WebhookDestination is an HTTPS endpoint audit events are pushed to.
type WebhookDestination struct {
	// ID is the destination's id ("wh_…").
	ID string
	// URL is where deliveries are POSTed.
	URL string
	// Description is the operator's note.
	Description string
	// Kinds are the audit event kinds sent; empty sends every kind.
	Kinds []AuditKind
	// BrandIDs are the Brands whose events are sent; empty sends every
	// event, including those that name no Brand.
	BrandIDs []string
	// Enabled says whether new events are queued for it.
	Enabled bool
	// SealedSecret is the signing secret sealed with the key-encryption
	// key; only the service that signs opens it.
	SealedSecret []byte
	// PreviousSealedSecret is the secret SealedSecret replaced, sealed the
	// same way, and PreviousUntil the end of its overlap window (kept to
	// the millisecond): until then deliveries are signed with it too. Empty and zero when there is
	// none (never rotated, or rotated without an overlap).
	PreviousSealedSecret []byte
	PreviousUntil        time.Time
	// CreateTime and UpdateTime are set by the caller.
	CreateTime, UpdateTime time.Time
}

// WebhookUpdate is a change of a destination's settings: a nil field is
// left as stored.
type WebhookUpdate struct {
	URL, Description *string
	Kinds            *[]AuditKind
	BrandIDs         *[]string
	Enabled          *bool
	// UpdateTime is set by the caller.
	UpdateTime time.Time
}

// WebhookDelivery is one audit event's delivery to one destination.
type WebhookDelivery struct {
	// ID is the delivery's id, unique in the store.
	ID int64
	// DestinationID and EventID name the destination and the audit event.
	DestinationID string
	EventID       int64
	// State is pending, delivered or dead.
	State DeliveryState
	// Attempts counts the attempts made.
	Attempts int
	// Since starts the age bound: the event's time, or the operator's retry.
	Since time.Time
	// NextAttempt is when a pending delivery is due.
	NextAttempt time.Time
	// LeaseOwner and LeaseUntil name the process that claimed it and until
	// when; zero when unclaimed.
	LeaseOwner string
	LeaseUntil time.Time
	// LastAttempt, LastStatus and LastError describe the last attempt:
	// LastStatus is the HTTP status (0 when none came back), LastError is
	// empty when it succeeded.
	LastAttempt time.Time
	LastStatus  int
	LastError   string
	// Done is when it became delivered or dead.
	Done time.Time
}

// ClaimedDelivery is a delivery a process leased, with its audit event.
type ClaimedDelivery struct {
	WebhookDelivery
	// Event is the audit event; EventFound is false when the event was
	// pruned before the delivery was sent.
	Event      AuditEvent
	EventFound bool
}

// DeliveryOutcome is the result of one attempt.
type DeliveryOutcome struct {
	// ID and Owner name the delivery and the lease the attempt ran under.
	ID    int64
	Owner string
	// State is the delivery's state after the attempt.
	State DeliveryState
	// Now is when the attempt ended; NextAttempt when a pending delivery is
	// due again.
	Now, NextAttempt time.Time
	// Status is the HTTP status (0 for none), Error the failure ("" when
	// delivered).
	Status int
	Error  string
}

// WebhookDeliveryFilter selects deliveries; a zero field matches all.
type WebhookDeliveryFilter struct {
	DestinationID string
	State         DeliveryState
}

// WebhookStats is one destination's delivery state.
type WebhookStats struct {
	DestinationID string
	// Pending, Dead and Delivered count the deliveries in each state (the
	// delivered and dead ones are kept for a bounded time).
	Pending, Dead, Delivered int64
	// OldestPending is the age bound start of the oldest pending delivery;
	// zero when none is pending.
	OldestPending time.Time
	// LastAttempt and LastDelivered are the times of the last attempt and
	// the last acknowledged delivery; zero when none.
	LastAttempt, LastDelivered time.Time
	// LastFailure, LastStatus and LastError describe the most recent failed
	// attempt still kept; zero when none.
	LastFailure time.Time
	LastStatus  int
	LastError   string
}

// OutboxGauges are the outbox's totals for metrics.
type OutboxGauges struct {
	Pending, Dead int64
	// OldestPending is the age bound start of the oldest pending delivery;
	// zero when none is pending.
	OldestPending time.Time
}

// WebhookStore holds webhook destinations and the delivery outbox.
//
// Deliveries are queued by the store itself: inserting an audit event (by
// any AuditStore path) inserts, in the same transaction, one pending
// delivery per enabled destination whose filters match the event's kind
// and Brand. So an acknowledged audit event is never lost to a crash, and a
// destination receives the events recorded after it was created or
// enabled.
type WebhookStore interface {
	// CreateWebhookDestination inserts d, without a previous secret (a new
	// destination has none); ErrConflict when the id exists.
	CreateWebhookDestination(ctx context.Context, d WebhookDestination) (WebhookDestination, error)
	// GetWebhookDestination returns the destination with the id.
	GetWebhookDestination(ctx context.Context, id string) (WebhookDestination, error)
	// ListWebhookDestinations returns up to limit destinations with ids
	// after afterID, by id.
	ListWebhookDestinations(ctx context.Context, afterID string, limit int) ([]WebhookDestination, error)
	// UpdateWebhookDestination writes the settings u sets, and
	// u.UpdateTime, to the destination with the id, and returns it;
	// ErrNotFound when none. It is one statement that leaves every other
	// column as stored when it runs (the secrets among them), so it never
	// undoes a concurrent rotation or another update's other settings.
	UpdateWebhookDestination(ctx context.Context, id string, u WebhookUpdate) (WebhookDestination, error)
	// RotateWebhookSecret makes sealed the signing secret of the
	// destination with the id, and returns it; ErrNotFound when none. The
	// secret stored when it runs becomes the previous one, valid until
	// previousUntil (kept to the millisecond); a zero previousUntil drops
	// any previous secret instead. One statement, which leaves the settings
	// as stored: two rotations, or a rotation and an update, running at
	// once each keep the other's change.
	RotateWebhookSecret(ctx context.Context, id string, sealed []byte, previousUntil, now time.Time) (WebhookDestination, error)
	// DeleteWebhookDestination deletes the destination and its
	// deliveries; ErrNotFound when none.
	DeleteWebhookDestination(ctx context.Context, id string) error

	// WebhookStats returns the delivery state of the destination with the
	// id, or of every destination (by id) for "".
	WebhookStats(ctx context.Context, destinationID string) ([]WebhookStats, error)
	// ListWebhookDeliveries returns up to limit deliveries matching f with
	// ids below beforeID (0: from the newest), newest first.
	ListWebhookDeliveries(ctx context.Context, f WebhookDeliveryFilter, beforeID int64, limit int) ([]WebhookDelivery, error)
	// AuditEventsByID returns the kept audit events among ids, by id.
	AuditEventsByID(ctx context.Context, ids []int64) (map[int64]AuditEvent, error)
	// RetryDeadWebhookDeliveries makes the destination's dead deliveries
	// (all, or only deliveryID when not 0) pending again, due at now with a
	// new attempt count and age bound, and returns how many.
	RetryDeadWebhookDeliveries(ctx context.Context, destinationID string, deliveryID int64, now time.Time) (int64, error)

	// ClaimWebhookDeliveries leases up to limit pending deliveries due at
	// now, whose leases have ended, to owner until leaseUntil, and returns
	// them with their events. Two owners never hold one delivery's lease.
	ClaimWebhookDeliveries(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]ClaimedDelivery, error)
	// FinishWebhookDelivery records an attempt of a delivery whose lease
	// o.Owner still holds, and ends the lease; recorded is false when the
	// lease was lost (it ended and another owner claimed the delivery).
	FinishWebhookDelivery(ctx context.Context, o DeliveryOutcome) (recorded bool, err error)
	// ReleaseWebhookDeliveries ends owner's leases of the deliveries it did
	// not attempt, so another owner may claim them at once.
	ReleaseWebhookDeliveries(ctx context.Context, owner string, ids []int64) error
	// WebhookOutboxGauges returns the outbox's pending and dead totals.
	WebhookOutboxGauges(ctx context.Context) (OutboxGauges, error)
	// PurgeWebhookDeliveries deletes the deliveries delivered before
	// deliveredBefore and those dead before deadBefore (which is not after
	// deliveredBefore: dead ones are kept longer), and returns how many.
	PurgeWebhookDeliveries(ctx context.Context, deliveredBefore, deadBefore time.Time) (int64, error)
}

// MaxWebhookFilterItems bounds the kinds and the Brands of one
// destination's filters.
const MaxWebhookFilterItems = 64

func toMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMs(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func joinKinds(ks []AuditKind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, " ")
}

func splitKinds(s string) []AuditKind {
	var out []AuditKind
	for _, f := range strings.Fields(s) {
		out = append(out, AuditKind(f))
	}
	return out
}

func destinationParams(d WebhookDestination) liteq.CreateWebhookDestinationParams {
	return liteq.CreateWebhookDestinationParams{
		ID: d.ID, Url: d.URL, Description: d.Description, Kinds: joinKinds(d.Kinds), BrandIds: strings.Join(d.BrandIDs, " "),
		Enabled: d.Enabled, SealedSecret: d.SealedSecret, CreateTime: unix(d.CreateTime), UpdateTime: unix(d.UpdateTime),
	}
}

func destinationUpdateParams(id string, u WebhookUpdate) liteq.UpdateWebhookDestinationParams {
	p := liteq.UpdateWebhookDestinationParams{ID: id, UpdateTime: unix(u.UpdateTime)}
	if u.URL != nil {
		p.SetUrl, p.Url = true, *u.URL
	}
	if u.Description != nil {
		p.SetDescription, p.Description = true, *u.Description
	}
	if u.Kinds != nil {
		p.SetKinds, p.Kinds = true, joinKinds(*u.Kinds)
	}
	if u.BrandIDs != nil {
		p.SetBrandIds, p.BrandIds = true, strings.Join(*u.BrandIDs, " ")
	}
	if u.Enabled != nil {
		p.SetEnabled, p.Enabled = true, *u.Enabled
	}
	return p
}

func rotateParams(id string, sealed []byte, previousUntil, now time.Time) liteq.RotateWebhookSecretParams {
	return liteq.RotateWebhookSecretParams{ID: id, SealedSecret: sealed, PreviousUntilMs: toMs(previousUntil), UpdateTime: unix(now)}
}

func destinationFromRow(r liteq.WebhookDestination) WebhookDestination {
	return WebhookDestination{
		ID: r.ID, URL: r.Url, Description: r.Description, Kinds: splitKinds(r.Kinds), BrandIDs: strings.Fields(r.BrandIds),
		Enabled: r.Enabled, SealedSecret: r.SealedSecret, PreviousSealedSecret: r.PreviousSealedSecret, PreviousUntil: fromMs(r.PreviousUntilMs),
		CreateTime: fromUnix(r.CreateTime), UpdateTime: fromUnix(r.UpdateTime),
	}
}

func deliveryFromRow(r liteq.WebhookDelivery) WebhookDelivery {
	return WebhookDelivery{
		ID: r.ID, DestinationID: r.DestinationID, EventID: r.EventID, State: DeliveryState(r.State), Attempts: int(r.Attempts),
		Since: fromMs(r.SinceMs), NextAttempt: fromMs(r.NextAttemptMs), LeaseOwner: r.LeaseOwner, LeaseUntil: fromMs(r.LeaseUntilMs),
		LastAttempt: fromMs(r.LastAttemptMs), LastStatus: int(r.LastStatus), LastError: r.LastError, Done: fromMs(r.DoneMs),
	}
}

func outcomeParams(o DeliveryOutcome) liteq.FinishWebhookDeliveryParams {
	p := liteq.FinishWebhookDeliveryParams{
		State: string(o.State), NextAttemptMs: toMs(o.NextAttempt), NowMs: toMs(o.Now), LastStatus: int64(o.Status),
		LastError: o.Error, ID: o.ID, Owner: o.Owner,
	}
	if o.State != DeliveryPending {
		p.DoneMs = toMs(o.Now)
	}
	return p
}

func statsFromRow(r liteq.WebhookDeliveryStatsRow) WebhookStats {
	return WebhookStats{
		DestinationID: r.DestinationID, Pending: r.Pending, Dead: r.Dead, Delivered: r.Delivered,
		OldestPending: fromMs(r.OldestPendingMs), LastAttempt: fromMs(r.LastAttemptMs), LastDelivered: fromMs(r.LastDeliveredMs),
	}
}

func gaugesFromRows(rows []liteq.WebhookOutboxGaugesRow) OutboxGauges {
	var g OutboxGauges
	for _, r := range rows {
		switch DeliveryState(r.State) {
		case DeliveryPending:
			g.Pending, g.OldestPending = r.RowCount, fromMs(r.OldestSinceMs)
		case DeliveryDead:
			g.Dead = r.RowCount
		}
	}
	return g
}

// claimed joins claimed rows with their events, oldest due first (an
// UPDATE … RETURNING returns rows in no set order).
func claimed(rows []liteq.WebhookDelivery, events map[int64]AuditEvent) []ClaimedDelivery {
	out := make([]ClaimedDelivery, 0, len(rows))
	for _, r := range rows {
		e, ok := events[r.EventID]
		out = append(out, ClaimedDelivery{WebhookDelivery: deliveryFromRow(r), Event: e, EventFound: ok})
	}
	slices.SortFunc(out, func(a, b ClaimedDelivery) int {
		return cmp.Or(a.NextAttempt.Compare(b.NextAttempt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func eventsByID(rows []liteq.AuditEvent) (map[int64]AuditEvent, error) {
	out := make(map[int64]AuditEvent, len(rows))
	for _, r := range rows {
		e, err := auditFromRow(r)
		if err != nil {
			return nil, err
		}
		out[e.ID] = e
	}
	return out, nil
}

func deliveryIDs(rows []liteq.WebhookDelivery) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.EventID
	}
	return ids
}
