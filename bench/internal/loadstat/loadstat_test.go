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

func TestParseIOAndSwitches(t *testing.T) {
	// /proc/<pid>/io and status as proc(5) documents them (status trimmed).
	io := "rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\nread_bytes: 0\nwrite_bytes: 323932160\ncancelled_write_bytes: 0\n"
	s, err := ParseIO(io)
	if err != nil || s != (Sched{Reads: 632687, Writes: 632675}) {
		t.Fatalf("ParseIO = %+v, %v; want reads 632687, writes 632675", s, err)
	}
	status := "Name:\tpactd\nState:\tS (sleeping)\nThreads:\t7\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t545\n"
	if n, err := ParseSwitches(status); err != nil || n != 695 {
		t.Fatalf("ParseSwitches = %d, %v; want 695", n, err)
	}
	for _, bad := range []string{"", "syscr: 1\n", "syscr: x\nsyscw: 2\n", "syscr: 1\nsyscr: 2\nsyscw: 3\n"} {
		if _, err := ParseIO(bad); err == nil || err.Error() != "unexpected /proc io format" {
			t.Errorf("ParseIO(%q) = %v, want unexpected /proc io format", bad, err)
		}
	}
	for _, bad := range []string{"", "voluntary_ctxt_switches:\t1\n", "voluntary_ctxt_switches:\t-1\nnonvoluntary_ctxt_switches:\t2\n"} {
		if _, err := ParseSwitches(bad); err == nil || err.Error() != "unexpected /proc status format" {
			t.Errorf("ParseSwitches(%q) = %v, want unexpected /proc status format", bad, err)
		}
	}
	if d := (Sched{5, 7, 9}).Sub(Sched{1, 2, 3}); d != (Sched{4, 5, 6}) {
		t.Errorf("Sub = %+v, want {4 5 6}", d)
	}
	// This process: a sleep is a voluntary switch, a pipe's write and read
	// are one system call each at least.
	before, err := ProcSched(os.Getpid())
	if err != nil {
		t.Fatalf("ProcSched(self): %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	after, err := ProcSched(os.Getpid())
	if err != nil {
		t.Fatalf("ProcSched(self): %v", err)
	}
	d := after.Sub(before)
	if d.Switches < 1 || d.Reads < 1 || d.Writes < 1 {
		t.Errorf("ProcSched(self) moved by %+v over a pipe round trip and a sleep; want at least one of each", d)
	}
	if _, err := ProcSched(-1); err == nil {
		t.Error("ProcSched(-1): want an error")
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
