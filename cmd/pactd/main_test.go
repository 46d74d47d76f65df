package main

import (
	"bytes"
	"errors"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

// TestHelp: pactd -h lists every subcommand, and every subcommand answers -h
// with its usage and no error beyond ErrHelp (main exits 0 on it).
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), args, nil, &out, &errOut); err != nil && !errors.Is(err, config.ErrHelp) {
			t.Fatalf("pactd %v: %v", args, err)
		}
		for _, w := range []string{"pactd migrate", "pactd token create", "pactd version", "pactd help", "-listen", "PACT_LISTEN",
			"pactd agent register|list|get|enable|disable|update|delete", "pactd brand create|list|get|update|card",
			"pactd credential create|list|revoke", "pactd grant list|find|revoke", "pactd key list|rotate", "pactd health", "PACT_ADDR", "PACT_ADMIN_TOKEN"} {
			if !strings.Contains(out.String()+errOut.String(), w) {
				t.Errorf("pactd %v does not mention %q:\n%s%s", args, w, out.String(), errOut.String())
			}
		}
	}
	for _, args := range [][]string{{"serve", "-h"}, {"migrate", "-h"}, {"token", "-h"}, {"token", "create", "-h"}, {"token", "create", "--role", "admin", "-h"}, {"version", "-h"}} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), args, nil, &out, &errOut)
		if !errors.Is(err, config.ErrHelp) {
			t.Errorf("pactd %v: error %v, want ErrHelp (exit 0)", args, err)
		}
		if want := "usage: pactd " + strings.Fields(strings.Join(args, " "))[0]; !strings.Contains(errOut.String(), want) && !(args[0] == "serve" && strings.Contains(errOut.String(), "usage: pactd [serve]")) {
			t.Errorf("pactd %v printed %q, want it to contain %q", args, errOut.String(), want)
		}
	}
	// Every admin command answers -h with its usage and the connection
	// flags; each group answers -h with its commands.
	admin := map[string][]string{"agent": {"register", "list", "get", "enable", "disable", "update", "delete"},
		"brand": {"create", "list", "get", "update", "card"}, "credential": {"create", "list", "revoke"},
		"grant": {"list", "revoke"}, "audit": {"list"}, "key": {"list", "rotate"}, "health": {""}}
	for group, cmds := range admin {
		var errOut bytes.Buffer
		if group != "health" {
			if err := run(t.Context(), []string{group, "-h"}, nil, &bytes.Buffer{}, &errOut); !errors.Is(err, config.ErrHelp) {
				t.Errorf("pactd %s -h: %v, want ErrHelp", group, err)
			}
			for _, c := range cmds {
				if !strings.Contains(errOut.String(), "\n  "+c) {
					t.Errorf("pactd %s -h does not list %s:\n%s", group, c, errOut.String())
				}
			}
		}
		for _, c := range cmds {
			args := strings.Fields(group + " " + c + " -h")
			errOut.Reset()
			if err := run(t.Context(), args, nil, &bytes.Buffer{}, &errOut); !errors.Is(err, config.ErrHelp) {
				t.Errorf("pactd %v: %v, want ErrHelp", args, err)
			}
			for _, w := range []string{"usage: pactd " + strings.TrimSpace(group+" "+c), "-addr URL", "-grpc", "-ca FILE", "-o format", "-token-file FILE"} {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("pactd %v does not mention %q:\n%s", args, w, errOut.String())
				}
			}
		}
	}
	// Positive control: a real error is not help.
	if err := run(t.Context(), []string{"frobnicate"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || errors.Is(err, config.ErrHelp) {
		t.Errorf("pactd frobnicate: error %v, want an unknown-command error", err)
	}
}

// TestExitCodes: an admin usage error exits 2, an admin failure 1 (here: no
// credential), and other failures keep exit status 2.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  []string
		code int
	}{
		{[]string{"agent", "get"}, nil, 2},
		{[]string{"agent", "list"}, []string{"PACT_ADDR=http://127.0.0.1:1"}, 1},
		{[]string{"frobnicate"}, nil, 2},
	} {
		err := run(t.Context(), tc.args, tc.env, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || exitCode(err) != tc.code {
			t.Errorf("pactd %v: error %v, exit %d, want exit %d", tc.args, err, exitCode(err), tc.code)
		}
	}
}

