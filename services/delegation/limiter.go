package delegation

import (
	"sync"
	"time"
)

// Defaults of the user-code guessing limit.
const (
	// DefaultGuessBurst is how many failed user-code lookups a Brand may
	// have in a burst.
	DefaultGuessBurst = 20
	// DefaultGuessEvery is how often one more failed lookup is allowed
	// after the burst: 20 per minute, at most 1,220 in the first hour.
	DefaultGuessEvery = 3 * time.Second
	// DefaultSourceGuessBurst is how many failed user-code lookups one
	// source (the client a frontend saw) may have at one Brand in a burst.
	// It is well below DefaultGuessBurst, so one source cannot use up the
	// Brand's budget and lock everyone else out.
	DefaultSourceGuessBurst = 5
	// DefaultSourceGuessEvery is how often one source may fail once more
	// after its burst: 4 per minute, a fifth of the Brand's rate.
	DefaultSourceGuessEvery = 15 * time.Second
	// maxGuessBuckets bounds each limiter's memory; full buckets are
	// dropped first.
	maxGuessBuckets = 10000
	// maxSource bounds the source a frontend passes.
	maxSource = 128
)

// guessLimiter limits failed user-code lookups per key (a Brand, or a
// Brand and a source; in memory, per replica) with a token bucket: each
// failure takes a token, tokens come back one per interval up to the burst.
// While a key's bucket is empty, every lookup under that key is refused
// before the store is asked, so an attacker learns nothing more; a
// legitimate User may be told to retry for a few seconds. Success costs
// nothing. At most maxGuessBuckets keys are tracked: when that many
// buckets are draining, a new key is not tracked (for a source, the Brand's
// own bucket still counts its failures).
type guessLimiter struct {
	mu    sync.Mutex
	burst float64
	every time.Duration
	m     map[string]*guessBucket
}

type guessBucket struct {
	tokens float64
	at     time.Time
}

// newGuessLimiter returns a limiter of burst failures, one more per every;
// a zero or negative value takes the default given after it.
func newGuessLimiter(burst, defBurst int, every, defEvery time.Duration) *guessLimiter {
	if burst <= 0 {
		burst = defBurst
	}
	if every <= 0 {
		every = defEvery
	}
	return &guessLimiter{burst: float64(burst), every: every, m: make(map[string]*guessBucket)}
}

// refill brings a bucket up to now; the caller holds mu.
func (l *guessLimiter) refill(b *guessBucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(l.burst, b.tokens+float64(d)/float64(l.every))
		b.at = now
	}
}

// take spends one token of the key before a lookup, so concurrent lookups
// cannot all pass a check that nothing has spent yet. It returns zero when
// the lookup may go ahead, else how long until a token is back. A lookup
// that finds its code gives the token back (refund): only failures count.
func (l *guessLimiter) take(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.m[key]
	if !ok {
		if len(l.m) >= maxGuessBuckets {
			l.prune(now)
		}
		if len(l.m) >= maxGuessBuckets {
			// Too many keys to track: refuse rather than stop counting.
			return l.every
		}
		b = &guessBucket{tokens: l.burst, at: now}
		l.m[key] = b
	}
	l.refill(b, now)
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) * float64(l.every))
	}
	b.tokens--
	return 0
}

// refund gives back the token a successful lookup took.
func (l *guessLimiter) refund(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.m[key]; ok {
		l.refill(b, now)
		b.tokens = min(l.burst, b.tokens+1)
	}
}

// sourceKey is the limiter key of a source at a Brand.
func sourceKey(brandID, source string) string { return brandID + "\x00" + source }

// prune drops buckets that have refilled (they hold no state worth
// keeping); the caller holds mu.
func (l *guessLimiter) prune(now time.Time) {
	for k, b := range l.m {
		l.refill(b, now)
		if b.tokens >= l.burst {
			delete(l.m, k)
		}
	}
}
