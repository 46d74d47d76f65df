// Package loadstat holds what the lab's load generators (cmd/pactd-loadgen,
// cmd/pactd-peerload) share: latency quantiles, a process's context
// switches and system calls from /proc, the key=value result files the
// benchmark scripts read, failure summaries and the HTTP/1.1 client they
// drive servers with. A process's CPU time comes from the product's
// internal/cpumeter, which the in-process benchmarks use as well.
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

// Sched is what a process cost the kernel beyond CPU time: context
// switches (voluntary and involuntary, over its threads) and read and
// write system calls (any file, socket or pipe, the process's whole life).
// At a moderate rate each request pays its own wake-up, read and write
// (docs/benchmarks.md, "The tail at half the peak"), so these per request
// say where a rise in CPU
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
