package dbtest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pactd.dev/pactd/internal/freeport"
)

// PgBouncerPoolSize is the server connections the test PgBouncer keeps per
// database: few, so that clients share them as they do in production.
const PgBouncerPoolSize = 2

// PgBouncerURL returns dbURL (a URL from PostgresURL) rewritten to reach
// the same database through PgBouncer in transaction pooling mode: the one
// at PACT_TEST_PGBOUNCER_URL's host and port (it must front the same
// server), or one this test binary starts from the installed pgbouncer in
// front of the test server, with pool_mode=transaction, auth_type=trust
// and PgBouncerPoolSize server connections per database. Without one the
// test is skipped, except under CI=true, where it fails.
func PgBouncerURL(t testing.TB, dbURL string) string {
	t.Helper()
	addr, err := bouncerAddr()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PgBouncer is required in CI: %v", err)
		}
		t.Skipf("no PgBouncer: %v (install Debian's pgbouncer, or set PACT_TEST_PGBOUNCER_URL; under CI=true this test fails instead)", err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("parse database url: %v", err)
	}
	u.Host = addr
	return u.String()
}

var bouncer struct {
	once sync.Once
	addr string
	err  error
	stop func()
}

func bouncerAddr() (string, error) {
	bouncer.once.Do(func() { bouncer.addr, bouncer.err = findBouncer() })
	return bouncer.addr, bouncer.err
}

func findBouncer() (string, error) {
	if v := os.Getenv("PACT_TEST_PGBOUNCER_URL"); v != "" {
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("PACT_TEST_PGBOUNCER_URL %q is not a URL with a host", v)
		}
		return u.Host, nil
	}
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			return "", errors.New("pgbouncer is not installed")
		}
		bin = "/usr/sbin/pgbouncer"
	}
	base, err := serverURL()
	if err != nil {
		return "", fmt.Errorf("no PostgreSQL to put PgBouncer in front of: %w", err)
	}
	su, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	host, port, err := net.SplitHostPort(su.Host)
	if err != nil {
		return "", err
	}
	return startBouncer(bin, host, port)
}

// startBouncer runs pgbouncer as a daemon from a directory the postgres
// user can read (pgbouncer refuses to run as root) and waits until it
// answers.
func startBouncer(bin, pgHost, pgPort string) (string, error) {
	dir, err := os.MkdirTemp("/tmp", "pactd-pgbouncer-")
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
	ini := strings.Join([]string{
		"[databases]",
		fmt.Sprintf("* = host=%s port=%s", pgHost, pgPort),
		"[pgbouncer]",
		"listen_addr = 127.0.0.1",
		"listen_port = " + strconv.Itoa(port),
		"unix_socket_dir =",
		"auth_type = trust",
		"auth_file = " + filepath.Join(dir, "userlist.txt"),
		"pool_mode = transaction",
		"default_pool_size = " + strconv.Itoa(PgBouncerPoolSize),
		"max_client_conn = 500",
		"logfile = " + filepath.Join(dir, "pgbouncer.log"),
		"pidfile = " + filepath.Join(dir, "pgbouncer.pid"),
		"",
	}, "\n")
	for name, body := range map[string]string{"pgbouncer.ini": ini, "userlist.txt": `"postgres" ""` + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	cmd := asPostgres(bin, "-d", filepath.Join(dir, "pgbouncer.ini"))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("start pgbouncer: %v: %s", err, out)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	bouncer.stop = func() {
		if b, err := os.ReadFile(filepath.Join(dir, "pgbouncer.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		_ = os.RemoveAll(dir)
	}
	probe := fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", addr)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := ping(probe)
		if err == nil {
			return addr, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			bouncer.stop()
			return "", fmt.Errorf("pgbouncer did not answer on %s: %v; its log: %s", addr, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopBouncer stops the PgBouncer this binary started, if any.
func stopBouncer() {
	if bouncer.stop != nil {
		bouncer.stop()
	}
}
