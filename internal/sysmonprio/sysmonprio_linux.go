//go:build linux

package sysmonprio

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Supported is whether this platform has SCHED_BATCH.
const Supported = true

// Batch moves the sysmon thread to SCHED_BATCH and returns its thread id.
// sysmon is the first thread the runtime starts after the main one
// (runtime.main starts it before any package is initialised), so it is
// the earliest-started thread but the main one. Were that ever another
// thread, the cost would be the same: one thread that does not preempt on
// waking.
func Batch() (int, error) {
	tid, err := find("/proc/self/task", os.Getpid())
	if err != nil {
		return 0, err
	}
	return tid, setPolicy(tid, unix.SCHED_BATCH)
}

// Keep runs until ctx ends, every interval returning each thread but
// sysmon (tid) that is in SCHED_BATCH to SCHED_NORMAL, and reports how many
// it moved to moved (which may be nil).
func Keep(ctx context.Context, tid int, interval time.Duration, moved func(int)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := restore("/proc/self/task", tid); n > 0 && moved != nil {
			moved(n)
		}
	}
}

// restore moves every thread under dir but keep out of SCHED_BATCH (to
// SCHED_NORMAL, which sched(7) calls SCHED_OTHER).
func restore(dir string, keep int) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil || tid == keep {
			continue
		}
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil || a.Policy != unix.SCHED_BATCH {
			continue
		}
		if setPolicy(tid, unix.SCHED_NORMAL) == nil {
			n++
		}
	}
	return n
}

// setPolicy sets a fair-class policy on thread tid and keeps its nice
// value (an operator's nice -n stays as it was; lowering it would need a
// privilege anyway).
func setPolicy(tid int, policy uint32) error {
	a, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return err
	}
	return unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: policy, Nice: a.Nice}, 0)
}

// find returns the earliest-started thread under dir (a /proc task
// directory) other than main: the smallest start time, then the smallest
// id (start times are in clock ticks, so threads started together tie).
func find(dir string, main int) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	best, bestStart := 0, uint64(0)
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil || tid == main {
			continue
		}
		b, err := os.ReadFile(dir + "/" + e.Name() + "/stat")
		if err != nil {
			continue // the thread exited
		}
		start, err := startTime(string(b))
		if err != nil {
			return 0, err
		}
		if best == 0 || start < bestStart || (start == bestStart && tid < best) {
			best, bestStart = tid, start
		}
	}
	if best == 0 {
		return 0, errors.New("no thread but the main one")
	}
	return best, nil
}

// errStat is a /proc stat line that does not parse.
var errStat = errors.New("unexpected /proc stat format")

// startTime is field 22 (starttime) of a /proc stat line, counted after
// the command name's closing parenthesis (the name may hold spaces and
// parentheses).
func startTime(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errStat
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3
	if len(f) < 20 {
		return 0, errStat
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, errStat
	}
	return n, nil
}
