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
// the newest demo still running, from the registry in $TMPDIR/pact-demo.d), which also
// keeps the PA's conversation and delegation tokens between commands.
package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "pact-demo:", err)
		stop()
		os.Exit(exitCode(err))
	}
}

// exitCode is the exit status for a failed run: 2 for a bad command line,
// 1 for everything else.
func exitCode(err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// usageError is a bad command line. Its message ends in a line naming the
// -h that prints the usage; the usage itself is printed only for -h, so
// the error is the first and last thing a typo prints.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// badUsage is a usageError of the command help names ("go run
// ./cmd/pact-demo pa").
func badUsage(help, format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...) + "\nrun \"" + help + " -h\" for usage"}
}

// parseFlags parses args with fs. -h prints usage and returns
// flag.ErrHelp; any other error is a usageError of help, printed by the
// caller alone (the flag package would print it, then the whole usage).
func parseFlags(fs *flag.FlagSet, args []string, usage func(), help string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	case err != nil:
		if cmd := strings.TrimSpace(strings.TrimPrefix(fs.Name(), "pact-demo")); cmd != "" {
			return badUsage(help, "%s: %v", cmd, err) // "pa send: flag provided but not defined: -nwe"
		}
		return badUsage(help, "%v", err)
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "pa" {
		return runPA(ctx, args[1:], stdout, stderr)
	}
	return serve(ctx, args, stdout, stderr, startFrontend)
}

// registryDir holds one entry per running demo (started without -dir): the
// PA commands' default -dir is the newest live one. Each demo writes its own
// entry atomically and removes it when it stops, so a demo that stops never
// hides another that still runs, and no lock is needed; an entry whose
// process is gone or whose state file is missing (a demo killed with
// SIGKILL) is skipped and deleted.
func registryDir() string { return filepath.Join(os.TempDir(), "pact-demo.d") }

// demoEntry is one running demo in the registry.
type demoEntry struct {
	// Dir is the demo's directory.
	Dir string `json:"dir"`
	// PID is the demo's process.
	PID int `json:"pid"`
	// Started is when it registered (Unix nanoseconds): the newest wins.
	Started int64 `json:"started"`
}

// entryPath is dir's file in the registry.
func entryPath(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(registryDir(), hex.EncodeToString(sum[:8])+".json")
}

// registerDemo adds dir to the registry; the returned func removes it.
func registerDemo(dir string) (func(), error) {
	if err := os.MkdirAll(registryDir(), 0o700); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(demoEntry{Dir: dir, PID: os.Getpid(), Started: time.Now().UnixNano()})
	p := entryPath(dir)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, p); err != nil {
		return nil, err
	}
	return func() { _ = os.Remove(p) }, nil
}

// liveDemos are the registry's live entries, the newest first.
func liveDemos() []demoEntry {
	files, _ := filepath.Glob(filepath.Join(registryDir(), "*.json"))
	var live []demoEntry
	for _, f := range files {
		var e demoEntry
		raw, err := os.ReadFile(f)
		if err != nil || len(raw) > 8192 || json.Unmarshal(raw, &e) != nil || e.Dir == "" {
			continue // being written, or not ours
		}
		if !alive(e.PID) || !fileExists(statePath(e.Dir)) {
			_ = os.Remove(f) // a demo that did not stop cleanly
			continue
		}
		live = append(live, e)
	}
	slices.SortFunc(live, func(a, b demoEntry) int { return cmp.Compare(b.Started, a.Started) })
	return live
}

// alive says whether process pid exists (signal 0 checks without sending).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// defaultDir is the directory of the newest live demo, or "" when none runs.
func defaultDir() string {
	if live := liveDemos(); len(live) > 0 {
		return live[0].Dir
	}
	return ""
}
