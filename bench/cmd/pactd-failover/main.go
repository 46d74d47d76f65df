// Command pactd-failover measures what a PostgreSQL failover does to a pair
// of pactd replicas, and checks every write pactd acknowledged.
//
// For each replication mode asked for (-mode async, sync or both) it builds
// a primary and a streaming standby from the installed PostgreSQL binaries
// (initdb with wal_level=replica, pg_basebackup -R; db/dbtest.StartPair),
// starts two pactd replicas in this process whose PACT_DATABASE_URL names
// both servers with target_session_attrs=read-write, and runs load through
// pactd's own API: writers that create caller credentials and whole
// delegation grants (device authorization, consent, token), and verifiers
// that call VerifyAgentRequest (identity-only with new PA JWTs, and
// delegated with a grant made before the failover) on both replicas. After
// -before it stops the primary at once (pg_ctl -m immediate), promotes the
// standby after -promote-after, and keeps the load on for -after more.
// With -lag the primary's WAL sender is stopped that long before the
// primary dies (and killed with it), so the standby is behind, as over a
// congested network: what asynchronous replication then loses,
// synchronous replication never acknowledged.
//
// Then it checks every acknowledged write through the API on the new
// primary (the credential is listed; the grant's delegation token
// introspects active) and reports, per mode: acknowledged writes and how
// many were lost, the seconds until writes succeeded again (from the stop
// and from the promotion), the verification success rate overall and while
// writes failed, a per-second timeline, and the replicas' warning and error
// log lines. With synchronous replication the standby has flushed every
// acknowledged commit, so none may be lost; the command exits with status
// 3 when one is.
//
//	(cd bench && go run ./cmd/pactd-failover -mode both -out failover-report.md)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	var lost errLost
	switch {
	case errors.As(err, &lost):
		fmt.Fprintln(os.Stderr, "pactd-failover:", err)
		os.Exit(3)
	case err != nil:
		fmt.Fprintln(os.Stderr, "pactd-failover:", err)
		os.Exit(1)
	}
}

// errLost is returned when synchronous replication lost an acknowledged
// write.
type errLost struct{ n int }

func (e errLost) Error() string {
	return fmt.Sprintf("%d acknowledged writes lost with synchronous replication", e.n)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pactd-failover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "both", "replication: async, sync or both")
	sc := scenario{}
	fs.DurationVar(&sc.Before, "before", 5*time.Second, "load before the primary is stopped")
	fs.DurationVar(&sc.PromoteAfter, "promote-after", 2*time.Second, "from the stop to the promotion (failure detection)")
	fs.DurationVar(&sc.After, "after", 8*time.Second, "load after the promotion")
	fs.DurationVar(&sc.Lag, "lag", 0, "stop the primary's WAL sender this long before the primary dies (0: the standby is current)")
	fs.IntVar(&sc.Writers, "writers", 4, "concurrent writers")
	fs.IntVar(&sc.Verifiers, "verifiers", 4, "concurrent verifiers")
	fs.BoolVar(&sc.Fsync, "fsync", true, "keep PostgreSQL's fsync on")
	out := fs.String("out", "", "also write the report (Markdown) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := sc.check(); err != nil {
		return err
	}
	var modes []bool
	switch *mode {
	case "async":
		modes = []bool{false}
	case "sync":
		modes = []bool{true}
	case "both":
		modes = []bool{false, true}
	default:
		return fmt.Errorf("-mode must be async, sync or both, not %q", *mode)
	}
	var reports []*report
	for _, sync := range modes {
		sc.Sync = sync
		fmt.Fprintf(stderr, "pactd-failover: %s replication: building the pair, %v of load, stop, promote after %v, %v more\n",
			modeName(sync), sc.Before, sc.PromoteAfter, sc.After)
		r, err := sc.run(ctx)
		if err != nil {
			return fmt.Errorf("%s replication: %w", modeName(sync), err)
		}
		reports = append(reports, r)
	}
	var b strings.Builder
	writeReport(&b, sc, reports, args)
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	for _, r := range reports {
		if r.Sync && r.lost() > 0 {
			return errLost{r.lost()}
		}
	}
	return nil
}

func modeName(sync bool) string {
	if sync {
		return "synchronous"
	}
	return "asynchronous"
}
