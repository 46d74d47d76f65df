#!/usr/bin/env bash
# bench/scripts/coldstart.sh: how long a newcomer's first `go run ./cmd/pactd` takes until pactd
# answers, on an EMPTY Go build cache, and what each dependency's compiling costs.
#
#   bash bench/scripts/coldstart.sh             measurements 1 and 2 below
#   bash bench/scripts/coldstart.sh --run-only  1 only
#   bash bench/scripts/coldstart.sh --tools     also 3
#
# 1. go run: `go run ./cmd/pactd` with GOCACHE set to a fresh, empty directory, timed from
#    the start of go run to the first SERVING answer of grpc.health.v1 Check on its port
#    (pactd on free loopback ports and a temporary data directory). The module cache
#    (GOMODCACHE) is kept, and `go mod download` runs before the clock starts, so no
#    module is downloaded during the measurement: the figure is compiling, linking and
#    starting. Other Go settings are the caller's (GOFLAGS and so on), as scripts/test.sh
#    would see them. Then the first admin call (`go run ./cmd/pactd health`), which reuses
#    the binary go run cached.
# 2. per dependency: `go build -debug-actiongraph` of ./cmd/pactd on another fresh cache,
#    and from its action graph the compile time of every package summed per module
#    (the standard library as "std"), the link, and the longest chain of dependent
#    compiles. Compile times are each action's wall time with the go command's own
#    parallelism (one job per core), so on a busy machine they include waiting for a core.
# 3. (--tools) what inspecting with the pinned clients costs a newcomer instead: the first
#    `go tool -modfile=tools/go.mod grpcurl` and `… buf` on the cache go run filled.
#
# The machine's load average is printed before and after: the figures mean little when
# other work shares the cores (run it when `uptime` shows a load below 1).
set -euo pipefail
cd "$(dirname "$0")/../.." # the repository root, where ./cmd/pactd builds

RUN_ONLY=0
TOOLS=0
for a in "$@"; do
	case "$a" in
	--run-only) RUN_ONLY=1 ;;
	--tools) TOOLS=1 ;;
	*)
		echo "usage: bash bench/scripts/coldstart.sh [--run-only] [--tools]" >&2
		exit 2
		;;
	esac
done
command -v curl >/dev/null || { echo "FAIL: curl is needed to ask pactd for its health" >&2; exit 1; }

WORK=$(mktemp -d -t pactd-coldstart.XXXXXX)
pid=""
cleanup() {
	if [[ -n $pid ]]; then kill -TERM -- "-$pid" 2>/dev/null || true; fi
	rm -rf "$WORK"
}
trap cleanup EXIT

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo "go: $(go version)  cores: $(nproc 2>/dev/null || echo '?')  GOFLAGS=${GOFLAGS:-}"
echo "module cache kept: $(go env GOMODCACHE)"
go mod download
echo "modules present; load average (1, 5, 15 min) before: $(load)"

# ---------------------------------------------------------------------------
echo
echo "== 1. go run ./cmd/pactd on an empty build cache, until pactd answers"
mkdir "$WORK/gocache-run" "$WORK/data"
log="$WORK/pactd.log"
: >"$log" # there before go run writes to it, so the loop below can read it at once
t0=$(now)
# Its own process group, so that go run and the pactd it started stop together.
GOCACHE="$WORK/gocache-run" PACT_LISTEN=127.0.0.1:0 PACT_GRPC_LISTEN=127.0.0.1:0 PACT_DATA_DIR="$WORK/data" \
	PACT_LOG_FORMAT=json setsid go run ./cmd/pactd >"$WORK/pactd.out" 2>"$log" &
pid=$!
addr=""
answered=""
while kill -0 "$pid" 2>/dev/null; do
	if [[ -z $addr ]]; then
		addr=$(sed -n 's/.*"msg":"pactd serving","addr":"\([^"]*\)".*/\1/p' "$log" | head -n 1)
	fi
	if [[ -n $addr ]] && curl -fsS -m 2 -H 'Content-Type: application/json' -d '{}' \
		"http://$addr/grpc.health.v1.Health/Check" 2>/dev/null | grep -q SERVING; then
		answered=$(now)
		break
	fi
	sleep 0.1
done
if [[ -z $answered ]]; then
	echo "FAIL: go run ./cmd/pactd stopped before it answered:" >&2
	tail -n 20 "$log" >&2
	exit 1
fi
startup=$(sed -n 's/.*"startup_ms":\([0-9.]*\).*/\1/p' "$log" | head -n 1)
echo "first answer after $(elapsed "$t0" "$answered") s (pactd's own start-up: ${startup:-?} ms of it)"
echo "load average after: $(load)"
# The first admin call, in a second terminal as docs/getting-started.md has it: go run again, on the
# cache the first one filled, so the binary is go run's cached one and nothing compiles.
t0=$(now)
if GOCACHE="$WORK/gocache-run" go run ./cmd/pactd health -addr "http://$addr" >/dev/null; then
	echo "the first admin call, go run ./cmd/pactd health: $(elapsed "$t0" "$(now)") s"
