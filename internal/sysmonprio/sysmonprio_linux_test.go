//go:build linux

package sysmonprio

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestStartTime(t *testing.T) {
	// proc(5): starttime is field 22; the name (field 2) may hold ") ".
	line := "1234 (a b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 7 0 987654 1000 50"
	if n, err := startTime(line); err != nil || n != 987654 {
		t.Fatalf("startTime = %d, %v; want 987654", n, err)
	}
	for _, bad := range []string{"1234 no paren", "1 (x) S 1 2 3", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5"} {
		if _, err := startTime(bad); err != errStat {
			t.Errorf("startTime(%q) = %v, want %v", bad, err, errStat)
		}
	}
}

// statLine is a /proc stat line of a thread started at start.
func statLine(start int) string {
	return "7 (pactd) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 5 0 " + strconv.Itoa(start) + " 0 0"
}

func TestFindEarliestButMain(t *testing.T) {
	dir := t.TempDir()
	for tid, start := range map[int]int{100: 10, 101: 50, 102: 40, 103: 40} {
		p := filepath.Join(dir, strconv.Itoa(tid))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "stat"), []byte(statLine(start)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "not-a-thread"), 0o755); err != nil {
		t.Fatal(err)
	}
	// 100 is main; 102 and 103 tie on the earliest start: the smaller id.
	if tid, err := find(dir, 100); err != nil || tid != 102 {
		t.Fatalf("find = %d, %v; want 102", tid, err)
	}
	only := t.TempDir()
	if err := os.Mkdir(filepath.Join(only, "100"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := find(only, 100); err == nil || err.Error() != "no thread but the main one" {
		t.Fatalf("find with the main thread alone = %v, want no thread but the main one", err)
	}
}

// TestFindIsSysmon: while one goroutine spins on a single P without a
// system call, the only thread that keeps going to sleep of its own accord
// is sysmon (its polling backs off from 20 µs); find must name that
// thread. Involuntary switches do not count: on a busy machine the
// spinning thread has the most of those.
func TestFindIsSysmon(t *testing.T) {
	tid, err := find("/proc/self/task", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	switches := func() map[int]uint64 {
		m := map[int]uint64{}
		ents, _ := os.ReadDir("/proc/self/task")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
			if err != nil {
				continue
			}
			id, _ := strconv.Atoi(e.Name())
			m[id] = voluntary(t, string(b))
		}
		return m
	}
	before := switches()
	var stop atomic.Bool
	time.AfterFunc(300*time.Millisecond, func() { stop.Store(true) })
	for x := 0; !stop.Load(); x++ {
		_ = x * x
	}
	after := switches()
	most, mostN := 0, uint64(0)
	for id, n := range after {
		if d := n - before[id]; d > mostN {
			most, mostN = id, d
		}
	}
	t.Logf("thread %d slept %d times; find named %d", most, mostN, tid)
	if most != tid {
		t.Fatalf("the thread that went to sleep most while a goroutine spun is %d (%d voluntary switches), find named %d", most, mostN, tid)
	}
}

// voluntary is voluntary_ctxt_switches from the text of a /proc status file.
func voluntary(t *testing.T, status string) uint64 {
	t.Helper()
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no voluntary_ctxt_switches in %q", status)
	return 0
}

func policy(t *testing.T, tid int) uint32 {
	t.Helper()
	a, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a.Policy
}

// TestBatchAndKeep: Batch puts sysmon in SCHED_BATCH; a thread that
// inherited it (here one put there by hand) is returned to SCHED_NORMAL by
// Keep, which leaves sysmon as it is.
func TestBatchAndKeep(t *testing.T) {
	tid, err := Batch()
	if err != nil {
		t.Fatalf("Batch: %v", err)
	}
	t.Cleanup(func() { _ = setPolicy(tid, unix.SCHED_NORMAL) })
	if p := policy(t, tid); p != unix.SCHED_BATCH {
		t.Fatalf("sysmon's policy after Batch = %d, want SCHED_BATCH (%d)", p, unix.SCHED_BATCH)
	}
	// A goroutine on its own thread, put in SCHED_BATCH as if sysmon had
	// started it.
	other := make(chan int)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		id := unix.Gettid()
		if err := setPolicy(id, unix.SCHED_BATCH); err != nil {
			t.Error(err)
		}
		other <- id
		<-release
	}()
	id := <-other
	defer close(release)
	if p := policy(t, id); p != unix.SCHED_BATCH {
		t.Fatalf("the helper thread's policy = %d, want SCHED_BATCH", p)
	}
	ctx, cancel := context.WithCancel(t.Context())
	moved := make(chan int, 1)
	go Keep(ctx, tid, 10*time.Millisecond, func(n int) { moved <- n; cancel() })
	select {
	case n := <-moved:
		if n != 1 {
			t.Errorf("Keep moved %d threads, want 1", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Keep moved nothing in 5 s")
	}
	if p := policy(t, id); p != unix.SCHED_NORMAL {
		t.Errorf("the helper thread's policy after Keep = %d, want SCHED_NORMAL", p)
	}
	if p := policy(t, tid); p != unix.SCHED_BATCH {
		t.Errorf("sysmon's policy after Keep = %d, want SCHED_BATCH still", p)
	}
}

// TestSetPolicyKeepsNice: moving a thread between the fair policies keeps
// the nice value it had (raising it needs no privilege, so the test can
// set one).
func TestSetPolicyKeepsNice(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	ready := make(chan int)
	go func() {
		runtime.LockOSThread() // this thread exits with the goroutine: its nice goes with it
		id := unix.Gettid()
		if err := unix.Setpriority(unix.PRIO_PROCESS, id, 7); err != nil {
			t.Error(err)
		}
		ready <- id
		<-done
	}()
	id := <-ready
	for _, p := range []uint32{unix.SCHED_BATCH, unix.SCHED_NORMAL} {
		if err := setPolicy(id, p); err != nil {
			t.Fatalf("setPolicy(%d): %v", p, err)
		}
		a, err := unix.SchedGetAttr(id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if a.Policy != p || a.Nice != 7 {
			t.Errorf("after setPolicy(%d): policy %d, nice %d; want policy %d, nice 7", p, a.Policy, a.Nice, p)
		}
	}
}
