#!/usr/bin/env bash
# scripts/container.sh: builds pactd's container image from the Containerfile,
# offline (FROM scratch; the build context is prepared here from the checkout).
#
#   bash scripts/container.sh [TAG]      default tag localhost/pactd:dev
#
# Uses podman, else docker (CONTAINER_ENGINE overrides: a name on PATH or a
# path). Prints the tag.
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${1:-localhost/pactd:dev}
ENGINE=${CONTAINER_ENGINE:-$(command -v podman || command -v docker || true)}
[[ -n "$ENGINE" ]] || { echo "FAIL: neither podman nor docker is installed" >&2; exit 1; }
CA=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[[ -s "$CA" ]] || { echo "FAIL: no CA bundle at $CA (Debian: ca-certificates; or set CA_BUNDLE)" >&2; exit 1; }

CTX=$(mktemp -d -t pactd-image.XXXXXX)
trap 'rm -rf "$CTX"' EXIT

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [[ -n "$(git status --porcelain 2>/dev/null)" ]]; then commit="$commit+dirty"; fi
echo "building pactd $version ($commit), static (CGO_ENABLED=0)"
CGO_ENABLED=0 go build -trimpath -buildvcs=false \
	-ldflags "-s -w -X pactd.dev/pactd/server/buildinfo.version=$version -X pactd.dev/pactd/server/buildinfo.commit=$commit" \
	-o "$CTX/pactd" ./cmd/pactd
cp Containerfile deploy/container/passwd deploy/container/group "$CTX/"
cp "$CA" "$CTX/ca-certificates.crt"
mkdir "$CTX/data"

# podman and docker share "build -f FILE -t TAG DIR" but not --pull: podman's
# takes a policy (never: the build must not reach a registry), docker's is a
# boolean ("always pull"), which --pull=never fails to parse. FROM scratch
# pulls nothing, so docker needs no flag. A docker that is podman underneath
# (podman-docker) says so in its --version.
flags=(-f "$CTX/Containerfile" -t "$TAG")
if "$ENGINE" --version 2>/dev/null | grep -qi podman; then
	flags=(--pull=never "${flags[@]}")
fi
echo "building the image $TAG with $ENGINE"
"$ENGINE" build "${flags[@]}" "$CTX" >&2
echo "$TAG"
