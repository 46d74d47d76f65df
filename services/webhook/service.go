// Package webhook implements pact.v1.WebhookService: the operator's HTTPS
// destinations for the audit trail (created with a signing secret shown
// once, filtered by event kind and Brand) and their delivery state, read by
// the CLI (pactd webhook) and the console alike. Delivery itself is
// core/webhook's.
package webhook

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/paging"
	corewebhook "pactd.dev/pactd/core/webhook"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/brandid"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/stdwebhook"
	"pactd.dev/pactd/internal/urlrule"
)

// Bounds of a destination's fields.
const (
	MaxDescription = 200
	// MaxWebhooks bounds the destinations of one Provider: each event is
	// queued once per matching destination, in the transaction that
	// records it.
	MaxWebhooks = 100
	maxIDLen    = 64
	// DefaultPreviousValidFor is how long a rotated-out secret stays valid
	// when RotateWebhookSecret does not say: a day for the receiver's
	// operator to install the new one.
	DefaultPreviousValidFor = 24 * time.Hour
	// MaxPreviousValidFor bounds that overlap: a secret being replaced
	// should not sign for long after.
	MaxPreviousValidFor = 7 * 24 * time.Hour
)

var (
	webhookIDPattern = regexp.MustCompile(`^wh_[0-9A-Z]{26}$`)
)

// Store is the storage the service needs (db.Store satisfies it).
type Store interface {
	CreateWebhookDestination(ctx context.Context, d db.WebhookDestination) (db.WebhookDestination, error)
	GetWebhookDestination(ctx context.Context, id string) (db.WebhookDestination, error)
	ListWebhookDestinations(ctx context.Context, afterID string, limit int) ([]db.WebhookDestination, error)
	UpdateWebhookDestination(ctx context.Context, id string, u db.WebhookUpdate) (db.WebhookDestination, error)
	RotateWebhookSecret(ctx context.Context, id string, sealed []byte, previousUntil, now time.Time) (db.WebhookDestination, error)
	DeleteWebhookDestination(ctx context.Context, id string) error
	WebhookStats(ctx context.Context, destinationID string) ([]db.WebhookStats, error)
	ListWebhookDeliveries(ctx context.Context, f db.WebhookDeliveryFilter, beforeID int64, limit int) ([]db.WebhookDelivery, error)
	AuditEventsByID(ctx context.Context, ids []int64) (map[int64]db.AuditEvent, error)
	RetryDeadWebhookDeliveries(ctx context.Context, destinationID string, deliveryID int64, now time.Time) (int64, error)
}

// Sealer seals signing secrets (provkeys.SecretBox).
type Sealer interface {
	Seal(purpose, id string, plaintext []byte) []byte
}

// Deps are the service's collaborators.
type Deps struct {
	Store   Store
	Secrets Sealer
	// URLs is the rule destination URLs follow: Dev allows http to
	// loopback (PACT_DEV), AllowHosts private hosts
	// (PACT_WEBHOOK_ALLOW_HOSTS).
	URLs urlrule.Policy
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
}

// Service implements pactv1connect.WebhookServiceHandler.
type Service struct {
	pactv1connect.UnimplementedWebhookServiceHandler
	d Deps
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{d: d}
}

// kinds are the stored kinds by API kind: db.AuditKinds lists them in the
// API's order, from 1.
func kindToDB(k pactv1.AuditEventKind) (db.AuditKind, bool) {
	if k <= 0 || int(k) > len(db.AuditKinds) {
		return "", false
	}
	return db.AuditKinds[k-1], true
}

func kindToProto(k db.AuditKind) pactv1.AuditEventKind {
	if i := slices.Index(db.AuditKinds, k); i >= 0 {
		return pactv1.AuditEventKind(i + 1)
	}
	return pactv1.AuditEventKind_AUDIT_EVENT_KIND_UNSPECIFIED
}

