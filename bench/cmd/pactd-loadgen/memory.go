package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// memory is what pactd reported about its memory after a run.
type memory struct {
	rssKB        int64 // VmRSS from /proc (0 when unknown)
	heapInuse    int64 // go_memstats_heap_inuse_bytes from /metrics
	cacheEntries int64 // pactd_pa_token_cache_entries from /metrics
	// The ES256 tables (pactd_es256_*; 0 with PACT_ES256_TABLES=off).
	es256Tables, es256Bytes, es256Builds, es256Evictions int64
	// The collector's figures (Go's runtime/metrics through the Prometheus
	// Go collector): cycles and total stop-the-world pause so far, and
	// the longest recent pause (go_gc_duration_seconds quantile 1).
	gcCycles   int64
	gcPauseSum float64 // seconds
	gcPauseMax float64 // seconds
	// gcMarkCPU is the CPU the collector's mark phase has used so far
	// (assists, dedicated and idle workers), from runtime/metrics.
	gcMarkCPU float64 // seconds
}

// serverMemory reads pactd's resident set from /proc/<pid>/status and its
// Go heap and repeat-token cache size from /metrics (admin credential).
// Every reading it cannot take stays 0.
func serverMemory(ctx context.Context, base, admin string, pid int) memory {
	var m memory
	if pid <= 0 {
		return m
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				m.rssKB, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return m
	}
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return m
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_memstats_heap_inuse_bytes":
			m.heapInuse = int64(f)
		case "pactd_pa_token_cache_entries":
			m.cacheEntries = int64(f)
		case "pactd_es256_tables":
			m.es256Tables = int64(f)
		case "pactd_es256_table_bytes":
			m.es256Bytes = int64(f)
		case "pactd_es256_table_builds_total":
			m.es256Builds = int64(f)
		case `pactd_es256_table_evictions_total{reason="budget"}`:
			m.es256Evictions = int64(f)
		case "go_gc_duration_seconds_count":
			m.gcCycles = int64(f)
		case "go_gc_duration_seconds_sum":
			m.gcPauseSum = f
		case `go_gc_duration_seconds{quantile="1"}`:
			m.gcPauseMax = f
		case "go_cpu_classes_gc_mark_assist_cpu_seconds_total", "go_cpu_classes_gc_mark_dedicated_cpu_seconds_total",
			"go_cpu_classes_gc_mark_idle_cpu_seconds_total":
			m.gcMarkCPU += f
		}
	}
	return m
}
