// Command pactd-peerload measures pactd's peers from outside, in the style
// of pactd-loadgen (closed loop, -c workers, each with its own HTTP/1.1
// keep-alive connection, every answer checked), so that
// bench/scripts/bench-peers.sh can put them next to pactd in one table:
//
//   - -peer opa: Open Policy Agent's data API, POST <url> with
//     {"input":{"token":"<ES256 JWT>"}}, answered by a policy that runs
//     io.jwt.decode_verify and must return {"result": true}. -mode new sends
//     a pool of -pool distinct pre-signed tokens, each once per cycle;
//     -mode repeat one token again and again. -jwks-out writes the public
//     key of -key-file as a JWKS (for the policy) and exits.
//   - -peer hydra: Ory Hydra's token introspection, POST <url>/admin/oauth2/introspect
//     with token=<access token>; every answer must be "active": true. The
//     OAuth client (client_credentials) and its access token are created
//     through Hydra's admin and public APIs (-public-url) before measuring.
//
// -server-pid names the server process and -extra-comm (with -extra-match,
// a command-line substring) a group of further processes, e.g. the
// PostgreSQL backends of Hydra's database, whose CPU per request is
// reported too. Any failed answer makes the run invalid (exit status 3).
// -out writes the results as key=value lines.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"pactd.dev/pactd/bench/internal/loadstat"
	"pactd.dev/pactd/internal/cpumeter"
)

// Bounds on the flags, so that every run is bounded in count and time.
const (
	maxDuration = 200 * time.Second
	maxWorkers  = 1024
	maxPool     = 1_000_000
)

