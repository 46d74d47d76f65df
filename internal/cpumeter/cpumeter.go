// Package cpumeter reads CPU time from /proc: a process's (ProcCPU), the
// PostgreSQL backends serving one database's (PostgresBackendsCPU), and
// Meter, with which the in-process benchmarks report CPU per operation
// (go-cpu-ns/op, pg-cpu-ns/op, ops/cpu-s). The load generators of the lab
// (bench/) read pactd's CPU time with ProcCPU too.
package cpumeter

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

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

// Start starts measuring; dbName "" measures this process only.
func Start(dbName string) *Meter {
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
