#!/usr/bin/env bash
# bench-verify.sh measures VerifyAgentRequest against the raw ES256 limit and
# against each transport's own floor, in one run on one machine (design.md,
# "Performance targets"; docs/performance.md, "VerifyAgentRequest over the
# wire"):
#
#   1. raw crypto/ecdsa P-256 verifications/s, one thread, on the server CPU
#      (pactd idle): the raw limit every ratio is taken over, measured again
#      just before each new-token run, so each ratio pairs figures taken
#      seconds apart;
#   2. the bare floor of each transport: pactd-loadgen -serve-bare, the same
#      libraries pactd serves with (net/http + connect-go, grpc-go) answering
#      a fixed refusal with nothing else, pinned and limited like pactd;
#   3. for each transport frontends use — native gRPC port (grpc-go), main
#      port gRPC (connect-go), Connect binary and Connect JSON over HTTP/2
#      and over HTTP/1.1 —
#        floor:  the same RPC, server, interceptors and credential with a
#                non-JWT that pactd refuses before any JOSE work;
#        new:    closed loop, every token a repeat-cache miss;
#        repeat: closed loop, one token again and again;
#        50 %:   open loop at half of "new", latency from each request's due
#                time (no coordinated omission): p50 / p99.
#
# pactd runs with GOMAXPROCS=1 pinned to one CPU (taskset), on embedded
# SQLite in a temporary data directory; pactd-loadgen is pinned to another
# CPU. It prints each run, then markdown tables: every figure as floor +
# verification, × raw, and the verdicts against the targets.
#
#   bash bench/scripts/bench-verify.sh               # about 8 minutes
#
# Knobs (environment): BENCH_PEAK_SECONDS (8), BENCH_RATE_SECONDS (15),
# BENCH_RAW_SECONDS (5), BENCH_CONC (64, closed-loop workers), BENCH_RATE_CONC
# (256, open-loop workers), BENCH_POOL (200000), BENCH_SERVER_CPU (0),
# BENCH_CLIENT_CPU (1), BENCH_TRANSPORTS (all: "native grpc connect json2
# proto1 json1"), BENCH_KEEP=1 keeps the temporary directory (logs),
# BENCH_PEERS=1 also measures OPA and Ory Hydra (bench/scripts/bench-peers.sh).
#
# BENCH_PACTD_ENV adds space-separated VAR=value pairs to pactd's environment
# only (not the load generator's, the bare floor's or the raw limit's), to
# run the whole table under one pactd setting: BENCH_PACTD_ENV=GOGC=250.
# Values are letters, digits and _.,:=/+- only; the settings the script
# makes itself (listeners, data directory, credentials, PACT_DEV, log
# level, GOMAXPROCS, BENCH_PPROF_ADDR) are refused. (GOGC exported to the
# whole script also reaches the load generator, which then keeps it instead
# of pacing its own collector: docs/benchmarks.md, "How the figures are
# measured".)
#
# BENCH_NATIVE_CLIENT picks the native row's client: h2grpc (the default:
# the load generator's minimal gRPC client, which costs the load generator
# less and adds less of its own to the tail, docs/benchmarks.md, "Transport
# and clients") or
# grpc-go (the stock grpc-go client, as a Go frontend calls pactd).
#
# BENCH_PROFILE=1 builds pactd with a net/http/pprof listener on loopback
# (added only to this build, through a go build -overlay file written to the
# temporary directory; pactd's sources and its production mux are
# untouched), saves pactd's CPU profile of each closed-loop run and prints
# the top of the native and main-port gRPC new-token ones. Profiling costs
# the server a few per cent.
set -euo pipefail
cd "$(dirname "$0")/../.." # the repository root: pactd builds from ./cmd/pactd, the lab from bench/

PEAK=${BENCH_PEAK_SECONDS:-8}
RATE_SECONDS=${BENCH_RATE_SECONDS:-15}
RAW_SECONDS=${BENCH_RAW_SECONDS:-5}
PAIR_RAW_SECONDS=${BENCH_PAIR_RAW_SECONDS:-3}
CONC=${BENCH_CONC:-64}
RATE_CONC=${BENCH_RATE_CONC:-256}
TRANSPORTS=${BENCH_TRANSPORTS:-native grpc connect json2 proto1 json1}
POOL=${BENCH_POOL:-200000}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}

