#!/usr/bin/env bash
# scripts/test.sh: the project's one test command, for developers and CI alike
# (.ci/run ends in `exec bash scripts/test.sh`).
#
# In order, stopping at the first failing check before the tests:
#   1. toolchain and modules      go and git exist; main, lab (bench/) and tools modules downloaded;
#                                 with CI=true, Debian's chromium (for e2e/browser_test.go)
#                                 and pgbouncer (db/dbtest starts it as a transaction pooler
#                                 in front of the test PostgreSQL for the PgBouncer tests)
#   2. protos                     buf lint; buf format -d --exit-code
#   3. generated code is fresh    buf generate, buf build (internal/apidesc/pact.binpb) and
#                                 sqlc generate, then no diff and no untracked file under gen/
#                                 and db/internal/; sqlc compile, vet; docs/api.md from the
#                                 descriptors (go run ./cmd/pactd-apidoc)
#   4. gofmt, go vet, staticcheck, gofmt -l prints nothing (generated code and bench/ included);
#      deadcode, promtool         go vet; staticcheck ./... and deadcode -test ./... (the
#                                 pinned tools) print nothing, in the main module and
#                                 in the lab's (bench/); promtool check rules
#                                 deploy/prometheus/*.yml. Generated code (gen/, db/internal/,
#                                 marked "Code generated ... DO NOT EDIT") is not
#                                 excluded by path: staticcheck itself drops, in generated
#                                 files, the findings generators commonly cause and still
#                                 reports bugs there; deadcode runs without -generated, as protoc
#                                 and sqlc emit every getter and query whether called or not;
#                                 -test counts what only tests call as used (test helpers);
#                                 then the frontend libraries installed in scratch projects
#                                 (scripts/scratch/{go,ts,py}.sh)
#   5. PostgreSQL                 127.0.0.1:5432 answers, or the machine's cluster is started
#   6. go test -race ./...        every package under the race detector; internal/readmetest
#                                 runs the marked blocks of README.md, then of the docs pages in
#                                 docs/README.md's order, on a copy of the checkout (servers on
#                                 ports 7070, 7071, 3000; a line per block, naming file:line)
#   7. the lab: go test -race     the lab's module (bench/: load generators, the failover
#      ./... in bench/            lab, the benchmark scripts with short knobs), its own
#                                 module, so step 6 does not reach it; counted in the summary
#   8. fuzz smoke                 every Fuzz* target for PACT_FUZZTIME (default 20000x), in
#                                 whichever module holds it (the main one or bench/), then
#                                 the TypeScript fuzz targets of frontends/pacta2a-js as often
#   9. container image            podman build of the Containerfile (offline, FROM scratch);
#                                 size, user, entrypoint, no shell, and `pactd version` of the
#                                 binary copied out of it (with CI=true, Debian's podman is
#                                 installed; elsewhere skipped without podman)
# The TypeScript frontends (the npm workspace in frontends/: the @pactd/a2a library in
# frontends/pacta2a-js, the standalone frontend in frontends/node, the @a2a-js/sdk example in
# frontends/a2a-js-example, the @pactd/hdtp-host MCP host in frontends/hdtphost-js and its
# example in frontends/hdtp-js-example) join in: npm ci (step 1), the library's generated code (step 3),
# build, type-check and unit tests of all three (step 4), the TypeScript fuzz smoke (step 7);
# e2e runs against the standalone frontend and the example in step 6.
# frontends/pacta2a-py and frontends/python (the Python package and frontend) join in:
# Debian's Python packages for /usr/bin/python3 (step 1; installed under CI=true), the
# generated Python code (step 3), their pytest tests (step 4, counted in the summary);
# e2e runs against the Python frontend in step 6.
# and a last line "N passed, M failed", counted from go test -json (test-level
# pass and fail events of steps 6, 7 and 8). Exits non-zero if anything failed.
# Ctrl-C (SIGINT), SIGTERM or SIGHUP stops every process it started, at any
# depth, within seconds, and exits 130, 143 or 129 (scripts/testsh_test.go).
#
# How long: on a 2-core machine with a cold Go build cache, about 25 minutes (the pinned
# tools, the race-instrumented test binaries and the fuzz targets are compiled once; most of
# it is compiling); warm, about 5 minutes. Every step that can take a minute runs under
# heartbeat, which prints a line at least once a minute while it runs.
#
# Environment:
#   PACT_QUICK=1            quick local iteration: go test (main and lab) without -race, no fuzz smoke, no
#                           browser test, no container image. Ignored under CI=true: CI always
#                           runs everything.
#   PACT_FUZZTIME           fuzz budget per target (default 20000x executions; 0 skips the fuzz smoke).
#                           A count, not a duration: Go 1.26's fuzz coordinator can report a bare
#                           "context deadline exceeded" at the end of a wall-clock -fuzztime on a
#                           loaded machine (golang/go#75804, fixed in Go 1.27); a count has no deadline.
#   PACT_TEST_POSTGRES_URL  a PostgreSQL server for the tests (db/dbtest); otherwise
#                           127.0.0.1:5432, otherwise a throwaway cluster from initdb
#   PACT_TEST_PGBOUNCER_URL a PgBouncer (pool_mode=transaction) in front of that server for the
#                           pooler tests; otherwise db/dbtest starts the installed pgbouncer
#
# `bash scripts/test.sh --list-fuzz` prints the discovered fuzz targets
# ("./pkg FuzzName" per line) and exits; internal/archtest checks that it finds
# every fuzz target in the repository.
set -euo pipefail

