#!/usr/bin/env bash
# bench-verify.sh measures VerifyAgentRequest against the raw ES256 limit, in
# one run on one machine (design.md, "Performance targets"):
#
#   1. raw crypto/ecdsa P-256 verifications/s, one thread, on the server CPU
#      (pactd idle)
#   2. new-token peak over gRPC     (closed loop, every token a cache miss)
#   3. new-token peak over Connect
#   4. repeat-token peak over gRPC  (one token again and again)
#   5. gRPC new tokens at a fixed 70 % of (2) for 20 s: p99 latency
#   6. the transport's floor on each port and protocol (-mode floor: the
#      same RPC, interceptors and credential with a non-JWT that pactd
#      refuses before any JOSE work), and every figure as floor +
#      verification: pactd's CPU per call above the floor, and repeat /
#      floor (design target ≤ 1.25)
#
# pactd runs with GOMAXPROCS=1 pinned to one CPU (taskset), on embedded
# SQLite in a temporary data directory; pactd-loadgen is pinned to another
# CPU. It prints each run, then a markdown table with the ratios to raw.
#
#   bash scripts/bench-verify.sh               # about 2-3 minutes
#
# Knobs (environment): BENCH_PEAK_SECONDS (10), BENCH_RATE_SECONDS (20),
# BENCH_RAW_SECONDS (5), BENCH_CONC (64, closed-loop workers), BENCH_RATE_CONC
# (256, open-loop workers), BENCH_CLIENT (connect-go or grpc-go, for the gRPC
# runs), BENCH_CONNS (1), BENCH_POOL (200000), BENCH_SERVER_CPU (0),
# BENCH_CLIENT_CPU (1), BENCH_KEEP=1 keeps the temporary directory (logs).
#
# BENCH_PROFILE=1 builds pactd with a net/http/pprof listener on loopback
# (added only to this build, through a go build -overlay file written to the
# temporary directory; pactd's sources and its production mux are
# untouched), saves pactd's CPU profile of each peak run and prints the top
# of the new-token gRPC one. Profiling costs the server a few per cent.
set -euo pipefail
cd "$(dirname "$0")/.."

PEAK=${BENCH_PEAK_SECONDS:-10}
RATE_SECONDS=${BENCH_RATE_SECONDS:-20}
RAW_SECONDS=${BENCH_RAW_SECONDS:-5}
CONC=${BENCH_CONC:-64}
RATE_CONC=${BENCH_RATE_CONC:-256}
CLIENT=${BENCH_CLIENT:-connect-go}
CONNS=${BENCH_CONNS:-1}
POOL=${BENCH_POOL:-200000}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}

# pactd refuses unknown PACT_* variables; start from none but ours.
for v in $(compgen -e); do
	case $v in PACT_*) unset "$v" ;; esac
done

