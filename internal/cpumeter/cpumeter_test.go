package cpumeter

import (
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// The command name may hold spaces and ')': fields count from the last one.
	s := "42 (a) b) S 1 2 3 4 5 6 7 8 9 10 250 31 0 0 20 0 1 0 100 0 0"
	got, err := ParseStat(s)
	if err != nil || got != 2810*time.Millisecond {
		t.Fatalf("ParseStat = %v, %v; want 2.81s", got, err)
	}
	for _, bad := range []string{"42 no paren", "42 (x) S 1 2"} {
		if _, err := ParseStat(bad); err == nil || err.Error() != "unexpected /proc stat format" {
			t.Errorf("ParseStat(%q) = %v, want unexpected /proc stat format", bad, err)
		}
	}
	// This process, after spinning for a few clock ticks of CPU.
	var own time.Duration
	for deadline := time.Now().Add(2 * time.Second); own == 0 && err == nil && time.Now().Before(deadline); {
		own, err = ProcCPU(os.Getpid())
	}
	if err != nil || own <= 0 {
		t.Errorf("ProcCPU(self) = %v, %v; want some CPU time", own, err)
	}
}

// TestMeterReportsThisProcess: over a loop that spends CPU, Report gives
// this process's CPU per operation and the operations per CPU-second that
// follow from it, and no PostgreSQL figure when no database was named.
func TestMeterReportsThisProcess(t *testing.T) {
	m := Start("")
	var x uint64
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x = x*6364136223846793005 + 1442695040888963407
	}
	got := map[string]float64{}
	m.Report(1000, func(v float64, unit string) { got[unit] = v })
	if _, ok := got["pg-cpu-ns/op"]; ok {
		t.Errorf("reported pg-cpu-ns/op without a database: %v", got)
	}
	ns, ops := got["go-cpu-ns/op"], got["ops/cpu-s"]
	if ns <= 0 || ops <= 0 {
		t.Fatalf("Report = %v (x %d); want go-cpu-ns/op and ops/cpu-s above 0", got, x)
	}
	if d := ns * ops / 1e9; d < 0.99 || d > 1.01 {
		t.Errorf("go-cpu-ns/op %v and ops/cpu-s %v disagree (product %v, want 1)", ns, ops, d)
	}
	n := 0
	m.Report(0, func(float64, string) { n++ })
	if n != 0 {
		t.Errorf("Report(0) reported %d values, want none", n)
	}
}