cd "$(dirname "$0")/.."
# Each module as a fresh clone sees it: its own go.mod (bench/ reaches the
# product through its replace), never a go.work a developer may keep, which
# would also let step 6's ./... reach into bench/.
export GOWORK=off

# discover_fuzz prints "./dir FuzzName" for every fuzz target in a _test.go file,
# in the main module or a nested one (bench/); the fuzz smoke runs each in its module.
# This is the one discovery: the fuzz smoke below and internal/archtest both use it.
discover_fuzz() {
	local file name
	{ grep -rl '^func Fuzz' --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git . || true; } | LC_ALL=C sort |
		while IFS= read -r file; do
			sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file" | while IFS= read -r name; do
				# FuzzXxx only: a lower-case letter after "Fuzz" is not a fuzz target.
				if [[ "$name" =~ ^Fuzz([^a-z].*)?$ ]]; then
					printf '%s %s\n' "$(dirname "$file")" "$name"
				fi
			done
		done
}

if [[ "${1:-}" == "--list-fuzz" ]]; then
	discover_fuzz
	exit 0
fi
if [[ $# -gt 0 ]]; then
	echo "usage: bash scripts/test.sh [--list-fuzz]" >&2
	exit 2
fi

START=$SECONDS
QUICK=0
if [[ "${PACT_QUICK:-}" == "1" ]]; then
	if [[ "${CI:-}" == "true" ]]; then
		echo "PACT_QUICK=1 is ignored under CI=true: CI runs everything"
	else
		QUICK=1
		echo "PACT_QUICK=1: quick mode, skipping: the race detector (go test without -race), the fuzz smoke," \
			"the browser test (e2e TestBrowser*) and the container image build; CI runs everything"
	fi
fi
step=0
section() {
	step=$((step + 1))
	printf '\n==== [%d/9] %s ====\n' "$step" "$*"
}
fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}
tool() { go tool -modfile=tools/go.mod "$@"; }

# heartbeat LABEL CMD...: runs CMD, printing a line every HEARTBEAT_SECONDS
# (50) while it runs, so a long compile, install or download is never a
# silent stretch of a minute. CMD runs as a job of its own and the script
# waits for it: a signal to the script then runs its trap at once (a trap
# waits for a foreground command to end). Job control is on for the fork
# alone, so that CMD keeps the default SIGINT a plain background command
# would lose (the tests' own children are stopped with SIGINT); its
# standard input is /dev/null, as it is in CI.
heartbeat() {
	local label=$1 t0 hb job rc=0
	shift
	t0=$(date +%s)
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		while :; do
			sleep "${HEARTBEAT_SECONDS:-50}" &
			s=$!
			wait "$s"
			echo "  ... $label: still running ($(($(date +%s) - t0))s)"
		done
	) &
	hb=$!
	set -m
	"$@" </dev/null &
	job=$!
	set +m
	wait "$job" || rc=$?
	kill "$hb" 2>/dev/null || true
	wait "$hb" 2>/dev/null || true
	return "$rc"
}

# descendants prints the PIDs of every process below this script, however
# deep and in whatever process group (a job's, a server a test started in
# its own), except the ones that run this function (its subshell, ps, awk).
descendants() {
	local self=$BASHPID
	ps -e -o pid= -o ppid= | awk -v root=$$ -v self="$self" '
		{ kids[$2] = kids[$2] " " $1 }
		END {
			n = split(kids[root], queue, " ")
			for (i = 1; i <= n; i++) {
				if (queue[i] == self) continue
				print queue[i]
				m = split(kids[queue[i]], more, " ")
				for (j = 1; j <= m; j++) queue[++n] = more[j]
			}
		}' | sort -n
}

