package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer the demo writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// docBlock returns the code block of a docs page (a path from the
// checkout's root) that follows the marker (and any other HTML comments:
// internal/readmetest's markers).
func docBlock(t *testing.T, page, marker string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", page))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), marker)
	if !ok {
		t.Fatalf("%s lacks %q", page, marker)
	}
	m := regexp.MustCompile("(?s)\\A\\s*(?:<!--[^\n]*-->\n)*```sh\n(.*?)\n```").FindStringSubmatch(after) // other markers may come between
	if m == nil {
		t.Fatalf("no ```sh block right after %q", marker)
	}
	return m[1]
}

// TestDocsGrantWalk pastes the grpcurl grant walk of docs/delegation.md,
// unedited, into bash after the export line the demo prints, from the
// checkout's root, as a new user would (default directory, no -dir); then,
// after the same line, the address line of the "Call it" block of
// docs/getting-started.md and a pactd admin command, which must reach the
// demo's pactd. It needs bash and the go
// command (the walk runs go tool grpcurl, go run ./cmd/pact-demo and go run
// ./cmd/pactd).
func TestDocsGrantWalk(t *testing.T) {
	for _, tool := range []string{"bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not on PATH", tool)
			}
			t.Skipf("%s is not on PATH: the grant walk needs it", tool)
		}
	}
	block := docBlock(t, "docs/delegation.md", "TestDocsGrantWalk runs the next code block -->")
	// The demo's fresh directory and its pointer file live in a private TMPDIR,
	// which the walk's go run inherits, so a demo the user runs is untouched.
	t.Setenv("TMPDIR", t.TempDir())

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, []string{"-listen", "127.0.0.1:0"}, &out, io.Discard, inProcess) }()
	exportRE := regexp.MustCompile(`(?m)^  (export P=(127\.0\.0\.1:\d+) PACT_ADDR=http://(127\.0\.0\.1:\d+) ISS=http://127\.0\.0\.1:\d+ PACT_ADMIN_TOKEN=\S+ PACT_FRONTEND_TOKEN=\S+)$`)
	var exports, addr string
	for deadline := time.Now().Add(30 * time.Second); exports == ""; {
		if m := exportRE.FindStringSubmatch(out.String()); m != nil {
			if m[2] != m[3] {
				t.Fatalf("the export line's P and PACT_ADDR name different pactds:\n%s", m[1])
			}
			exports, addr = m[1], m[2]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned early: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no export line in 30s:\n%s", out.String())
		}
	}
	if strings.Contains(out.String(), " -dir ") {
		t.Errorf("the banner of a demo in its default directory names -dir:\n%s", out.String())
	}

	// The first go tool grpcurl may compile it: minutes on a cold cache.
	wctx, wcancel := context.WithTimeout(ctx, 6*time.Minute)
	defer wcancel()
	sh := exec.CommandContext(wctx, "bash", "-c", "set -eu\n"+exports+"\n"+block)
	sh.Dir = "../.."
	var stdout, stderr bytes.Buffer
	sh.Stdout, sh.Stderr = &stdout, &stderr
	if err := sh.Run(); err != nil {
		t.Fatalf("the grant walk failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	got := stdout.String()
	// What RFC 8628, RFC 7662 and RFC 9700 (§4.14.2) say must happen, in order:
	// a device code and user code; the approval of two of three scopes; a
	// token pair with exactly those; an active introspection; a rotation;
	// invalid_grant on reuse of the rotated token; and then the revoked
	// grant's access token is inactive ({}: protojson omits active=false).
	want := []string{
		`"deviceCode": "dc_`, `"userCode": "`,
		`"brandDisplayName": "ACME Coffee"`,
		`"grantId": "a2agrant_`,
		`"accessToken": "eyJ`, `"scope": "orders:read profile:read"`,
		`"active": true`,
		`"refreshToken": "rt_`,
		`"error": "invalid_grant"`,
		"\n{}\n",
	}
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("the walk's output lacks %q (in order) after:\n%s\nwhole output:\n%s\nstderr:\n%s", w, rest, got, stderr.String())
		}
		rest = rest[i+len(w):]
	}
	if strings.TrimSpace(rest) != "" {
		t.Errorf("output after the final introspection: %q", rest)
	}

	// The same line makes the admin commands and the "Call it" lines of
	// docs/getting-started.md reach this pactd with its credential:
	// PACT_ADDR, from which the block derives its grpcurl address.
	raw, err := os.ReadFile("../../docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^(P=\$\{PACT_ADDR.*?)(?:\s{2,}#.*)?$`).FindStringSubmatch(string(raw)) // the command, without its comment
	if m == nil {
		t.Fatal("docs/getting-started.md has no P=${PACT_ADDR…} line in its \"Call it\" block")
	}
	pLine := m[1]
	sh = exec.CommandContext(wctx, "bash", "-c", "set -eu\n"+exports+"\n"+pLine+"\necho \"P=$P\"\ngo run ./cmd/pactd agent list -o json")
	sh.Dir = "../.."
	stdout.Reset()
	stderr.Reset()
	sh.Stdout, sh.Stderr = &stdout, &stderr
	if err := sh.Run(); err != nil {
		t.Fatalf("pactd agent list after the export line: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if want := "P=" + addr + "\n"; !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("the P line of docs/getting-started.md after the export line: %q, want %q", stdout.String(), want)
	}
	if want := `"displayName": "Demo Personal Agent"`; !strings.Contains(stdout.String(), want) {
		t.Errorf("pactd agent list after the export line lacks the demo's PA %q:\n%s", want, stdout.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(registryDir(), "*")); len(left) != 0 {
		t.Errorf("the demo left its registry entry behind: %v", left)
	}
}

// TestHelpListsThePACommands: pact-demo -h says how to be the PA, and exits
// as help (flag.ErrHelp: status 0), not as an error.
func TestHelpListsThePACommands(t *testing.T) {
	var stderr strings.Builder
	err := run(t.Context(), []string{"-h"}, io.Discard, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("pact-demo -h: %v, want flag.ErrHelp", err)
	}
	for _, w := range []string{"pact-demo pa [-dir DIR] COMMAND", "send [-new] TEXT", "connect [-as USER] [-details JSON] SCOPE", "-details: RFC 9396 authorization_details", "token", "-listen", "-dir"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("pact-demo -h lacks %q:\n%s", w, stderr.String())
		}
	}
	// An unexpected argument is an error, not a silent start.
	if err := run(t.Context(), []string{"send", "hi"}, io.Discard, io.Discard); err == nil || errors.Is(err, flag.ErrHelp) {
		t.Errorf("pact-demo send hi: %v, want an error pointing at \"pa\"", err)
	}
}