// CreateWebhook validates and stores a destination with a new secret.
func (s *Service) CreateWebhook(ctx context.Context, req *pactv1.CreateWebhookRequest) (*pactv1.CreateWebhookResponse, error) {
	var v rpcerr.Violations
	url := s.checkURL(&v, "url", req.GetUrl())
	checkDescription(&v, "description", req.GetDescription())
	kinds := checkKinds(&v, "event_kinds", req.GetEventKinds())
	brands := checkBrands(&v, "brand_ids", req.GetBrandIds())
	if err := v.Err(); err != nil {
		return nil, err
	}
	if list, err := s.d.Store.ListWebhookDestinations(ctx, "", MaxWebhooks); err != nil {
		return nil, s.fault(ctx, "count webhooks", err)
	} else if len(list) >= MaxWebhooks {
		return nil, rpcerr.FailedPrecondition.Err(
			"at most " + strconv.Itoa(MaxWebhooks) + " webhooks; delete one first")
	}
	now := s.d.Now()
	id := ids.New("wh_", now)
	secret := stdwebhook.NewSecret()
	d, err := s.d.Store.CreateWebhookDestination(ctx, db.WebhookDestination{
		ID: id, URL: url, Description: req.GetDescription(), Kinds: kinds, BrandIDs: brands, Enabled: !req.GetDisabled(),
		SealedSecret: s.d.Secrets.Seal(corewebhook.SecretPurpose, id, []byte(secret)), CreateTime: now, UpdateTime: now,
	})
	if err != nil {
		return nil, s.fault(ctx, "create webhook", err)
	}
	s.d.Logger.InfoContext(ctx, "webhook created", slog.String("webhook_id", id), slog.Bool("enabled", d.Enabled))
	return &pactv1.CreateWebhookResponse{Webhook: toProto(d, db.WebhookStats{}, now), Secret: secret}, nil
}

// GetWebhook returns a destination with its delivery state.
func (s *Service) GetWebhook(ctx context.Context, req *pactv1.GetWebhookRequest) (*pactv1.GetWebhookResponse, error) {
	d, err := s.load(ctx, req.GetWebhookId())
	if err != nil {
		return nil, err
	}
	stats, err := s.d.Store.WebhookStats(ctx, d.ID)
	if err != nil {
		return nil, s.fault(ctx, "webhook stats", err)
	}
	var st db.WebhookStats
	if len(stats) == 1 {
		st = stats[0]
	}
	return &pactv1.GetWebhookResponse{Webhook: toProto(d, st, s.d.Now())}, nil
}

// ListWebhooks lists destinations by id, each with its delivery state.
func (s *Service) ListWebhooks(ctx context.Context, req *pactv1.ListWebhooksRequest) (*pactv1.ListWebhooksResponse, error) {
	p, err := paging.Parse(req.GetPage())
	if err != nil {
		return nil, err
	}
	list, err := s.d.Store.ListWebhookDestinations(ctx, p.AfterID, p.Size)
	if err != nil {
		return nil, s.fault(ctx, "list webhooks", err)
	}
	stats, err := s.d.Store.WebhookStats(ctx, "")
	if err != nil {
		return nil, s.fault(ctx, "webhook stats", err)
	}
	byID := map[string]db.WebhookStats{}
	for _, st := range stats {
		byID[st.DestinationID] = st
	}
	out := &pactv1.ListWebhooksResponse{}
	now := s.d.Now()
	for _, d := range list {
		out.Webhooks = append(out.Webhooks, toProto(d, byID[d.ID], now))
	}
	if len(list) > 0 {
		out.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].ID)
	}
	return out, nil
}