NATIVE_CLIENT=${BENCH_NATIVE_CLIENT:-h2grpc}
case $NATIVE_CLIENT in h2grpc | grpc-go) ;; *)
	echo "bench-verify: BENCH_NATIVE_CLIENT must be h2grpc or grpc-go" >&2
	exit 2
	;;
esac

pactd_env=()
# -d '': every line, not the first only (a newline separates pairs too).
read -r -d '' -a pactd_env <<<"${BENCH_PACTD_ENV:-}" || true
for kv in "${pactd_env[@]}"; do
	if ! [[ $kv =~ ^[A-Z_][A-Z0-9_]*=[A-Za-z0-9_.,:=/+-]*$ ]]; then
		echo "bench-verify: BENCH_PACTD_ENV: '$kv' is not VAR=value" >&2
		exit 2
	fi
	case ${kv%%=*} in PACT_LISTEN | PACT_GRPC_LISTEN | PACT_DATA_DIR | PACT_DEV | PACT_LOG_LEVEL | PACT_ADMIN_TOKEN | PACT_FRONTEND_TOKEN | GOMAXPROCS | BENCH_PPROF_ADDR)
		echo "bench-verify: BENCH_PACTD_ENV: ${kv%%=*} is bench-verify's own setting of pactd" >&2
		exit 2
		;;
	esac
done

# pactd refuses unknown PACT_* variables; start from none but ours.
for v in $(compgen -e); do
	case $v in PACT_*) unset "$v" ;; esac
done

