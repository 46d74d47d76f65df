package main

import (
	"bytes"
	"errors"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"pactd/internal/config"
)

// TestHelp: pactd -h lists every subcommand, and every subcommand answers -h
// with its usage and no error beyond ErrHelp (main exits 0 on it).
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), args, nil, &out, &errOut); err != nil && !errors.Is(err, config.ErrHelp) {
			t.Fatalf("pactd %v: %v", args, err)
		}
		for _, w := range []string{"pactd migrate", "pactd token create", "pactd version", "pactd help", "-listen", "PACT_LISTEN"} {
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
	// Positive control: a real error is not help.
	if err := run(t.Context(), []string{"frobnicate"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || errors.Is(err, config.ErrHelp) {
		t.Errorf("pactd frobnicate: error %v, want an unknown-command error", err)
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
	err = run(t.Context(), []string{"--dev", "--listen", ln.Addr().String(), "--data-dir", dir}, nil, &out, &errOut)
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