started=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-verify.XXXXXX")
pid=""
lg_pid=""
cleanup() {
	if [ -n "$lg_pid" ]; then kill -TERM "$lg_pid" 2>/dev/null || true; fi
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== build"
go build -o "$tmp/pactd-loadgen" ./cmd/pactd-loadgen
LG="$tmp/pactd-loadgen"
profile_args=()
if [ -n "${BENCH_PROFILE:-}" ]; then
	BENCH_KEEP=1
	cat >"$tmp/zz_bench_pprof.go" <<'GO'
package main

import (
	"net/http"
	_ "net/http/pprof" // on http.DefaultServeMux, which pactd does not serve
	"os"
)

func init() {
	if addr := os.Getenv("BENCH_PPROF_ADDR"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}
}
GO
	printf '{"Replace":{"%s":"%s"}}\n' "$PWD/cmd/pactd/zz_bench_pprof.go" "$tmp/zz_bench_pprof.go" >"$tmp/overlay.json"
	go build -overlay "$tmp/overlay.json" -o "$tmp/pactd" ./cmd/pactd
	pprof_addr="127.0.0.1:$("$LG" -free-port)"
	profile_args=(-server-pprof "http://$pprof_addr")
else
	go build -o "$tmp/pactd" ./cmd/pactd
fi

# Pinning: pactd on SERVER_CPU, the load generator on CLIENT_CPU.
server_pin=()
client_pin=()
pinning="unpinned"
if ! command -v taskset >/dev/null; then
	echo "WARNING: taskset not found: running unpinned (pactd still has GOMAXPROCS=1; numbers are noisier)" >&2
	pinning="unpinned (no taskset)"
elif [ "$(nproc)" -lt 2 ]; then
	echo "WARNING: fewer than 2 CPUs: running unpinned" >&2
	pinning="unpinned (nproc < 2)"
else
	server_pin=(taskset -c "$SERVER_CPU")
	client_pin=(taskset -c "$CLIENT_CPU")
	pinning="pactd on CPU $SERVER_CPU, loadgen on CPU $CLIENT_CPU"
fi

secret() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
ADMIN="bench_adm_$(secret)"
FRONT="bench_fe_$(secret)"
port=$("$LG" -free-port)
gport=$("$LG" -free-port)
jwks_port=$("$LG" -free-port)
url="http://127.0.0.1:$port"
gurl="http://127.0.0.1:$gport" # the native gRPC port (PACT_GRPC_LISTEN)
mkdir -p "$tmp/data"

echo "== start pactd on $url ($pinning)"
env PACT_LISTEN="127.0.0.1:$port" PACT_GRPC_LISTEN="127.0.0.1:$gport" PACT_DATA_DIR="$tmp/data" PACT_DEV=true PACT_LOG_LEVEL=warn \
	PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" GOMAXPROCS=1 BENCH_PPROF_ADDR="${pprof_addr:-}" \
	"${server_pin[@]}" "$tmp/pactd" serve >"$tmp/pactd.log" 2>&1 &
pid=$! # env and taskset exec, so this is pactd's pid
if ! "$LG" -addr "$url" -wait-health 20s; then
	echo "pactd did not become healthy; its log:" >&2
	cat "$tmp/pactd.log" >&2
	exit 1
fi

# lg runs the load generator pinned, against this pactd, with one PA (a
# fixed JWKS port and key file, so every run reuses the same agent).
lg() {
	env PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" "${client_pin[@]}" "$LG" \
		-addr "$url" -server-pid "$pid" -jwks-addr "127.0.0.1:$jwks_port" -key-file "$tmp/pa.pem" "$@"
}
# measure NAME ARGS... runs one load test; an invalid run (exit 3) is kept
# and marked, any other error stops the script.
measure() {
	local name=$1 rc=0 prof=()
	shift
	echo "== $name"
	if [ ${#profile_args[@]} -gt 0 ] && [ "$name" != rate_grpc ]; then
		prof=("${profile_args[@]}" -profile-out "$tmp/$name.pprof")
	fi
	# In the background, so that an interrupt is handled at once.
	lg -out "$tmp/$name.env" "${prof[@]}" "$@" &
	lg_pid=$!
	wait "$lg_pid" || rc=$?
	lg_pid=""
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
		echo "pactd-loadgen failed ($rc); pactd log:" >&2
		tail -n 20 "$tmp/pactd.log" >&2
		exit 1
	fi
}
val() { sed -n "s/^$2=//p" "$tmp/$1.env"; }

echo "== raw ES256 verify/s on CPU $SERVER_CPU (pactd idle), ${RAW_SECONDS}s"
"${server_pin[@]}" "$LG" -raw -d "${RAW_SECONDS}s" -out "$tmp/raw.env"

common=(-c "$CONC" -conns "$CONNS" -d "${PEAK}s" -pool "$POOL")
measure new_grpc -mode new -protocol grpc -client "$CLIENT" "${common[@]}"
measure new_connect -mode new -protocol connect -client connect-go "${common[@]}"
measure repeat_grpc -mode repeat -protocol grpc -client "$CLIENT" "${common[@]}"
native=(-protocol grpc -client grpc-go -verify-addr "$gurl")
measure new_native -mode new "${native[@]}" "${common[@]}"
measure repeat_native -mode repeat "${native[@]}" "${common[@]}"
measure floor_native -mode floor "${native[@]}" "${common[@]}"
measure floor_grpc -mode floor -protocol grpc -client "$CLIENT" "${common[@]}"
measure floor_connect -mode floor -protocol connect -client connect-go "${common[@]}"

peak=$(val new_native rps)
rate=$(awk -v r="$peak" 'BEGIN { printf "%d", r * 0.7 }')
if [ "$rate" -lt 1 ]; then
	echo "no gRPC new-token peak to take 70 % of" >&2
	exit 1
fi
measure rate_grpc -mode new "${native[@]}" -c "$RATE_CONC" -conns "$CONNS" \
	-d "${RATE_SECONDS}s" -rate "$rate" -pool "$POOL"

# ---- the table
raw=$(val raw raw_per_s)
raw_cpu=$(val raw raw_per_cpu_s)
ratio() { awk -v a="$1" -v b="$raw" 'BEGIN { printf "%.2f", a / b }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
cpu() { # "pactd % / loadgen %" for one run
	awk -v s="$(val "$1" server_cpu)" -v c="$(val "$1" client_cpu)" \
		'BEGIN { printf "%s / %.0f %%", (s < 0 ? "?" : sprintf("%.0f %%", 100 * s)), 100 * c }'
}
per_req() { # pactd's CPU per request, and in brackets the rate one whole core would give at that cost over raw verifications per CPU-second
	awk -v u="$(val "$1" server_us_per_req)" -v r="$raw_cpu" \
		'BEGIN { if (u <= 0) print "?"; else printf "%.0f µs (%.2f)", u, 1e6 / u / r }'
}
verdict() { # NAME RATIO MIN
	if [ "$(val "$1" valid)" != true ]; then
		echo "INVALID ($(val "$1" failures) failures)"
	elif ge "$2" "$3"; then echo pass; else echo FAIL; fi
}
peak_row() { # NAME LABEL MIN_RATIO TARGET_TEXT
	local r
	r=$(ratio "$(val "$1" rps)")
	printf '| %s | %s req/s | %s | %s | %s | %s / %s / %s | %s | %s |\n' "$2" "$(val "$1" rps)" "$r" "$4" \
		"$(verdict "$1" "$r" "$3")" "$(val "$1" p50_ms)" "$(val "$1" p99_ms)" "$(val "$1" max_ms)" "$(per_req "$1")" "$(cpu "$1")"
}

p99=$(val rate_grpc p99_ms)
if [ "$(val rate_grpc valid)" != true ]; then
	p99_verdict="INVALID ($(val rate_grpc failures) failures)"
elif awk -v p="$p99" 'BEGIN { exit !(p < 5) }'; then p99_verdict=pass; else p99_verdict=FAIL; fi
gzip_note=""
if [ "$CLIENT" = connect-go ]; then gzip_note=", accepts gzip"; fi

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "## VerifyAgentRequest vs raw ES256 ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
echo "| measurement | result | × raw | target | verdict | p50 / p99 / max ms | pactd CPU per request (× raw by CPU) | CPU used: pactd / loadgen |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
awk -v c="$SERVER_CPU" -v r="$raw" -v rc="$raw_cpu" 'BEGIN {
	printf "| raw ES256 verify (crypto/ecdsa P-256, 1 thread, CPU %s) | %s verify/s | 1.00 | — | — | — | %.0f µs (1.00) | — |\n", c, r, 1e6 / rc }'
peak_row new_native "new token, native gRPC port (grpc-go), c=$CONC" 0.70 "≥ 0.70"
peak_row repeat_native "repeat token, native gRPC port (grpc-go), c=$CONC" 5 "≥ 5.00"
peak_row new_grpc "new token, main port, gRPC ($CLIENT$gzip_note), c=$CONC" 0.70 "(≥ 0.70)"
peak_row new_connect "new token, main port, Connect (connect-go, accepts gzip), c=$CONC" 0.70 "(≥ 0.70)"
peak_row repeat_grpc "repeat token, main port, gRPC ($CLIENT$gzip_note), c=$CONC" 5 "(≥ 5.00)"
printf '| native gRPC new token, open loop at 70 %% of its peak (%s req/s, %ss) | p99 %s ms (%s req/s done) | — | p99 < 5 ms | %s | %s / %s / %s | %s | %s |\n' \
	"$rate" "$RATE_SECONDS" "$p99" "$(val rate_grpc rps)" "$p99_verdict" \
	"$(val rate_grpc p50_ms)" "$p99" "$(val rate_grpc max_ms)" "$(per_req rate_grpc)" "$(cpu rate_grpc)"
floor_row() { # LABEL FLOOR NEW REPEAT
	awk -v l="$1" -v f="$(val "$2" server_us_per_req)" -v n="$(val "$3" server_us_per_req)" -v r="${4:+$(val "$4" server_us_per_req)}" \
		-v fr="$(val "$2" rps)" -v ok="$(val "$2" valid)" 'BEGIN {
		if (ok != "true") { printf "| %s | INVALID | | | |\n", l; exit }
		rep = (r == "" ? "—" : sprintf("%.0f µs (%.2f × floor%s)", r, r / f, (r / f <= 1.25 ? ", pass" : ", FAIL")))
		printf "| %s | %.0f µs (%s req/s) | %.0f µs = floor + %.0f µs | %s |\n", l, f, fr, n, n - f, rep }'
}
echo
echo "### The transport's floor (pactd CPU per call)"
echo
echo "| port and protocol | floor: refused non-JWT | new token | repeat token (target ≤ 1.25 × floor) |"
echo "| --- | --- | --- | --- |"
floor_row "native gRPC port (grpc-go)" floor_native new_native repeat_native
floor_row "main port, gRPC ($CLIENT)" floor_grpc new_grpc repeat_grpc
floor_row "main port, Connect (connect-go)" floor_connect new_connect ""
echo
echo "- machine: nproc $(nproc), ${cpu_model:-unknown CPU}, load average now $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- $(go version), pactd $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (dirty tree)')"
echo "- pactd: GOMAXPROCS=1, SQLite, $pinning; connections per run: $CONNS; token pool $POOL (pactd's cache holds 65,536)"
echo "- × raw: requests/s over raw verifications/s, both wall-clock (the design's measure)."
echo "- pactd CPU per request: pactd's CPU time (/proc) over requests; in brackets the rate one whole core"
echo "  would give at that cost, over raw verifications per CPU-second (steadier on a shared machine)."
echo "- CPU used: share of one core during the run (loadgen from getrusage). pactd near 100 % means the"
echo "  server was the limit; loadgen near 100 % with pactd lower means the client was."
for name in new_native repeat_native new_grpc new_connect repeat_grpc floor_native floor_grpc floor_connect rate_grpc; do
	awk -v n="$name" -v s="$(val "$name" server_cpu)" -v c="$(val "$name" client_cpu)" \
		-v rate="$(val "$name" rate)" -v rps="$(val "$name" rps)" 'BEGIN {
		if (c >= 0.9)
			printf "- WARNING %s: loadgen used %.0f %% of its core: the client may have been the limit (try BENCH_CLIENT=grpc-go)\n", n, 100 * c
		else if (rate == 0 && s >= 0 && s < 0.9)
			printf "- WARNING %s: neither side saturated its core (pactd %.0f %%, loadgen %.0f %%): other load on the machine? Rerun when it is quiet\n", n, 100 * s, 100 * c
		else if (rate > 0 && rps < 0.97 * rate)
			printf "- WARNING %s: pactd fell behind the fixed rate (%.0f of %.0f req/s, pactd %.0f %% of its core)%s\n", n, rps, rate, 100 * s, (s < 0.9 ? ": other load on the machine? Rerun when it is quiet" : "")
	}'
done
echo "- total script time: $(($(date +%s) - started)) s"

if [ -n "${BENCH_PROFILE:-}" ] && [ -s "$tmp/new_grpc.pprof" ]; then
	echo
	echo "== pactd CPU profile, new token over gRPC (kept in $tmp: *.pprof and the pactd binary)"
	go tool pprof -top -nodecount=30 "$tmp/pactd" "$tmp/new_grpc.pprof" 2>/dev/null | sed -n '4,40p'
fi
