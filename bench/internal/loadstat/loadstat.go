// Package loadstat holds what pactd's load generators (cmd/pactd-loadgen,
// cmd/pactd-peerload) share: latency quantiles, a process's CPU time,
// context switches and system calls from /proc, the key=value result files the benchmark scripts read, failure
// summaries and the HTTP/1.1 client they drive servers with; and the CPU
// meter the in-process benchmarks report with (Meter).
package loadstat

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Quantile returns the q-quantile (nearest rank) of sorted latencies, 0
// when there are none.
func Quantile[T ~int64](sorted []T, q float64) T {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(n))) - 1
	return sorted[min(max(i, 0), n-1)]
}

// clockTick is the unit of /proc/<pid>/stat's utime and stime (USER_HZ,
// 100 on every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// ProcCPU returns the CPU time (user + system, all threads) process pid
// has used, from /proc/<pid>/stat.
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return ParseStat(string(b))
}

// ParseStat reads utime+stime from the text of /proc/<pid>/stat. The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func ParseStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state); utime is field 14
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc stat format")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * clockTick, nil
}

// Sched is what a process cost the kernel beyond CPU time: context
// switches (voluntary and involuntary, over its threads) and read and
// write system calls (any file, socket or pipe, the process's whole life).
// At a moderate rate each request pays its own wake-up, read and write
// (docs/benchmarks.md §2.10), so these per request say where a rise in CPU
// per request came from.
type Sched struct {
	Switches, Reads, Writes uint64
}

// Sub returns s - o, field by field.
func (s Sched) Sub(o Sched) Sched {
	return Sched{s.Switches - o.Switches, s.Reads - o.Reads, s.Writes - o.Writes}
}

// ProcSched reads process pid's Sched from /proc/<pid>/task/*/status (the
// switch counts are per thread) and /proc/<pid>/io (syscr, syscw). Reading
// another user's io file needs the right to ptrace it.
func ProcSched(pid int) (Sched, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/io")
	if err != nil {
		return Sched{}, err
	}
	s, err := ParseIO(string(b))
	if err != nil {
		return Sched{}, err
	}
	tasks, err := os.ReadDir(dir + "/task")
	if err != nil {
		return Sched{}, err
	}
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/task/" + t.Name() + "/status")
		if err != nil {
			continue // the thread exited between the listing and the read
		}
		n, err := ParseSwitches(string(b))
		if err != nil {
			return Sched{}, err
		}
		s.Switches += n
	}
	return s, nil
}

// ParseIO reads syscr and syscw from the text of /proc/<pid>/io into a
// Sched's Reads and Writes.
func ParseIO(text string) (Sched, error) {
	v, err := procFields(text, "io", "syscr", "syscw")
	if err != nil {
		return Sched{}, err
	}
	return Sched{Reads: v[0], Writes: v[1]}, nil
}

// ParseSwitches returns voluntary_ctxt_switches + nonvoluntary_ctxt_switches
// from the text of a /proc status file.
func ParseSwitches(text string) (uint64, error) {
	v, err := procFields(text, "status", "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")
	if err != nil {
		return 0, err
	}
	return v[0] + v[1], nil
}

// procFields returns the unsigned values of keys, in their order, from
// "key: value" lines of a /proc file (file names it in the error); each
// key must be there once.
func procFields(text, file string, keys ...string) ([]uint64, error) {
	bad := errors.New("unexpected /proc " + file + " format")
	vals := make([]uint64, len(keys))
	seen := make([]bool, len(keys))
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		for i, key := range keys {
			if k != key {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil || seen[i] {
				return nil, bad
			}
			vals[i], seen[i] = n, true
		}
	}
	for _, ok := range seen {
		if !ok {
			return nil, bad
		}
	}
	return vals, nil
}

// WriteKV writes key=value lines to path (nothing when path is empty).
func WriteKV(path string, kv [][2]string) error {
	if path == "" {
		return nil
	}
	var b strings.Builder
	for _, p := range kv {
		fmt.Fprintf(&b, "%s=%s\n", p[0], p[1])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// FailSummary lists the five most frequent failure labels with their
// counts.
func FailSummary(m map[string]int64) string {
	if len(m) == 0 {
		return "no requests completed"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	var b strings.Builder
	for i, k := range keys {
		if i == 5 {
			b.WriteString("; …")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d× %s", m[k], k)
	}
	return b.String()
}

// HTTP1Client is an HTTP/1.1-only client keeping up to conns connections
// open: with one request in flight per connection, as HTTP/1.1 allows, a
// closed loop of c workers needs c of them. It never asks for compressed
// answers on its own.
func HTTP1Client(conns int) *http.Client {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	return &http.Client{Transport: &http.Transport{
		Protocols:           p,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		DisableCompression:  true,
	}}
}

// PostgresBackendsCPU sums the CPU time of the PostgreSQL backends connected
// to database dbName, found by their process title ("postgres: [cluster: ]
// user dbName host(port) state"). found is false when none is.
func PostgresBackendsCPU(dbName string) (total time.Duration, found bool) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		title, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !strings.HasPrefix(string(title), "postgres:") {
			continue
		}
		if !strings.Contains(string(title)+" ", " "+dbName+" ") {
			continue
		}
		if c, err := ProcCPU(pid); err == nil {
			total += c
			found = true
		}
	}
	return total, found
}

// Meter measures, over a benchmark's loop, the CPU time of this process
// and (when a database is named) of the PostgreSQL backends serving it.
type Meter struct {
	dbName       string
	self0, pg0   time.Duration
	selfOK, pgOK bool
}

// StartMeter starts measuring; dbName "" measures this process only.
func StartMeter(dbName string) *Meter {
	m := &Meter{dbName: dbName}
	c, err := ProcCPU(os.Getpid())
	m.self0, m.selfOK = c, err == nil
	if dbName != "" {
		m.pg0, m.pgOK = PostgresBackendsCPU(dbName)
	}
	return m
}

// Report passes go-cpu-ns/op, pg-cpu-ns/op (when measured) and ops/cpu-s
// (both together: the honest per-core figure when PostgreSQL shares the
// machine) for n operations to report, which is testing.B's ReportMetric.
// Where /proc cannot be read it reports nothing.
func (m *Meter) Report(n int, report func(value float64, unit string)) {
	if n == 0 || !m.selfOK {
		return
	}
	self1, err := ProcCPU(os.Getpid())
	if err != nil {
		return
	}
	ops := float64(n)
	cpu := self1 - m.self0
	report(float64(cpu.Nanoseconds())/ops, "go-cpu-ns/op")
	if m.pgOK {
		if pg1, ok := PostgresBackendsCPU(m.dbName); ok {
			report(float64((pg1-m.pg0).Nanoseconds())/ops, "pg-cpu-ns/op")
			cpu += pg1 - m.pg0
		}
	}
	if cpu > 0 {
		report(ops/cpu.Seconds(), "ops/cpu-s")
	}
}
