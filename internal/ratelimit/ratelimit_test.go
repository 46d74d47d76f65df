package ratelimit

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAllowBurstThenRefill(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(2, 3, func() time.Time { return now })
	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("request %d within burst refused", i)
		}
	}
	ok, wait := l.Allow("a")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("over burst: ok=%v wait=%v, want refused, 500ms", ok, wait)
	}
	if RetryAfterSeconds(wait) != 1 {
		t.Fatalf("RetryAfterSeconds(%v) = %d", wait, RetryAfterSeconds(wait))
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another key shares the bucket")
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("token not refilled after 1/rate")
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("more than one token refilled")
	}
}

func TestNilLimiterAllows(t *testing.T) {
	var l *Limiter = New(0, 1, nil)
	if ok, _ := l.Allow("x"); !ok {
		t.Fatal("disabled limiter refused")
	}
}

func TestConcurrentAllowNeverExceedsBurst(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(1, 10, func() time.Time { return now })
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if ok, _ := l.Allow("k"); ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if allowed.Load() != 10 {
		t.Fatalf("allowed %d concurrent requests, want exactly the burst of 10", allowed.Load())
	}
}

func TestManyKeysStayBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(1, 1, func() time.Time { return now })
	for i := range shardCount * maxKeysPerShard * 2 {
		l.Allow(fmt.Sprint(i))
	}
	n := 0
	for i := range l.shards {
		n += len(l.shards[i].buckets)
	}
	if n > shardCount*maxKeysPerShard {
		t.Fatalf("%d buckets held, bound is %d", n, shardCount*maxKeysPerShard)
	}
}
