#!/usr/bin/env python3
"""trace-stalls.py: where a one-P Go process's time went around its stalls.

Reads an execution trace (runtime/trace) of a process that ran with
GOMAXPROCS=1 (pactd in bench/scripts/bench-verify.sh, or the load generator) as
printed by `go tool trace -d=parsed TRACE`, and prints:

  - the longest busy periods (the P running goroutines with gaps under
    30 µs), each with the time of the goroutines that ran in it, by the
    function the goroutine started in (runtime.bgsweep is the background
    sweeper, runtime.gcBgMarkWorker the mark worker);
  - around each GC mark phase, the P's use in 1 ms buckets:
    sweep / mark / everything else, in per cent of the millisecond.

A busy period that is mostly runtime.bgsweep is the stall of
golang/go#56060: on one P the sweeper yields only to goroutines already
queued, so nothing reads the network until it is done (docs/benchmarks.md,
"The collector and memory"). Usage:

    curl -so trace.out 'http://PPROF_ADDR/debug/pprof/trace?seconds=4'
    go tool trace -d=parsed trace.out > parsed.txt
    python3 bench/scripts/trace-stalls.py parsed.txt

(BENCH_PROFILE=1 bash bench/scripts/bench-verify.sh builds pactd with such a
pprof listener.) The -d=parsed format is the Go toolchain's debug output;
this reads the Go 1.26 form.
"""
import collections
import re
import sys

EVENT = re.compile(r'^M=(-?\d+) P=(-?\d+) G=(-?\d+) (\w+) Time=(\d+)(.*)$')
GAP_NS = 30_000


def parse(path):
    """Returns (segments, entry function per goroutine, ranges by name)."""
    segs, entry, ranges, open_ranges = [], {}, collections.defaultdict(list), {}
    running, since, current, stack = None, 0, None, []

    def flush():
        if current is not None and stack:
            entry.setdefault(current, stack[-1])

    with open(path) as f:
        for line in f:
            if line.startswith('M='):
                flush()
                current, stack = None, []
                m = EVENT.match(line)
                if not m:
                    continue
                _, p, g, kind, t, rest = m.groups()
                t = int(t)
                if kind == 'StateTransition' and 'GoID=' in rest:
                    gid = int(re.search(r'GoID=(\d+)', rest).group(1))
                    frm, to = re.search(r' (\w+)->(\w+) ', rest).groups()
                    if to == 'Running':
                        if running is not None:
                            segs.append((since, t, running))
                        running, since = gid, t
                    elif frm == 'Running':
                        if running == gid:
                            segs.append((since, t, gid))
                            running = None
                        current = gid
                elif kind in ('RangeBegin', 'RangeEnd'):
                    name = re.search(r'Name="([^"]*)"', rest).group(1)
                    key = (name, g if 'Goroutine' in rest else p)
                    if kind == 'RangeBegin':
                        open_ranges[key] = t
                    elif key in open_ranges:
                        ranges[name].append((open_ranges.pop(key), t))
            elif line.startswith('\t') and current is not None:
                s = line.strip()
                if not s.startswith('/'):
                    stack.append(s.split(' @')[0])
    flush()
    segs.sort()
    return segs, entry, ranges


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    segs, entry, ranges = parse(sys.argv[1])
    if not segs:
        sys.exit('no goroutine ran in this trace')
    t0, t1 = segs[0][0], segs[-1][1]
    busy = sum(e - s for s, e, _ in segs)
    print(f'trace: {(t1 - t0) / 1e6:.0f} ms, P busy {100 * busy / (t1 - t0):.0f} %')

    periods, members = [], [segs[0]]
    start, end = segs[0][0], segs[0][1]
    for s, e, g in segs[1:]:
        if s - end < GAP_NS:
            end = max(end, e)
            members.append((s, e, g))
        else:
            periods.append((start, end, members))
            start, end, members = s, e, [(s, e, g)]
    periods.append((start, end, members))
    marks = ranges.get('GC concurrent mark phase', [])
    print('GC mark phases (start ms, length ms):',
          [(round((s - t0) / 1e6, 1), round((e - s) / 1e6, 2)) for s, e in marks])
    print('\nlongest busy periods:')
    for s, e, mem in sorted(periods, key=lambda b: b[0] - b[1])[:8]:
        share = collections.Counter()
        for a, b, g in mem:
            share[entry.get(g, '?')] += b - a
        print(f'  at {(s - t0) / 1e6:8.1f} ms: {(e - s) / 1e6:5.2f} ms')
        for name, ns in share.most_common(4):
            print(f'      {ns / 1e6:6.2f} ms  {name}')

    kind = {'runtime.bgsweep': 'sweep', 'runtime.gcBgMarkWorker': 'mark'}
    for ms, me in marks:
        a, b = ms - 2_000_000, me + 30_000_000
        buckets = collections.defaultdict(collections.Counter)
        for s, e, g in segs:
            if e < a or s > b:
                continue
            s, e = max(s, a), min(e, b)
            while s < e:
                k = (s - a) // 1_000_000
                x = min(e, a + (k + 1) * 1_000_000)
                buckets[k][kind.get(entry.get(g), 'other')] += x - s
                s = x
        print(f'\nmark phase at {(ms - t0) / 1e6:.1f} ms ({(me - ms) / 1e6:.1f} ms); '
              'per ms from 2 ms before: sweep/mark/other %')
        cells = [f"{k - 2:+3d}:{c['sweep'] // 10000:2d}/{c['mark'] // 10000:2d}/{c['other'] // 10000:2d}"
                 for k, c in ((k, buckets[k]) for k in range((b - a) // 1_000_000))]
        for i in range(0, len(cells), 8):
            print('  ' + '  '.join(cells[i:i + 8]))


if __name__ == '__main__':
    main()
