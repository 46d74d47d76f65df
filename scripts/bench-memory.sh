#!/usr/bin/env bash
# bench-memory.sh shows where pactd's memory levels off under sustained load
# (docs/benchmarks.md, section 5): pactd, pinned to one CPU with
# GOMAXPROCS=1 on embedded SQLite, serves 3 million mixed VerifyAgentRequest
# calls (of every 8: 5 new tokens from a pool of 200,000, 2 a repeated
# token, 1 refused; pactd-loadgen -mode mixed) on the native gRPC port, and
# after each million the script reads pactd's RSS (/proc), Go heap in use
# and repeat-token cache entries (/metrics). It does this twice: with the
# default cache (PACT_TOKEN_CACHE_SIZE=65536) and with a quarter of it, so
# the bound is shown to follow the setting.
#
#   bash scripts/bench-memory.sh      # about 10-15 minutes
#
# Knobs: BENCH_MEMORY_MILLIONS (3), BENCH_MEMORY_CACHES ("65536 16384"),
# BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_KEEP=1 keeps the logs.
set -euo pipefail
cd "$(dirname "$0")/.."

MILLIONS=${BENCH_MEMORY_MILLIONS:-3}
CACHES=${BENCH_MEMORY_CACHES:-65536 16384}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
# A run of 500,000 calls stays well inside the tokens' 300 s lifetime.
STEP=500000

for v in $(compgen -e); do
	case $v in PACT_*) unset "$v" ;; esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-memory.XXXXXX")
pid=""
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [ -n "${BENCH_KEEP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== build"
go build -o "$tmp/pactd" ./cmd/pactd
go build -o "$tmp/pactd-loadgen" ./cmd/pactd-loadgen
LG="$tmp/pactd-loadgen"
server_pin=()
client_pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	server_pin=(taskset -c "$SERVER_CPU")
	client_pin=(taskset -c "$CLIENT_CPU")
fi
secret() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
ADMIN="bench_adm_$(secret)"
FRONT="bench_fe_$(secret)"

declare -A rss heap entries
for cache in $CACHES; do
	port=$("$LG" -free-port)
	gport=$("$LG" -free-port)
	jwks_port=$("$LG" -free-port)
	rm -rf "$tmp/data"
	mkdir -p "$tmp/data"
	env PACT_LISTEN="127.0.0.1:$port" PACT_GRPC_LISTEN="127.0.0.1:$gport" PACT_DATA_DIR="$tmp/data" PACT_DEV=true \
		PACT_LOG_LEVEL=warn PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" PACT_TOKEN_CACHE_SIZE="$cache" GOMAXPROCS=1 \
		"${server_pin[@]}" "$tmp/pactd" serve >"$tmp/pactd-$cache.log" 2>&1 &
	pid=$!
	"$LG" -addr "http://127.0.0.1:$port" -wait-health 20s
	sleep 1
	idle=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status")
	echo "== PACT_TOKEN_CACHE_SIZE=$cache: pactd idle RSS $idle MB"
	rss[$cache,0]=$idle
	done_calls=0
	for ((i = 1; i <= MILLIONS * 2; i++)); do
		env PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" "${client_pin[@]}" "$LG" \
			-addr "http://127.0.0.1:$port" -verify-addr "http://127.0.0.1:$gport" -protocol grpc -client grpc-go \
			-server-pid "$pid" -jwks-addr "127.0.0.1:$jwks_port" -key-file "$tmp/pa.pem" \
			-mode mixed -pool 200000 -c 64 -n "$STEP" -d 200s -out "$tmp/run.env" >"$tmp/run-$cache-$i.txt" 2>&1 || {
			echo "pactd-loadgen failed; its output and pactd's log:" >&2
			tail -n 5 "$tmp/run-$cache-$i.txt" "$tmp/pactd-$cache.log" >&2
			exit 1
		}
		grep -q '^valid=true$' "$tmp/run.env" || { echo "run $i invalid: $(grep INVALID "$tmp/run-$cache-$i.txt")" >&2; exit 1; }
		done_calls=$((done_calls + $(sed -n 's/^requests=//p' "$tmp/run.env")))
		if ((i % 2 == 0)); then
			m=$((i / 2))
			rss[$cache,$m]=$(awk -F= '$1 == "server_rss_kb" { printf "%.1f", $2 / 1024 }' "$tmp/run.env")
			heap[$cache,$m]=$(awk -F= '$1 == "server_heap_inuse" { printf "%.1f", $2 / 1048576 }' "$tmp/run.env")
			entries[$cache,$m]=$(sed -n 's/^server_cache_entries=//p' "$tmp/run.env")
			echo "after $done_calls calls: RSS ${rss[$cache,$m]} MB, Go heap in use ${heap[$cache,$m]} MB, cache ${entries[$cache,$m]} entries ($(sed -n 's/^rps=//p' "$tmp/run.env") req/s)"
		fi
	done
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	pid=""
done

echo
echo "## pactd memory under sustained mixed load ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
printf '| PACT_TOKEN_CACHE_SIZE | idle RSS |'
for ((m = 1; m <= MILLIONS; m++)); do printf ' after %d M: RSS / heap / cache entries |' "$m"; done
printf ' growth between the last two (target < 10 %%) |\n|---|---|'
for ((m = 1; m <= MILLIONS; m++)); do printf -- '---|'; done
printf -- '---|\n'
for cache in $CACHES; do
	printf '| %s | %s MB |' "$cache" "${rss[$cache,0]}"
	for ((m = 1; m <= MILLIONS; m++)); do printf ' %s MB / %s MB / %s |' "${rss[$cache,$m]}" "${heap[$cache,$m]}" "${entries[$cache,$m]}"; done
	awk -v a="${rss[$cache,$((MILLIONS - 1))]}" -v b="${rss[$cache,$MILLIONS]}" \
		'BEGIN { g = 100 * (b - a) / a; printf " %+.1f %% (%s) |\n", g, (g < 10 ? "met" : "missed") }'
done
echo
echo "- machine: nproc $(nproc), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(go version | cut -d' ' -f3)"
echo "- pactd $(git rev-parse --short HEAD 2>/dev/null || echo '?'), GOMAXPROCS=1, SQLite, GOGC default (100), no GOMEMLIMIT"
