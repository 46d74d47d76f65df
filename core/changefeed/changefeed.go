// Package changefeed keeps one replica's caches in step with the changes
// every replica makes: it polls the store's change feed (db.FeedStore) on a
// fixed interval from the last position it applied and hands each new
// change to the caches, which drop what they held for it. Notifications
// (PostgreSQL LISTEN/NOTIFY), where they work, only wake it early.
//
// The revocation bound. A cache that holds state the feed can change may
// use it only while the feed is fresh: the last poll that read up to the
// head of the feed started less than Bound ago (Bound is twice the
// interval: one interval between polls, and one for a poll to read and
// apply). Then every change committed before that poll started has been
// applied, so a change is in effect on every replica within Bound of its
// commit. When polls fail or fall behind, the feed goes stale and the
// caches answer only from state they read less than Bound ago (MaxAge):
// the bound holds either way, at the price of store reads.
//
// Continuity. The poller asks for the changes from the position it applied
// last, that one included, and checks that it is still the row it applied
// (same token). If it is not (pruned while this replica could not read, or
// lost in a failover), or if any poll failed since the last good one (the
// replica cannot know what it missed, nor whether the database it reads
// now is the one it read before), it drops every cache (Resync) and goes
// on from the newest change. A replica that starts has empty caches, so it
// starts from the newest change too.
package changefeed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pactd.dev/pactd/db"
)

// Settings of the poll interval (PACT_CHANGE_POLL_INTERVAL).
const (
	// DefaultInterval makes the revocation bound 1 s.
	DefaultInterval = 500 * time.Millisecond
	// MinInterval and MaxInterval bound the setting.
	MinInterval = 10 * time.Millisecond
	MaxInterval = 10 * time.Second
)

// Retention is how long the feed keeps a change (the newest is always
// kept). A replica never needs more than its last poll's worth: one that
// could not poll drops its caches instead of replaying, so this only bounds
// the table while leaving an hour of history to inspect.
const Retention = time.Hour

// batch is how many changes one read takes; a poll reads until the head.
const batch = 500

// Store is the feed the poller reads.
type Store interface {
	LatestChange(ctx context.Context) (db.Change, error)
	ChangesFrom(ctx context.Context, from int64, limit int) ([]db.Change, error)
}

// Config is what a Feed needs.
type Config struct {
	Store Store
	// Interval is the time between polls.
	Interval time.Duration
	// Apply drops what the caches hold for each change of a poll, in
	// position order. It must not block on the store.
	Apply func([]db.Change)
	// Resync drops everything the caches hold: the replica cannot tell
	// what it missed.
	Resync func()
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// NewTicker starts the ticker Run polls on, on the same clock as Now
	// (a test's clock moves both); time.NewTicker's when nil.
	NewTicker func(d time.Duration) (ticks <-chan time.Time, stop func())
	// Logger receives a warning when polls start failing and a line when
	// they work again (once each, however long it lasts).
	Logger *slog.Logger
	// Registerer receives the feed's metrics; none when nil.
	Registerer prometheus.Registerer
}

// Feed polls the change feed for one replica. Its zero value is not
// usable; New makes one, Run drives it.
type Feed struct {
	cfg  Config
	wake chan struct{}

	// fresh is the start (unix ns) of the last poll that read up to the
	// head; 0 before the first. freshUntil is fresh + Bound: MaxAge, on
	// the hot path, compares with it alone.
	fresh, freshUntil atomic.Int64

	mu  sync.Mutex // serializes polls
	pos int64      // the position applied last (0: the feed was empty)
	// applied is pos for readers outside a poll (Position).
	applied atomic.Int64
	token   int64
	failed  bool // a poll failed since the last good one

	m metrics
}

type metrics struct {
	position, listening               prometheus.Gauge
	resyncs, pollErrors, staleLookups prometheus.Counter
	delay                             prometheus.Histogram
}

// New returns a feed; Run starts it.
func New(cfg Config) *Feed {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NewTicker == nil {
		cfg.NewTicker = func(d time.Duration) (<-chan time.Time, func()) { t := time.NewTicker(d); return t.C, t.Stop }
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	f := &Feed{cfg: cfg, wake: make(chan struct{}, 1)}
	f.m = metrics{
		position: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pactd_change_feed_position",
			Help: "The change-feed position this replica has applied."}),
		listening: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pactd_change_feed_listening",
			Help: "1 while a LISTEN connection wakes the poller early, 0 when it polls alone."}),
		resyncs: prometheus.NewCounter(prometheus.CounterOpts{Name: "pactd_change_feed_resyncs_total",
			Help: "Times this replica dropped every cache because it could not tell what it missed (a failed poll, a pruned or lost position)."}),
		pollErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "pactd_change_feed_poll_errors_total",
			Help: "Change-feed polls that failed."}),
		staleLookups: prometheus.NewCounter(prometheus.CounterOpts{Name: "pactd_change_feed_stale_lookups_total",
			Help: "Cache hits (agents, Brands, grants) checked while the feed was stale: each is answered from the database unless the entry is younger than the revocation bound."}),
		delay: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pactd_change_feed_apply_delay_seconds",
			Help:    "From a change's commit (the database's clock) to its application on this replica.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, .75, 1, 2.5, 5, 10}}),
	}
	if r := cfg.Registerer; r != nil {
		r.MustRegister(f.m.position, f.m.listening, f.m.resyncs, f.m.pollErrors, f.m.staleLookups, f.m.delay,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pactd_change_feed_poll_age_seconds",
				Help: "Seconds since the start of the last poll that read up to the head of the feed; caches trust what they hold while it is below the revocation bound."},
				func() float64 { return f.age(f.cfg.Now()).Seconds() }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pactd_change_feed_revocation_bound_seconds",
				Help: "The configured bound within which a change on any replica is in effect on this one (twice the poll interval)."},
				func() float64 { return f.Bound().Seconds() }))
	}
	return f
}

