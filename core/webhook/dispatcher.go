package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/stdwebhook"
	"pactd.dev/pactd/token/jose"
)

// SecretPurpose is the purpose a destination's signing secret is sealed
// under (provkeys.SecretBox).
const SecretPurpose = "webhook-secret"

// Defaults of Config.
const (
	DefaultPollInterval = time.Second
	DefaultTimeout      = 10 * time.Second
	DefaultRetryBase    = 5 * time.Second
	DefaultRetryMax     = time.Hour
	DefaultMaxAttempts  = 100
	DefaultMaxAge       = 72 * time.Hour
	// DeliveredRetention and DeadRetention are how long finished
	// deliveries are kept (and shown) before Purge deletes them.
	DeliveredRetention = 7 * 24 * time.Hour
	DeadRetention      = 30 * 24 * time.Hour
	// batch is how many deliveries one claim leases; concurrency how many
	// are sent at once.
	batch       = 32
	concurrency = 8
	// maxErrorBytes bounds a recorded error.
	maxErrorBytes = 200
	// maxResponseBytes is how much of an answer is read (and discarded) so
	// the connection can be reused.
	maxResponseBytes = 4096
)

// Store is the storage the dispatcher needs (db.Store satisfies it).
type Store interface {
	GetWebhookDestination(ctx context.Context, id string) (db.WebhookDestination, error)
	ClaimWebhookDeliveries(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]db.ClaimedDelivery, error)
	FinishWebhookDelivery(ctx context.Context, o db.DeliveryOutcome) (bool, error)
	ReleaseWebhookDeliveries(ctx context.Context, owner string, ids []int64) error
	WebhookOutboxGauges(ctx context.Context) (db.OutboxGauges, error)
	PurgeWebhookDeliveries(ctx context.Context, deliveredBefore, deadBefore time.Time) (int64, error)
}

// SecretOpener opens a destination's sealed secret (provkeys.SecretBox).
type SecretOpener interface {
	Open(purpose, id string, sealed []byte) ([]byte, error)
}

// Config are the dispatcher's collaborators and bounds.
type Config struct {
	Store   Store
	Secrets SecretOpener
	// Owner names this replica in leases; it must differ between replicas
	// (New makes one when empty).
	Owner string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// NewTicker starts the ticker Run polls on, on the same clock as Now
	// (a test's clock moves both); time.NewTicker's when nil.
	NewTicker func(d time.Duration) (ticks <-chan time.Time, stop func())
	Logger    *slog.Logger
	// Registerer receives the metrics; none when nil.
	Registerer prometheus.Registerer
	// PollInterval is how often due deliveries are looked for.
	PollInterval time.Duration
	// Timeout bounds one attempt; the lease is twice it plus a poll.
	Timeout time.Duration
	// RetryBase is the wait after the first failed attempt; each further
	// failure doubles it up to RetryMax. Each wait is drawn at random from
	// its upper half (jitter).
	RetryBase, RetryMax time.Duration
	// MaxAttempts and MaxAge bound a delivery: after that many attempts,
	// or once its event is that old (or the operator's retry), a failed
	// attempt leaves it dead.
	MaxAttempts int
	MaxAge      time.Duration
	// Dev allows http:// to loopback hosts (PACT_DEV); AllowHosts are
	// hosts whose addresses may be private (PACT_WEBHOOK_ALLOW_HOSTS).
	Dev        bool
	AllowHosts []string
}

// Dispatcher sends the outbox's due deliveries.
type Dispatcher struct {
	cfg     Config
	client  *http.Client
	leaseOf time.Duration
	m       *metrics
	// claimFailing is whether the last claim failed (Run's goroutine only).
	claimFailing bool
}

