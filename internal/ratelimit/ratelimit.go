// Package ratelimit is a keyed token-bucket limiter: each key may make rate
// requests per second on average, with bursts of up to burst requests. It
// answers how long to wait, for a Retry-After header.
package ratelimit

import (
	"hash/maphash"
	"math"
	"sync"
	"time"
)

const (
	shardCount = 64
	// maxKeysPerShard bounds memory; a full shard forgets its idle buckets
	// (a forgotten bucket restarts full, which only ever errs towards
	// allowing).
	maxKeysPerShard = 4096
)

// Limiter limits requests per key. A nil *Limiter allows everything.
type Limiter struct {
	rate, burst float64
	now         func() time.Time
	seed        maphash.Seed
	shards      [shardCount]shard
}

type shard struct {
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a limiter of rate requests per second with the given burst
// (at least 1). rate <= 0 returns nil: no limit.
func New(rate float64, burst int, now func() time.Time) *Limiter {
	if rate <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	l := &Limiter{rate: rate, burst: math.Max(1, float64(burst)), now: now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].buckets = map[string]*bucket{}
	}
	return l
}

// Allow takes one token for key. When none is left it returns false and
// the time until one will be.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	now := l.now()
	s := &l.shards[maphash.String(l.seed, key)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[key]
	if !ok {
		if len(s.buckets) >= maxKeysPerShard {
			l.forgetIdle(s, now)
		}
		b = &bucket{tokens: l.burst, last: now}
		s.buckets[key] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+el*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, wait
}

// forgetIdle drops buckets that have refilled completely (they carry no
// state), or everything when none has.
func (l *Limiter) forgetIdle(s *shard, now time.Time) {
	for k, b := range s.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(s.buckets, k)
		}
	}
	if len(s.buckets) >= maxKeysPerShard {
		clear(s.buckets)
	}
}

// RetryAfterSeconds rounds a wait up to whole seconds, at least 1, as
// Retry-After needs.
func RetryAfterSeconds(d time.Duration) int32 {
	s := int32(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}
