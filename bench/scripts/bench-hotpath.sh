#!/usr/bin/env bash
# bench-hotpath.sh BEFORE [AFTER] [COUNT]: the hot-path benchmarks of two
# commits, run alternately in the same session and compared with benchstat.
#
# BEFORE and AFTER are git revisions (AFTER defaults to the working tree).
# Each benchmark is found by name in each tree, so a package that moved
# between the two commits is still compared with itself. The runs
# alternate (before, after, before, ...) COUNT times (default 6) so that
# drift in the machine's speed lands on both sides. Output: benchstat's
# table of sec/op, B/op and allocs/op, and the raw files under
# ${OUT:-$(mktemp -d)}.
#
# Run it on a quiet machine: anything else on the cores shows up as noise.
set -euo pipefail

before=${1:?usage: bench-hotpath.sh BEFORE [AFTER] [COUNT]}
after=${2:-}
count=${3:-6}
root=$(git rev-parse --show-toplevel)
out=${OUT:-$(mktemp -d)}
benchtime=${BENCHTIME:-1s}

# The hot path: the PA JWT verifier (new and repeat tokens, both
# algorithms), VerifyAgentRequest and IntrospectToken in-process, the agent
# directory and grant cache hits, and the delegation-token check.
benches=(
	BenchmarkInterleavedES256 BenchmarkInterleavedRS256
	BenchmarkVerifyES256New BenchmarkVerifyES256Repeat
	BenchmarkVerifyAgentRequest BenchmarkIntrospectToken
	BenchmarkLookupHit BenchmarkLiveGrantDetailsHit BenchmarkCheckGrant
)

work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/before" >/dev/null 2>&1 || true
      if [ -d "$work/after" ]; then git -C "$root" worktree remove --force "$work/after" >/dev/null 2>&1 || true; fi
      rm -rf "$work"' EXIT
git -C "$root" worktree add --detach "$work/before" "$before" >/dev/null
tree_after=$root
if [ -n "$after" ]; then
	git -C "$root" worktree add --detach "$work/after" "$after" >/dev/null
	tree_after=$work/after
fi

# pkgs TREE: "package-dir benchmark-regexp" lines, one per package holding
# any of the benchmarks (test files only; generated and vendored trees
# skipped, and the lab in bench/, a module of its own that go test from
# the root cannot run).
pkgs() {
	local tree=$1
	declare -A re=()
	for b in "${benches[@]}"; do
		local f
		f=$(cd "$tree" && grep -rl --include='*_test.go' "^func $b(b \*testing.B)" . | grep -v -e node_modules -e '^\./bench/' | head -1 || true)
		[ -n "$f" ] || { echo "bench-hotpath: $b not found in $tree" >&2; continue; }
		local d
		d=$(dirname "$f")
		re[$d]="${re[$d]:+${re[$d]}|}$b"
	done
	for d in "${!re[@]}"; do echo "$d ^(${re[$d]})\$"; done | sort
}

run() {
	local tree=$1 file=$2
	while read -r dir pat; do
		(cd "$tree" && go test -run '^$' -bench "$pat" -benchmem -benchtime "$benchtime" -count 1 "$dir") |
			grep -E '^(Benchmark|goos|goarch|cpu|pkg)' >>"$file"
	done < <(pkgs "$tree")
}

: >"$out/before.txt"
: >"$out/after.txt"
for _ in $(seq "$count"); do
	run "$work/before" "$out/before.txt"
	run "$tree_after" "$out/after.txt"
done
# benchstat pairs rows by name and package; the moved packages differ only
# in their import path, so compare by benchmark name alone.
sed -i '/^pkg:/d' "$out/before.txt" "$out/after.txt"
(cd "$root" && go tool -modfile=tools/go.mod benchstat "$out/before.txt" "$out/after.txt")
echo "raw results: $out" >&2