// New builds a dispatcher; Run starts it.
func New(cfg Config) *Dispatcher {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewTicker == nil {
		cfg.NewTicker = func(d time.Duration) (<-chan time.Time, func()) { t := time.NewTicker(d); return t.C, t.Stop }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Owner == "" {
		cfg.Owner = newOwner()
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.PollInterval, DefaultPollInterval}, {&cfg.Timeout, DefaultTimeout}, {&cfg.RetryBase, DefaultRetryBase},
		{&cfg.RetryMax, DefaultRetryMax}, {&cfg.MaxAge, DefaultMaxAge}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	d := &Dispatcher{cfg: cfg, leaseOf: 2*cfg.Timeout + cfg.PollInterval, m: newMetrics(cfg.Registerer)}
	d.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil, // never a proxy from the environment: the dial guard must see the destination
			DialContext:           d.dial,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   concurrency,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		Timeout:       cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return d
}

// newOwner is a lease owner name unique to this process: its pid and 64
// random bits.
func newOwner() string {
	return fmt.Sprintf("pactd-%d-%016x", os.Getpid(), rand.Uint64())
}

// Run sends due deliveries until ctx ends; then it lets the attempts under
// way finish (each within Timeout) and hands back the leases of the
// deliveries it had claimed but not attempted.
func (d *Dispatcher) Run(ctx context.Context) {
	ticks, stop := d.cfg.NewTicker(d.cfg.PollInterval)
	defer stop()
	for {
		// At once, then every PollInterval; a full batch means more are
		// due: claim again at once.
		for d.Poll(ctx) == batch && ctx.Err() == nil {
		}
		d.refreshGauges(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
	}
}

// Poll claims one batch of due deliveries, attempts each, and returns how
// many it claimed.
func (d *Dispatcher) Poll(ctx context.Context) int {
	now := d.cfg.Now()
	claimed, err := d.cfg.Store.ClaimWebhookDeliveries(ctx, d.cfg.Owner, now, now.Add(d.leaseOf), batch)
	if err != nil {
		// One line when the store starts failing, one when it is back: not
		// one per poll through an outage.
		if ctx.Err() == nil && !d.claimFailing {
			d.claimFailing = true
			d.cfg.Logger.WarnContext(ctx, "webhook: cannot claim deliveries; retrying every poll", slog.String("error", err.Error()))
		}
		return 0
	}
	if d.claimFailing {
		d.claimFailing = false
		d.cfg.Logger.InfoContext(ctx, "webhook: claiming deliveries again")
	}
	if len(claimed) == 0 {
		return 0
	}
	dests := map[string]*target{}
	var (
		wg      sync.WaitGroup
		sem     = make(chan struct{}, concurrency)
		mu      sync.Mutex
		skipped []int64
	)
	// Attempts run on a context of their own: shutting down lets the ones
	// under way finish within Timeout rather than cutting them off
	// half-sent.
	work := context.WithoutCancel(ctx)
	for _, c := range claimed {
		if ctx.Err() != nil {
			mu.Lock()
			skipped = append(skipped, c.ID)
			mu.Unlock()
			continue
		}
		tg, ok := dests[c.DestinationID]
		if !ok {
			tg = d.target(work, c.DestinationID)
			dests[c.DestinationID] = tg
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			d.attempt(work, tg, c)
		})
	}
	wg.Wait()
	if len(skipped) > 0 {
		rctx, cancel := context.WithTimeout(work, d.cfg.Timeout)
		defer cancel()
		if err := d.cfg.Store.ReleaseWebhookDeliveries(rctx, d.cfg.Owner, skipped); err != nil {
			d.cfg.Logger.WarnContext(ctx, "webhook: release deliveries", slog.String("error", err.Error()))
		}
	}
	return len(claimed)
}

// target is a destination as one batch sends to it.
type target struct {
	id  string
	url string
	key []byte
	// prevKey is the previous secret's key, signing too until prevUntil;
	// nil when there is none or its window had ended when it was loaded.
	prevKey   []byte
	prevUntil time.Time
	err       error // why nothing can be sent to it
}

// PreviousValid reports whether d's previous secret still signs at now:
// there is one and its overlap window has not ended.
func PreviousValid(d db.WebhookDestination, now time.Time) bool {
	return len(d.PreviousSealedSecret) > 0 && now.Before(d.PreviousUntil)
}

// keys are the keys a delivery sent at now is signed with: the current
// one, then the previous one while its window lasts.
func (tg *target) keys(now time.Time) [][]byte {
	if tg.prevKey != nil && now.Before(tg.prevUntil) {
		return [][]byte{tg.key, tg.prevKey}
	}
	return [][]byte{tg.key}
}

func (d *Dispatcher) target(ctx context.Context, id string) *target {
	dest, err := d.cfg.Store.GetWebhookDestination(ctx, id)
	if err != nil {
		return &target{id: id, err: fmt.Errorf("load destination: %w", err)}
	}
	secret, err := d.cfg.Secrets.Open(SecretPurpose, id, dest.SealedSecret)
	if err != nil {
		return &target{id: id, err: errors.New("the signing secret does not open with this key-encryption key")}
	}
	key, err := stdwebhook.ParseSecret(string(secret))
	if err != nil {
		return &target{id: id, err: err}
	}
	tg := &target{id: id, url: dest.URL, key: key}
	if PreviousValid(dest, d.cfg.Now()) {
		// The previous secret is sealed as the current one was; a receiver
		// still holding it would refuse deliveries signed without it, so
		// one that does not open stops the batch the same way.
		prev, err := d.cfg.Secrets.Open(SecretPurpose, id, dest.PreviousSealedSecret)
		if err != nil {
			return &target{id: id, err: errors.New("the previous signing secret does not open with this key-encryption key")}
		}
		if tg.prevKey, err = stdwebhook.ParseSecret(string(prev)); err != nil {
			return &target{id: id, err: err}
		}
		tg.prevUntil = dest.PreviousUntil
	}
	return tg
}

// MessageID is the webhook-id of the delivery of event to destination: the
// same on every attempt, unique across destinations and installations (the
// destination id is random).
func MessageID(destinationID string, eventID int64) string {
	return destinationID + "_" + strconv.FormatInt(eventID, 10)
}

// attempt sends one delivery and records the outcome.
func (d *Dispatcher) attempt(ctx context.Context, tg *target, c db.ClaimedDelivery) {
	status, err := 0, tg.err
	if err == nil && !c.EventFound {
		err = errors.New("the audit event was pruned before it was delivered")
	}
	if err == nil {
		status, err = d.send(ctx, tg, c)
	}
	now := d.cfg.Now()
	o := db.DeliveryOutcome{ID: c.ID, Owner: d.cfg.Owner, Now: now, Status: status, State: db.DeliveryDelivered}
	outcome := "delivered"
	if err != nil {
		o.Error = boundError(err)
		attempts := c.Attempts + 1
		switch {
		case !c.EventFound || attempts >= d.cfg.MaxAttempts || now.Sub(c.Since) >= d.cfg.MaxAge:
			o.State, outcome = db.DeliveryDead, "dead"
		default:
			o.State, outcome = db.DeliveryPending, "retry"
			o.NextAttempt = now.Add(d.backoff(attempts))
		}
	}
	rctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	recorded, ferr := d.cfg.Store.FinishWebhookDelivery(rctx, o)
	switch {
	case ferr != nil:
		// The lease ends by itself; the delivery is sent again then.
		d.cfg.Logger.WarnContext(ctx, "webhook: record attempt", slog.Int64("delivery_id", c.ID), slog.String("error", ferr.Error()))
	case !recorded:
		d.cfg.Logger.InfoContext(ctx, "webhook: lease lost before the attempt was recorded", slog.Int64("delivery_id", c.ID))
	}
	d.m.deliveries.WithLabelValues(outcome).Inc()
	if outcome == "dead" {
		d.cfg.Logger.WarnContext(ctx, "webhook: delivery dead", slog.String("webhook_id", tg.id), slog.Int64("delivery_id", c.ID),
			slog.Int64("event_id", c.EventID), slog.Int("attempts", c.Attempts+1), slog.String("error", o.Error))
	}
}

// backoff is the wait after the attempts-th failure: RetryBase doubled for
// each failure before it, at most RetryMax, drawn from its upper half.
func (d *Dispatcher) backoff(attempts int) time.Duration {
	w := d.cfg.RetryBase
	for i := 1; i < attempts && w < d.cfg.RetryMax; i++ {
		w *= 2
	}
	w = min(w, d.cfg.RetryMax)
	return w/2 + rand.N(w/2+1)
}

// send POSTs the event and returns the answer's status; err is nil only
// for a 2xx answer.
func (d *Dispatcher) send(ctx context.Context, tg *target, c db.ClaimedDelivery) (int, error) {
	body, err := Payload(c.Event)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tg.url, bytes.NewReader(body))
	if err != nil {
		return 0, errors.New("bad destination URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pactd-webhooks")
	now := d.cfg.Now()
	stdwebhook.SetHeaders(req.Header, tg.keys(now), MessageID(tg.id, c.EventID), now, body)
	res, err := d.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, whose query may hold a receiver's token
		}
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxResponseBytes))
	_ = res.Body.Close()
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return res.StatusCode, nil
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return res.StatusCode, fmt.Errorf("HTTP %d (redirects are not followed: configure the final URL)", res.StatusCode)
	default:
		return res.StatusCode, fmt.Errorf("HTTP %d", res.StatusCode)
	}
}

