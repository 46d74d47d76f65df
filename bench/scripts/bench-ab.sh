#!/usr/bin/env bash
# bench-ab.sh: does a pactd setting move the tail? Alternating runs of pactd
# under two or more environments at one fixed open-loop rate, on one CPU.
#
#   bash bench/scripts/bench-ab.sh 'default=' 'gogc50=GOGC=50'
#   BENCH_AB_RATE=5000 BENCH_AB_ROUNDS=8 bash bench/scripts/bench-ab.sh 'a=' 'b=GODEBUG=schedtrace=2147483647'
#
# Each argument is NAME=VARS: a label and the space-separated VAR=value
# pairs added to pactd's environment (none for pactd's defaults), PACT_*
# settings included but those the script sets itself (listeners, data
# directory, credentials, PACT_DEV, log level, GOMAXPROCS=1); values are
# letters, digits and _.,:=/+- only (no quoting, no globbing). This VM's
# speed drifts by a fifth over minutes and one 15 s run's p99 at two thirds
# busy spans a factor of four with the same binary (docs/benchmarks.md,
# "How the figures are measured"), so one run of each decides nothing: the settings run in turn,
# ROUNDS times, the order reversed every other round (A B, B A, ...), each
# run on a fresh pactd after a warm-up that fills its repeat-token cache.
# The table gives every run (p50 / p99 / p99.9, pactd's CPU, context
# switches, reads and writes per call, collector cycles); the summary gives
# each setting's median and in how many rounds it had the lower p99 than the
# first setting. A setting is worth a note when it wins nearly every round;
# ask as well what it costs elsewhere (docs/benchmarks.md, "Scheduler and
# runtime settings": a sysmon change that won 8 of 10 rounds here lost 3 of
# 3 with writes in the mix).
#
# Environment (defaults in brackets):
#   BENCH_AB_RATE       open-loop requests/s [5000; about half the native
#                       port's new-token peak on a 2-vCPU VM]
#   BENCH_AB_SECONDS    each measured run [15]; BENCH_AB_WARM the warm-up [5]
#   BENCH_AB_ROUNDS     rounds [6]
#   BENCH_AB_TRANSPORT  native (the native gRPC port) or json1 (Connect
#                       JSON over HTTP/1.1 on the main port) [native]
#   BENCH_NATIVE_CLIENT the native port's client: h2grpc (the load
#                       generator's minimal gRPC client) or grpc-go [h2grpc]
#   BENCH_AB_POOL       distinct tokens [100000]
#   BENCH_SERVER_CPU, BENCH_CLIENT_CPU  [0, 1]
set -euo pipefail
cd "$(dirname "$0")/../.." # the repository root: pactd builds from ./cmd/pactd, the lab from bench/

if [ $# -lt 2 ]; then
	echo "usage: bash bench/scripts/bench-ab.sh NAME=[VAR=value ...] NAME=[VAR=value ...] ..." >&2
	exit 2
fi
RATE=${BENCH_AB_RATE:-5000}
SECONDS_RUN=${BENCH_AB_SECONDS:-15}
WARM=${BENCH_AB_WARM:-5}
ROUNDS=${BENCH_AB_ROUNDS:-6}
TRANSPORT=${BENCH_AB_TRANSPORT:-native}
POOL=${BENCH_AB_POOL:-100000}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
NATIVE_CLIENT=${BENCH_NATIVE_CLIENT:-h2grpc}
case $NATIVE_CLIENT in h2grpc | grpc-go) ;; *)
	echo "bench-ab: BENCH_NATIVE_CLIENT must be h2grpc or grpc-go" >&2
	exit 2
	;;
esac
for n in RATE SECONDS_RUN WARM ROUNDS POOL; do
	if ! [[ ${!n} =~ ^[1-9][0-9]{0,6}$ ]]; then
		echo "bench-ab: $n must be a positive integer, got '${!n}'" >&2
		exit 2
	fi
done
names=() envs=()
for a in "$@"; do
	if ! [[ $a =~ ^[A-Za-z0-9_.-]+= ]]; then
		echo "bench-ab: '$a' is not NAME=[VAR=value ...]" >&2
		exit 2
	fi
	names+=("${a%%=*}")
	envs+=("${a#*=}")
	for kv in ${a#*=}; do
		if ! [[ $kv =~ ^[A-Z_][A-Z0-9_]*=[A-Za-z0-9_.,:=/+-]*$ ]]; then
			echo "bench-ab: '$kv' is not VAR=value" >&2
			exit 2
		fi
		case ${kv%%=*} in PACT_LISTEN | PACT_GRPC_LISTEN | PACT_DATA_DIR | PACT_DEV | PACT_LOG_LEVEL | PACT_ADMIN_TOKEN | PACT_FRONTEND_TOKEN | GOMAXPROCS)
			echo "bench-ab: ${kv%%=*} is bench-ab's own setting of pactd" >&2
			exit 2
			;;
		esac
	done
done

# pactd refuses unknown PACT_* variables; start from none but ours.
for v in $(compgen -e); do
	case $v in PACT_*) unset "$v" ;; esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ab.XXXXXX")
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

