// Package guesslimit bounds how fast user codes can be guessed and how many
// device authorizations a PA may leave pending (PACT Delegated, RFC 8628
// §5.1). Both are counted in the store, so every replica counts against
// the same limits: that is why this is store-using core (below the
// services, above db) and not a leaf helper.
//
// User codes are guarded per Brand: at most DefaultGuessLimit failed
// lookups per DefaultGuessWindow. A lookup that names its source (the
// client a frontend saw) is also limited per (Brand, source):
// DefaultSourceGuessLimit failures per window. A lookup is counted before
// the store is asked for the code (so concurrent guesses cannot all pass)
// and given back when the code is found.
package guesslimit

import (
	"context"
	"log/slog"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"pactd.dev/pactd/internal/rpcerr"
)

// Defaults of the user-code guessing limits and the pending bounds.
const (
	// DefaultGuessWindow is the fixed window failed user-code lookups are
	// counted in.
	DefaultGuessWindow = time.Minute
	// DefaultGuessLimit is how many failed user-code lookups a Brand may
	// have in one window, counted over every replica (20 a minute, 1,200
	// an hour against a code space of 2^34.6, codes living 10 minutes).
	DefaultGuessLimit = 20
	// DefaultSourceGuessLimit is how many failed lookups one source (the
	// client a frontend saw) may have at one Brand in one window. It is
	// well below DefaultGuessLimit, so one source cannot use up the Brand's
	// budget alone.
	DefaultSourceGuessLimit = 5
	// DefaultMaxPendingPerAgent bounds the pending (undecided, unexpired)
	// device authorizations one PA may hold open at all Brands.
	DefaultMaxPendingPerAgent = 1000
	// DefaultMaxPendingPerAgentBrand bounds them at one Brand.
	DefaultMaxPendingPerAgentBrand = 100
)

// Store is the storage the limits are counted in.
type Store interface {
	AddUserCodeFailure(ctx context.Context, scope string, window time.Time) (int64, error)
	RemoveUserCodeFailure(ctx context.Context, scope string, window time.Time) error
	CountPendingDeviceAuthorizations(ctx context.Context, agentID, brandID string, now time.Time) (total, atBrand int64, err error)
}

// Limits are the bounds; a zero or negative field takes its default.
type Limits struct {
	// Window is the fixed window of both guessing limits.
	Window time.Duration
	// Brand bounds failed user-code lookups per Brand and window.
	Brand int
	// Source bounds them per (Brand, source).
	Source int
	// MaxPendingPerAgent and MaxPendingPerAgentBrand bound a PA's pending
	// device authorizations in all and at one Brand.
	MaxPendingPerAgent, MaxPendingPerAgentBrand int
}

// Limiter counts guesses and pending authorizations in a Store.
type Limiter struct {
	store            Store
	log              *slog.Logger
	window           time.Duration
	brand, source    int64
	maxAll, maxBrand int64
}

// New returns the limits l over store; log receives refusals and faults
// (never a code).
func New(store Store, log *slog.Logger, l Limits) *Limiter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Limiter{store: store, log: log, window: l.Window, brand: int64(l.Brand), source: int64(l.Source),
		maxAll: int64(l.MaxPendingPerAgent), maxBrand: int64(l.MaxPendingPerAgentBrand)}
	if g.window <= 0 {
		g.window = DefaultGuessWindow
	}
	if g.brand <= 0 {
		g.brand = DefaultGuessLimit
	}
	if g.source <= 0 {
		g.source = DefaultSourceGuessLimit
	}
	if g.maxAll <= 0 {
		g.maxAll = DefaultMaxPendingPerAgent
	}
	if g.maxBrand <= 0 {
		g.maxBrand = DefaultMaxPendingPerAgentBrand
	}
	return g
}

// Reservation is a lookup's place in the counters: it stays counted as a
// failure unless released.
type Reservation struct {
	window time.Time
	scopes []string
}