func boundError(err error) string {
	s := err.Error()
	if len(s) > maxErrorBytes {
		s = strings.ToValidUTF8(s[:maxErrorBytes], "")
	}
	return s
}

// dial connects only to addresses the dial guard allows (jose.CheckAddress:
// public addresses, and loopback under Dev), checked on the address each
// socket connects to, unless the operator allowed the host.
func (d *Dispatcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	dl := &net.Dialer{Timeout: d.cfg.Timeout}
	if !hostAllowed(d.cfg.AllowHosts, host) {
		dl.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: unparsable dial address", jose.ErrForbiddenAddress)
			}
			return jose.CheckAddress(ap.Addr(), d.cfg.Dev)
		}
	}
	return dl.DialContext(ctx, network, addr)
}

func hostAllowed(hosts []string, host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	ha, herr := netip.ParseAddr(h)
	for _, x := range hosts {
		if xa, err := netip.ParseAddr(x); err == nil && herr == nil && xa.Unmap() == ha.Unmap() {
			return true
		}
		if strings.TrimSuffix(strings.ToLower(x), ".") == h {
			return true
		}
	}
	return false
}

// Purge deletes the deliveries delivered more than DeliveredRetention ago
// and those dead more than DeadRetention ago.
func (d *Dispatcher) Purge(ctx context.Context) (int64, error) {
	now := d.cfg.Now()
	return d.cfg.Store.PurgeWebhookDeliveries(ctx, now.Add(-DeliveredRetention), now.Add(-DeadRetention))
}