started=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-verify.XXXXXX")
pid=""
lg_pid=""
bare_pid=""
cleanup() {
	if [ -n "$lg_pid" ]; then kill -TERM "$lg_pid" 2>/dev/null || true; fi
	if [ -n "$bare_pid" ]; then kill -TERM "$bare_pid" 2>/dev/null || true; fi
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
go -C bench build -o "$tmp/pactd-loadgen" ./cmd/pactd-loadgen
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
	PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" GOMAXPROCS=1 BENCH_PPROF_ADDR="${pprof_addr:-}" "${pactd_env[@]}" \
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
	case $name in rate_* | bare_*) ;; *)
		if [ ${#profile_args[@]} -gt 0 ]; then prof=("${profile_args[@]}" -profile-out "$tmp/$name.pprof"); fi
	esac
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
val() { sed -n "s/^$2=//p" "$tmp/$1.env" 2>/dev/null; }

# The transports: NAME|LABEL|TARGET (new token, × raw)|loadgen arguments.
# "@native" in the arguments stands for the native gRPC port's URL.
# HTTP/1.1 rows use -client http1: connect-go over net/http's client spent
# as much CPU per call as pactd and, at half the peak, milliseconds of its
# own queueing in the tail (docs/benchmarks.md, "Transport and clients").
transport_table="native|native gRPC port, gRPC ($NATIVE_CLIENT)|1.0|-protocol grpc -client $NATIVE_CLIENT -verify-addr @native"
transport_table+='
grpc|main port, gRPC (connect-go, h2c)|0.55|-protocol grpc -client connect-go
connect|main port, Connect binary, HTTP/2|0.55|-protocol connect
json2|main port, Connect JSON, HTTP/2|0.55|-protocol connect -codec json
proto1|main port, Connect binary, HTTP/1.1|0.55|-protocol connect -http 1.1 -client http1
json1|main port, Connect JSON, HTTP/1.1|0.55|-protocol connect -codec json -http 1.1 -client http1'
field() { # NAME FIELD(2..4): one column of the transport table
	printf '%s\n' "$transport_table" | awk -F'|' -v n="$1" -v f="$2" '$1 == n { print $f }'
}
args_for() { # NAME NATIVE_URL [MAIN_URL]: the loadgen arguments of one transport
	local a
	a=$(field "$1" 4)
	a=${a//@native/$2}
	if [ -n "${3:-}" ] && [[ $a != *-verify-addr* ]]; then a="$a -verify-addr $3"; fi
	echo "$a"
}
for t in $TRANSPORTS; do
	if [ -z "$(field "$t" 2)" ]; then
		echo "unknown transport $t in BENCH_TRANSPORTS" >&2
		exit 2
	fi
done

echo "== raw ES256 verify/s on CPU $SERVER_CPU (pactd idle), ${RAW_SECONDS}s"
"${server_pin[@]}" "$LG" -raw -d "${RAW_SECONDS}s" -out "$tmp/raw.env"

# The bare floor: the transports' libraries answering a fixed refusal, with
# pactd idle on the same CPU, pinned and limited like pactd.
bport=$("$LG" -free-port)
bgport=$("$LG" -free-port)
bare_start() {
	env GOMAXPROCS=1 "${server_pin[@]}" "$LG" -serve-bare "main=127.0.0.1:$bport,grpc=127.0.0.1:$bgport" >"$tmp/bare.log" 2>&1 &
	bare_pid=$!
	for _ in $(seq 50); do grep -q "bare grpc-go" "$tmp/bare.log" 2>/dev/null && break; sleep 0.1; done
}
bare_stop() {
	kill -TERM "$bare_pid" 2>/dev/null || true
	wait "$bare_pid" 2>/dev/null || true
	bare_pid=""
}
# bare_run NAME TRANSPORT ARGS...: one -mode floor run of TRANSPORT's wire
# against the bare floor into $tmp/NAME.{env,txt}; a failure is reported,
# not fatal.
bare_run() {
	local name=$1 t=$2
	shift 2
	# shellcheck disable=SC2046 # the arguments are words
	env PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" "${client_pin[@]}" "$LG" -addr "$url" \
		-jwks-addr "127.0.0.1:$jwks_port" -key-file "$tmp/pa.pem" -server-pid "$bare_pid" -out "$tmp/$name.env" \
		-mode floor "$@" $(args_for "$t" "http://127.0.0.1:$bgport" "http://127.0.0.1:$bport") \
		>"$tmp/$name.txt" 2>&1 || echo "$name failed: $(tail -n 1 "$tmp/$name.txt")" >&2
}
echo "== bare floor: net/http + connect-go on 127.0.0.1:$bport, grpc-go on 127.0.0.1:$bgport ($pinning)"
bare_start
for t in $TRANSPORTS; do
	bare_run "bare_$t" "$t" -c "$CONC" -d "${PEAK}s"
	echo "bare_$t: $(grep -E 'requests' "$tmp/bare_$t.txt" | tr -s ' ')"
done
bare_stop

common=(-c "$CONC" -d "${PEAK}s" -pool "$POOL")
for t in $TRANSPORTS; do
	# shellcheck disable=SC2207 # the arguments are words
	targs=($(args_for "$t" "$gurl"))
	measure "floor_$t" -mode floor "${targs[@]}" "${common[@]}"
	# The raw limit again, just before this transport's new-token run, so
	# its ratio pairs measurements seconds apart (this VM's speed drifts by
	# ±15 % over minutes).
	"${server_pin[@]}" "$LG" -raw -d "${PAIR_RAW_SECONDS}s" -out "$tmp/raw_$t.env" >/dev/null
	measure "new_$t" -mode new "${targs[@]}" "${common[@]}"
	measure "repeat_$t" -mode repeat "${targs[@]}" "${common[@]}"
	peak=$(val "new_$t" rps)
	rate=$(awk -v r="${peak:-0}" 'BEGIN { printf "%d", r * 0.5 }')
	if [ "$rate" -lt 1 ]; then
		echo "no new-token peak for $t to take 50 % of" >&2
		exit 1
	fi
	measure "rate_$t" -mode new "${targs[@]}" -c "$RATE_CONC" -d "${RATE_SECONDS}s" -rate "$rate" -pool "$POOL"
	# And the raw limit right after the 50 % run: this VM has slow minutes
	# (CPU per call up by a fifth), and a p99 taken in one should say so.
	"${server_pin[@]}" "$LG" -raw -d "${PAIR_RAW_SECONDS}s" -out "$tmp/rawafter_$t.env" >/dev/null
done

# The transport's own tail: the bare floor again, open loop at each
# transport's 50 % rate, same client and workers, so each p99 has beside it
# what the load generator, the transport and the machine give with no pactd
# code at that rate.
echo "== bare floor at each 50 % rate ($pinning)"
bare_start
for t in $TRANSPORTS; do
	bare_run "bare_rate_$t" "$t" -c "$RATE_CONC" -d "${RATE_SECONDS}s" -rate "$(val "rate_$t" rate)"
	echo "bare_rate_$t: $(grep -E 'latency ms' "$tmp/bare_rate_$t.txt" | tr -s ' ')"
done
bare_stop

# ---- the tables
raw=$(val raw raw_per_s)
raw_cpu=$(val raw raw_per_cpu_s)
us() { val "$1" server_us_per_req; }
ok() { [ "$(val "$1" valid)" = true ]; }
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)

echo
echo "## VerifyAgentRequest, floor + verification, × raw ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
awk -v c="$SERVER_CPU" -v r="$raw" -v rc="$raw_cpu" 'BEGIN {
	printf "Raw ES256 (crypto/ecdsa P-256, 1 thread, CPU %s): %s verify/s, %.1f µs of CPU each.\n", c, r, 1e6 / rc }'
echo
echo "pactd's CPU per call (from /proc), and in brackets requests/s. \"bare\" is the transport alone (-serve-bare)."
echo
echo "| transport | bare floor | pactd floor | new token = floor + verification | new × raw (target) | repeat token (× floor, target ≤ 1.25) | 50 % load: rate, p50 / p99 / p99.9 ms (target p99 < 5); pactd's GC in the run | bare floor at the same rate: p50 / p99 / p99.9 ms |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for t in $TRANSPORTS; do
	label=$(field "$t" 2)
	target=$(field "$t" 3)
	awk -v l="$label" -v tg="$target" -v raw="$(val "raw_$t" raw_per_s)" -v rawcpu="$(val "raw_$t" raw_per_cpu_s)" \
		-v b="$(val "bare_$t" server_us_per_req)" -v brps="$(val "bare_$t" rps)" -v bok="$(val "bare_$t" valid)" \
		-v f="$(us "floor_$t")" -v frps="$(val "floor_$t" rps)" -v fok="$(val "floor_$t" valid)" \
		-v n="$(us "new_$t")" -v nrps="$(val "new_$t" rps)" -v nok="$(val "new_$t" valid)" \
		-v r="$(us "repeat_$t")" -v rrps="$(val "repeat_$t" rps)" -v rok="$(val "repeat_$t" valid)" \
		-v rate="$(val "rate_$t" rate)" -v done="$(val "rate_$t" rps)" -v p50="$(val "rate_$t" p50_ms)" -v p99="$(val "rate_$t" p99_ms)" -v p999="$(val "rate_$t" p999_ms)" -v qok="$(val "rate_$t" valid)" \
		-v bq50="$(val "bare_rate_$t" p50_ms)" -v bq99="$(val "bare_rate_$t" p99_ms)" -v bq999="$(val "bare_rate_$t" p999_ms)" -v bqok="$(val "bare_rate_$t" valid)" \
		-v gcn="$(val "rate_$t" server_gc_cycles)" -v gcp="$(val "rate_$t" server_gc_pause_ms)" -v gcmax="$(val "rate_$t" server_gc_pause_max_ms)" -v gcmark="$(val "rate_$t" server_gc_mark_cpu_ms)" -v lgc="$(val "rate_$t" client_gc_cycles)" -v lgogc="$(val "rate_$t" client_gogc)" \
		-v qcpu="$(val "rate_$t" server_cpu)" -v qus="$(us "rate_$t")" -v rawafter="$(val "rawafter_$t" raw_per_s)" \
		-v qcs="$(val "rate_$t" server_switches_per_req)" -v qrd="$(val "rate_$t" server_reads_per_req)" -v qwr="$(val "rate_$t" server_writes_per_req)" '
	function cell(ok, u, rps) { return ok != "true" ? "INVALID" : sprintf("%.0f µs (%s/s)", u, rps) }
	BEGIN {
		bare = (bok == "true" ? sprintf("%.0f µs (%s/s)", b, brps) : "—")
		x = nrps / raw
		xc = 1e6 / n / rawcpu
		newx = (nok != "true" ? "INVALID" : sprintf("**%.2f** (≥ %s: %s; by CPU %.2f; raw %s/s)", x, tg, x >= tg ? "met" : sprintf("missed by %.0f %%", 100 * (1 - x / tg)), xc, raw))
		rep = (rok != "true" || fok != "true" ? "INVALID" : sprintf("%.0f µs (%s/s), **%.2f ×** floor: %s", r, rrps, r / f, r / f <= 1.25 ? "met" : "missed"))
		q = (qok != "true" ? "INVALID" : sprintf("%s/s (%s done): %s / **%s** / %s (%s); pactd %.0f %% busy, %.0f µs per call (%s context switches, %s reads, %s writes); raw %s/s with the peak, %s/s right after; GC: %s cycles, %s ms paused (longest %s), %s ms of mark CPU; loadgen GC: %s cycles (GOGC %s)", rate, done, p50, p99, p999, p99 < 5 ? "met" : "missed", 100 * qcpu, qus, qcs == "" ? "?" : qcs, qrd == "" ? "?" : qrd, qwr == "" ? "?" : qwr, raw, rawafter == "" ? "?" : rawafter, gcn, gcp, gcmax, gcmark, lgc, lgogc == 0 ? "default" : lgogc))
		bq = (bqok != "true" ? "—" : sprintf("%s / %s / %s", bq50, bq99, bq999))
		printf "| %s | %s | %s | %s = floor + %.0f µs | %s | %s | %s | %s |\n", l, bare, cell(fok, f, frps), cell(nok, n, nrps), n - f, newx, rep, q, bq
	}'
done
echo
echo "- machine: nproc $(nproc), ${cpu_model:-unknown CPU}, load average now $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- $(go version), pactd $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (dirty tree)')"
if [ ${#pactd_env[@]} -gt 0 ]; then echo "- added to pactd's environment only: ${pactd_env[*]}"; fi
echo "- pactd: GOMAXPROCS=1, SQLite, $pinning; closed loop c=$CONC (one HTTP/2 connection, or one HTTP/1.1 connection per worker), open loop $RATE_CONC workers; token pool $POOL (pactd's cache holds 65,536)"
echo "- × raw: requests/s over raw verifications/s, both wall-clock (the design's measure), the raw limit measured"
echo "  again on the server's CPU just before each new-token run; \"by CPU\": raw CPU per verification over pactd's CPU per call."
for t in $TRANSPORTS; do
	for k in floor new repeat rate; do
		n="${k}_$t"
		awk -v n="$n" -v s="$(val "$n" server_cpu)" -v c="$(val "$n" client_cpu)" \
			-v rate="$(val "$n" rate)" -v rps="$(val "$n" rps)" 'BEGIN {
			if (c >= 0.9)
				printf "- WARNING %s: loadgen used %.0f %% of its core: the client may have been the limit\n", n, 100 * c
			else if (rate == 0 && s >= 0 && s < 0.9 && n !~ /^floor_/ && n !~ /^repeat_/)
				printf "- WARNING %s: neither side saturated its core (pactd %.0f %%, loadgen %.0f %%): other load on the machine? Rerun when it is quiet\n", n, 100 * s, 100 * c
			else if (rate > 0 && rps < 0.97 * rate)
				printf "- WARNING %s: pactd fell behind the fixed rate (%.0f of %.0f req/s, pactd %.0f %% of its core)\n", n, rps, rate, 100 * s
		}'
	done
done
echo "- total script time: $(($(date +%s) - started)) s"

if [ -n "${BENCH_PROFILE:-}" ]; then
	for n in new_native new_grpc floor_grpc; do
		if [ -s "$tmp/$n.pprof" ]; then
			echo
			echo "== pactd CPU profile, $n (kept in $tmp: *.pprof and the pactd binary)"
			go tool pprof -top -nodecount=30 "$tmp/pactd" "$tmp/$n.pprof" 2>/dev/null | sed -n '4,40p'
		fi
	done
fi

if [ -n "${BENCH_PEERS:-}" ]; then
	echo
	bash bench/scripts/bench-peers.sh
fi