type options struct {
	peer, mode, url, publicURL string
	keyFile, jwksOut, out      string
	extraComm, extraMatch      string
	workers, pool, warmup      int
	serverPID                  int
	duration                   time.Duration
	maxReqs                    int64
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("pactd-peerload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.peer, "peer", "opa", "opa (data API, io.jwt.decode_verify) or hydra (token introspection)")
	fs.StringVar(&o.mode, "mode", "new", "opa: new (a distinct token per request, -pool of them) or repeat (one token); hydra: repeat")
	fs.StringVar(&o.url, "url", "", "opa: the data API URL of the allow rule; hydra: the admin API base URL")
	fs.StringVar(&o.publicURL, "public-url", "", "hydra: the public API base URL (token endpoint)")
	fs.StringVar(&o.keyFile, "key-file", "", "opa: PEM file with the P-256 signing key (created when missing)")
	fs.StringVar(&o.jwksOut, "jwks-out", "", "opa: write the JWKS of -key-file's public key here and exit")
	fs.IntVar(&o.workers, "c", 64, "concurrent workers, one HTTP/1.1 connection each")
	fs.DurationVar(&o.duration, "d", 8*time.Second, "how long to send")
	fs.Int64Var(&o.maxReqs, "n", 0, "stop after this many requests (0: only -d bounds the run)")
	fs.IntVar(&o.pool, "pool", 100_000, "opa -mode new: distinct tokens to sign")
	fs.IntVar(&o.warmup, "warmup", 2000, "unmeasured requests before the run (opa new: with tokens outside the pool)")
	fs.IntVar(&o.serverPID, "server-pid", 0, "the server's pid, to report its CPU per request")
	fs.StringVar(&o.extraComm, "extra-comm", "", "command name (comm) of further processes whose CPU per request to report, e.g. postgres")
	fs.StringVar(&o.extraMatch, "extra-match", "", "with -extra-comm: only processes whose command line contains this, e.g. the database name")
	fs.StringVar(&o.out, "out", "", "write results as key=value lines to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var errs []error
	check := func(ok bool, format string, a ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	check(o.peer == "opa" || o.peer == "hydra", "-peer must be opa or hydra")
	if o.peer == "opa" {
		check(o.mode == "new" || o.mode == "repeat", "-peer opa: -mode must be new or repeat")
		check(o.keyFile != "", "-peer opa needs -key-file")
	} else {
		check(o.mode == "repeat", "-peer hydra: -mode must be repeat (one access token)")
		check(o.publicURL != "" || o.jwksOut != "", "-peer hydra needs -public-url")
		check(o.jwksOut == "", "-jwks-out is for -peer opa")
	}
	check(o.url != "" || o.jwksOut != "", "-url is required")
	check(o.workers >= 1 && o.workers <= maxWorkers, "-c must be in [1, %d]", maxWorkers)
	check(o.duration > 0 && o.duration <= maxDuration, "-d must be in (0, %s]", maxDuration)
	check(o.maxReqs >= 0, "-n must not be negative")
	check(o.pool >= 1 && o.pool <= maxPool, "-pool must be in [1, %d]", maxPool)
	check(o.warmup >= 0 && o.warmup <= 100_000, "-warmup must be in [0, 100000]")
	check(o.extraMatch == "" || o.extraComm != "", "-extra-match needs -extra-comm")
	return o, errors.Join(errs...)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "pactd-peerload:", err)
		return 2
	}
	if o.jwksOut != "" {
		err = writeJWKS(o.keyFile, o.jwksOut)
	} else {
		var valid bool
		valid, err = load(ctx, o, stdout, stderr)
		if err == nil && !valid {
			return 3
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "pactd-peerload:", err)
		return 1
	}
	return 0
}

func writeJWKS(keyFile, out string) error {
	k, err := loadOrCreateKey(keyFile)
	if err != nil {
		return err
	}
	j, err := publicJWKS(k)
	if err != nil {
		return err
	}
	return os.WriteFile(out, j, 0o644)
}

func load(ctx context.Context, o options, stdout, stderr io.Writer) (bool, error) {
	c := loadstat.HTTP1Client(o.workers)
	var (
		send         sender
		bodies, warm [][]byte
		what         string
	)
	switch o.peer {
	case "opa":
		k, err := loadOrCreateKey(o.keyFile)
		if err != nil {
			return false, err
		}
		n := o.pool
		if o.mode == "repeat" {
			n = 1
		}
		t0 := time.Now()
		if bodies, err = opaBodies(k, n, t0); err != nil {
			return false, err
		}
		warm = bodies
		if o.mode == "new" && o.warmup > 0 {
			if warm, err = opaBodies(k, min(o.warmup, 2000), t0.Add(time.Second)); err != nil {
				return false, err
			}
		}
		fmt.Fprintf(stderr, "signed %d ES256 tokens in %.1fs\n", n, time.Since(t0).Seconds())
		send = httpSender(c, o.url, "application/json", nil, checkOPA)
		what = "OPA data API, io.jwt.decode_verify ES256"
	case "hydra":
		tok, err := hydraToken(ctx, c, o.url, o.publicURL)
		if err != nil {
			return false, err
		}
		bodies = [][]byte{[]byte(url.Values{"token": {tok}}.Encode())}
		warm = bodies
		send = httpSender(c, strings.TrimRight(o.url, "/")+"/admin/oauth2/introspect", "application/x-www-form-urlencoded",
			http.Header{"Accept": {"application/json"}}, checkIntrospection)
		what = "Hydra admin token introspection (opaque token)"
	}

	// One call first, so a misconfiguration shows its reason plainly.
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	f := send(pctx, warm[0])
	pcancel()
	if f != "" {
		return false, fmt.Errorf("first request failed: %s", f)
	}
	if o.warmup > 0 {
		wr := drive(ctx, min(o.workers, o.warmup), 30*time.Second, int64(o.warmup), send, warm)
		if wr.failures > 0 {
			return false, fmt.Errorf("warm-up: %d of %d failed: %s", wr.failures, wr.requests, loadstat.FailSummary(wr.failSet))
		}
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}

	group := procGroup{comm: o.extraComm, match: o.extraMatch}
	srv0, srvErr0 := cpumeter.ProcCPU(o.serverPID)
	ext0 := group.snapshot()
	res := drive(ctx, o.workers, o.duration, o.maxReqs, send, bodies)
	srv1, srvErr1 := cpumeter.ProcCPU(o.serverPID)
	ext1 := group.snapshot()
	perReq := func(d time.Duration) float64 { return 1e6 * d.Seconds() / float64(max(res.requests, 1)) }
	serverUS, extraUS, exited := -1.0, -1.0, 0
	if o.serverPID > 0 && srvErr0 == nil && srvErr1 == nil {
		serverUS = perReq(srv1 - srv0)
	}
	if o.extraComm != "" {
		var d time.Duration
		d, exited = cpuDelta(ext0, ext1)
		extraUS = perReq(d)
	}
	valid := res.failures == 0 && res.requests > 0 && ctx.Err() == nil

	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }
	fmt.Fprintf(stdout, "peer=%s mode=%s: %s, HTTP/1.1, c=%d closed loop for %s\n", o.peer, o.mode, what, o.workers, o.duration)
	fmt.Fprintf(stdout, "  requests %d in %.2fs = %.0f/s, failures %d\n", res.requests, res.wall.Seconds(), res.rps(), res.failures)
	fmt.Fprintf(stdout, "  latency ms: p50 %s  p90 %s  p99 %s  max %s\n",
		ms(res.quantile(0.50)), ms(res.quantile(0.90)), ms(res.quantile(0.99)), ms(res.quantile(1)))
	if serverUS >= 0 {
		fmt.Fprintf(stdout, "  server CPU %.1f µs/request", serverUS)
		if extraUS >= 0 {
			fmt.Fprintf(stdout, ", %s processes (%d) %.1f µs/request", o.extraComm, len(ext1), extraUS)
		}
		fmt.Fprintln(stdout)
	}
	if exited > 0 {
		fmt.Fprintf(stdout, "  note: %d %s processes exited during the run: their CPU is missing, the figure is a lower bound\n", exited, o.extraComm)
	}
	if o.mode == "new" && res.requests > int64(len(bodies)) {
		fmt.Fprintf(stdout, "  note: the pool of %d tokens was cycled (%.1f times)\n", len(bodies), float64(res.requests)/float64(len(bodies)))
	}
	if valid {
		fmt.Fprintln(stdout, "  VALID")
	} else {
		fmt.Fprintf(stdout, "  INVALID: %s\n", loadstat.FailSummary(res.failSet))
	}
	err := loadstat.WriteKV(o.out, [][2]string{
		{"peer", o.peer}, {"mode", o.mode}, {"c", fmt.Sprint(o.workers)},
		{"seconds", fmt.Sprintf("%.3f", res.wall.Seconds())},
		{"requests", fmt.Sprint(res.requests)}, {"failures", fmt.Sprint(res.failures)},
		{"valid", fmt.Sprint(valid)}, {"rps", fmt.Sprintf("%.0f", res.rps())},
		{"p50_ms", ms(res.quantile(0.50))}, {"p90_ms", ms(res.quantile(0.90))},
		{"p99_ms", ms(res.quantile(0.99))}, {"max_ms", ms(res.quantile(1))},
		{"server_us_per_req", fmt.Sprintf("%.1f", serverUS)},
		{"extra_us_per_req", fmt.Sprintf("%.1f", extraUS)}, {"extra_procs", fmt.Sprint(len(ext1))}, {"extra_exited", fmt.Sprint(exited)},
		{"pool", fmt.Sprint(len(bodies))},
	})
	return valid, err
}
