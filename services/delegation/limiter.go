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
	// maxGuessBuckets bounds the limiter's memory; full buckets are dropped
	// first.
	maxGuessBuckets = 10000
)

// guessLimiter limits failed user-code lookups per Brand (in memory, per
// replica) with a token bucket: each failure takes a token, tokens come
// back one per interval up to the burst. While a Brand's bucket is empty,
// every lookup of that Brand is refused before the store is asked, so an
// attacker learns nothing more; a legitimate User may be told to retry for
// a few seconds. Success costs nothing.
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

func newGuessLimiter(burst int, every time.Duration) *guessLimiter {
	if burst <= 0 {
		burst = DefaultGuessBurst
	}
	if every <= 0 {
		every = DefaultGuessEvery
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

// wait returns how long the Brand must wait before its next lookup; zero
// when a lookup may go ahead.
func (l *guessLimiter) wait(brandID string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.m[brandID]
	if !ok {
		return 0
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) * float64(l.every))
}

// fail records a failed lookup.
func (l *guessLimiter) fail(brandID string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.m[brandID]
	if !ok {
		if len(l.m) >= maxGuessBuckets {
			l.prune(now)
		}
		b = &guessBucket{tokens: l.burst, at: now}
		l.m[brandID] = b
	}
	l.refill(b, now)
	b.tokens = max(0, b.tokens-1)
}

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
