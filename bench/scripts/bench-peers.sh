#!/usr/bin/env bash
# bench-peers.sh measures pactd next to two peers, in one run on one
# machine, with the same style of load (closed loop, 64 workers, one
# HTTP/1.1 keep-alive connection each, every answer checked):
#
#   1. pactd: VerifyAgentRequest, Connect JSON over HTTP/1.1, a new token
#      per request and one repeated token (bench/cmd/pactd-loadgen);
#   2. Open Policy Agent: the data API answering a policy that verifies an
#      ES256 JWT with io.jwt.decode_verify (JWKS, iss, aud, time), new
#      tokens (a pool signed before the run, each sent once per cycle) and
#      one repeated token (bench/cmd/pactd-peerload -peer opa);
#   3. Ory Hydra: token introspection of an opaque client_credentials
#      access token, which Hydra looks up in PostgreSQL on every call
#      (bench/cmd/pactd-peerload -peer hydra). pactd has no row here: its
#      IntrospectToken over the wire needs a delegation grant; its
#      in-process figure is in docs/performance.md, "Introspection and
#      refresh on PostgreSQL".
#
# The peers are Go programs pinned as tools in their own module files,
# bench/peers/opa/go.mod and bench/peers/hydra/go.mod (two, because their
# dependency graphs conflict: OPA needs github.com/gobwas/glob v1, Hydra
# v0.2; Hydra also needs its own replace of gobuffalo/pop). They never
# touch go.mod, bench/go.mod or tools/go.mod. The first build downloads
# and compiles them: a few minutes; later runs use the build cache.
#
# Each server runs with GOMAXPROCS=1 pinned to one CPU (taskset), the load
# generator pinned to another. PostgreSQL (Hydra's store, at
# 127.0.0.1:5432, trust auth) is the machine's shared server and is not
# pinned; its CPU per request is the CPU of the backends of Hydra's
# throwaway database (hydra_bench_<random>, created and dropped here).
# Server CPU is utime+stime from /proc, in clock ticks of 10 ms.
#
#   bash bench/scripts/bench-peers.sh                # about 2 minutes once built
#
# Knobs (environment): BENCH_PEAK_SECONDS (8), BENCH_CONC (64),
# BENCH_POOL (100000, OPA's new tokens), BENCH_PACTD_POOL (200000,
# pactd-loadgen's, larger than pactd's repeat-token cache), BENCH_N (0; >0 stops each run
# after that many requests, for a quick functional check),
# BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_PG_URL (the admin
# connection, default postgres://postgres@127.0.0.1:5432/test, then the
# role root), BENCH_KEEP=1 keeps the temporary directory (logs).
set -euo pipefail
cd "$(dirname "$0")/../.." # the repository root: pactd builds from ./cmd/pactd, the lab from bench/

PEAK=${BENCH_PEAK_SECONDS:-8}
CONC=${BENCH_CONC:-64}
POOL=${BENCH_POOL:-100000}
PACTD_POOL=${BENCH_PACTD_POOL:-200000}
N=${BENCH_N:-0}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
OPA_MOD=bench/peers/opa/go.mod
HYDRA_MOD=bench/peers/hydra/go.mod

# pactd refuses unknown PACT_* variables; start from none but ours.
for v in $(compgen -e); do
	case $v in PACT_*) unset "$v" ;; esac
done

started=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-peers.XXXXXX")
pids=()     # servers started here, stopped on exit
lg_pid=""   # the running load generator
pg_url=""   # the admin connection that created the Hydra database
hydra_db="" # the Hydra database to drop on exit

