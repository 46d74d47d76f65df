package loadstat

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestQuantileNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i))
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50}, {0.9, 90}, {0.99, 99}, {1, 100}, {0, 1}, {0.001, 1}} {
		if got := Quantile(lat, c.q); got != c.want {
			t.Errorf("Quantile(%v) = %d, want %d", c.q, got, c.want)
		}
	}
	if got := Quantile([]int64{}, 0.5); got != 0 {
		t.Errorf("empty: %d, want 0", got)
	}
}

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

func TestWriteKV(t *testing.T) {
	if err := WriteKV("", [][2]string{{"a", "1"}}); err != nil {
		t.Fatalf("empty path: %v", err)
	}
	p := filepath.Join(t.TempDir(), "out.env")
	if err := WriteKV(p, [][2]string{{"rps", "12"}, {"valid", "true"}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "rps=12\nvalid=true\n" {
		t.Fatalf("file %q", b)
	}
}

func TestFailSummary(t *testing.T) {
	if got := FailSummary(nil); got != "no requests completed" {
		t.Errorf("none: %q", got)
	}
	m := map[string]int64{"a": 1, "b": 7, "c": 3, "d": 2, "e": 5, "f": 4}
	if got, want := FailSummary(m), "7× b; 5× e; 4× f; 3× c; 2× d; …"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
