#!/usr/bin/env bash
# bench-memory.sh shows where pactd's memory levels off under sustained load
# (docs/performance.md, "Memory under sustained load"; docs/es256-tables.md
# for the ES256 tables):
# pactd, pinned to one CPU with GOMAXPROCS=1 on embedded SQLite, serves 3
# million mixed VerifyAgentRequest calls (of every 8: 5 new tokens from a
# pool of 200,000, 2 a repeated token, 1 refused; pactd-loadgen -mode mixed)
# on the native gRPC port, the new tokens signed in turn by 1,000 PA keys
# (pactd-loadgen -pa-keys: 10 agents of 100 keys), and after each million the
# script reads pactd's RSS (/proc), Go heap in use, repeat-token cache
# entries and ES256 tables (/metrics). It does this once per configuration:
# the repeat-token cache size (PACT_TOKEN_CACHE_SIZE) and the ES256 tables
# (PACT_ES256_TABLES), by default 65536 with the tables on and off. For every
# configuration with the tables on it checks the bound: RSS at most the RSS
# of the same cache size with the tables off, at the same point, plus 1.25
# times the tables' byte budget (PACT_ES256_TABLE_BYTES, 64 MiB). The tables
# live outside the Go heap, so they add their own bytes and nothing to the
# collector's goal; the quarter on top covers evicted tables not yet
# unmapped (that waits for the next collection) and the two runs' variance.
#
#   bash bench/scripts/bench-memory.sh      # about 12-20 minutes
#
# Knobs: BENCH_MEMORY_MILLIONS (3), BENCH_MEMORY_CACHES ("65536"; "65536
# 16384" shows the cache bound following its setting),
# BENCH_MEMORY_TABLES ("on off"), BENCH_MEMORY_PA_KEYS (1000), BENCH_MEMORY_STEP
# (500000 calls per load generator run: two make a million),
# BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_KEEP=1 keeps the logs.
set -euo pipefail
cd "$(dirname "$0")/../.." # the repository root: pactd builds from ./cmd/pactd, the lab from bench/

MILLIONS=${BENCH_MEMORY_MILLIONS:-3}
CACHES=${BENCH_MEMORY_CACHES:-65536}
TABLES=${BENCH_MEMORY_TABLES:-on off}
PA_KEYS=${BENCH_MEMORY_PA_KEYS:-1000}
# The tables' byte budget, pactd's default (PACT_ES256_TABLE_BYTES).
BUDGET_MB=64
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
# A run of 500,000 calls stays well inside the tokens' 300 s lifetime.
STEP=${BENCH_MEMORY_STEP:-500000}

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
go -C bench build -o "$tmp/pactd-loadgen" ./cmd/pactd-loadgen
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

declare -A rss heap entries tables tbytes
configs=()
for cache in $CACHES; do
	for t in $TABLES; do
		case $t in on | off) ;; *) echo "BENCH_MEMORY_TABLES: on or off, not $t" >&2; exit 2 ;; esac
		configs+=("$cache/$t")
	done
