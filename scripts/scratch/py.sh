#!/usr/bin/env bash
# scripts/scratch/py.sh: the Python package pacta2a is usable outside this
# repository. pip builds it from a copy of frontends/pacta2a-py (setuptools,
# offline: no index, no build isolation, no dependencies fetched) and installs
# it into a scratch folder; then, from that folder and with only it on
# PYTHONPATH, Python imports it, loads its generated code, and serves one
# request through FrontDoor with a stand-in for pactd. The scratch folder is
# removed on exit.
#
# Python is Debian's /usr/bin/python3 (PACT_PY overrides it), with grpcio and
# protobuf (Debian: python3-grpcio python3-protobuf). pip is its own when it
# has one, else the first python3 on PATH that has pip and setuptools (the
# package is pure Python: any pip of the same Python version builds the same
# files). Without them it skips (exit 0), except under CI=true, where it
# fails. Any failure exits non-zero.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
py=${PACT_PY:-/usr/bin/python3}

cannot_run() {
	if [[ ${CI:-} == true ]]; then
		echo "FAIL scratch/py.sh: $1" >&2
		exit 1
	fi
	echo "SKIP scratch/py.sh: $1"
	exit 0
}

[[ -x $py ]] || cannot_run "$py is missing"
"$py" -c 'import grpc, google.protobuf' 2>/dev/null ||
	cannot_run "$py lacks grpcio or protobuf (Debian: apt-get install python3-grpcio python3-protobuf)"
version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }
pip_py=""
for cand in "$py" $(type -ap python3); do
	if "$cand" -c 'import setuptools, pip' 2>/dev/null && [[ $(version "$cand") == $(version "$py") ]]; then
		pip_py=$cand
		break
	fi
done
[[ -n $pip_py ]] || cannot_run "no python3 $(version "$py") with pip and setuptools (Debian: apt-get install python3-pip)"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/pacta2a-scratch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# pip builds in the source folder (build/, *.egg-info): a copy keeps the checkout clean.
mkdir "$scratch/pkg"
cp -R "$repo/frontends/pacta2a-py/pyproject.toml" "$repo/frontends/pacta2a-py/src" "$scratch/pkg/"
PIP_ROOT_USER_ACTION=ignore "$pip_py" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
	--no-deps --no-index --no-build-isolation --target "$scratch/site" "$scratch/pkg"
rm -rf "$scratch/pkg"

cd "$scratch"
PYTHONPATH="$scratch/site" PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 "$py" - "$scratch/site" <<'PY'
import asyncio
import sys

import pacta2a
from pacta2a import FrontDoor, PactdClient
from pacta2a._pb import frontdoor_pb2, load

site = sys.argv[1]
assert pacta2a.__file__.startswith(site + "/"), f"imported {pacta2a.__file__}, not the installed copy"
load("frontdoor_pb2_grpc")  # the generated gRPC code is installed and loads


class Pactd(PactdClient):
    """Stands in for pactd: one answer to Serve."""

    async def serve(self, req, metadata=()):
        assert (req.method, req.path, req.body) == ("GET", "/a2a/acme/.well-known/agent-card.json", b"")
        hdr = frontdoor_pb2.HttpHeader(name="Content-Type", value="application/json")
        return frontdoor_pb2.ServeResponse(response=frontdoor_pb2.HttpResponse(status=200, headers=[hdr], body=b"{}"))


async def main():
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/a2a/acme/.well-known/agent-card.json", "query_string": b"", "headers": []}
    await FrontDoor(pactd=Pactd("127.0.0.1:1", "token"))(scope, receive, send)
    assert sent[0]["status"] == 200 and sent[0]["headers"] == [(b"content-type", b"application/json"), (b"content-length", b"2")], sent
    assert sent[1]["body"] == b"{}", sent


asyncio.run(main())
print(f"pacta2a {pacta2a.__version__} installed with pip into a scratch folder, imported and served a request there")
PY
