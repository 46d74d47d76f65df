package main

import (
	"math"
	"math/bits"
	"sort"
	"sync"
	"time"
)

// hist is a log-linear latency histogram: values (ns) below 2^subBits are
// counted exactly, larger ones in 2^subBits sub-buckets per power of two,
// so a reported quantile is within 1/2^subBits (1.6 %) of the true value
// with fixed memory (a 24-hour soak keeps one per interval only until the
// interval is summarised).
type hist struct {
	counts [64 << subBits]uint64
	n      uint64
	max    int64
}

const subBits = 6

func bucketOf(v int64) int {
	if v < 1 {
		v = 1
	}
	u := uint64(v)
	if u < 1<<subBits {
		return int(u)
	}
	e := bits.Len64(u) - subBits // >= 1
	return e<<subBits | int(u>>(e-1)&(1<<subBits-1))
}

// bucketTop is the largest value bucket b counts.
func bucketTop(b int) int64 {
	if b < 1<<subBits {
		return int64(b)
	}
	// The bucket holds the values v with v>>(e-1) == 1<<subBits | m.
	e, m := b>>subBits, uint64(b&(1<<subBits-1))
	return int64((uint64(1)<<subBits|m)+1)<<(e-1) - 1
}

func (h *hist) add(v int64) {
	h.counts[bucketOf(v)]++
	h.n++
	if v > h.max {
		h.max = v
	}
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the q-quantile (nearest rank), the exact maximum for
// q = 1, and 0 for an empty histogram.
func (h *hist) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return h.max
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(bucketTop(b), h.max)
		}
	}
	return h.max
}

// latencySummary is the percentiles of one histogram, in milliseconds.
type latencySummary struct {
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p99_9_ms"`
	Max  float64 `json:"max_ms"`
}

func msRound(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }

func (h *hist) summary() latencySummary {
	return latencySummary{
		P50: msRound(h.quantile(0.50)), P90: msRound(h.quantile(0.90)), P99: msRound(h.quantile(0.99)),
		P999: msRound(h.quantile(0.999)), Max: msRound(h.quantile(1)),
	}
}

// intervalStats is what one reporting interval measured.
type intervalStats struct {
	// Start is seconds from the run's start to the interval's start.
	Start float64 `json:"t_s"`
	// Requests answered whose due (open loop) or send (closed loop) time
	// fell in the interval, and how many of them failed.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	// Throughput is answered requests per second.
	Throughput float64 `json:"throughput_per_s"`
	// TargetRate is the open-loop rate asked for at the interval's start.
	TargetRate float64 `json:"target_rate_per_s,omitempty"`
	latencySummary
}

// recorder collects every answered request into per-interval and per-kind
// histograms and counts failures by label. It is safe for concurrent use.
type recorder struct {
	start    time.Time
	interval time.Duration

	mu      sync.Mutex
	open    map[int]*hist // intervals not yet summarised
	openErr map[int]int64
	done    map[int]intervalStats
	total   hist
	kinds   map[string]*kindStats
	fails   map[string]int64
}

// kindStats is one request kind's totals.
type kindStats struct {
	h      hist
	errors int64
}

func newRecorder(start time.Time, interval time.Duration) *recorder {
	return &recorder{start: start, interval: interval, open: map[int]*hist{}, openErr: map[int]int64{},
		done: map[int]intervalStats{}, kinds: map[string]*kindStats{}, fails: map[string]int64{}}
}

// record adds one answered request: at (its due or send time), its latency
// and its failure label ("" for the expected answer).
func (r *recorder) record(kind string, at time.Time, lat time.Duration, fail string) {
	i := max(0, int(at.Sub(r.start)/r.interval))
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.open[i]
	if h == nil {
		h = new(hist)
		r.open[i] = h
	}
	h.add(int64(lat))
	r.total.add(int64(lat))
	k := r.kinds[kind]
	if k == nil {
		k = new(kindStats)
		r.kinds[kind] = k
	}
	k.h.add(int64(lat))
	if fail != "" {
		r.openErr[i]++
		k.errors++
		r.fails[kind+": "+fail]++
	}
}

// fail counts a request that never got an answer to time (not sent before
// the deadline, or lost to the client's own failure).
func (r *recorder) fail(kind, label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fails[kind+": "+label]++
	k := r.kinds[kind]
	if k == nil {
		k = new(kindStats)
		r.kinds[kind] = k
	}
	k.errors++
}

// flush summarises every interval that ended before now minus slack (no
// more answers are expected for it), freeing its histogram; all flushes
// every interval. rate gives the target rate at an interval's start.
func (r *recorder) flush(now time.Time, slack time.Duration, all bool, rate func(time.Duration) float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, h := range r.open {
		end := r.start.Add(time.Duration(i+1) * r.interval)
		if !all && now.Sub(end) < slack {
			continue
		}
		st := intervalStats{Start: (time.Duration(i) * r.interval).Seconds(), Requests: int64(h.n), Errors: r.openErr[i],
			Throughput: float64(h.n) / r.interval.Seconds(), latencySummary: h.summary()}
		if rate != nil {
			st.TargetRate = rate(time.Duration(i) * r.interval)
		}
		r.done[i] = st
		delete(r.open, i)
		delete(r.openErr, i)
	}
}

// intervals returns the summarised intervals in time order, with empty ones
// filled in up to the last, so a stall shows as zero throughput.
func (r *recorder) intervals(rate func(time.Duration) float64) []intervalStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := -1
	for i := range r.done {
		last = max(last, i)
	}
	out := make([]intervalStats, 0, last+1)
	for i := 0; i <= last; i++ {
		st, ok := r.done[i]
		if !ok {
			st = intervalStats{Start: (time.Duration(i) * r.interval).Seconds()}
			if rate != nil {
				st.TargetRate = rate(time.Duration(i) * r.interval)
			}
		}
		out = append(out, st)
	}
	return out
}

// failLabels returns the failure counts, largest first.
func (r *recorder) failLabels() []labelCount {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]labelCount, 0, len(r.fails))
	for k, v := range r.fails {
		out = append(out, labelCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Count > out[j].Count || out[i].Count == out[j].Count && out[i].Label < out[j].Label
	})
	return out
}

// labelCount is one failure kind and how often it happened.
type labelCount struct {
	Label string `json:"kind"`
	Count int64  `json:"count"`
}
