// Command pact-demo runs a whole PACT Provider on loopback with one command,
// and plays the personal agent (PA) against it:
//
//	go run ./cmd/pact-demo                      pactd (embedded SQLite in a temp
//	                                            dir), the reference frontend with
//	                                            the demo Brand "acme", and a PA's
//	                                            JWKS; runs until Ctrl-C
//	go run ./cmd/pact-demo pa send TEXT         send a message as the PA
//	go run ./cmd/pact-demo pa connect SCOPE...  ask the User for scopes (device grant)
//	go run ./cmd/pact-demo pa token             print a fresh PA JWT (for curl)
//
// The frontend runs as its own process and reaches pactd only with a
// frontend token, as any frontend would: cmd/pact-a2a by default (built
// with go build), or the one -frontend names — a2a-go (the a2a-go SDK
// example), ts (frontends/node), a2a-js (the @a2a-js/sdk example), python
// (frontends/python) — or any program taking cmd/pact-a2a's flags. Each
// run keeps its state in a fresh temporary directory (or -dir), so two demos
// on one machine never share or delete each other's files. The PA commands
// read the running demo's state file there (-dir, default: the directory of
// the demo started last, named in $TMPDIR/pact-demo.current), which also
// keeps the PA's conversation and delegation tokens between commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "pact-demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "pa" {
		return runPA(ctx, args[1:], stdout, stderr)
	}
	return serve(ctx, args, stdout, stderr, startFrontend)
}

// currentFile names the directory of the demo started last: the PA commands'
// default -dir.
func currentFile() string { return filepath.Join(os.TempDir(), "pact-demo.current") }

// defaultDir is the directory of the demo started last, or "" when none runs.
func defaultDir() string {
	raw, err := os.ReadFile(currentFile())
	if err != nil || len(raw) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(raw))
}