# running PID...: the PIDs that still run (a zombie has ended).
running() {
	local p st
	for p in "$@"; do
		st=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		st=${st##*) }
		[[ ${st%% *} == Z ]] || echo "$p"
	done
}

# interrupted NAME STATUS: Ctrl-C (SIGINT), SIGTERM or SIGHUP stops every
# process this script started (go test and the tests' servers, npm, pytest,
# the heartbeats), then the script, with STATUS. The tree is frozen first
# (SIGSTOP, again until no new process appears), so nothing in it starts
# another between the snapshot and the signal; then TERM, and KILL for
# what still runs 5 seconds later.
interrupted() {
	trap '' INT TERM HUP # the clean-up runs to its end
	printf '\n%s: stopping every process the test command started\n' "$1" >&2
	local pids more all left
	pids=$(descendants)
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[[ -n $pids ]] || break
		kill -STOP $pids 2>/dev/null || true # unquoted: one PID per word
		more=$(descendants)
		all=$(printf '%s\n%s\n' "$pids" "$more" | grep . | sort -nu)
		[[ $all != "$pids" ]] || break
		pids=$all
	done
	if [[ -n $pids ]]; then
		kill -TERM $pids 2>/dev/null || true
		kill -CONT $pids 2>/dev/null || true
		for _ in $(seq 50); do
			left=$(running $pids)
			[[ -n $left ]] || break
			sleep 0.1
		done
		[[ -z $left ]] || kill -KILL $left 2>/dev/null || true
	fi
	exit "$2"
}
trap 'interrupted SIGINT 130' INT
trap 'interrupted SIGTERM 143' TERM
trap 'interrupted SIGHUP 129' HUP

WORK=$(mktemp -d -t pactd-test.XXXXXX)
keep_work=0
cleanup() { if [[ $keep_work == 0 ]]; then rm -rf "$WORK"; fi; }
trap cleanup EXIT

# ---------------------------------------------------------------------------
section "toolchain and modules"
command -v go >/dev/null || fail "go is not on PATH"
command -v git >/dev/null || fail "git is not on PATH"
go version
echo "repo: $(pwd)  CI=${CI:-}"
# Minutes on a machine whose module cache is empty.
heartbeat "go mod download" bash -c 'go mod download && go -C bench mod download && go mod download -modfile=tools/go.mod' ||
	fail "go mod download failed"
echo "modules downloaded"
# The pinned tools the checks and tests run (buf, sqlc; grpcurl for the docs' grant walk,
# which cmd/pact-demo's TestDocsGrantWalk runs): compiled once, a few minutes on a cold cache.
echo "building the pinned tools buf, sqlc, grpcurl (a few minutes the first time)"
heartbeat "building the pinned tools" bash -c 'go tool -modfile=tools/go.mod buf --version >/dev/null &&
	go tool -modfile=tools/go.mod sqlc version >/dev/null && go tool -modfile=tools/go.mod grpcurl -version >/dev/null 2>&1' ||
	fail "building the pinned tools failed"
echo "pinned tools built"
# e2e/browser_test.go drives headless Chromium and fails (not skips) under
# CI=true without it, so CI installs Debian's package once (as root).
if [[ "${CI:-}" == "true" ]] && ! command -v chromium >/dev/null; then
	echo "installing chromium for the browser test"
	[[ $(id -u) == 0 ]] || fail "chromium is missing and installing it needs root: apt-get install chromium"
	heartbeat "apt-get install chromium" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null' ||
		fail "apt-get install chromium failed"
fi
if command -v chromium >/dev/null; then echo "chromium: $(chromium --version 2>/dev/null)"; fi
# promtool (Debian's prometheus package) checks the alert rules in deploy/;
# CI installs it, elsewhere that check is skipped without it.
if [[ "${CI:-}" == "true" ]] && ! command -v promtool >/dev/null; then
	echo "installing promtool (Debian package prometheus) for the alert rules check"
	[[ $(id -u) == 0 ]] || fail "promtool is missing and installing it needs root: apt-get install prometheus"
	heartbeat "apt-get install prometheus" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null' ||
		fail "apt-get install prometheus failed"
fi
# pgbouncer (Debian's package): db/dbtest starts it, in pool_mode=transaction in
# front of the test PostgreSQL, for the store contract and the two-replica test
# through a transaction pooler. CI installs it; elsewhere those tests skip
# without it (under CI=true they fail instead).
if [[ "${CI:-}" == "true" ]] && ! command -v pgbouncer >/dev/null && [[ ! -x /usr/sbin/pgbouncer ]]; then
	echo "installing pgbouncer for the transaction-pooler tests"
	[[ $(id -u) == 0 ]] || fail "pgbouncer is missing and installing it needs root: apt-get install pgbouncer"
	heartbeat "apt-get install pgbouncer" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null' ||
		fail "apt-get install pgbouncer failed"
fi
# podman (Debian's package): internal/readmetest builds the docs' container block
# with it during go test, and step 8 builds and checks the image. CI installs it
# here, before the tests; elsewhere both skip without it.
if [[ "${CI:-}" == "true" ]] && ! command -v podman >/dev/null; then
	echo "installing podman for the docs' container block and the image check"
	[[ $(id -u) == 0 ]] || fail "podman is missing and installing it needs root: apt-get install podman"
	heartbeat "apt-get install podman" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman >/dev/null' ||
		fail "apt-get install podman failed"
fi
if command -v pgbouncer >/dev/null || [[ -x /usr/sbin/pgbouncer ]]; then
	echo "pgbouncer: $({ pgbouncer --version 2>/dev/null || /usr/sbin/pgbouncer --version; } | head -n 1)"
else
	echo "pgbouncer not found: the PgBouncer tests skip (Debian: apt-get install pgbouncer)"
fi
# The TypeScript frontends: the npm workspace's dependencies from its one
# lockfile (frontends/package-lock.json). Without Node they are skipped,
# except under CI=true, where that fails.
NODE_FE=0
if command -v node >/dev/null && command -v npm >/dev/null; then
	echo "node $(node --version), npm $(npm --version)"
	heartbeat "npm ci in frontends/" bash -c 'cd frontends && npm ci --no-audit --no-fund' || fail "npm ci in frontends/ failed"
	NODE_FE=1
elif [[ "${CI:-}" == "true" ]]; then
	fail "node and npm (Node 20) are needed for the TypeScript frontends in frontends/"
else
	echo "SKIP the TypeScript frontends (frontends/): node/npm not found"
fi

# frontends/pacta2a-py and frontends/python run on Debian's packages for
# /usr/bin/python3 (not whatever python3 is first on PATH); python3-pip is for
# scripts/scratch/py.sh, which installs the package with pip as a user would
# (offline, from its directory). CI installs them;
# elsewhere the Python steps are skipped without them, saying so (and the
# e2e suite skips its py tests).
PY=/usr/bin/python3
PY_DEBS="python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc python3-starlette python3-uvicorn python3-httpx python3-pytest python3-pip"
py_ready() {
	[[ -x $PY ]] && command -v protoc >/dev/null && command -v grpc_python_plugin >/dev/null &&
		"$PY" -c 'import grpc, google.protobuf, h11, httpx, pytest, starlette, uvicorn' 2>/dev/null && "$PY" -m pip --version >/dev/null 2>&1
}
PY_FE=0
if [[ "${CI:-}" == "true" ]] && ! py_ready; then
	echo "installing Debian's Python packages for frontends/pacta2a-py and frontends/python"
	[[ $(id -u) == 0 ]] || fail "the Python packages are missing and installing them needs root: apt-get install $PY_DEBS"
	heartbeat "apt-get install the Python packages" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $1 >/dev/null' _ "$PY_DEBS" ||
		fail "apt-get install $PY_DEBS failed"
fi
if py_ready; then
	PY_FE=1
	echo "python: $("$PY" --version), grpcio $("$PY" -c 'import grpc; print(grpc.__version__)'), $(protoc --version)"
elif [[ "${CI:-}" == "true" ]]; then
	fail "$PY lacks the Python frontend's packages after installing them"
else
	echo "SKIP the Python package and frontend (generated code, pytest, e2e py tests): $PY with Debian's $PY_DEBS is needed"
fi

# ---------------------------------------------------------------------------
section "protos: buf lint, buf format"
tool buf lint
if ! tool buf format -d --exit-code; then
	fail "buf format would change the protos above; run: go tool -modfile=tools/go.mod buf format -w"
fi
echo "protos lint-clean and formatted"

# ---------------------------------------------------------------------------
section "generated code is fresh (buf generate, sqlc generate)"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || fail "not a git checkout: the freshness check needs git"
tool buf generate
# The documented descriptors that reflection serves (internal/apidesc).
tool buf build --as-file-descriptor-set -o internal/apidesc/pact.binpb
tool sqlc generate
tool sqlc compile
tool sqlc vet
if ! git diff --exit-code --stat -- gen db/internal internal/apidesc/pact.binpb; then
	git --no-pager diff -- gen db/internal | head -n 200
	fail "generated code under gen/, db/internal/ or internal/apidesc/pact.binpb is stale: regenerate and commit it (never edit it by hand; fix the protos, queries or sqlc.yaml)"
fi
untracked=$(git status --porcelain --untracked-files=all -- gen db/internal | grep '^??' || true)
if [[ -n "$untracked" ]]; then
	printf '%s\n' "$untracked"
	fail "generated files above are not in git: add and commit them"
fi
echo "gen/ and db/internal/ match buf and sqlc output"
# docs/api.md, the API reference, from those documented descriptors and
# the roles core/auth admits (cmd/pactd-apidoc).
heartbeat "pactd-apidoc" go run ./cmd/pactd-apidoc -o docs/api.md
if ! git diff --exit-code --stat -- docs/api.md || git status --porcelain -- docs/api.md | grep -q '^??'; then
	git --no-pager diff -- docs/api.md | head -n 100
	fail "docs/api.md is stale: run go run ./cmd/pactd-apidoc -o docs/api.md and commit it (edit the .proto comments, never the page)"
fi
echo "docs/api.md matches the .proto comments"
# frontends/pacta2a-js/src/gen (@pactd/a2a's pactd clients): the same protos
# through protoc-gen-es (buf.gen.es.yaml).
if [[ $NODE_FE == 1 ]]; then
	tool buf generate --template buf.gen.es.yaml
	if ! git diff --exit-code --stat -- frontends/pacta2a-js/src/gen ||
		git status --porcelain --untracked-files=all -- frontends/pacta2a-js/src/gen | grep '^??'; then
		fail "frontends/pacta2a-js/src/gen is stale: run go tool -modfile=tools/go.mod buf generate --template buf.gen.es.yaml and commit it"
	fi
	echo "frontends/pacta2a-js/src/gen matches protoc-gen-es output"
	# frontends/hdtphost-js/src/gen (@pactd/hdtp-host's pactd clients): hdtp.v1 (buf.gen.hdtp-es.yaml).
	tool buf generate --template buf.gen.hdtp-es.yaml
	if ! git diff --exit-code --stat -- frontends/hdtphost-js/src/gen ||
		git status --porcelain --untracked-files=all -- frontends/hdtphost-js/src/gen | grep '^??'; then
		fail "frontends/hdtphost-js/src/gen is stale: run go tool -modfile=tools/go.mod buf generate --template buf.gen.hdtp-es.yaml and commit it"
	fi
	echo "frontends/hdtphost-js/src/gen matches protoc-gen-es output"
fi
# frontends/pacta2a-py/src/pacta2a/_gen: protoc's Python generators and the gRPC plugin (buf.gen.py.yaml).
if [[ $PY_FE == 1 ]]; then
	tool buf generate --template buf.gen.py.yaml
	if ! git diff --exit-code --stat -- frontends/pacta2a-py/src/pacta2a/_gen ||
		git status --porcelain --untracked-files=all -- frontends/pacta2a-py/src/pacta2a/_gen | grep '^??'; then
		fail "frontends/pacta2a-py/src/pacta2a/_gen is stale: run go tool -modfile=tools/go.mod buf generate --template buf.gen.py.yaml and commit it"
	fi
	echo "frontends/pacta2a-py/src/pacta2a/_gen matches protoc's Python output"
fi

# ---------------------------------------------------------------------------
section "gofmt, go vet, staticcheck, deadcode, promtool check rules"
unformatted=$(gofmt -l .) || fail "gofmt could not read the files above"
if [[ -n "$unformatted" ]]; then
	printf '%s\n' "$unformatted"
	fail "gofmt would change the files above: run gofmt -w on them"
fi
heartbeat "go vet" go vet ./...
heartbeat "go vet (bench/)" go -C bench vet ./...
echo "gofmt and go vet clean (main module and bench/)"
# staticcheck and deadcode: any line they print is a finding (deadcode exits 0
# when it finds dead code, so the output is what counts, for both).
lint_one() { # lint_one OUT TOOL ARGS...: the tool's output (and its errors) in OUT
	local out=$1
	shift
	tool "$@" >"$out" 2>&1 || true
}
# The lab's module (bench/) the same way, the pinned tools run from inside it.
lint_bench() { # lint_bench OUT TOOL ARGS...: lint_one in bench/
	local out=$1
	shift
	(cd bench && go tool -modfile=../tools/go.mod "$@") >"$out" 2>&1 || true
}
heartbeat "staticcheck" lint_one "$WORK/staticcheck.out" staticcheck ./...
heartbeat "staticcheck (bench/)" lint_bench "$WORK/staticcheck-bench.out" staticcheck ./...
if [[ -s "$WORK/staticcheck.out" || -s "$WORK/staticcheck-bench.out" ]]; then
	cat "$WORK/staticcheck.out"
	sed 's|^|bench/|' "$WORK/staticcheck-bench.out"
	fail "staticcheck: fix the findings above (a justified exception takes a //lint:ignore CHECK reason line)"
fi
heartbeat "deadcode" lint_one "$WORK/deadcode.out" deadcode -test ./...
heartbeat "deadcode (bench/)" lint_bench "$WORK/deadcode-bench.out" deadcode -test ./...
if [[ -s "$WORK/deadcode.out" || -s "$WORK/deadcode-bench.out" ]]; then
	cat "$WORK/deadcode.out"
	sed 's|^|bench/|' "$WORK/deadcode-bench.out"
	fail "deadcode: remove the unreachable functions above (or call them from a test if they are a tested API)"
fi
echo "staticcheck and deadcode print nothing (main module and bench/)"
if command -v promtool >/dev/null; then
	promtool check rules deploy/prometheus/*.yml || fail "promtool check rules: the alert rules in deploy/prometheus/ are invalid"
elif [[ "${CI:-}" == "true" ]]; then
	fail "promtool is missing under CI=true"
else
	echo "SKIP promtool check rules: promtool is not installed (Debian: apt-get install prometheus)"
fi
# The TypeScript frontends: build all three workspace packages in order (the
# library first: the others import its dist/), strict type-check, their unit
# tests (node --test); the builds are what the shared e2e suite starts.
if [[ $NODE_FE == 1 ]]; then
	heartbeat "TypeScript build, type-check and unit tests" bash -c 'cd frontends && npm run --silent build --workspaces &&
		npm run --silent typecheck --workspaces && npm test --workspaces' || fail "frontends/: build, type-check or unit tests failed"
	echo "frontends/ (pacta2a-js, node, a2a-js-example) build and type-check, their unit tests pass, dist/ is built for e2e"
fi
# frontends/pacta2a-py and frontends/python: their pytest tests (the client against a
# pactd built from ./cmd/pactd, the middleware on a real uvicorn, the frontend as a
# process). Counted in the summary from pytest's JUnit XML; a failure fails the run at
# the end, after the Go tests.
PYTEST_XML="$WORK/pytest.xml"
if [[ $PY_FE == 1 ]]; then
	t0=$SECONDS
	if heartbeat "pytest" "$PY" -m pytest -q -p no:cacheprovider --junitxml="$PYTEST_XML" frontends/pacta2a-py frontends/python; then
		echo "pytest passed ($((SECONDS - t0))s)"
	else
		echo "FAIL  pytest frontends/pacta2a-py frontends/python ($((SECONDS - t0))s)"
		py_failed=1
	fi
fi

# The frontend libraries used from outside this repository, each in a scratch project
# (scripts/scratch/): the Go module required by another module, @pactd/a2a installed from
# npm pack's tarball, the Python package installed with pip from its directory.
scratch_one() { # scratch_one NAME: run scripts/scratch/NAME.sh, report, fail the run on failure
	if heartbeat "scratch install ($1)" bash "scripts/scratch/$1.sh"; then :; else
		echo "FAIL  scripts/scratch/$1.sh"
		scratch_failed=1
	fi
}
scratch_one go
if [[ $NODE_FE == 1 ]]; then scratch_one ts; fi
if [[ $PY_FE == 1 ]]; then scratch_one py; fi

# ---------------------------------------------------------------------------
section "PostgreSQL"
pg_up() {
	if command -v pg_isready >/dev/null; then
		pg_isready -q -h 127.0.0.1 -p 5432 -t 3
	else
		timeout 3 bash -c ': </dev/tcp/127.0.0.1/5432' 2>/dev/null
	fi
}
if [[ -n "${PACT_TEST_POSTGRES_URL:-}" ]]; then
	echo "tests use PACT_TEST_POSTGRES_URL"
elif pg_up; then
	echo "127.0.0.1:5432 answers"
else
	echo "127.0.0.1:5432 does not answer; starting the machine's cluster"
	if command -v pg_ctlcluster >/dev/null && [[ -d /etc/postgresql ]]; then
		for v in $(ls /etc/postgresql); do
			pg_ctlcluster --skip-systemctl-redirect "$v" main start || true
		done
	fi
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		if pg_up; then break; fi
		sleep 1
	done
	if pg_up; then
		echo "127.0.0.1:5432 answers"
	else
		echo "still no server at 127.0.0.1:5432; db/dbtest will start a throwaway cluster from initdb/pg_ctl"
	fi
fi

# ---------------------------------------------------------------------------
# A small formatter shows go test -json as compact text: package result lines,
# package-level output (TestMain, panics), the README test's progress lines (README.md and docs/) as they
# come, and the full output of every failed or skipped test. The raw JSON is kept for counting.
mkdir -p "$WORK/fmt"
cat >"$WORK/fmt/go.mod" <<'GOMOD'
module gotestfmt

go 1.26
GOMOD
cat >"$WORK/fmt/main.go" <<'GOSRC'
// Command gotestfmt prints `go test -json` as compact text.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

type event struct {
	Action, Package, ImportPath, Test, Output string
}

func main() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	buf := map[string][]string{} // Package + "\x00" + Test -> output lines
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			fmt.Fprintln(out, line)
			out.Flush()
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Test != "" && e.Action == "output":
			buf[key] = append(buf[key], e.Output)
			// internal/readmetest's progress, as it runs (minutes of README and docs blocks).
			if strings.Contains(e.Output, "readme-test progress: ") {
				fmt.Fprint(out, e.Output)
			}
		case e.Test != "" && (e.Action == "fail" || e.Action == "skip"):
			fmt.Fprint(out, strings.Join(buf[key], ""))
			delete(buf, key)
		case e.Test != "" && e.Action == "pass":
			delete(buf, key)
		case e.Test == "" && e.Action == "output":
			if o := strings.TrimSpace(e.Output); o != "PASS" && o != "FAIL" && !strings.HasPrefix(o, "=== ") {
				fmt.Fprint(out, e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			// A test that never finished (panic, timeout): show what it printed.
			for k, lines := range buf {
				if strings.HasPrefix(k, e.Package+"\x00") {
					fmt.Fprint(out, strings.Join(lines, ""))
					delete(buf, k)
				}
			}
		}
		out.Flush()
	}
}
GOSRC
heartbeat "building the go test output formatter" bash -c 'cd "$1" && GOFLAGS= GOWORK=off go build -o "$2" .' _ "$WORK/fmt" "$WORK/gotestfmt" ||
	fail "build the go test output formatter"

JSON_TEST="$WORK/test.json"
JSON_BENCH="$WORK/bench.json"
JSON_FUZZ="$WORK/fuzz.json"
: >"$JSON_TEST"
: >"$JSON_BENCH"
: >"$JSON_FUZZ"
status=0
if [[ ${py_failed:-0} == 1 || ${scratch_failed:-0} == 1 ]]; then status=1; fi

# ---------------------------------------------------------------------------
# The whole suite runs under the race detector: on a 2-core machine with a warm
# build cache it takes 42 s against 39 s without, so no package is worth
# excusing.
t0=$SECONDS
if [[ $QUICK == 1 ]]; then
	section "go test ./... (PACT_QUICK=1: no -race, no browser test)"
	echo "compiling the test binaries, then each package's result as it finishes"
	heartbeat "go test" bash -c 'set -o pipefail; go test -json -count=1 -timeout 20m -skip "^TestBrowser" ./... 2>&1 | tee "$1" | "$2"' _ "$JSON_TEST" "$WORK/gotestfmt" || status=1
else
	section "go test -race ./..."
	echo "compiling the race-instrumented test binaries (minutes on a cold cache), then each package's result as it finishes"
	heartbeat "go test -race" bash -c 'set -o pipefail; go test -json -race -count=1 -timeout 20m ./... 2>&1 | tee "$1" | "$2"' _ "$JSON_TEST" "$WORK/gotestfmt" || status=1
fi
echo "go test took $((SECONDS - t0))s"

# ---------------------------------------------------------------------------
# The lab (bench/) is a module of its own, so ./... above does not reach it:
# its tests run here, as the main module's do (under the race detector unless
# PACT_QUICK=1), and count in the summary. They run the benchmark scripts
# with short knobs (seconds each); the measuring runs are the scripts'
# own, never part of the tests.
t0=$SECONDS
if [[ $QUICK == 1 ]]; then
	section "the lab: go test ./... in bench/ (PACT_QUICK=1: no -race)"
	heartbeat "go test (bench/)" bash -c 'set -o pipefail; cd bench && go test -json -count=1 -timeout 10m ./... 2>&1 | tee "$1" | "$2"' _ "$JSON_BENCH" "$WORK/gotestfmt" || status=1
else
	section "the lab: go test -race ./... in bench/"
	heartbeat "go test -race (bench/)" bash -c 'set -o pipefail; cd bench && go test -json -race -count=1 -timeout 10m ./... 2>&1 | tee "$1" | "$2"' _ "$JSON_BENCH" "$WORK/gotestfmt" || status=1
fi
echo "go test in bench/ took $((SECONDS - t0))s"

# ---------------------------------------------------------------------------
FUZZTIME=${PACT_FUZZTIME:-20000x}
targets=$(discover_fuzz)
section "fuzz smoke: $(printf '%s' "$targets" | grep -c . || true) target(s), -fuzztime $FUZZTIME each"
if [[ $QUICK == 1 ]]; then
	echo "PACT_QUICK=1: fuzz smoke skipped"
elif [[ "$FUZZTIME" == "0" || "$FUZZTIME" == "0s" || "$FUZZTIME" == "0x" ]]; then
	echo "PACT_FUZZTIME=$FUZZTIME: fuzz smoke skipped"
elif [[ -z "$targets" ]]; then
	echo "no fuzz targets found"
else
	# module_of DIR: the folder of the go.mod DIR's package belongs to ("." or "./bench").
	module_of() {
		local d=$1
		while [[ $d != . && ! -f $d/go.mod ]]; do d=$(dirname "$d"); done
		printf '%s\n' "$d"
	}
	# fuzz_one PKG NAME OUT: one target's smoke run in its module, its go test -json in OUT.
	fuzz_one() {
		local pkg=$1 name=$2 mod
		mod=$(module_of "$pkg")
		go -C "$mod" test -json -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -timeout 5m "./${pkg#"$mod"/}" </dev/null >"$3" 2>&1
	}
	while read -r pkg name; do
		one="$WORK/fuzz-$(basename "$pkg")-$name.json"
		t0=$SECONDS
		# Compiling a fuzz target's instrumented binary can take minutes cold.
		if heartbeat "fuzz $name" fuzz_one "$pkg" "$name" "$one" && ! grep -q 'no fuzz tests to fuzz' "$one"; then
			echo "ok    $name ($pkg) $((SECONDS - t0))s"
		else
			"$WORK/gotestfmt" <"$one"
			echo "FAIL  $name ($pkg) $((SECONDS - t0))s; a failing input is saved under $pkg/testdata/fuzz/$name"
			status=1
		fi
		cat "$one" >>"$JSON_FUZZ"
	done <<<"$targets"
fi
# The TypeScript request parsing (frontends/pacta2a-js/test/fuzz/run.ts: parseSend, path
# splitting and unescaping, forms, cookies, the task list's query, the SDK's answers): a
# mutation fuzzer of our own, pure JS, the same count per target (a duration counts as 20000x).
if [[ $QUICK != 1 && $NODE_FE == 1 && "$FUZZTIME" != "0" && "$FUZZTIME" != "0s" && "$FUZZTIME" != "0x" ]]; then
	ts_runs=20000
	if [[ "$FUZZTIME" =~ ^([0-9]+)x$ ]]; then ts_runs=${BASH_REMATCH[1]}; fi
	echo "TypeScript fuzz smoke: $ts_runs runs per target"
	if ! heartbeat "TypeScript fuzz smoke" bash -c 'cd frontends && node pacta2a-js/dist/test/fuzz/run.js --runs "$1"' _ "$ts_runs"; then
		echo "FAIL  TypeScript fuzz smoke: the failing input is printed above; add it to frontends/pacta2a-js/test/fuzz/corpus/"
		status=1
	fi
elif [[ $NODE_FE != 1 ]]; then
	echo "SKIP TypeScript fuzz smoke: node/npm not found"
fi

# ---------------------------------------------------------------------------
# The container image (Containerfile, scripts/container.sh): built offline with
# podman and checked from outside. Containers cannot run on these machines
# (no permission for the runtime's setrlimit), so the binary is copied out of
# a created, never started, container and run on the host.
section "container image (podman build, checked without running it)"
check_image() {
	local tag=localhost/pactd:test cid size user entry files want
	echo "building the image (a static pactd build first: minutes on a cold cache)"
	heartbeat "podman build" bash -c 'bash scripts/container.sh "$1" >"$2" 2>&1' _ "$tag" "$WORK/image.log" ||
		{ tail -n 30 "$WORK/image.log"; echo "FAIL  podman build"; return 1; }
	size=$(podman image inspect --format '{{.Size}}' "$tag")
	user=$(podman image inspect --format '{{.Config.User}}' "$tag")
	entry=$(podman image inspect --format '{{json .Config.Entrypoint}}' "$tag")
	echo "image $tag: $((size / 1024 / 1024)) MiB, user $user, entrypoint $entry"
	((size < 64 * 1024 * 1024)) || { echo "FAIL  the image is $size bytes, over 64 MiB"; return 1; }
	[[ $user == "65532:65532" ]] || { echo "FAIL  the image's user is \"$user\", want the non-root 65532:65532"; return 1; }
	[[ $entry == '["/usr/local/bin/pactd"]' ]] || { echo "FAIL  the image's entrypoint is $entry"; return 1; }
	cid=$(podman create "$tag")
	files=$(podman export "$cid" | tar -t) && podman cp "$cid:/usr/local/bin/pactd" "$WORK/pactd-from-image" || {
		podman rm "$cid" >/dev/null
		echo "FAIL  could not read the image's files"
		return 1
	}
	podman rm "$cid" >/dev/null
	if grep -qE '(^|/)(sh|bash|ash|busybox)$' <<<"$files"; then
		echo "FAIL  the image has a shell"
		return 1
	fi
	want="pactd $(git describe --tags --always --dirty) (commit $(git rev-parse HEAD)"
	got=$("$WORK/pactd-from-image" version) || { echo "FAIL  the image's pactd did not answer version"; return 1; }
	[[ $got == "$want"* ]] || { echo "FAIL  the image's pactd version is \"$got\", want \"$want…\""; return 1; }
	echo "ok    the image's pactd answers: $got"
	podman rmi "$tag" >/dev/null || true
}
if [[ $QUICK == 1 ]]; then
	echo "PACT_QUICK=1: container image build and check skipped"
else
	if [[ "${CI:-}" == "true" ]] && ! command -v podman >/dev/null; then
		echo "installing podman for the container image check"
		if [[ $(id -u) != 0 ]] || ! heartbeat "apt-get install podman" bash -c 'apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman >/dev/null'; then
			echo "FAIL  podman is missing and could not be installed (apt-get install podman)"
			status=1
		fi
	fi
	if command -v podman >/dev/null; then
		check_image || status=1
	elif [[ "${CI:-}" != "true" ]]; then
		echo "SKIP container image: podman is not installed (Debian: apt-get install podman)"
	fi
fi

# ---------------------------------------------------------------------------
count() { # count ACTION: test-level events of that action
	cat "$JSON_TEST" "$JSON_BENCH" "$JSON_FUZZ" | grep -F "\"Action\":\"$1\"" | grep -cF '"Test":"' || true
}
passed=$(count pass)
failed=$(count fail)
failed_tests=$(cat "$JSON_TEST" "$JSON_BENCH" "$JSON_FUZZ" | grep -F '"Action":"fail"' | grep -F '"Test":"' |
	sed -n 's/.*"Package":"\([^"]*\)","Test":"\([^"]*\)".*/  \1 \2/p' || true)
failed_pkgs=$(cat "$JSON_TEST" "$JSON_BENCH" "$JSON_FUZZ" | grep -F '"Action":"fail"' | grep -vF '"Test":"' |
	sed -n 's/.*"Package":"\([^"]*\)".*/  \1/p' | sort -u || true)
# pytest's counts, from its JUnit XML: a test case with a failure or an error failed,
# one without those or a skip passed. Its first output line is "PASSED FAILED", then
# the failed tests.
py_counts=""
if [[ -s "$PYTEST_XML" ]]; then
	py_counts=$("$PY" - "$PYTEST_XML" <<'PYSRC'
import sys
import xml.etree.ElementTree as ET
passed, failed = 0, []
for c in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    kinds = {child.tag for child in c}
    if kinds & {"failure", "error"}:
        failed.append(f"  pytest {c.get('classname')}::{c.get('name')}")
    elif "skipped" not in kinds:
        passed += 1
print(passed, len(failed))
print("\n".join(failed))
PYSRC
	) || py_counts="0 1"$'\n'"  pytest: its JUnit XML could not be read"
elif [[ ${py_failed:-0} == 1 ]]; then
	py_counts="0 1"$'\n'"  pytest: it wrote no JUnit XML"
fi
if [[ -n "$py_counts" ]]; then
	read -r py_passed py_failed_n <<<"$(head -n 1 <<<"$py_counts")"
	passed=$((passed + py_passed))
	failed=$((failed + py_failed_n))
	py_failed_tests=$(tail -n +2 <<<"$py_counts")
	if [[ -n "$py_failed_tests" ]]; then failed_tests=$(printf '%s\n%s' "$failed_tests" "$py_failed_tests" | sed '/^$/d'); fi
fi

printf '\n==== summary (%ds) ====\n' "$((SECONDS - START))"
if [[ -n "$failed_tests" ]]; then printf 'failed tests:\n%s\n' "$failed_tests"; fi
if [[ -n "$failed_pkgs" ]]; then printf 'failed packages (build failures included):\n%s\n' "$failed_pkgs"; fi
if [[ -n "$py_counts" ]]; then echo "of which pytest (frontends/pacta2a-py, frontends/python): $py_passed passed, $py_failed_n failed"; fi
if [[ $status != 0 ]]; then
	keep_work=1
	echo "raw go test -json output kept in $WORK"
fi
if [[ $status == 0 && $failed != 0 ]]; then status=1; fi
echo "$passed passed, $failed failed"
exit "$status"