// TestBadCommandLineSaysWhereTheUsageIs: a flag typo or a stray argument of
// serve, migrate or token create prints nothing but the error and one line
// naming the -h that prints the usage (main adds "pactd: " before it), and
// exits 2.
func TestBadCommandLineSaysWhereTheUsageIs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lisen", "127.0.0.1:7070"}, "flag provided but not defined: -lisen\nrun \"pactd serve -h\" for usage"},
		{[]string{"serve", "--listen"}, "flag needs an argument: -listen\nrun \"pactd serve -h\" for usage"},
		{[]string{"migrate", "--data-dri", "x"}, "flag provided but not defined: -data-dri\nrun \"pactd migrate -h\" for usage"},
		{[]string{"migrate", "now"}, "unexpected argument \"now\"\nrun \"pactd migrate -h\" for usage"},
		{[]string{"token", "create", "--role", "admin", "--data-dri", "x"}, "flag provided but not defined: -data-dri\nrun \"pactd token create -h\" for usage"},
	} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), tc.args, nil, &out, &errOut)
		if err == nil || err.Error() != tc.want || exitCode(err) != 2 || out.Len()+errOut.Len() != 0 {
			t.Errorf("pactd %q: error %v, exit %d, printed %q%q; want exit 2, nothing printed and %q", tc.args, err, exitCode(err), out.String(), errOut.String(), tc.want)
		}
	}
	// Positive control: a setting refused after parsing is no command-line
	// error, so it gets no hint.
	if err := run(t.Context(), []string{"serve", "--log-level", "loud"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || strings.Contains(err.Error(), "for usage") || !strings.Contains(err.Error(), "log-level") {
		t.Errorf("pactd serve --log-level loud: %v, want the setting's own error without the hint", err)
	}
}

// TestServeIgnoresClientVariables: pactd serve starts (here: gets as far as
// its listen error) with the admin commands' PACT_ADDR exported, rather
// than refusing it as an unknown PACT_* variable.
func TestServeIgnoresClientVariables(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	env := []string{"PACT_ADDR=http://127.0.0.1:7070", "PACT_ADMIN_TOKEN=client-and-server-0123456789"}
	err = run(t.Context(), []string{"--listen", ln.Addr().String(), "--grpc-listen=off", "--data-dir", t.TempDir()}, env, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
		t.Fatalf("pactd serve with PACT_ADDR exported: %v, want it to reach the listen error", err)
	}
	// Positive control: a misspelt server variable is still refused.
	err = run(t.Context(), []string{"--listen", ln.Addr().String()}, []string{"PACT_LISTN=x"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "PACT_LISTN") {
		t.Fatalf("pactd serve with PACT_LISTN: %v, want it refused", err)
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"version"}, nil, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "pactd ") || !strings.Contains(out.String(), runtime.Version()) || !strings.Contains(out.String(), "commit ") {
		t.Errorf("pactd version = %q", out.String())
	}
	if err := run(t.Context(), []string{"version", "extra"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("pactd version extra succeeded")
	}
}

// TestTakenPortFailsFirst: a taken port is the first and only thing reported;
// nothing is opened or logged before it (no key-encryption-key notice, no
// data directory).
func TestTakenPortFailsFirst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "data")
	var out, errOut bytes.Buffer
	err = run(t.Context(), []string{"--dev", "--listen", ln.Addr().String(), "--grpc-listen=off", "--data-dir", dir}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
		t.Fatalf("run on a taken port: %v, want a listen error", err)
	}
	if out.Len() != 0 || errOut.Len() != 0 {
		t.Errorf("printed before the listen error:\nstdout: %s\nstderr: %s", out.String(), errOut.String())
	}
	if _, err := filepath.Glob(filepath.Join(dir, "*")); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(dir); len(m) != 0 {
		t.Errorf("the data directory %s was created before the listen error", dir)
	}
}

// TestTakenNativePortFailsFirst: a taken native gRPC port is reported
// before anything is opened, naming PACT_GRPC_LISTEN and how to turn it off
// (it is on by default, so a second pactd on one machine meets this).
func TestTakenNativePortFailsFirst(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := filepath.Join(t.TempDir(), "data")
	var out, errOut bytes.Buffer
	err = run(t.Context(), []string{"--dev", "--listen", "127.0.0.1:0", "--grpc-listen", taken.Addr().String(), "--data-dir", dir}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "listen for native gRPC on "+taken.Addr().String()) ||
		!strings.Contains(err.Error(), "PACT_GRPC_LISTEN") || !strings.Contains(err.Error(), "off") {
		t.Fatalf("run on a taken native port: %v, want a native gRPC listen error naming PACT_GRPC_LISTEN", err)
	}
	if out.Len() != 0 || errOut.Len() != 0 {
		t.Errorf("printed before the listen error:\nstdout: %s\nstderr: %s", out.String(), errOut.String())
	}
	if m, _ := filepath.Glob(dir); len(m) != 0 {
		t.Errorf("the data directory %s was created before the listen error", dir)
	}
}

// TestTokenCreate: token create refuses to make a new, empty store (no
// file is created), writes to an existing one and says which (the token on
// standard output only), and the token authenticates.
func TestTokenCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	env := []string{"PACT_DEV=true", "PACT_ADMIN_TOKEN=token-create-admin-0123456789", "PACT_GRPC_LISTEN=off"}
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"token", "create", "--role", "frontend", "--data-dir", dir}, env, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no pactd database at "+filepath.Join(dir, "pactd.db")) || out.Len() != 0 {
		t.Fatalf("token create on a missing store: %v (stdout %q)", err, out.String())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Fatalf("token create left files behind: %v", m)
	}
	// A store pactd served: its bootstrap admin credential is there.
	cfg, err := config.Load([]string{"--data-dir", dir}, env, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Build(t.Context(), cfg, server.Deps{Out: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	_ = srv.Close()
	out.Reset()
	errOut.Reset()
	if err := run(t.Context(), []string{"token", "create", "--role=frontend", "--name", "checkout", "--data-dir", dir}, env, &out, &errOut); err != nil {
		t.Fatalf("token create: %v (%s)", err, errOut.String())
	}
	tok := strings.TrimSpace(out.String())
	if !strings.HasPrefix(tok, "pact_fro_") || strings.Contains(errOut.String(), tok) ||
		!strings.Contains(errOut.String(), `frontend credential cred_`) || !strings.Contains(errOut.String(), `("checkout") in the SQLite database `+filepath.Join(dir, "pactd.db")) {
		t.Fatalf("token create printed %q and %q", out.String(), errOut.String())
	}
	// The credential is stored: the store knows its hash, as a frontend one.
	s, err := db.Open(t.Context(), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.GetCredentialByHash(t.Context(), auth.Hash(tok))
	if err != nil || c.Role != db.RoleFrontend || c.Label != "checkout" {
		t.Fatalf("stored credential = %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"--role", "root"}, {"--role", "admin", "--name", "bootstrap admin"}} {
		if err := run(t.Context(), append([]string{"token", "create", "--data-dir", dir}, bad...), env, &out, &errOut); err == nil {
			t.Fatalf("token create %v: no error", bad)
		}
	}
}
