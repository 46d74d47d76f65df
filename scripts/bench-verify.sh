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
cleanup() {
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
go build -o "$tmp/pactd" ./cmd/pactd
go build -o "$tmp/pactd-loadgen" ./cmd/pactd-loadgen
LG="$tmp/pactd-loadgen"

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
jwks_port=$("$LG" -free-port)
url="http://127.0.0.1:$port"
mkdir -p "$tmp/data"

echo "== start pactd on $url ($pinning)"
env PACT_LISTEN="127.0.0.1:$port" PACT_DATA_DIR="$tmp/data" PACT_DEV=true PACT_LOG_LEVEL=warn \
	PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" GOMAXPROCS=1 \
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
	local name=$1 rc=0
	shift
	echo "== $name"
	lg -out "$tmp/$name.env" "$@" || rc=$?
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

peak=$(val new_grpc rps)
rate=$(awk -v r="$peak" 'BEGIN { printf "%d", r * 0.7 }')
if [ "$rate" -lt 1 ]; then
	echo "no gRPC new-token peak to take 70 % of" >&2
	exit 1
fi
measure rate_grpc -mode new -protocol grpc -client "$CLIENT" -c "$RATE_CONC" -conns "$CONNS" \
	-d "${RATE_SECONDS}s" -rate "$rate" -pool "$POOL"

# ---- the table
raw=$(val raw raw_per_s)
ratio() { awk -v a="$1" -v b="$raw" 'BEGIN { printf "%.2f", a / b }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
cpu() { # "pactd % / loadgen %" for one run
	awk -v s="$(val "$1" server_cpu)" -v c="$(val "$1" client_cpu)" \
		'BEGIN { printf "%s / %.0f %%", (s < 0 ? "?" : sprintf("%.0f %%", 100 * s)), 100 * c }'
}
verdict() { # NAME RATIO MIN
	if [ "$(val "$1" valid)" != true ]; then
		echo "INVALID ($(val "$1" failures) failures)"
	elif ge "$2" "$3"; then echo pass; else echo FAIL; fi
}
peak_row() { # NAME LABEL MIN_RATIO TARGET_TEXT
	local r
	r=$(ratio "$(val "$1" rps)")
	printf '| %s | %s req/s | %s | %s | %s | %s / %s / %s | %s |\n' "$2" "$(val "$1" rps)" "$r" "$4" \
		"$(verdict "$1" "$r" "$3")" "$(val "$1" p50_ms)" "$(val "$1" p99_ms)" "$(val "$1" max_ms)" "$(cpu "$1")"
}

p99=$(val rate_grpc p99_ms)
if [ "$(val rate_grpc valid)" != true ]; then
	p99_verdict="INVALID ($(val rate_grpc failures) failures)"
elif awk -v p="$p99" 'BEGIN { exit !(p < 5) }'; then p99_verdict=pass; else p99_verdict=FAIL; fi

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "## VerifyAgentRequest vs raw ES256 ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
echo "| measurement | result | × raw | target | verdict | p50 / p99 / max ms | CPU pactd / loadgen |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
printf '| raw ES256 verify (crypto/ecdsa P-256, 1 thread, CPU %s) | %s verify/s | 1.00 | — | — | — | — |\n' "$SERVER_CPU" "$raw"
peak_row new_grpc "new token, gRPC ($CLIENT), c=$CONC" 0.70 "≥ 0.70"
peak_row new_connect "new token, Connect (connect-go), c=$CONC" 0.70 "≥ 0.70"
peak_row repeat_grpc "repeat token, gRPC ($CLIENT), c=$CONC" 5 "≥ 5.00"
printf '| gRPC new token at 70 %% of peak: %s req/s for %ss, open loop | p99 %s ms (%s req/s achieved) | — | p99 < 5 ms | %s | %s / %s / %s | %s |\n' \
	"$rate" "$RATE_SECONDS" "$p99" "$(val rate_grpc rps)" "$p99_verdict" \
	"$(val rate_grpc p50_ms)" "$p99" "$(val rate_grpc max_ms)" "$(cpu rate_grpc)"
echo
echo "- machine: nproc $(nproc), ${cpu_model:-unknown CPU}, load average now $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- $(go version), pactd $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (dirty tree)')"
echo "- pactd: GOMAXPROCS=1, SQLite, $pinning; connections per run: $CONNS; token pool $POOL (pactd's cache holds 65,536)"
echo "- CPU columns: share of one core used during the run (pactd from /proc, loadgen from getrusage);"
echo "  pactd near 100 % means the server was the limit, loadgen near 100 % means the client was"
echo "- total script time: $(($(date +%s) - started)) s"
