package delegation

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"pactd/db"
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
	// maxSource bounds the source a frontend passes.
	maxSource = 128
)

// guessLimits are the user-code guessing limits, in effect.
type guessLimits struct {
	window        time.Duration
	brand, source int64
}

func newGuessLimits(d Deps) guessLimits {
	g := guessLimits{window: d.GuessWindow, brand: int64(d.GuessLimit), source: int64(d.SourceGuessLimit)}
	if g.window <= 0 {
		g.window = DefaultGuessWindow
	}
	if g.brand <= 0 {
		g.brand = DefaultGuessLimit
	}
	if g.source <= 0 {
		g.source = DefaultSourceGuessLimit
	}
	return g
}

// guessReservation is a lookup's place in the counters: it stays counted
// as a failure unless released.
type guessReservation struct {
	window time.Time
	scopes []string
}

// reserveGuess counts a user-code lookup as a failure before the store is
// asked for the code, so that any number of concurrent guesses cannot all
// pass a check that nothing has counted yet; the caller releases it when
// the code is found. The counts live in the store, so every replica counts
// against the same limits.
//
// A lookup is refused (ResourceExhausted with RetryInfo, and released)
// when its source is over the source limit, or when the Brand is over its
// limit and the lookup names no source or a source that has failed in this
// window already: a User with the right code, from a source that has not
// failed, is never locked out by other sources' guesses. (Such a source
// gets one lookup while the Brand is over; after one failure it is
// limited too.)
func (s *Service) reserveGuess(ctx context.Context, op, brandID, source string, now time.Time) (guessReservation, error) {
	g := s.guesses
	r := guessReservation{window: now.Truncate(g.window)}
	wait := r.window.Add(g.window).Sub(now)
	sourceFailed := false
	if source != "" {
		scope := "source:" + brandID + " " + source // neither holds a space
		n, err := s.d.Store.AddUserCodeFailure(ctx, scope, r.window)
		if err != nil {
			return r, s.fault(ctx, op+": count lookup", err)
		}
		r.scopes = append(r.scopes, scope)
		if n > g.source {
			s.releaseGuess(ctx, r)
			s.d.Logger.WarnContext(ctx, "user code lookup refused: guessing limit of the source", slog.String("op", op),
				slog.String("brand_id", brandID), slog.String("source", source))
			return r, tooManyGuesses(wait, "too many unknown user codes from this source; retry later")
		}
		sourceFailed = n > 1
	}
	scope := "brand:" + brandID
	n, err := s.d.Store.AddUserCodeFailure(ctx, scope, r.window)
	if err != nil {
		s.releaseGuess(ctx, r)
		return r, s.fault(ctx, op+": count lookup", err)
	}
	r.scopes = append(r.scopes, scope)
	if n > g.brand && (source == "" || sourceFailed) {
		s.releaseGuess(ctx, r)
		s.d.Logger.WarnContext(ctx, "user code lookup refused: guessing limit", slog.String("op", op), slog.String("brand_id", brandID),
			slog.String("source", source))
		return r, tooManyGuesses(wait, "too many unknown user codes for this Brand; retry later")
	}
	return r, nil
}

// releaseGuess takes a reservation back: the lookup was no failed guess.
// It runs even when the caller has gone, so no count is left behind.
func (s *Service) releaseGuess(ctx context.Context, r guessReservation) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, scope := range r.scopes {
		if err := s.d.Store.RemoveUserCodeFailure(ctx, scope, r.window); err != nil {
			s.d.Logger.WarnContext(ctx, "release user code lookup", slog.String("error", err.Error()))
		}
	}
}

// checkPending bounds the pending device authorizations of a PA, in all
// and at one Brand, so a registered PA cannot fill the store with
// authorizations nobody decides. Over a bound the request is refused with
// the RFC 6749 invalid_request a client understands (and a description
// saying to finish or wait for a pending one).
func (s *Service) checkPending(ctx context.Context, agentID, brandID string, now time.Time) (refused bool, err error) {
	total, atBrand, err := s.d.Store.CountPendingDeviceAuthorizations(ctx, agentID, brandID, now)
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, s.fault(ctx, "device authorization: count pending", err)
	}
	maxAll, maxBrand := int64(s.d.MaxPendingPerAgent), int64(s.d.MaxPendingPerAgentBrand)
	if maxAll <= 0 {
		maxAll = DefaultMaxPendingPerAgent
	}
	if maxBrand <= 0 {
		maxBrand = DefaultMaxPendingPerAgentBrand
	}
	if total >= maxAll || atBrand >= maxBrand {
		s.d.Logger.WarnContext(ctx, "device authorization refused: too many pending", slog.String("agent_id", agentID),
			slog.String("brand_id", brandID), slog.Int64("pending", total), slog.Int64("pending_at_brand", atBrand))
		return true, nil
	}
	return false, nil
}