done
for c in "${configs[@]}"; do
	cache=${c%/*}
	t=${c#*/}
	log=${cache}-${t}
	port=$("$LG" -free-port)
	gport=$("$LG" -free-port)
	jwks_port=$("$LG" -free-port)
	rm -rf "$tmp/data"
	mkdir -p "$tmp/data"
	env PACT_LISTEN="127.0.0.1:$port" PACT_GRPC_LISTEN="127.0.0.1:$gport" PACT_DATA_DIR="$tmp/data" PACT_DEV=true \
		PACT_LOG_LEVEL=warn PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" PACT_TOKEN_CACHE_SIZE="$cache" \
		PACT_ES256_TABLES="$t" GOMAXPROCS=1 \
		"${server_pin[@]}" "$tmp/pactd" serve >"$tmp/pactd-$log.log" 2>&1 &
	pid=$!
	"$LG" -addr "http://127.0.0.1:$port" -wait-health 20s
	sleep 1
	idle=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status")
	echo "== PACT_TOKEN_CACHE_SIZE=$cache PACT_ES256_TABLES=$t, $PA_KEYS PA keys: pactd idle RSS $idle MB"
	rss[$c,0]=$idle
	done_calls=0
	for ((i = 1; i <= MILLIONS * 2; i++)); do
		env PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" "${client_pin[@]}" "$LG" \
			-addr "http://127.0.0.1:$port" -verify-addr "http://127.0.0.1:$gport" -protocol grpc -client grpc-go \
			-server-pid "$pid" -jwks-addr "127.0.0.1:$jwks_port" -key-file "$tmp/pa.pem" -pa-keys "$PA_KEYS" \
			-mode mixed -pool 200000 -c 64 -n "$STEP" -d 200s -out "$tmp/run.env" >"$tmp/run-$log-$i.txt" 2>&1 || {
			echo "pactd-loadgen failed; its output and pactd's log:" >&2
			tail -n 5 "$tmp/run-$log-$i.txt" "$tmp/pactd-$log.log" >&2
			exit 1
		}
		grep -q '^valid=true$' "$tmp/run.env" || { echo "run $i invalid: $(grep INVALID "$tmp/run-$log-$i.txt")" >&2; exit 1; }
		done_calls=$((done_calls + $(sed -n 's/^requests=//p' "$tmp/run.env")))
		if ((i % 2 == 0)); then
			m=$((i / 2))
			rss[$c,$m]=$(awk -F= '$1 == "server_rss_kb" { printf "%.1f", $2 / 1024 }' "$tmp/run.env")
			heap[$c,$m]=$(awk -F= '$1 == "server_heap_inuse" { printf "%.1f", $2 / 1048576 }' "$tmp/run.env")
			entries[$c,$m]=$(sed -n 's/^server_cache_entries=//p' "$tmp/run.env")
			tables[$c,$m]=$(sed -n 's/^server_es256_tables=//p' "$tmp/run.env")
			tbytes[$c,$m]=$(awk -F= '$1 == "server_es256_table_bytes" { printf "%.1f", $2 / 1048576 }' "$tmp/run.env")
			echo "after $done_calls calls: RSS ${rss[$c,$m]} MB, Go heap in use ${heap[$c,$m]} MB, cache ${entries[$c,$m]} entries," \
				"ES256 tables ${tables[$c,$m]} (${tbytes[$c,$m]} MB; built $(sed -n 's/^server_es256_builds=//p' "$tmp/run.env")," \
				"evicted $(sed -n 's/^server_es256_evictions=//p' "$tmp/run.env")) ($(sed -n 's/^rps=//p' "$tmp/run.env") req/s)"
		fi
	done
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	pid=""
done

echo
echo "## pactd memory under sustained mixed load, $PA_KEYS PA keys ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
printf '| PACT_TOKEN_CACHE_SIZE | PACT_ES256_TABLES | idle RSS |'
for ((m = 1; m <= MILLIONS; m++)); do printf ' after %d M: RSS / heap / cache entries / ES256 tables (MB) |' "$m"; done
printf ' growth between the last two (target < 10 %%) | RSS bound: tables off + 1.25 × %d MiB |\n|---|---|---|' "$BUDGET_MB"
for ((m = 1; m <= MILLIONS; m++)); do printf -- '---|'; done
printf -- '---|---|\n'
for c in "${configs[@]}"; do
	printf '| %s | %s | %s MB |' "${c%/*}" "${c#*/}" "${rss[$c,0]}"
	for ((m = 1; m <= MILLIONS; m++)); do
		printf ' %s MB / %s MB / %s / %s (%s) |' "${rss[$c,$m]}" "${heap[$c,$m]}" "${entries[$c,$m]}" "${tables[$c,$m]}" "${tbytes[$c,$m]}"
	done
	awk -v a="${rss[$c,$((MILLIONS - 1))]}" -v b="${rss[$c,$MILLIONS]}" \
		'BEGIN { g = 100 * (b - a) / a; printf " %+.1f %% (%s) |", g, (g < 10 ? "met" : "missed") }'
	off="${c%/*}/off"
	if [ "${c#*/}" = on ] && [ -n "${rss[$off,1]:-}" ]; then
		verdict=met
		for ((m = 1; m <= MILLIONS; m++)); do
			awk -v on="${rss[$c,$m]}" -v off="${rss[$off,$m]}" -v b="$BUDGET_MB" 'BEGIN { exit !(on <= off + 1.25 * b * 1.048576) }' || verdict=missed
		done
		printf ' ≤ %s MB at the end (%s) |\n' "$(awk -v off="${rss[$off,$MILLIONS]}" -v b="$BUDGET_MB" 'BEGIN { printf "%.1f", off + 1.25 * b * 1.048576 }')" "$verdict"
	else
		printf ' — |\n'
	fi
done
echo
echo "- machine: nproc $(nproc), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(go version | cut -d' ' -f3)"
echo "- pactd $(git rev-parse --short HEAD 2>/dev/null || echo '?'), GOMAXPROCS=1, SQLite, GOGC default (100), no GOMEMLIMIT, PACT_ES256_TABLE_BYTES default (${BUDGET_MB} MiB), load average $(cut -d' ' -f1-3 /proc/loadavg)"
