package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// The load generator's own collector must not show up as pactd's latency.
//
// After each collection Go sweeps every span of the heap in a background
// goroutine that yields only to goroutines already queued: on a process
// with one P (the load generator is pinned to one CPU) nothing polls the
// network meanwhile, so responses and due requests wait for the whole
// sweep, up to sysmon's 10 ms poll (golang/go#56060, open). The sweep
// visits every span of the heap the collector let grow, and GOGC lets it
// grow by as much as is live: with a pre-signed pool of 200,000 tokens
// live, that was ≈ 130 MB of garbage per cycle and 10–13 ms sweeps (an
// execution trace of the load generator showed them, and the open-loop
// latencies that coincided). So the pool is packed into one object
// (packTokens) and the collector is paced to a fixed garbage budget: more
// cycles, each short.

// maxGCBudgetMiB bounds -gc-budget.
const maxGCBudgetMiB = 4096

// gcPace is the load generator's collector setting for a measured run.
type gcPace struct {
	percent int    // the GOGC percentage set; 0 when left as it was
	live    uint64 // live heap when it was set, bytes
	cycles0 uint64 // completed cycles when it was set
}

// paceCollector collects, then sets GOGC so that a cycle lets about
// budgetMiB of garbage accumulate over what is live now (never above 100,
// GOGC's default). budgetMiB 0, or GOGC set in the environment, leaves the
// collector alone.
func paceCollector(budgetMiB int) gcPace {
	runtime.GC()
	p := gcPace{live: readUint(gcLiveMetric), cycles0: readUint(gcCyclesMetric)}
	if budgetMiB <= 0 || os.Getenv("GOGC") != "" || p.live == 0 {
		return p
	}
	p.percent = gcPercentFor(budgetMiB, p.live)
	debug.SetGCPercent(p.percent)
	return p
}

// gcPercentFor is the GOGC percentage that lets budgetMiB of garbage
// accumulate over live bytes, within [1, 100].
func gcPercentFor(budgetMiB int, live uint64) int {
	return int(min(100, max(1, uint64(budgetMiB)<<20*100/max(live, 1))))
}

// cycles returns the collections completed since the pace was set.
func (p gcPace) cycles() uint64 { return readUint(gcCyclesMetric) - p.cycles0 }

const (
	gcLiveMetric   = "/gc/heap/live:bytes"
	gcCyclesMetric = "/gc/cycles/total:gc-cycles"
)

// readUint reads one uint64 runtime metric (0 when this Go lacks it).
func readUint(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// String says how the collector was paced, for the run's report.
func (p gcPace) String() string {
	switch p.percent {
	case 0:
		return fmt.Sprintf("Go's default pacing (%.0f MB live at the start)", float64(p.live)/1e6)
	case 100:
		return fmt.Sprintf("GOGC=100, Go's default: -gc-budget is above the %.0f MB live at the start", float64(p.live)/1e6)
	}
	return fmt.Sprintf("GOGC=%d for ≈ %.0f MB of garbage per cycle over %.0f MB live at the start (-gc-budget)",
		p.percent, float64(p.live)*float64(p.percent)/100/1e6, float64(p.live)/1e6)
}