echo "== build"
go build -o "$tmp/pactd" ./cmd/pactd
go -C bench build -o "$tmp/pactd-loadgen" ./cmd/pactd-loadgen
LG="$tmp/pactd-loadgen"
pin_s=() pin_c=()
if command -v taskset >/dev/null; then pin_s=(taskset -c "$SERVER_CPU"); pin_c=(taskset -c "$CLIENT_CPU"); fi
secret() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
ADMIN="bench_adm_$(secret)"
FRONT="bench_fe_$(secret)"
jwks_port=$("$LG" -free-port)

# run NAME VARS FILE: a fresh pactd under VARS, a warm-up, one measured run into FILE.
run() {
	local port gport targs
	port=$("$LG" -free-port)
	gport=$("$LG" -free-port)
	case $TRANSPORT in
	native) targs=(-protocol grpc -client "$NATIVE_CLIENT" -verify-addr "http://127.0.0.1:$gport") ;;
	json1) targs=(-protocol connect -codec json -http 1.1 -client http1) ;;
	*) echo "bench-ab: BENCH_AB_TRANSPORT is native or json1" >&2; exit 2 ;;
	esac
	rm -rf "$tmp/data"
	mkdir -p "$tmp/data"
	# shellcheck disable=SC2086 # VARS are words
	env PACT_LISTEN="127.0.0.1:$port" PACT_GRPC_LISTEN="127.0.0.1:$gport" PACT_DATA_DIR="$tmp/data" PACT_DEV=true PACT_LOG_LEVEL=warn \
		PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" GOMAXPROCS=1 $2 \
		"${pin_s[@]}" "$tmp/pactd" serve >"$tmp/pactd.log" 2>&1 &
	pid=$!
	if ! "$LG" -addr "http://127.0.0.1:$port" -wait-health 20s >/dev/null; then
		cat "$tmp/pactd.log" >&2
		exit 1
	fi
	lg() {
		env PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" "${pin_c[@]}" "$LG" -addr "http://127.0.0.1:$port" -server-pid "$pid" \
			-jwks-addr "127.0.0.1:$jwks_port" -key-file "$tmp/pa.pem" -mode new "${targs[@]}" -pool "$POOL" "$@"
	}
	lg -c 64 -d "${WARM}s" >/dev/null 2>&1 || true
	lg -c 256 -d "${SECONDS_RUN}s" -rate "$RATE" -out "$3" >"$3.txt" 2>&1 || true
	if [ ! -s "$3" ]; then
		echo "bench-ab: the measured run under '$2' failed:" >&2
		tail -n 5 "$3.txt" >&2
		exit 1
	fi
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=""
}

client=$NATIVE_CLIENT
[ "$TRANSPORT" = native ] || client=http1
echo "== $ROUNDS rounds of ${SECONDS_RUN}s at $RATE/s on $TRANSPORT (client $client), pactd on CPU $SERVER_CPU (GOMAXPROCS=1), loadgen on CPU $CLIENT_CPU"
echo
echo "| round | setting | p50 / p99 / p99.9 ms | pactd µs per call | switches / reads / writes per call | GC cycles | valid |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
n=${#names[@]}
for r in $(seq "$ROUNDS"); do
	order=$(seq 0 $((n - 1)))
	if [ $((r % 2)) -eq 0 ]; then order=$(seq $((n - 1)) -1 0); fi
	for i in $order; do
		f="$tmp/r$r.$i.env"
		run "${names[$i]}" "${envs[$i]}" "$f"
		v() { sed -n "s/^$1=//p" "$f"; }
		echo "| $r | ${names[$i]} | $(v p50_ms) / **$(v p99_ms)** / $(v p999_ms) | $(v server_us_per_req) | $(v server_switches_per_req) / $(v server_reads_per_req) / $(v server_writes_per_req) | $(v server_gc_cycles) | $(v valid) |"
	done
done
echo
echo "Summary: medians over the rounds; \"lower p99\" counts the rounds in which the setting's p99 was below ${names[0]}'s."
for i in $(seq 0 $((n - 1))); do
	p99s="" uss="" wins=0
	for r in $(seq "$ROUNDS"); do
		p=$(sed -n 's/^p99_ms=//p' "$tmp/r$r.$i.env")
		p0=$(sed -n 's/^p99_ms=//p' "$tmp/r$r.0.env")
		p99s="$p99s $p"
		uss="$uss $(sed -n 's/^server_us_per_req=//p' "$tmp/r$r.$i.env")"
		if awk -v a="$p" -v b="$p0" 'BEGIN { exit !(a + 0 < b + 0) }'; then wins=$((wins + 1)); fi
	done
	med() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
	printf -- "- %s (%s): p99 median %s ms, CPU per call median %s µs" "${names[$i]}" "${envs[$i]:-no added variables}" "$(echo "$p99s" | med)" "$(echo "$uss" | med)"
	if [ "$i" -gt 0 ]; then printf "; lower p99 than %s in %d of %d rounds" "${names[0]}" "$wins" "$ROUNDS"; fi
	echo
done
echo "- $(go version), pactd $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (dirty tree)'); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
