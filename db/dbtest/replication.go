package dbtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"pactd.dev/pactd/internal/freeport"
)

// PairOptions shape a primary and streaming standby pair.
type PairOptions struct {
	// Sync makes the standby synchronous: the primary acknowledges a
	// commit only once the standby has flushed its WAL
	// (synchronous_standby_names = '*', synchronous_commit = on).
	Sync bool
	// Fsync keeps fsync on (PostgreSQL's default); off is faster and
	// loses nothing a process crash would, only an OS crash.
	Fsync bool
	// Database is created on the primary before the standby is copied.
	Database string
}

// Pair is a PostgreSQL primary and a standby streaming from it, built from
// the installed PostgreSQL binaries in a directory of their own: initdb
// with wal_level=replica, pg_basebackup -R (standby.signal and
// primary_conninfo), each server on its own loopback port.
type Pair struct {
	dir              string
	opts             PairOptions
	primary, standby node
	pgctl            string
	heldSender       int // the WAL sender HoldWALSender stopped
}

type node struct {
	name, data string
	port       int
}

// StartPair builds and starts the pair; Close stops it and removes its
// files.
func StartPair(ctx context.Context, o PairOptions) (_ *Pair, err error) {
	bins := map[string]string{}
	for _, b := range []string{"initdb", "pg_ctl", "pg_basebackup"} {
		if bins[b], err = lookPG(b); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("/tmp", "pactd-pair-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return nil, err
	}
	p := &Pair{dir: dir, opts: o, pgctl: bins["pg_ctl"],
		primary: node{name: "primary", data: filepath.Join(dir, "primary")}, standby: node{name: "standby", data: filepath.Join(dir, "standby")}}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.primary.port, err = freeport.Port(); err != nil {
		return nil, err
	}
	if p.standby.port, err = freeport.Port(); err != nil {
		return nil, err
	}
	if out, err := asPostgres(bins["initdb"], "-D", p.primary.data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if err := p.start(p.primary, "wal_level=replica", "max_wal_senders=4", "hot_standby=on"); err != nil {
		return nil, err
	}
	if o.Database != "" {
		if err := p.exec(ctx, p.primary, "postgres", "CREATE DATABASE "+pgx.Identifier{o.Database}.Sanitize()); err != nil {
			return nil, err
		}
	}
	if out, err := asPostgres(bins["pg_basebackup"], "-h", "127.0.0.1", "-p", strconv.Itoa(p.primary.port), "-U", "postgres",
		"-D", p.standby.data, "-R", "-X", "stream", "--checkpoint=fast").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_basebackup: %v: %s", err, out)
	}
	if err := p.start(p.standby, "hot_standby=on"); err != nil {
		return nil, err
	}
	if err := p.waitStreaming(ctx, "async"); err != nil {
		return nil, err
	}
	if o.Sync {
		// Only now, and only on the primary (postgresql.auto.conf, after
		// the copy): a commit waits for a synchronous standby, so none
		// could commit before one streams, and the standby must not wait
		// for one of its own once promoted. synchronous_commit is on by
		// default: the standby has flushed the WAL of every acknowledged
		// commit.
		if err := p.exec(ctx, p.primary, "postgres", "ALTER SYSTEM SET synchronous_standby_names = '*'"); err != nil {
			return nil, err
		}
		if err := p.exec(ctx, p.primary, "postgres", "SELECT pg_reload_conf()"); err != nil {
			return nil, err
		}
		if err := p.waitStreaming(ctx, "sync"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// start runs pg_ctl start for n with the pair's settings and extra ones.
func (p *Pair) start(n node, extra ...string) error {
	opts := []string{"-p " + strconv.Itoa(n.port), "-k " + p.dir, "-c listen_addresses=127.0.0.1"}
	if !p.opts.Fsync {
		opts = append(opts, "-c fsync=off", "-c full_page_writes=off")
	}
	for _, e := range extra {
		opts = append(opts, "-c "+e)
	}
	if out, err := asPostgres(p.pgctl, "-D", n.data, "-l", filepath.Join(p.dir, n.name+".log"), "-w", "-t", "60",
		"-o", strings.Join(opts, " "), "start").CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl start %s: %v: %s", n.name, err, out)
	}
	return nil
}

func (p *Pair) nodeURL(n node, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=2", n.port, db)
}

func (p *Pair) exec(ctx context.Context, n node, db, stmt string) error {
	c, err := pgx.Connect(ctx, p.nodeURL(n, db))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, stmt)
	return err
}

// waitStreaming waits until the primary reports the standby streaming
// with sync_state want ("async" or "sync").
func (p *Pair) waitStreaming(ctx context.Context, want string) error {
	c, err := pgx.Connect(ctx, p.nodeURL(p.primary, "postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state, syncState string
		err := c.QueryRow(ctx, `SELECT state, sync_state FROM pg_stat_replication LIMIT 1`).Scan(&state, &syncState)
		if err == nil && state == "streaming" && syncState == want {
			return nil
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the standby is not streaming (%s) after 30 s: state %q, sync_state %q", want, state, syncState)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is a multi-host URL of both servers that pgx resolves to whichever
// accepts writes (target_session_attrs=read-write): the primary, then the
// standby once it is promoted.
func (p *Pair) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/%s?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		p.primary.port, p.standby.port, db)
}

// HoldWALSender stops the primary's WAL sender (SIGSTOP): from then on the
// standby receives nothing, as behind a congested network, while an
// asynchronous primary goes on acknowledging commits and a synchronous one
// cannot acknowledge any. StopPrimary then kills the held sender before it
// can send what it holds, as the primary's machine dying would.
func (p *Pair) HoldWALSender(ctx context.Context) error {
	c, err := pgx.Connect(ctx, p.nodeURL(p.primary, "postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	var pid int
	if err := c.QueryRow(ctx, `SELECT pid FROM pg_stat_replication LIMIT 1`).Scan(&pid); err != nil {
		return fmt.Errorf("find the primary's WAL sender: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	p.heldSender = pid
	return nil
}

// StopPrimary stops the primary at once (pg_ctl -m immediate: no
// shutdown checkpoint, every connection cut, as a crash would).
func (p *Pair) StopPrimary() error {
	if p.heldSender != 0 {
		// SIGKILL reaches a stopped process; the postmaster then ends
		// every other backend too, and the stop below ends the postmaster.
		_ = syscall.Kill(p.heldSender, syscall.SIGKILL)
		p.heldSender = 0
	}
	if out, err := asPostgres(p.pgctl, "-D", p.primary.data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
		return fmt.Errorf("stop the primary: %v: %s", err, out)
	}
	return nil
}

// Promote makes the standby the primary and waits until it accepts
// writes.
func (p *Pair) Promote() error {
	if out, err := asPostgres(p.pgctl, "-D", p.standby.data, "-w", "-t", "60", "promote").CombinedOutput(); err != nil {
		return fmt.Errorf("promote the standby: %v: %s", err, out)
	}
	return nil
}

// Close stops both servers (whatever state they are in) and removes the
// pair's files.
func (p *Pair) Close() {
	for _, n := range []node{p.standby, p.primary} {
		if _, err := os.Stat(filepath.Join(n.data, "postmaster.pid")); err == nil {
			_ = asPostgres(p.pgctl, "-D", n.data, "-m", "immediate", "-w", "stop").Run()
		}
	}
	_ = os.RemoveAll(p.dir)
}
