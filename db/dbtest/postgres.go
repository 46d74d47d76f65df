package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/internal/freeport"
)

// PostgresURL returns the URL of a fresh, empty PostgreSQL database for this
// test, dropped when the test ends. The server is, in order:
// PACT_TEST_POSTGRES_URL, the local server at 127.0.0.1:5432 (database
// "test"), or a throwaway cluster started from the installed binaries. When
// none can be had the test is skipped, except under CI=true, where it fails:
// in CI a PostgreSQL test never skips.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base, err := serverURL()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required in CI: %v", err)
		}
		t.Skipf("no PostgreSQL available: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "pactd_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop test database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse PostgreSQL url: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// server is found once per test binary; Main stops a throwaway cluster and
// removes its files when the tests end.
var server struct {
	once sync.Once
	url  string
	err  error
	stop func()
}

// Main runs the package's tests, then the package's own cleanups (after,
// e.g. removing what the tests built), and stops the PgBouncer and the
// throwaway PostgreSQL cluster if they were started. Use it as the body of
// TestMain.
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	for _, f := range after {
		f()
	}
	stopBouncer()
	if server.stop != nil {
		server.stop()
	}
	os.Exit(code)
}

func serverURL() (string, error) {
	server.once.Do(func() { server.url, server.err = findServer() })
	return server.url, server.err
}

func findServer() (string, error) {
	if u := os.Getenv("PACT_TEST_POSTGRES_URL"); u != "" {
		return u, ping(u)
	}
	local := "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	if err := ping(local); err == nil {
		return local, nil
	}
	return startThrowaway()
}

func ping(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// startThrowaway runs initdb and pg_ctl from the installed PostgreSQL into a
// directory under /tmp owned by the postgres user (initdb refuses root).
func startThrowaway() (string, error) {
	initdb, err := lookPG("initdb")
	if err != nil {
		return "", err
	}
	pgctl, err := lookPG("pg_ctl")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("/tmp", "pactd-pg-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return "", err
	}
	port, err := freeport.Port()
	if err != nil {
		return "", err
	}
	data := filepath.Join(dir, "data")
	if out, err := asPostgres(initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %v: %s", err, out)
	}
	opts := "-p " + strconv.Itoa(port) + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	if out, err := asPostgres(pgctl, "-D", data, "-l", filepath.Join(dir, "pg.log"), "-w", "-t", "30", "-o", opts, "start").CombinedOutput(); err != nil {
		return "", fmt.Errorf("pg_ctl start: %v: %s", err, out)
	}
	server.stop = func() {
		_ = asPostgres(pgctl, "-D", data, "-m", "immediate", "stop", "-s").Run()
		_ = os.RemoveAll(dir)
	}
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return u, ping(u)
}

// asPostgres runs a PostgreSQL program as the postgres user when this
// process is root (initdb, postgres and pgbouncer refuse root).
func asPostgres(name string, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

func lookPG(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s not found on PATH or in /usr/lib/postgresql/*/bin", name)
}