func (d *Dispatcher) refreshGauges(ctx context.Context) {
	g, err := d.cfg.Store.WebhookOutboxGauges(ctx)
	if err != nil {
		return
	}
	d.m.pending.Set(float64(g.Pending))
	d.m.dead.Set(float64(g.Dead))
	lag := 0.0
	if !g.OldestPending.IsZero() {
		lag = max(0, d.cfg.Now().Sub(g.OldestPending).Seconds())
	}
	d.m.lag.Set(lag)
}

// Payload is the JSON body of an event's delivery: Standard Webhooks'
// {type, timestamp, data} with the event as data, its members named as in
// AuditService's JSON (the kind as its stored name, such as
// "grant.revoked").
func Payload(e db.AuditEvent) ([]byte, error) {
	type action struct {
		Tool     string `json:"tool"`
		ArgsHash string `json:"argsHash,omitempty"`
	}
	type data struct {
		ID        string   `json:"id"`
		Kind      string   `json:"kind"`
		Time      string   `json:"time"`
		BrandID   string   `json:"brandId"`
		BrandUser string   `json:"brandUser"`
		AgentID   string   `json:"agentId"`
		PAIssuer  string   `json:"paIssuer"`
		GrantID   string   `json:"grantId"`
		Scopes    []string `json:"scopes"`
		Actions   []action `json:"actions"`
		Actor     string   `json:"actor"`
		Detail    string   `json:"detail"`
	}
	ts := e.Time.UTC().Format(time.RFC3339)
	dt := data{ID: strconv.FormatInt(e.ID, 10), Kind: string(e.Kind), Time: ts, BrandID: e.BrandID, BrandUser: e.BrandUser,
		AgentID: e.AgentID, PAIssuer: e.ClientID, GrantID: e.GrantID, Scopes: e.Scopes, Actions: []action{}, Actor: e.Actor, Detail: e.Detail}
	if dt.Scopes == nil {
		dt.Scopes = []string{}
	}
	for _, a := range e.Actions {
		dt.Actions = append(dt.Actions, action{Tool: a.Tool, ArgsHash: a.ArgsHash})
	}
	return json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      data   `json:"data"`
	}{string(e.Kind), ts, dt})
}

type metrics struct {
	deliveries *prometheus.CounterVec
	pending    prometheus.Gauge
	dead       prometheus.Gauge
	lag        prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactd_webhook_deliveries_total",
			Help: "Webhook delivery attempts this replica made, by outcome: delivered (2xx), retry (failed, tried again later), dead (failed at the attempt or age bound).",
		}, []string{"outcome"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pactd_webhook_pending",
			Help: "Webhook deliveries not yet acknowledged and not dead, across destinations (read from the store each poll).",
		}),
		dead: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pactd_webhook_dead",
			Help: "Webhook deliveries that reached the attempt or age bound and wait for an operator's retry.",
		}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pactd_webhook_lag_seconds",
			Help: "Age of the oldest pending webhook delivery (since its event, or its operator retry); 0 when none is pending.",
		}),
	}
	for _, o := range []string{"delivered", "retry", "dead"} {
		m.deliveries.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.deliveries, m.pending, m.dead, m.lag)
	}
	return m
}