// Bound is the revocation bound: twice the poll interval.
func (f *Feed) Bound() time.Duration { return 2 * f.cfg.Interval }

// age is how long ago the last poll that reached the head started.
func (f *Feed) age(now time.Time) time.Duration {
	s := f.fresh.Load()
	if s == 0 {
		return time.Duration(1<<63 - 1)
	}
	return now.Sub(time.Unix(0, s))
}

// MaxAge is how old cached state derived from the store may be at now: any
// age while the feed is fresh (the caller's own lifetime applies), and less
// than Bound when it is not. A nil Feed places no limit.
func (f *Feed) MaxAge(now time.Time) time.Duration {
	if f == nil || now.UnixNano() < f.freshUntil.Load() {
		return time.Duration(1<<63 - 1)
	}
	f.m.staleLookups.Inc()
	return f.Bound()
}

// Position is the change-feed position this replica has applied (0 before
// its first poll, or while the feed is empty).
func (f *Feed) Position() int64 { return f.applied.Load() }

// Fresh reports whether the last poll that reached the head started less
// than Bound before now: every change committed before then is in effect
// here.
func (f *Feed) Fresh(now time.Time) bool { return now.UnixNano() < f.freshUntil.Load() }

// Wake asks for a poll now (a notification arrived); it never blocks.
func (f *Feed) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Listening records whether a LISTEN connection is up (for the metric).
func (f *Feed) Listening(up bool) {
	if up {
		f.m.listening.Set(1)
	} else {
		f.m.listening.Set(0)
	}
}

// Run polls until ctx ends: at once, then every interval and whenever
// woken.
func (f *Feed) Run(ctx context.Context) {
	ticks, stop := f.cfg.NewTicker(f.cfg.Interval)
	defer stop()
	for {
		f.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		case <-f.wake:
		}
	}
}

// poll runs Poll with a deadline of one interval, at least a second (a
// slower poll would not keep the feed fresh anyway).
func (f *Feed) poll(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, max(f.cfg.Interval, time.Second))
	_ = f.Poll(pctx) // Poll logs and counts failures
	cancel()
}

// Poll reads the feed up to its head and applies what is new (or resyncs;
// see the package comment). It is what Run calls; tests call it to step
// the feed.
func (f *Feed) Poll(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := f.cfg.Now()
	err := f.pollLocked(ctx, start)
	if err != nil {
		f.m.pollErrors.Inc()
		if !f.failed {
			f.cfg.Logger.Warn("change feed: poll failed; caches answer only from state younger than the revocation bound until it works again",
				slog.String("error", err.Error()), slog.Duration("bound", f.Bound()))
		}
		f.failed = true
		return err
	}
	f.fresh.Store(start.UnixNano())
	f.freshUntil.Store(start.Add(f.Bound()).UnixNano())
	return nil
}

func (f *Feed) pollLocked(ctx context.Context, start time.Time) error {
	if f.fresh.Load() == 0 || f.failed {
		// The first poll, or the first after a failure: start from the
		// newest change with nothing cached (the package comment says why).
		return f.resync(ctx)
	}
	for {
		rows, err := f.cfg.Store.ChangesFrom(ctx, max(f.pos, 1), batch)
		if err != nil {
			return err
		}
		full := len(rows) == batch
		if f.pos > 0 {
			if len(rows) == 0 || rows[0].Pos != f.pos || rows[0].Token != f.token {
				f.cfg.Logger.Warn("change feed: the position this replica applied is gone (pruned, or lost in a failover); dropping every cache",
					slog.Int64("position", f.pos))
				return f.resync(ctx)
			}
			rows = rows[1:]
		}
		if len(rows) > 0 {
			f.cfg.Apply(rows)
			now := f.cfg.Now()
			for _, c := range rows {
				f.m.delay.Observe(max(0, now.Sub(c.Time).Seconds()))
			}
			last := rows[len(rows)-1]
			f.pos, f.token = last.Pos, last.Token
			f.applied.Store(f.pos)
			f.m.position.Set(float64(f.pos))
		}
		if !full {
			return nil
		}
	}
}

// resync takes the newest change as the position, then drops every cache
// (in that order: state read after the drop includes every change up to
// the position, and later ones come with the next poll).
func (f *Feed) resync(ctx context.Context) error {
	latest, err := f.cfg.Store.LatestChange(ctx)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return err
	}
	first := f.fresh.Load() == 0
	if f.failed {
		f.cfg.Logger.Info("change feed: polling again; dropped every cache", slog.Int64("position", latest.Pos))
	}
	if !first {
		f.m.resyncs.Inc()
	}
	f.cfg.Resync()
	f.pos, f.token, f.failed = latest.Pos, latest.Token, false
	f.applied.Store(f.pos)
	f.m.position.Set(float64(f.pos))
	return nil
}