else
	echo "FAIL: go run ./cmd/pactd health did not answer SERVING" >&2
	exit 1
fi
kill -TERM -- "-$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
pid=""
if [[ $TOOLS == 1 ]]; then
	echo
	echo "== 3. the pinned inspection clients' first run, on the cache go run filled"
	go mod download -modfile=tools/go.mod
	for t in "grpcurl -version" "buf --version"; do
		t0=$(now)
		# shellcheck disable=SC2086 # the tool and its flag
		GOCACHE="$WORK/gocache-run" go tool -modfile=tools/go.mod $t >/dev/null 2>&1
		echo "first go tool ${t%% *}: $(elapsed "$t0" "$(now)") s; load average after: $(load)"
	done
fi
if [[ $RUN_ONLY == 1 ]]; then exit 0; fi

# ---------------------------------------------------------------------------
echo
echo "== 2. compile time per module: go build -debug-actiongraph on another empty cache"
mkdir "$WORK/gocache-build"
t0=$(now)
GOCACHE="$WORK/gocache-build" go build -debug-actiongraph="$WORK/actions.json" -o "$WORK/pactd" ./cmd/pactd
echo "cold go build: $(elapsed "$t0" "$(now)") s; load average after: $(load)"
go list -deps -f '{{.ImportPath}} {{with .Module}}{{.Path}}{{else}}std{{end}}' ./cmd/pactd >"$WORK/modules.txt"

# The summary is a small Go program (built with the caller's own cache, not timed).
mkdir "$WORK/sum"
cat >"$WORK/sum/go.mod" <<'GOMOD'
module coldstartsum

go 1.26
GOMOD
cat >"$WORK/sum/main.go" <<'GOSRC'
// Command coldstartsum sums a go build action graph's compile times per module.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

type action struct {
	ID                  int
	Mode, Package       string
	Deps                []int
	TimeStart, TimeDone time.Time
}

func main() {
	var actions []action
	b, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = json.Unmarshal(b, &actions)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "coldstartsum:", err)
		os.Exit(1)
	}
	module := map[string]string{}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "coldstartsum:", err)
		os.Exit(1)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if pkg, mod, ok := strings.Cut(sc.Text(), " "); ok {
			module[pkg] = mod
		}
	}
	type total struct {
		name     string
		secs     float64
		packages int
	}
	sums := map[string]*total{}
	var all, link float64
	dur := map[int]float64{}
	byID := map[int]action{}
	for _, a := range actions {
		byID[a.ID] = a
		if a.TimeStart.IsZero() || a.TimeDone.IsZero() {
			continue
		}
		d := a.TimeDone.Sub(a.TimeStart).Seconds()
		dur[a.ID] = d
		switch a.Mode {
		case "build":
			m := module[a.Package]
			if m == "" {
				m = "std" // packages of the toolchain's own build (runtime/cgo, …)
			}
			if sums[m] == nil {
				sums[m] = &total{name: m}
			}
			sums[m].secs += d
			sums[m].packages++
			all += d
		case "link":
			link += d
		}
	}
	list := make([]*total, 0, len(sums))
	for _, t := range sums {
		list = append(list, t)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].secs > list[j].secs })
	fmt.Printf("%-58s %8s %6s %8s\n", "module", "compile", "share", "packages")
	for _, t := range list {
		if t.secs < 0.2 {
			continue
		}
		fmt.Printf("%-58s %7.1fs %5.1f%% %8d\n", t.name, t.secs, 100*t.secs/all, t.packages)
	}
	fmt.Printf("%-58s %7.1fs %5.1f%% %8d\n", "all packages", all, 100.0, len(module))
	fmt.Printf("link: %.1fs\n", link)
	// The longest chain of actions, each waiting for its dependencies.
	memo := map[int]float64{}
	var chain func(id int) float64
	chain = func(id int) float64 {
		if v, ok := memo[id]; ok {
			return v
		}
		best := 0.0
		for _, d := range byID[id].Deps {
			best = max(best, chain(d))
		}
		memo[id] = best + dur[id]
		return memo[id]
	}
	longest := 0.0
	for id := range byID {
		longest = max(longest, chain(id))
	}
	fmt.Printf("longest chain of dependent actions: %.1fs (the floor with unlimited cores)\n", longest)
}
GOSRC
(cd "$WORK/sum" && GOFLAGS= GOWORK=off go build -o "$WORK/coldstartsum" .)
"$WORK/coldstartsum" "$WORK/actions.json" "$WORK/modules.txt"
