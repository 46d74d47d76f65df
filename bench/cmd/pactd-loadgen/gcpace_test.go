package main

import (
	"fmt"
	"runtime/debug"
	"slices"
	"testing"
)

func TestPackTokensKeepsEveryToken(t *testing.T) {
	toks := make([]string, 1000)
	for i := range toks {
		toks[i] = fmt.Sprintf("Bearer token-%d", i*i)
	}
	toks[7] = ""
	want := slices.Clone(toks)
	packTokens(toks)
	if !slices.Equal(toks, want) {
		t.Fatal("packTokens changed the tokens")
	}
	// However many tokens, packing allocates once: the one string they
	// all point into.
	if n := testing.AllocsPerRun(10, func() { packTokens(toks) }); n != 1 {
		t.Fatalf("packTokens made %v allocations, want 1", n)
	}
}

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		budget int
		live   uint64
		want   int
	}{
		{16, 160 * mib, 10},    // 16 MiB over 160 MiB live
		{16, 75 * mib, 21},     // rounds down
		{16, 1 * mib, 100},     // never above Go's default
		{16, 1 << 40, 1},       // never below 1 (0 would mean "collect continuously")
		{16, 0, 100},           // no reading
		{4096, 100 * mib, 100}, // a budget above what is live: the default
	} {
		if got := gcPercentFor(c.budget, c.live); got != c.want {
			t.Errorf("gcPercentFor(%d, %d MiB) = %d, want %d", c.budget, c.live/mib, got, c.want)
		}
	}
}

func TestPaceCollectorLeavesAnExplicitGOGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	t.Setenv("GOGC", "150")
	if p := paceCollector(16); p.percent != 0 {
		t.Fatalf("with GOGC set, paceCollector set GOGC=%d", p.percent)
	}
	t.Setenv("GOGC", "")
	if p := paceCollector(0); p.percent != 0 {
		t.Fatalf("-gc-budget 0 set GOGC=%d", p.percent)
	}
	p := paceCollector(16)
	if p.percent < 1 || p.percent > 100 || debug.SetGCPercent(100) != p.percent {
		t.Fatalf("paceCollector(16) reported GOGC=%d and left the runtime elsewhere", p.percent)
	}
}

func TestGCPaceReportNamesThePace(t *testing.T) {
	for _, c := range []struct {
		p    gcPace
		want string
	}{
		{gcPace{live: 75e6}, "Go's default pacing (75 MB live at the start)"},
		{gcPace{percent: 100, live: 2e6}, "GOGC=100, Go's default: -gc-budget is above the 2 MB live at the start"},
		{gcPace{percent: 22, live: 75e6}, "GOGC=22 for ≈ 16 MB of garbage per cycle over 75 MB live at the start (-gc-budget)"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