// UpdateWebhook changes the fields update_mask names.
//
// It and RotateWebhookSecret each write only the columns they own, in one
// statement (db.WebhookStore's UpdateWebhookDestination and
// RotateWebhookSecret), instead of reading the row, changing it and writing
// all of it back, which lets one undo the other when they run at once (an
// update restoring the secret a rotation replaced, a rotation restoring the
// URL an update changed). That is simpler than a version check with
// retries: neither write depends on a column the other sets, and the one
// value a rotation carries over, the current secret, is moved in SQL.
func (s *Service) UpdateWebhook(ctx context.Context, req *pactv1.UpdateWebhookRequest) (*pactv1.UpdateWebhookResponse, error) {
	w := req.GetWebhook()
	// Loaded first so that an unknown destination is NotFound whatever
	// else the request holds; the update below does not write what it read.
	d, err := s.load(ctx, w.GetWebhookId())
	if err != nil {
		return nil, err
	}
	var v rpcerr.Violations
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		v.Add("update_mask", "name at least one of url, description, event_kinds, brand_ids, enabled")
	}
	var u db.WebhookUpdate
	for _, p := range paths {
		switch p {
		case "url":
			url := s.checkURL(&v, "webhook.url", w.GetUrl())
			u.URL = &url
		case "description":
			checkDescription(&v, "webhook.description", w.GetDescription())
			desc := w.GetDescription()
			u.Description = &desc
		case "event_kinds":
			kinds := checkKinds(&v, "webhook.event_kinds", w.GetEventKinds())
			u.Kinds = &kinds
		case "brand_ids":
			brands := checkBrands(&v, "webhook.brand_ids", w.GetBrandIds())
			u.BrandIDs = &brands
		case "enabled":
			enabled := w.GetEnabled()
			u.Enabled = &enabled
		default:
			v.Add("update_mask", "path %q cannot be updated (allowed: url, description, event_kinds, brand_ids, enabled)", p)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := s.d.Now()
	u.UpdateTime = now
	if d, err = s.d.Store.UpdateWebhookDestination(ctx, d.ID, u); err != nil {
		return nil, s.storeErr(ctx, "update webhook", err)
	}
	return &pactv1.UpdateWebhookResponse{Webhook: toProto(d, db.WebhookStats{}, now)}, nil
}

// DeleteWebhook deletes a destination and its deliveries.
func (s *Service) DeleteWebhook(ctx context.Context, req *pactv1.DeleteWebhookRequest) (*pactv1.DeleteWebhookResponse, error) {
	if err := checkID(req.GetWebhookId()); err != nil {
		return nil, err
	}
	if err := s.d.Store.DeleteWebhookDestination(ctx, req.GetWebhookId()); err != nil {
		return nil, s.storeErr(ctx, "delete webhook", err)
	}
	s.d.Logger.InfoContext(ctx, "webhook deleted", slog.String("webhook_id", req.GetWebhookId()))
	return &pactv1.DeleteWebhookResponse{}, nil
}

// RotateWebhookSecret replaces the signing secret; the one it replaces
// stays valid for the overlap asked (DefaultPreviousValidFor unless set).
// The store moves the current sealed secret to the previous one as it is,
// in the statement that writes the new one (see UpdateWebhook): it is
// sealed for this destination under the same purpose, so it needs no
// re-sealing, and any older previous secret is dropped.
func (s *Service) RotateWebhookSecret(ctx context.Context, req *pactv1.RotateWebhookSecretRequest) (*pactv1.RotateWebhookSecretResponse, error) {
	overlap := DefaultPreviousValidFor
	if pv := req.GetPreviousValidFor(); pv != nil {
		if err := pv.CheckValid(); err != nil || pv.AsDuration() < 0 || pv.AsDuration() > MaxPreviousValidFor {
			return nil, rpcerr.InvalidField("previous_valid_for", "must be from 0 to %s", MaxPreviousValidFor)
		}
		overlap = pv.AsDuration()
	}
	id := req.GetWebhookId()
	if err := checkID(id); err != nil {
		return nil, err
	}
	now := s.d.Now()
	secret := stdwebhook.NewSecret()
	var previousUntil time.Time
	if overlap > 0 {
		// Kept to the millisecond, as stored: the end reported is the end
		// the dispatcher applies.
		previousUntil = now.Add(overlap).Truncate(time.Millisecond)
	}
	sealed := s.d.Secrets.Seal(corewebhook.SecretPurpose, id, []byte(secret))
	if _, err := s.d.Store.RotateWebhookSecret(ctx, id, sealed, previousUntil, now); err != nil {
		return nil, s.storeErr(ctx, "rotate webhook secret", err)
	}
	s.d.Logger.InfoContext(ctx, "webhook secret rotated", slog.String("webhook_id", id), slog.Duration("previous_valid_for", overlap))
	return &pactv1.RotateWebhookSecretResponse{Secret: secret, PreviousSecretExpireTime: ts(previousUntil)}, nil
}

// statuses maps the API's delivery statuses to the stored states.
var statuses = map[pactv1.WebhookDeliveryStatus]db.DeliveryState{
	pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_PENDING:   db.DeliveryPending,
	pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_DELIVERED: db.DeliveryDelivered,
	pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_DEAD:      db.DeliveryDead,
}

// ListWebhookDeliveries lists deliveries newest first.
func (s *Service) ListWebhookDeliveries(ctx context.Context, req *pactv1.ListWebhookDeliveriesRequest) (*pactv1.ListWebhookDeliveriesResponse, error) {
	var v rpcerr.Violations
	f := db.WebhookDeliveryFilter{DestinationID: req.GetWebhookId()}
	if f.DestinationID != "" && !webhookIDPattern.MatchString(f.DestinationID) {
		v.Add("webhook_id", "is not a webhook id")
	}
	if st := req.GetStatus(); st != pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_UNSPECIFIED {
		var ok bool
		if f.State, ok = statuses[st]; !ok {
			v.Add("status", "is not a delivery status")
		}
	}
	p, perr := paging.Parse(req.GetPage())
	var before int64
	if perr == nil && p.AfterID != "" {
		var err error
		if before, err = strconv.ParseInt(p.AfterID, 10, 64); err != nil || before <= 0 {
			v.Add("page.page_token", "is not a token this listing returned")
		}
	}
	if perr != nil {
		return nil, perr
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	list, err := s.d.Store.ListWebhookDeliveries(ctx, f, before, p.Size)
	if err != nil {
		return nil, s.fault(ctx, "list webhook deliveries", err)
	}
	eventIDs := make([]int64, len(list))
	for i, d := range list {
		eventIDs[i] = d.EventID
	}
	events, err := s.d.Store.AuditEventsByID(ctx, eventIDs)
	if err != nil {
		return nil, s.fault(ctx, "load delivered events", err)
	}
	out := &pactv1.ListWebhookDeliveriesResponse{}
	for _, d := range list {
		out.Deliveries = append(out.Deliveries, deliveryToProto(d, events[d.EventID]))
	}
	if len(list) > 0 {
		out.NextPageToken = paging.Next(len(list), p.Size, strconv.FormatInt(list[len(list)-1].ID, 10))
	}
	return out, nil
}

// RetryWebhookDeliveries makes dead deliveries pending again.
func (s *Service) RetryWebhookDeliveries(ctx context.Context, req *pactv1.RetryWebhookDeliveriesRequest) (*pactv1.RetryWebhookDeliveriesResponse, error) {
	d, err := s.load(ctx, req.GetWebhookId())
	if err != nil {
		return nil, err
	}
	var one int64
	if id := req.GetDeliveryId(); id != "" {
		if one, err = strconv.ParseInt(id, 10, 64); err != nil || one <= 0 || strconv.FormatInt(one, 10) != id {
			return nil, rpcerr.InvalidField("delivery_id", "is not a delivery id")
		}
	}
	n, err := s.d.Store.RetryDeadWebhookDeliveries(ctx, d.ID, one, s.d.Now())
	if err != nil {
		return nil, s.fault(ctx, "retry webhook deliveries", err)
	}
	s.d.Logger.InfoContext(ctx, "webhook deliveries retried", slog.String("webhook_id", d.ID), slog.Int64("count", n))
	return &pactv1.RetryWebhookDeliveriesResponse{Retried: n}, nil
}

func (s *Service) checkURL(v *rpcerr.Violations, field, raw string) string {
	if _, err := s.d.URLs.Check(raw, true); err != nil {
		v.Add(field, "%s", err.Error())
	}
	return raw
}

func checkDescription(v *rpcerr.Violations, field, s string) {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxDescription {
		v.Add(field, "must be valid UTF-8 of at most %d characters", MaxDescription)
	}
}

func checkKinds(v *rpcerr.Violations, field string, ks []pactv1.AuditEventKind) []db.AuditKind {
	if len(ks) > db.MaxWebhookFilterItems {
		v.Add(field, "must list at most %d kinds", db.MaxWebhookFilterItems)
		return nil
	}
	var out []db.AuditKind
	for i, k := range ks {
		dk, ok := kindToDB(k)
		switch {
		case !ok:
			v.Add(field+"["+strconv.Itoa(i)+"]", "is not an audit event kind")
		case slices.Contains(out, dk):
			v.Add(field+"["+strconv.Itoa(i)+"]", "is listed twice")
		default:
			out = append(out, dk)
		}
	}
	return out
}

func checkBrands(v *rpcerr.Violations, field string, bs []string) []string {
	if len(bs) > db.MaxWebhookFilterItems {
		v.Add(field, "must list at most %d Brands", db.MaxWebhookFilterItems)
		return nil
	}
	var out []string
	for i, b := range bs {
		switch {
		case !brandid.Valid(b):
			v.Add(field+"["+strconv.Itoa(i)+"]", "is not a Brand id")
		case slices.Contains(out, b):
			v.Add(field+"["+strconv.Itoa(i)+"]", "is listed twice")
		default:
			out = append(out, b)
		}
	}
	return out
}

func checkID(id string) error {
	if id == "" {
		return rpcerr.InvalidField("webhook_id", "is required")
	}
	if len(id) > maxIDLen || !webhookIDPattern.MatchString(id) {
		return rpcerr.NotFound("webhook") // no destination can have such an id
	}
	return nil
}

func (s *Service) load(ctx context.Context, id string) (db.WebhookDestination, error) {
	if err := checkID(id); err != nil {
		return db.WebhookDestination{}, err
	}
	d, err := s.d.Store.GetWebhookDestination(ctx, id)
	if err != nil {
		return db.WebhookDestination{}, s.storeErr(ctx, "load webhook", err)
	}
	return d, nil
}

func (s *Service) storeErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return rpcerr.NotFound("webhook")
	}
	return s.fault(ctx, op, err)
}

