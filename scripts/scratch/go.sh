#!/usr/bin/env bash
# scripts/scratch/go.sh: the Go frontend library (pactd.dev/pactd/frontends/pacta2a) used
# from another module, as a Provider uses it: a scratch module outside this checkout requires
# pactd.dev/pactd (replaced by this checkout), builds a program that mounts pacta2a.NewHandler
# and runs it. The program answers one request with pactd unreachable: a bare 502, the
# library's own answer. The HDTP host library (pactd.dev/pactd/frontends/hdtphost) the same
# way: a host program answers a tools/list with pactd unreachable with its bare 502, and an
# initialize (the MCP SDK's) with 200. Exits non-zero on any failure; removes the scratch module.
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
mkdir hdtphost
cat >hdtphost/main.go <<'GO'
// An HDTP host on pactd's Go library and the Go MCP SDK.
package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"

	"pactd.dev/pactd/frontends/hdtphost"
)

func main() {
	h, err := hdtphost.New(hdtphost.Config{PactdURL: "http://127.0.0.1:1", Token: "frontend-token"})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"s","version":"1"}}}`} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "https://agent.example.com/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		h.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ")
	}
}
GO
go mod tidy >/dev/null 2>tidy.log || { cat tidy.log >&2; echo "FAIL: go mod tidy in the scratch module (hdtphost)" >&2; exit 1; }
got=$(go run ./hdtphost)
if [[ $got != "502 200 " ]]; then
	echo "FAIL: the scratch HDTP host answered \"$got\", want \"502 200 \" (tools/list: pactd unreachable; initialize: the SDK)" >&2
	exit 1
fi
echo "ok    the Go HDTP host library builds and runs in another module"
