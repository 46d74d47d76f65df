#!/usr/bin/env bash
# scripts/scratch/go.sh: the Go frontend library (pactd.dev/pactd/frontends/pacta2a) used
# from another module, as a Provider uses it: a scratch module outside this checkout requires
# pactd.dev/pactd (replaced by this checkout), builds a program that mounts pacta2a.NewHandler
# and runs it. The program answers one request with pactd unreachable: a bare 502, the
# library's own answer. Exits non-zero on any failure; removes the scratch module.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d -t pacta2a-scratch.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
go mod init example.com/provider >/dev/null 2>&1
go mod edit -require=pactd.dev/pactd@v0.0.0 -replace=pactd.dev/pactd="$root"
cat >main.go <<'GO'
// A Provider's frontend on pactd's Go library.
package main

import (
	"fmt"
	"net/http/httptest"
	"os"

	"pactd.dev/pactd/frontends/pacta2a"
)

func main() {
	h, err := pacta2a.NewHandler(pacta2a.Config{PactdURL: "http://127.0.0.1:1", Token: "frontend-token"})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/a2a/acme/.well-known/agent-card.json", nil))
	fmt.Println(rec.Code)
}
GO
go mod tidy >/dev/null 2>tidy.log || { cat tidy.log >&2; echo "FAIL: go mod tidy in the scratch module" >&2; exit 1; }
got=$(go run .)
if [[ $got != 502 ]]; then
	echo "FAIL: the scratch program answered $got, want 502 (pactd unreachable)" >&2
	exit 1
fi
echo "ok    the Go library builds and runs in another module ($(grep -c . go.sum) go.sum lines)"
