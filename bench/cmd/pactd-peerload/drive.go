package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pactd.dev/pactd/bench/internal/loadstat"
	"pactd.dev/pactd/internal/cpumeter"
)

// checkFunc inspects one answer (status and body); it returns "" when the
// answer is the expected allow, otherwise a short failure label.
type checkFunc func(status int, body []byte) string

// result is what a closed-loop run measured.
type result struct {
	requests int64
	failures int64
	failSet  map[string]int64
	wall     time.Duration
	lat      []time.Duration // sorted
}

func (r *result) rps() float64 {
	if r.wall <= 0 {
		return 0
	}
	return float64(r.requests) / r.wall.Seconds()
}

// quantile returns the q-quantile of the sorted latencies (nearest rank),
// 0 when there are none.
func (r *result) quantile(q float64) time.Duration { return loadstat.Quantile(r.lat, q) }

// recorder collects one worker's counts, so that workers share no lock on
// the hot path.
type recorder struct {
	lat      []time.Duration
	failures int64
	failSet  map[string]int64
}

func (w *recorder) add(d time.Duration, fail string) {
	w.lat = append(w.lat, d)
	if fail != "" {
		w.failures++
		if w.failSet == nil {
			w.failSet = map[string]int64{}
		}
		w.failSet[fail]++
	}
}

// merge sums the workers' recorders into one result.
func merge(recs []*recorder, wall time.Duration) result {
	r := result{wall: wall, failSet: map[string]int64{}}
	for _, w := range recs {
		r.lat = append(r.lat, w.lat...)
		r.failures += w.failures
		for k, v := range w.failSet {
			r.failSet[k] += v
		}
	}
	r.requests = int64(len(r.lat))
	slices.Sort(r.lat)
	return r
}

// sender sends one request and returns the failure label ("" for allow).
type sender func(ctx context.Context, body []byte) string

// httpSender POSTs bodies to url with the given content type through c and
// checks each answer with check.
func httpSender(c *http.Client, url, contentType string, header http.Header, check checkFunc) sender {
	return func(ctx context.Context, body []byte) string {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return "request: " + err.Error()
		}
		req.Header.Set("Content-Type", contentType)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return "canceled"
			}
			return "transport error"
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return "reading the answer"
		}
		return check(resp.StatusCode, b)
	}
}

// drive runs workers closed-loop for d (or until n requests when n > 0).
// The workers take the bodies in one shared sequence, so that each body of
// the pool is sent once per cycle whatever the workers' speeds.
func drive(ctx context.Context, workers int, d time.Duration, n int64, send sender, bodies [][]byte) result {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	recs := make([]*recorder, workers)
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	start := time.Now()
	var seq atomic.Int64 // requests started: the next body and the bound n
	for i := range workers {
		recs[i] = &recorder{lat: make([]time.Duration, 0, 4096)}
		wg.Add(1)
		go func(rec *recorder) {
			defer wg.Done()
			for {
				k := seq.Add(1) - 1
				if time.Now().After(deadline) || ctx.Err() != nil || (n > 0 && k >= n) {
					return
				}
				t0 := time.Now()
				f := send(ctx, bodies[k%int64(len(bodies))])
				if f == "canceled" {
					return
				}
				rec.add(time.Since(t0), f)
			}
		}(recs[i])
	}
	// Requests still in flight at the deadline finish and count; a server
	// that stops answering is cut off after a grace period.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d + 10*time.Second):
		cancel()
		<-done
	}
	return merge(recs, time.Since(start))
}

// procGroup selects processes by command name (comm) and, optionally, by a
// substring of their command line: PostgreSQL backends show their database
// there ("postgres: … user db 127.0.0.1(port) idle").
type procGroup struct {
	comm, match string
}

// snapshot returns the CPU time of every selected process by pid.
func (g procGroup) snapshot() map[int]time.Duration {
	m := map[int]time.Duration{}
	if g.comm == "" {
		return m
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(d + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != g.comm {
			continue
		}
		if g.match != "" {
			cl, err := os.ReadFile(d + "/cmdline")
			if err != nil || !strings.Contains(string(cl), g.match) {
				continue
			}
		}
		if t, err := cpumeter.ProcCPU(pid); err == nil {
			m[pid] = t
		}
	}
	return m
}

// cpuDelta is the CPU the processes of after used since before; a process
// born in between counts from zero. One that exited in between took its
// CPU with it: exited counts them, so that a lower bound shows as one.
func cpuDelta(before, after map[int]time.Duration) (d time.Duration, exited int) {
	for pid, t := range after {
		d += t - before[pid]
	}
	for pid := range before {
		if _, ok := after[pid]; !ok {
			exited++
		}
	}
	return d, exited
}
