// Package sysmonprio keeps the Go runtime's sysmon thread from preempting
// request work when pactd runs on one CPU.
//
// With one P, every system call after an idle moment wakes sysmon, which
// then polls every 20 µs until it sees the P idle; on one CPU each of its
// wake-ups preempts the thread serving a request (0.59 involuntary switches
// per request at half the native port's peak, docs/benchmarks.md §2.11).
// Linux's SCHED_BATCH removes exactly that: a batch thread does not preempt
// a running one when it wakes (it runs at the next tick or when the CPU is
// free), and keeps its fair share and every duty otherwise. No privilege is
// needed to move a thread of one's own process between SCHED_OTHER and
// SCHED_BATCH. Threads sysmon starts inherit its policy, so Keep returns
// any other thread found in SCHED_BATCH to SCHED_OTHER.
package sysmonprio