func (s *Service) fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, s.d.Logger, op, err)
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// toProto is the destination as the API shows it at now: the previous
// secret's end only while it is still valid.
func toProto(d db.WebhookDestination, st db.WebhookStats, now time.Time) *pactv1.Webhook {
	w := &pactv1.Webhook{
		WebhookId: d.ID, Url: d.URL, Description: d.Description, BrandIds: d.BrandIDs, Enabled: d.Enabled,
		CreateTime: ts(d.CreateTime), UpdateTime: ts(d.UpdateTime),
		DeliveryState: &pactv1.WebhookDeliveryState{
			Pending: st.Pending, Dead: st.Dead, Delivered: st.Delivered, OldestPendingTime: ts(st.OldestPending),
			LastAttemptTime: ts(st.LastAttempt), LastDeliveredTime: ts(st.LastDelivered), LastFailureTime: ts(st.LastFailure),
			LastFailureStatus: int32(st.LastStatus), LastFailureError: st.LastError,
		},
	}
	for _, k := range d.Kinds {
		w.EventKinds = append(w.EventKinds, kindToProto(k))
	}
	if corewebhook.PreviousValid(d, now) {
		w.PreviousSecretExpireTime = ts(d.PreviousUntil)
	}
	return w
}

func deliveryToProto(d db.WebhookDelivery, e db.AuditEvent) *pactv1.WebhookDelivery {
	out := &pactv1.WebhookDelivery{
		DeliveryId: strconv.FormatInt(d.ID, 10), WebhookId: d.DestinationID, EventId: strconv.FormatInt(d.EventID, 10),
		EventKind: kindToProto(e.Kind), BrandId: e.BrandID, MessageId: corewebhook.MessageID(d.DestinationID, d.EventID),
		Attempts: int32(d.Attempts), LastAttemptTime: ts(d.LastAttempt), LastStatus: int32(d.LastStatus), LastError: d.LastError,
		DoneTime: ts(d.Done),
	}
	for p, st := range statuses {
		if st == d.State {
			out.Status = p
		}
	}
	if d.State == db.DeliveryPending {
		out.NextAttemptTime = ts(d.NextAttempt)
	}
	return out
}