# stop PID: TERM, then KILL after 5 s.
stop() {
	local p=$1
	kill -0 "$p" 2>/dev/null || return 0
	kill -TERM "$p" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
}
cleanup() {
	if [ -n "$lg_pid" ]; then kill -TERM "$lg_pid" 2>/dev/null || true; fi
	for p in "${pids[@]}"; do stop "$p"; done
	if [ -n "$hydra_db" ]; then
		psql "$pg_url" -qAtc "DROP DATABASE IF EXISTS $hydra_db WITH (FORCE)" >/dev/null 2>&1 ||
			echo "WARNING: could not drop database $hydra_db" >&2
	fi
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Rows of the result table: PEER|MODE|ENV FILE|NOTE; skipped peers: reasons.
rows=()
skipped=()
skip() { # PEER REASON
	echo "skipped: $1: $2"
	skipped+=("$1: $2")
}

echo "== build pactd, pactd-loadgen, pactd-peerload"
go build -o "$tmp/pactd" ./cmd/pactd
go -C bench build -o "$tmp/pactd-loadgen" ./cmd/pactd-loadgen
go -C bench build -o "$tmp/pactd-peerload" ./cmd/pactd-peerload
LG="$tmp/pactd-loadgen"
PL="$tmp/pactd-peerload"

# modver MODFILE MODULE: the version a tool module file pins.
modver() { go list -modfile="$1" -m -f '{{.Version}}' "$2" 2>/dev/null || echo "?"; }
opa_ver=$(modver "$OPA_MOD" github.com/open-policy-agent/opa)
hydra_ver=$(modver "$HYDRA_MOD" github.com/ory/hydra/v2)

echo "== build Open Policy Agent $opa_ver (first time: minutes)"
have_opa=""
if go build -modfile="$OPA_MOD" -o "$tmp/opa" github.com/open-policy-agent/opa >"$tmp/opa-build.log" 2>&1; then
	have_opa=1
else
	skip OPA "go build failed: $(grep -m1 -v '^#' "$tmp/opa-build.log" || true)"
fi
echo "== build Ory Hydra $hydra_ver (first time: minutes)"
have_hydra=""
if go build -modfile="$HYDRA_MOD" -o "$tmp/hydra" github.com/ory/hydra/v2 >"$tmp/hydra-build.log" 2>&1; then
	have_hydra=1
else
	skip Hydra "go build failed: $(grep -m1 -v '^#' "$tmp/hydra-build.log" || true)"
fi

# Pinning: servers on SERVER_CPU, the load generators on CLIENT_CPU.
server_pin=()
client_pin=()
pinning="unpinned"
if ! command -v taskset >/dev/null; then
	echo "WARNING: taskset not found: running unpinned (servers still have GOMAXPROCS=1; numbers are noisier)" >&2
	pinning="unpinned (no taskset)"
elif [ "$(nproc)" -lt 2 ]; then
	echo "WARNING: fewer than 2 CPUs: running unpinned" >&2
	pinning="unpinned (nproc < 2)"
else
	server_pin=(taskset -c "$SERVER_CPU")
	client_pin=(taskset -c "$CLIENT_CPU")
	pinning="servers on CPU $SERVER_CPU with GOMAXPROCS=1, load generator on CPU $CLIENT_CPU"
fi

# wait_http URL SECONDS: until URL answers 200.
wait_http() {
	local i
	for i in $(seq $((${2} * 10))); do
		if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}
# run_load NAME CMD...: one load run in the background (so that an
# interrupt is handled at once); an invalid run (exit 3) is kept and marked.
run_load() {
	local name=$1 rc=0
	shift
	echo "== $name"
	"$@" &
	lg_pid=$!
	wait "$lg_pid" || rc=$?
	lg_pid=""
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
		echo "load generator failed ($rc)" >&2
		return 1
	fi
}
nflag=()
if [ "$N" -gt 0 ]; then nflag=(-n "$N"); fi

# ---- pactd
secret() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
ADMIN="bench_adm_$(secret)"
FRONT="bench_fe_$(secret)"
port=$("$LG" -free-port)
mkdir -p "$tmp/data"
echo "== start pactd on 127.0.0.1:$port ($pinning)"
env PACT_LISTEN="127.0.0.1:$port" PACT_GRPC_LISTEN=off PACT_DATA_DIR="$tmp/data" PACT_DEV=true PACT_LOG_LEVEL=warn \
	PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" GOMAXPROCS=1 \
	"${server_pin[@]}" "$tmp/pactd" serve >"$tmp/pactd.log" 2>&1 &
pactd_pid=$! # env and taskset exec, so this is pactd's pid
pids+=("$pactd_pid")
if ! "$LG" -addr "http://127.0.0.1:$port" -wait-health 20s; then
	echo "pactd did not become healthy; its log:" >&2
	cat "$tmp/pactd.log" >&2
	exit 1
fi
jwks_port=$("$LG" -free-port)
for m in new repeat; do
	run_load "pactd $m" env PACT_ADMIN_TOKEN="$ADMIN" PACT_FRONTEND_TOKEN="$FRONT" "${client_pin[@]}" "$LG" \
		-addr "http://127.0.0.1:$port" -server-pid "$pactd_pid" -jwks-addr "127.0.0.1:$jwks_port" -key-file "$tmp/pa.pem" \
		-mode "$m" -pool "$PACTD_POOL" -protocol connect -codec json -http 1.1 -c "$CONC" -d "${PEAK}s" "${nflag[@]}" -out "$tmp/pactd_$m.env" ||
		{ tail -n 20 "$tmp/pactd.log" >&2; exit 1; }
	rows+=("pactd|$m|pactd_$m|VerifyAgentRequest, Connect JSON, HTTP/1.1")
done
stop "$pactd_pid"

# ---- Open Policy Agent
if [ -n "$have_opa" ]; then
	"$PL" -peer opa -key-file "$tmp/opa-key.pem" -jwks-out "$tmp/opa-jwks.json"
	{
		echo 'package pactbench'
		echo
		echo '# The key, issuer and audience match bench/cmd/pactd-peerload -peer opa.'
		printf 'jwks := `%s`\n\n' "$(cat "$tmp/opa-jwks.json")"
		cat <<'REGO'
default allow := false

allow if {
	[valid, _, _] := io.jwt.decode_verify(input.token, {
		"cert": jwks,
		"iss": "https://pa.bench.invalid",
		"aud": "https://brand.bench.invalid",
		"time": time.now_ns(),
	})
	valid
}
REGO
	} >"$tmp/policy.rego"
	oport=$("$LG" -free-port)
	echo "== start OPA on 127.0.0.1:$oport ($pinning)"
	env GOMAXPROCS=1 "${server_pin[@]}" "$tmp/opa" run --server --addr "127.0.0.1:$oport" --log-level error \
		--skip-version-check "$tmp/policy.rego" >"$tmp/opa.log" 2>&1 &
	opa_pid=$!
	pids+=("$opa_pid")
	if ! wait_http "http://127.0.0.1:$oport/health" 20; then
		skip OPA "did not become healthy: $(tail -n 3 "$tmp/opa.log" | tr '\n' ' ')"
	else
		for m in new repeat; do
			run_load "OPA $m" "${client_pin[@]}" "$PL" -peer opa -mode "$m" -pool "$POOL" -key-file "$tmp/opa-key.pem" \
				-url "http://127.0.0.1:$oport/v1/data/pactbench/allow" -c "$CONC" -d "${PEAK}s" "${nflag[@]}" \
				-server-pid "$opa_pid" -out "$tmp/opa_$m.env" || { tail -n 20 "$tmp/opa.log" >&2; exit 1; }
			rows+=("OPA|$m|opa_$m|data API, io.jwt.decode_verify ES256")
		done
	fi
	stop "$opa_pid"
fi

# ---- Ory Hydra
if [ -n "$have_hydra" ]; then
	for u in "${BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432/test}" postgres://root@127.0.0.1:5432/test; do
		if psql "$u" -qAtc 'SELECT 1' >/dev/null 2>&1; then
			pg_url=$u
			break
		fi
	done
	if [ -z "$pg_url" ]; then
		skip Hydra "PostgreSQL at 127.0.0.1:5432 not reachable as postgres or root"
		have_hydra=""
	fi
fi
if [ -n "$have_hydra" ]; then
	hydra_db="hydra_bench_$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
	psql "$pg_url" -qAtc "CREATE DATABASE $hydra_db" >/dev/null
	pg_role=${pg_url#postgres://}
	pg_role=${pg_role%%@*}
	hpub=$("$LG" -free-port)
	hadm=$("$LG" -free-port)
	export DSN="postgres://$pg_role@127.0.0.1:5432/$hydra_db?sslmode=disable"
	export SECRETS_SYSTEM="$(secret)" URLS_SELF_ISSUER="http://127.0.0.1:$hpub/" LOG_LEVEL=warn SQA_OPT_OUT=true \
		SERVE_PUBLIC_HOST=127.0.0.1 SERVE_PUBLIC_PORT="$hpub" SERVE_ADMIN_HOST=127.0.0.1 SERVE_ADMIN_PORT="$hadm"
	echo "== Hydra: migrate database $hydra_db"
	if ! "$tmp/hydra" migrate sql up -e --yes >"$tmp/hydra-migrate.log" 2>&1; then
		skip Hydra "migration failed: $(tail -n 2 "$tmp/hydra-migrate.log" | tr '\n' ' ')"
		have_hydra=""
	fi
fi
if [ -n "$have_hydra" ]; then
	echo "== start Hydra, public 127.0.0.1:$hpub, admin 127.0.0.1:$hadm ($pinning; PostgreSQL unpinned)"
	env GOMAXPROCS=1 "${server_pin[@]}" "$tmp/hydra" serve all --dev --sqa-opt-out >"$tmp/hydra.log" 2>&1 &
	hydra_pid=$!
	pids+=("$hydra_pid")
	if ! wait_http "http://127.0.0.1:$hadm/health/ready" 30; then
		skip Hydra "did not become ready: $(tail -n 3 "$tmp/hydra.log" | tr '\n' ' ')"
	else
		run_load "Hydra introspect" "${client_pin[@]}" "$PL" -peer hydra -mode repeat \
			-url "http://127.0.0.1:$hadm" -public-url "http://127.0.0.1:$hpub" -c "$CONC" -d "${PEAK}s" "${nflag[@]}" \
			-server-pid "$hydra_pid" -extra-comm postgres -extra-match " $hydra_db " -out "$tmp/hydra_introspect.env" ||
			{ tail -n 20 "$tmp/hydra.log" >&2; exit 1; }
		rows+=("Hydra|introspect|hydra_introspect|admin /admin/oauth2/introspect, opaque token, PostgreSQL")
	fi
	stop "$hydra_pid"
fi

# ---- table
val() { sed -n "s/^$2=//p" "$tmp/$1.env" 2>/dev/null; }
us() { # µs per request, or "—" when not measured
	local v=${1:-}
	if [ -z "$v" ] || [[ $v == -* ]]; then echo "—"; else echo "$v µs"; fi
}
echo
echo "## pactd and its peers, $(date -u +%Y-%m-%d)"
echo
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1); $(go version | cut -d' ' -f3-); $pinning"
echo "versions: pactd $(git rev-parse --short HEAD 2>/dev/null || echo '?'), Open Policy Agent $opa_ver, Ory Hydra $hydra_ver (PostgreSQL $(psql "${pg_url:-postgres://postgres@127.0.0.1:5432/test}" -qAtc 'SHOW server_version' 2>/dev/null || echo '?'))"
echo "load: closed loop, $CONC workers, one HTTP/1.1 keep-alive connection each, ${PEAK}s per run; OPA new: a pool of $POOL pre-signed ES256 tokens"
echo
echo "| peer | mode | req/s | server CPU per request | PostgreSQL CPU per request | p50 / p99 | valid |"
echo "|---|---|---:|---:|---:|---:|---|"
for r in "${rows[@]}"; do
	IFS='|' read -r peer mode f note <<<"$r"
	v="$(val "$f" valid)"
	if [ "$v" = true ]; then v=yes; else v="INVALID ($(val "$f" failures) failures)"; fi
	pg="—"
	if [ "$peer" = Hydra ]; then
		pg=$(us "$(val "$f" extra_us_per_req)")
		ex=$(val "$f" extra_exited)
		if [ -n "$ex" ] && [ "$ex" != 0 ]; then pg="≥ $pg ($ex backends exited)"; fi
	fi
	printf '| %s (%s) | %s | %s | %s | %s | %s / %s ms | %s |\n' "$peer" "$note" "$mode" "$(val "$f" rps)" \
		"$(us "$(val "$f" server_us_per_req)")" "$pg" "$(val "$f" p50_ms)" "$(val "$f" p99_ms)" "$v"
done
for s in "${skipped[@]}"; do echo "skipped: $s"; done
echo
echo "pactd's IntrospectToken (reads the grant from PostgreSQL on every call) is measured in process: docs/performance.md, \"Introspection and refresh on PostgreSQL\"."
echo "took $(($(date +%s) - started))s"