// Reserve counts a user-code lookup as a failure before the store is asked
// for the code, so that any number of concurrent guesses cannot all pass a
// check that nothing has counted yet; the caller releases it when the code
// is found. The counts live in the store, so every replica counts against
// the same limits. op names the caller's operation in logs and faults.
//
// A lookup is refused (ResourceExhausted with RetryInfo, and released)
// when its source is over the source limit, or when the Brand is over its
// limit and the lookup names no source or a source that has failed in this
// window already: a User with the right code, from a source that has not
// failed, is not locked out by other sources' guesses. Such sources share
// one more allowance of the Brand's limit a window (a hard cap, so cheap
// fresh sources cannot lift the bound past twice the limit); a found code
// gives its place back. Windows are fixed, so up to twice a limit can
// fall within a few seconds across a window's edge.
func (g *Limiter) Reserve(ctx context.Context, op, brandID, source string, now time.Time) (Reservation, error) {
	r := Reservation{window: now.Truncate(g.window)}
	wait := r.window.Add(g.window).Sub(now)
	sourceFailed := false
	if source != "" {
		scope := "source:" + brandID + " " + source // neither holds a space
		n, err := g.store.AddUserCodeFailure(ctx, scope, r.window)
		if err != nil {
			return r, g.fault(ctx, op+": count lookup", err)
		}
		r.scopes = append(r.scopes, scope)
		if n > g.source {
			g.Release(ctx, r)
			g.log.WarnContext(ctx, "user code lookup refused: guessing limit of the source", slog.String("op", op),
				slog.String("brand_id", brandID), slog.String("source", source))
			return r, tooManyGuesses(wait, "too many unknown user codes from this source; retry later")
		}
		sourceFailed = n > 1
	}
	scope := "brand:" + brandID
	n, err := g.store.AddUserCodeFailure(ctx, scope, r.window)
	if err != nil {
		g.Release(ctx, r)
		return r, g.fault(ctx, op+": count lookup", err)
	}
	r.scopes = append(r.scopes, scope)
	refuse := n > g.brand && (source == "" || sourceFailed)
	if n > g.brand && !refuse {
		// A source that has not failed goes on while the Brand is over its
		// limit, from a shared allowance of the same size with a hard cap:
		// cheap fresh sources (accounts, addresses) cannot lift the Brand's
		// bound past twice its limit a window.
		scope := "fresh:" + brandID
		m, err := g.store.AddUserCodeFailure(ctx, scope, r.window)
		if err != nil {
			g.Release(ctx, r)
			return r, g.fault(ctx, op+": count lookup", err)
		}
		r.scopes = append(r.scopes, scope)
		refuse = m > g.brand
	}
	if refuse {
		g.Release(ctx, r)
		g.log.WarnContext(ctx, "user code lookup refused: guessing limit", slog.String("op", op), slog.String("brand_id", brandID),
			slog.String("source", source))
		return r, tooManyGuesses(wait, "too many unknown user codes for this Brand; retry later")
	}
	return r, nil
}

// Release takes a reservation back: the lookup was no failed guess. It
// runs even when the caller has gone, so no count is left behind.
func (g *Limiter) Release(ctx context.Context, r Reservation) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, scope := range r.scopes {
		if err := g.store.RemoveUserCodeFailure(ctx, scope, r.window); err != nil {
			g.log.WarnContext(ctx, "release user code lookup", slog.String("error", err.Error()))
		}
	}
}

// PendingOver bounds the pending device authorizations of a PA, in all and
// at one Brand, so a registered PA cannot fill the store with
// authorizations nobody decides. It reports whether a new one would pass a
// bound; the caller refuses it with the RFC 6749 invalid_request a client
// understands.
func (g *Limiter) PendingOver(ctx context.Context, agentID, brandID string, now time.Time) (refused bool, err error) {
	// Count, then insert: concurrent requests may pass the bound by their
	// number; it bounds growth, not an exact count.
	total, atBrand, err := g.store.CountPendingDeviceAuthorizations(ctx, agentID, brandID, now)
	if err != nil {
		return false, g.fault(ctx, "device authorization: count pending", err)
	}
	if total >= g.maxAll || atBrand >= g.maxBrand {
		g.log.WarnContext(ctx, "device authorization refused: too many pending", slog.String("agent_id", agentID),
			slog.String("brand_id", brandID), slog.Int64("pending", total), slog.Int64("pending_at_brand", atBrand))
		return true, nil
	}
	return false, nil
}

func (g *Limiter) fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, g.log, op, err)
}

// tooManyGuesses is ResourceExhausted with a RetryInfo detail. The
// ErrorInfo reason is UNAVAILABLE ("retry with backoff"): common.proto has
// no rate-limit reason yet. msg says whose limit it is.
func tooManyGuesses(wait time.Duration, msg string) error {
	err := rpcerr.Throttled.Err(msg)
	if d, derr := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(wait.Round(time.Second) + time.Second)}); derr == nil {
		err.AddDetail(d)
	}
	return err
}
