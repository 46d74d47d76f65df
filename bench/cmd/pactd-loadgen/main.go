// Command pactd-loadgen measures pactd's VerificationService/VerifyAgentRequest
// from outside, as a frontend would call it: through the generated clients
// only, over gRPC (connect-go with WithGRPC, or grpc-go) or the Connect
// protocol, on h2c.
//
// A load run starts a personal agent (PA) on loopback: an ES256 P-256 key
// (and, with -alg RS256, an RSA-2048 key) whose JWKS it serves. It registers
// the PA with the admin token and makes sure the Brand exists (both
// idempotent), signs every token before measuring, warms up, then sends
// VerifyAgentRequest with the frontend token from -c workers for -d:
//
//   - -mode new: a pool of -pool distinct tokens (sub and jti differ), sent
//     in order, larger than pactd's repeat-token cache (65,536) so that each
//     verification is a cache miss and checks a signature;
//   - -mode repeat: one token sent again and again (every check but the
//     signature).
//   - -mode floor: the transport's own floor through the same server,
//     interceptors, credential and codec: the same RPC with an
//     Authorization value that is not a JWT, which pactd refuses
//     (401, DENY_REASON_MALFORMED) before any JOSE work. Every answer must
//     be that refusal.
//
// Without -rate the run is closed-loop (maximum throughput). With -rate it
// is open-loop at a fixed rate, latency counted from each request's due time
// (no coordinated omission). Every answer must be allowed=true with status
// 200; any other answer or RPC error is a failure and makes the run invalid
// (exit status 3).
//
// -raw instead measures single-threaded crypto/ecdsa P-256 (or RSA-2048)
// verifications per second over a precomputed digest: the raw limit.
//
// The admin and frontend credentials come from PACT_ADMIN_TOKEN and
// PACT_FRONTEND_TOKEN. -out writes the results as key=value lines for
// scripts (see bench/scripts/bench-verify.sh).
//
// Staging mode, -mix kind=weight,...: the tool an SRE points at a
// deployment (docs/performance.md, "Load-testing staging"). It speaks TLS to an https
// -addr (-ca-file, -cert/-key), serves its PA's JWKS over https
// (-jwks-listen) or writes it for hosting (-write-jwks), registers the PA
// (-register auto) or prints the admin call (-register print), sets up
// delegation grants through the device flow, and then sends new, repeat,
// floor, delegated, introspect, refresh and device requests in the stated
// ratios, each token minted just before it is due, open loop (-rate, -ramp,
// -steps; latency from the due time) or closed loop, for up to 24 hours.
// Results: per-interval histograms, errors by kind, the minting cost, and
// -json and self-contained -html reports. -write-tokens and -serve-jwks
// feed ghz for gRPC-only runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"pactd.dev/pactd/bench/internal/loadstat"
	"pactd.dev/pactd/internal/cpumeter"
	"pactd.dev/pactd/internal/freeport"
)

// Bounds on the flags, so that every run is bounded in count and time.
const (
	// maxPoolDuration bounds the -mode runs, whose tokens are all signed
	// before the run and live 300 s; -mix runs mint as they go and may
	// last up to maxSoak.
	maxPoolDuration = 200 * time.Second
	maxWorkers      = 4096
	maxConns        = 64
	maxPool         = 2_000_000
	maxRate         = 1_000_000
	// pactdCacheSize is the number of tokens pactd's repeat-token cache
	// holds (pajwt.DefaultCacheSize).
	pactdCacheSize = 65_536
	// freshness is how long before its exp a token may still be sent; the
	// pool is re-signed when the run would end later than that.
	freshness = 30 * time.Second
)

type options struct {
	addr      string
	verify    string
	protocol  string
	httpVer   string
	codec     string
	client    string
	mode      string
	alg       string
	workers   int
	conns     int
	duration  time.Duration
	maxReqs   int64
	rate      float64
	pool      int
	warmup    int
	brand     string
	jwksAddr  string
	keyFile   string
	paKeys    int
	serverPID int
	out       string
	raw       bool
	gzip      bool
	pprofURL  string
	profOut   string
	health    time.Duration
	freePort  bool
	bare      string
	gcBudget  int

	// Staging mode (-mix).
	mixSpec      string
	shape        rateShape
	rampSpec     string
	stepsSpec    string
	interval     time.Duration
	timeout      time.Duration
	jsonOut      string
	htmlOut      string
	tls          tlsOpts
	jwksListen   string
	jwksCert     string
	jwksKey      string
	issuer       string
	jwksURI      string
	writeJWKS    string
	serveJWKS    bool
	register     string
	audience     string
	grants       int
	repeatTokens int
	maxErrors    int64
	makeCerts    string
	writeTokens  string
	tokens       int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("pactd-loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "http://127.0.0.1:7070", "pactd base URL: http://host:port (h2c) or https://host:port (TLS, HTTP/2 by ALPN)")
	fs.StringVar(&o.verify, "verify-addr", "", "base URL for the VerifyAgentRequest load, e.g. pactd's native gRPC port (PACT_GRPC_LISTEN); default -addr")
	fs.StringVar(&o.protocol, "protocol", "grpc", "wire protocol: grpc or connect")
	fs.StringVar(&o.httpVer, "http", "2", "connect-go: HTTP version, 2 (h2c, -conns connections) or 1.1 (one connection per worker; -protocol connect)")
	fs.StringVar(&o.codec, "codec", "proto", "connect-go: message codec, proto (binary) or json")
	fs.StringVar(&o.client, "client", "connect-go", "client library: connect-go, grpc-go (-protocol grpc only), http1 (-protocol connect -http 1.1\nonly: a minimal HTTP/1.1 client that writes and reads on the worker's own goroutine, asking for no compression)\nor h2grpc (-protocol grpc, h2c only: a minimal gRPC client, one connection per -conns, written on the worker's goroutine)")
	fs.BoolVar(&o.gzip, "gzip", true, "connect-go: accept gzip responses (connect-go's default; grpc-go never asks)")
	fs.StringVar(&o.mode, "mode", "new", "new: a distinct token per request (cache misses); repeat: one token; floor: a refused non-JWT (no JOSE work);\nmixed: of every 8 requests 5 new, 2 repeat, 1 floor (for memory under sustained load)")
	fs.StringVar(&o.alg, "alg", "ES256", "token algorithm: ES256 or RS256")
	fs.IntVar(&o.workers, "c", 64, "concurrent workers")
	fs.IntVar(&o.conns, "conns", 1, "HTTP/2 connections the workers share")
	fs.DurationVar(&o.duration, "d", 10*time.Second, "how long to send (or, with -raw, to verify): at most 200s with -mode (a pre-signed pool), 24h with -mix")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "the same as -d")
	fs.Int64Var(&o.maxReqs, "n", 0, "stop after this many requests (0: only -d bounds the run)")
	fs.Float64Var(&o.rate, "rate", 0, "open loop: requests per second (0: closed loop, maximum throughput)")
	fs.IntVar(&o.pool, "pool", 200_000, "-mode new: distinct tokens to sign; more than pactd's 65,536-entry cache, and\nsmaller for RS256, whose signing is about 50 times slower")
	fs.IntVar(&o.warmup, "warmup", 2000, "unmeasured requests before the run, with tokens outside the pool")
	fs.StringVar(&o.brand, "brand", "loadgen", "Brand id to verify for (created when missing)")
	fs.StringVar(&o.jwksAddr, "jwks-addr", "127.0.0.1:0", "loopback host:port for the PA's JWKS")
	fs.StringVar(&o.keyFile, "key-file", "", "PEM file keeping the PA keys across runs (created when missing)")
	fs.IntVar(&o.paKeys, "pa-keys", 1, "-mode new or mixed, ES256: distinct PA keys the tokens are signed with, in turn; above 100 (the most one\n"+
		"JWKS may hold) they are spread over agents of 100 keys, issuers {PA}/pa/N, each registered; in [1, 10000]")
	fs.IntVar(&o.serverPID, "server-pid", 0, "pactd's pid, to report its CPU use during the run")
	fs.StringVar(&o.out, "out", "", "write results as key=value lines to this file")
	fs.StringVar(&o.pprofURL, "server-pprof", "", "base URL of a net/http/pprof listener in a profiling build of pactd (loopback)")
	fs.StringVar(&o.profOut, "profile-out", "", "with -server-pprof: write pactd's CPU profile of the measured run here")
	fs.BoolVar(&o.raw, "raw", false, "measure raw single-threaded signature verifications/s for -d and exit")
	fs.DurationVar(&o.health, "wait-health", 0, "only wait up to this long for pactd to report SERVING, then exit")
	fs.StringVar(&o.bare, "serve-bare", "", "serve the transports' own floor without pactd (main=host:port for net/http + connect-go,\ngrpc=host:port for grpc-go; a fixed refusal, nothing else) until interrupted")
	fs.BoolVar(&o.freePort, "free-port", false, "print a free TCP port on 127.0.0.1, outside the kernel's ephemeral range, and exit")
	fs.IntVar(&o.gcBudget, "gc-budget", 16, "MiB of garbage this tool's own collector lets accumulate per cycle during a run, so that its\nsweeps stay short and its pauses do not read as pactd's latency (0, or GOGC set: Go's default pacing)")

	// Staging mode.
	fs.StringVar(&o.mixSpec, "mix", "", "staging mode: request kinds and their weights, e.g. new=60,repeat=30,delegated=10; kinds: new, repeat, floor,\n"+
		"delegated, introspect, refresh, device (tokens minted while running; runs up to 24h; see docs/performance.md, \"Load-testing staging\")")
	fs.StringVar(&o.rampSpec, "ramp", "", "-mix open loop: FROM:TO:DURATION, a linear ramp of requests/s, then TO to the end (e.g. 100:1000:60s)")
	fs.StringVar(&o.stepsSpec, "steps", "", "-mix open loop: RATE,RATE,...:DURATION, each rate held for DURATION, the last to the end (e.g. 100,200,400:30s)")
	fs.DurationVar(&o.interval, "interval", time.Second, "-mix: reporting interval of the per-interval histograms, in [100ms, 1h]")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "-mix: deadline of each request, in [100ms, 1m]; a request not answered by then is an error")
	fs.StringVar(&o.jsonOut, "json", "", "-mix: write the summary (totals, per kind, errors by kind, per interval) as JSON to this file")
	fs.StringVar(&o.htmlOut, "html", "", "-mix: write a self-contained HTML report (inline SVG plots, nothing fetched) to this file")
	fs.StringVar(&o.tls.caFile, "ca-file", "", "PEM CA certificates to trust for an https -addr (default: the system roots)")
	fs.StringVar(&o.tls.certFile, "cert", "", "PEM client certificate for an https -addr (with -key), for a proxy that asks for one")
	fs.StringVar(&o.tls.keyFile, "key", "", "PEM private key of -cert")
	fs.StringVar(&o.jwksListen, "jwks-listen", "", "-mix/-serve-jwks: serve the PA's JWKS over https on this host:port (with -jwks-cert, -jwks-key);\n"+
		"pactd must reach it: set PACT_JWKS_ALLOW_HOSTS (and PACT_JWKS_CA_FILE for a private CA) on pactd for an internal host")
	fs.StringVar(&o.jwksCert, "jwks-cert", "", "PEM certificate of the -jwks-listen server")
	fs.StringVar(&o.jwksKey, "jwks-key", "", "PEM private key of -jwks-cert")
	fs.StringVar(&o.issuer, "issuer", "", "the PA's issuer (https origin; default https://{-jwks-listen})")
	fs.StringVar(&o.jwksURI, "jwks-uri", "", "the PA's JWKS URI (default {issuer}/jwks.json); without -jwks-listen, where you host -write-jwks's file")
	fs.StringVar(&o.writeJWKS, "write-jwks", "", "write the PA's JWKS (keys from -key-file) to this file for you to host, and exit")
	fs.BoolVar(&o.serveJWKS, "serve-jwks", false, "serve the PA's JWKS on -jwks-listen until interrupted (for ghz runs, or a PA shared by several load generators)")
	fs.StringVar(&o.register, "register", "auto", "-mix: auto (register the PA and create the Brand with PACT_ADMIN_TOKEN), print (print the\n"+
		"pactd agent register command an operator runs, and exit), or skip (already registered: give -audience)")
	fs.StringVar(&o.audience, "audience", "", "with -register skip, or -write-tokens without PACT_ADMIN_TOKEN: the aud pactd expects (PACT_AUDIENCE, or the agent's override)")
	fs.IntVar(&o.grants, "grants", 8, "-mix with delegated, introspect or refresh: delegation grants to set up through the device flow, in [1, 1000]")
	fs.IntVar(&o.repeatTokens, "repeat-tokens", 1, "-mix repeat: distinct repeated tokens (minted again every minute), in [1, 65536]")
	fs.Int64Var(&o.maxErrors, "max-errors", 0, "-mix: errors a valid run may have (exit status 3 beyond)")
	fs.StringVar(&o.makeCerts, "make-certs", "", "write a throw-away lab CA and certificates for pactd and the PA (127.0.0.1, ::1, localhost) into this directory, and exit")
	fs.StringVar(&o.writeTokens, "write-tokens", "", "write -tokens fresh VerifyAgentRequest messages as a JSON array (a ghz --data-file) to this file, and exit;\n"+
		"they live 300 s from now: write them again before each ghz run")
	fs.IntVar(&o.tokens, "tokens", 10_000, "-write-tokens: distinct tokens, in [1, 1000000]")
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
	check(o.protocol == "grpc" || o.protocol == "connect", "-protocol must be grpc or connect")
	check(o.client == "connect-go" || o.client == "grpc-go" || o.client == "http1" || o.client == "h2grpc", "-client must be connect-go, grpc-go, http1 or h2grpc")
	check(o.client != "h2grpc" || o.protocol == "grpc", "-client h2grpc needs -protocol grpc")
	check(o.client != "http1" || (o.protocol == "connect" && o.httpVer == "1.1"), "-client http1 needs -protocol connect -http 1.1")
	check(o.client != "grpc-go" || o.protocol == "grpc", "-client grpc-go needs -protocol grpc")
	check(o.httpVer == "2" || o.httpVer == "1.1", "-http must be 2 or 1.1")
	check(o.codec == "proto" || o.codec == "json", "-codec must be proto or json")
	check(o.httpVer == "2" || (o.protocol == "connect" && o.client != "grpc-go"), "-http 1.1 needs -protocol connect (gRPC needs HTTP/2)")
	check(o.codec == "proto" || (o.client != "grpc-go" && o.client != "h2grpc"), "-codec json needs -client connect-go or http1")
	check(o.httpVer == "2" || o.conns == 1, "-http 1.1 opens one connection per worker: leave -conns at 1")
	check(o.mode == "new" || o.mode == "repeat" || o.mode == "floor" || o.mode == "mixed", "-mode must be new, repeat, floor or mixed")
	check(o.alg == "ES256" || o.alg == "RS256", "-alg must be ES256 or RS256")
	check(o.paKeys >= 1 && o.paKeys <= maxPAKeys, "-pa-keys must be in [1, %d]", maxPAKeys)
	check(o.paKeys == 1 || (o.alg == "ES256" && (o.mode == "new" || o.mode == "mixed") && o.mixSpec == ""), "-pa-keys above 1 needs -alg ES256 and -mode new or mixed")
	check(o.workers >= 1 && o.workers <= maxWorkers, "-c must be in [1, %d]", maxWorkers)
	check(o.conns >= 1 && o.conns <= maxConns, "-conns must be in [1, %d]", maxConns)
	check(o.duration > 0 && o.duration <= maxSoak, "-d must be in (0, %s]", maxSoak)
	check(o.mixSpec != "" || o.duration <= maxPoolDuration || o.raw, "-d above %s needs -mix (a -mode run signs all its tokens first and they live 300 s)", maxPoolDuration)
	check(o.interval >= 100*time.Millisecond && o.interval <= time.Hour, "-interval must be in [100ms, 1h]")
	check(o.duration/o.interval <= maxIntervals, "-d / -interval must be at most %d intervals: raise -interval", maxIntervals)
	check(o.timeout >= 100*time.Millisecond && o.timeout <= time.Minute, "-timeout must be in [100ms, 1m]")
	check(o.register == "auto" || o.register == "print" || o.register == "skip", "-register must be auto, print or skip")
	check(o.register != "skip" || o.audience != "", "-register skip needs -audience")
	check(o.grants >= 1 && o.grants <= maxGrants, "-grants must be in [1, %d]", maxGrants)
	check(o.repeatTokens >= 1 && o.repeatTokens <= maxRepeat, "-repeat-tokens must be in [1, %d]", maxRepeat)
	check(o.maxErrors >= 0, "-max-errors must not be negative")
	check(o.tokens >= 1 && o.tokens <= 1_000_000, "-tokens must be in [1, 1000000]")
	check((o.tls.certFile == "") == (o.tls.keyFile == ""), "-cert and -key go together")
	check((o.jwksCert == "") == (o.jwksKey == ""), "-jwks-cert and -jwks-key go together")
	check(o.jwksListen == "" || o.jwksCert != "", "-jwks-listen needs -jwks-cert and -jwks-key (pactd fetches JWKS over https only)")
	check(!o.serveJWKS || o.jwksListen != "", "-serve-jwks needs -jwks-listen")
	check(o.writeJWKS == "" || o.keyFile != "", "-write-jwks needs -key-file (the keys must outlive this process)")
	check(o.mixSpec == "" || o.client == "connect-go", "-mix speaks through connect-go (-protocol grpc reaches the native gRPC port too)")
	if o.mixSpec != "" {
		if _, err := parseMix(o.mixSpec); err != nil {
			errs = append(errs, err)
		}
	}
	check(o.rampSpec == "" || o.stepsSpec == "", "-ramp and -steps exclude each other")
	check((o.rampSpec == "" && o.stepsSpec == "") || (o.rate == 0 && o.mixSpec != ""), "-ramp and -steps need -mix and no -rate")
	switch {
	case o.rampSpec != "":
		sh, err := parseRamp(o.rampSpec)
		if err != nil {
			errs = append(errs, err)
		}
		o.shape = sh
	case o.stepsSpec != "":
		sh, err := parseSteps(o.stepsSpec)
		if err != nil {
			errs = append(errs, err)
		}
		o.shape = sh
	default:
		o.shape = rateShape{constant: o.rate}
	}
	check(o.maxReqs >= 0, "-n must not be negative")
	check(o.rate >= 0 && o.rate <= maxRate, "-rate must be in [0, %d]", maxRate)
	check(o.gcBudget >= 0 && o.gcBudget <= maxGCBudgetMiB, "-gc-budget must be in [0, %d] MiB", maxGCBudgetMiB)
	check(o.pool >= 1 && o.pool <= maxPool, "-pool must be in [1, %d]", maxPool)
	check(o.warmup >= 0 && o.warmup <= 100_000, "-warmup must be in [0, 100000]")
	check(o.health >= 0 && o.health <= 5*time.Minute, "-wait-health must be in [0, 5m]")
	check((o.pprofURL == "") == (o.profOut == ""), "-server-pprof and -profile-out go together")
	return o, errors.Join(errs...)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "pactd-loadgen:", err)
		return 2
	}
	switch {
	case o.freePort:
		err = printFreePort(stdout)
	case o.bare != "":
		err = serveBare(o.bare, stdout)
	case o.health > 0:
		err = waitHealthy(ctx, o.addr, o.tls, o.health)
	case o.raw:
		err = rawCmd(o, stdout)
	case o.makeCerts != "":
		err = makeCerts(o.makeCerts)
	case o.writeJWKS != "":
		err = writeJWKSCmd(o)
	case o.serveJWKS:
		err = serveJWKSCmd(ctx, o, stdout)
	case o.writeTokens != "":
		err = writeTokensCmd(ctx, o, stderr)
	case o.mixSpec != "":
		var valid bool
		valid, err = stagingCmd(ctx, o, stdout, stderr)
		if err == nil && !valid {
			return 3
		}
	default:
		var valid bool
		valid, err = loadCmd(ctx, o, stdout, stderr)
		if err == nil && !valid {
			return 3
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "pactd-loadgen:", err)
		return 1
	}
	return 0
}

// printFreePort prints a port for a script to hand to a server it starts:
// outside the kernel's ephemeral range, so no client socket takes it first.
func printFreePort(w io.Writer) error {
	port, err := freeport.Port()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, port)
	return err
}

func rawCmd(o options, stdout io.Writer) error {
	r, err := runRaw(o.alg, o.duration)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "raw %s verify, 1 thread: %d in %.2fs = %.0f/s (%.1f µs each); per CPU-second %.0f (CPU %.0f%% of wall)\n",
		r.alg, r.ops, r.elapsed.Seconds(), r.perSecond(), 1e6/r.perSecond(), r.perCPUSecond(), 100*r.cpu.Seconds()/r.elapsed.Seconds())
	return loadstat.WriteKV(o.out, [][2]string{
		{"alg", r.alg}, {"raw_ops", fmt.Sprint(r.ops)},
		{"raw_seconds", fmt.Sprintf("%.3f", r.elapsed.Seconds())},
		{"raw_per_s", fmt.Sprintf("%.0f", r.perSecond())},
		{"raw_cpu_seconds", fmt.Sprintf("%.3f", r.cpu.Seconds())},
		{"raw_per_cpu_s", fmt.Sprintf("%.0f", r.perCPUSecond())},
	})
}

func loadCmd(ctx context.Context, o options, stdout, stderr io.Writer) (bool, error) {
	admin, frontend := os.Getenv("PACT_ADMIN_TOKEN"), os.Getenv("PACT_FRONTEND_TOKEN")
	if admin == "" || frontend == "" {
		return false, errors.New("PACT_ADMIN_TOKEN and PACT_FRONTEND_TOKEN must be set")
	}
	pa, err := startPA(o.jwksAddr, o.keyFile, o.alg == "RS256")
	if err != nil {
		return false, err
	}
	defer pa.Close()
	aud, err := setupWorld(ctx, o.addr, admin, pa, o.brand)
	if err != nil {
		return false, err
	}
	s, err := pa.signer(o.alg)
	if err != nil {
		return false, err
	}
	signers, issuers := []*signer{s}, []string{pa.issuer}
	if o.paKeys > 1 {
		if signers, issuers, err = pa.manyKeys(ctx, o.addr, admin, o.paKeys); err != nil {
			return false, err
		}
	}

	// Sign everything before measuring.
	poolSize := o.pool
	if o.mode == "repeat" {
		poolSize = 1
	}
	sign := func() (pool, warm *tokenSet, err error) {
		t0 := time.Now()
		if pool, err = signPoolMany(signers, issuers, aud, "user", poolSize); err != nil {
			return nil, nil, err
		}
		warm = pool
		if (o.mode == "new" || o.mode == "mixed") && o.warmup > 0 {
			if warm, err = signPoolMany(signers, issuers, aud, "warm", min(o.warmup, 4096)); err != nil {
				return nil, nil, err
			}
		}
		fmt.Fprintf(stderr, "signed %d %s tokens in %.1fs\n", poolSize, o.alg, time.Since(t0).Seconds())
		return pool, warm, nil
	}
	var pool, warm *tokenSet
	if o.mode == "floor" {
		pool = &tokenSet{authz: []string{floorAuthorization}, signedAt: time.Now()}
		warm = pool
	} else if pool, warm, err = sign(); err != nil {
		return false, err
	}
	if o.mode == "mixed" {
		pool = mixed(pool)
	}

	target := o.addr
	if o.verify != "" {
		target = o.verify
	}
	fns, closeFns, err := newVerifiers(target, o.client, o.protocol, wire{http: o.httpVer, codec: o.codec, workers: o.workers}, o.conns, o.gzip, frontend, o.brand)
	if err != nil {
		return false, err
	}
	defer closeFns()
	switch o.mode {
	case "floor":
		for i, f := range fns {
			fns[i] = expectFloorRefusal(f)
		}
	case "mixed":
		for i, f := range fns {
			fns[i] = expectMixed(f)
		}
	}

	// One call first, so a misconfiguration shows its reason plainly.
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	f := fns[0](pctx, warm.authz[0])
	pcancel()
	if f != "" {
		return false, fmt.Errorf("first VerifyAgentRequest failed: %s", f)
	}
	if o.warmup > 0 {
		wr := drive(ctx, loadSpec{workers: min(o.workers, o.warmup), duration: 30 * time.Second,
			maxReqs: int64(o.warmup), grace: 10 * time.Second}, fns, warm.authz)
		if wr.failures > 0 {
			return false, fmt.Errorf("warm-up: %d of %d failed: %s", wr.failures, wr.requests, loadstat.FailSummary(wr.failSet))
		}
	}
	// Every token must stay valid to the end of the run, grace included.
	grace := 10 * time.Second
	for range 2 {
		if time.Since(pool.signedAt)+o.duration+grace <= tokenLifetime-freshness {
			break
		}
		fmt.Fprintln(stderr, "tokens would expire during the run: signing them again")
		if pool, _, err = sign(); err != nil {
			return false, err
		}
		if o.mode == "mixed" {
			pool = mixed(pool)
		}
	}
	if time.Since(pool.signedAt)+o.duration+grace > tokenLifetime-freshness {
		return false, fmt.Errorf("signing takes too long for -d %s: lower -pool or -d", o.duration)
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}

	var profDone <-chan error
	if o.pprofURL != "" {
		profDone = fetchProfile(ctx, o.pprofURL, o.duration, o.profOut)
	}
	fetches0 := pa.fetches.Load()
	mem0 := serverMemory(ctx, o.addr, admin, o.serverPID)
	pace := paceCollector(o.gcBudget)
	cpu0 := cpuTime()
	srv0, srvErr := cpumeter.ProcCPU(o.serverPID)
	sch0, schErr := loadstat.ProcSched(o.serverPID)
	res := drive(ctx, loadSpec{workers: o.workers, duration: o.duration, maxReqs: o.maxReqs, rate: o.rate, grace: grace}, fns, pool.authz)
	ownGC := pace.cycles()
	cpu1 := cpuTime()
	srv1, srvErr1 := cpumeter.ProcCPU(o.serverPID)
	sch1, schErr1 := loadstat.ProcSched(o.serverPID)
	clientCPU := (cpu1 - cpu0).Seconds() / res.wall.Seconds()
	clientUS := 1e6 * (cpu1 - cpu0).Seconds() / float64(max(res.requests, 1))
	serverCPU, serverUS := -1.0, -1.0
	if o.serverPID > 0 && srvErr == nil && srvErr1 == nil {
		serverCPU = (srv1 - srv0).Seconds() / res.wall.Seconds()
		serverUS = 1e6 * (srv1 - srv0).Seconds() / float64(max(res.requests, 1))
	}
	// Context switches and read/write system calls per request: where a
	// rise in CPU per request at a moderate rate goes (docs/benchmarks.md,
	// "The tail at half the peak"); -1 when /proc could not be read.
	perReq := func(n uint64) float64 { return float64(n) / float64(max(res.requests, 1)) }
	srvSwitches, srvReads, srvWrites := -1.0, -1.0, -1.0
	if o.serverPID > 0 && schErr == nil && schErr1 == nil {
		d := sch1.Sub(sch0)
		srvSwitches, srvReads, srvWrites = perReq(d.Switches), perReq(d.Reads), perReq(d.Writes)
	}
	valid := res.failures == 0 && res.requests > 0 && ctx.Err() == nil
	mem := serverMemory(ctx, o.addr, admin, o.serverPID)
	if profDone != nil {
		if err := <-profDone; err != nil {
			fmt.Fprintln(stderr, "pactd-loadgen: server profile:", err)
		}
	}

	loop := "closed loop"
	if o.rate > 0 {
		loop = fmt.Sprintf("open loop at %.0f/s", o.rate)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }
	fmt.Fprintf(stdout, "mode=%s alg=%s protocol=%s http=%s codec=%s client=%s gzip=%v c=%d conns=%d %s for %s (GOMAXPROCS=%d)\n",
		o.mode, o.alg, o.protocol, o.httpVer, o.codec, o.client, o.gzip && o.client == "connect-go", o.workers, o.conns, loop, o.duration, runtime.GOMAXPROCS(0))
	fmt.Fprintf(stdout, "  requests %d in %.2fs = %.0f/s, failures %d\n", res.requests, res.wall.Seconds(), res.rps(), res.failures)
	fmt.Fprintf(stdout, "  latency ms: p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		ms(res.quantile(0.50)), ms(res.quantile(0.90)), ms(res.quantile(0.99)), ms(res.quantile(0.999)), ms(res.quantile(1)))
	if o.rate > 0 {
		fmt.Fprintf(stdout, "  send lag p99 %s ms; %d requests left > 1 ms late (all workers busy)\n", ms(res.lagP99), res.late)
	}
	fmt.Fprintf(stdout, "  cpu: loadgen %.0f%% of one core (%.1f µs/request)", 100*clientCPU, clientUS)
	if serverCPU >= 0 {
		fmt.Fprintf(stdout, ", pactd %.0f%% of one core (%.1f µs/request)", 100*serverCPU, serverUS)
	}
	if srvSwitches >= 0 {
		fmt.Fprintf(stdout, "; pactd per request: %.2f context switches, %.2f reads, %.2f writes", srvSwitches, srvReads, srvWrites)
	}
	fmt.Fprintf(stdout, "; JWKS fetches during the run: %d\n", pa.fetches.Load()-fetches0)
	fmt.Fprintf(stdout, "  loadgen's collector: %d cycles, %s\n", ownGC, pace)
	if o.mode == "new" && res.requests > int64(len(pool.authz)) {
		if len(pool.authz) > pactdCacheSize {
			fmt.Fprintf(stdout, "  note: the pool of %d was cycled; pactd's cache had evicted each token before its reuse\n", len(pool.authz))
		} else {
			fmt.Fprintf(stdout, "  WARNING: the pool of %d, not larger than pactd's %d-entry cache, was cycled: reused tokens were cache hits\n",
				len(pool.authz), pactdCacheSize)
		}
	}
	if mem.rssKB > 0 {
		fmt.Fprintf(stdout, "  pactd after the run: RSS %.1f MB, Go heap in use %.1f MB, repeat-token cache %d entries, ES256 tables %d (%.1f MB; %d built, %d evicted)\n",
			float64(mem.rssKB)/1024, float64(mem.heapInuse)/(1<<20), mem.cacheEntries, mem.es256Tables, float64(mem.es256Bytes)/(1<<20), mem.es256Builds, mem.es256Evictions)
	}
	gcCycles, gcPause, gcMark := mem.gcCycles-mem0.gcCycles, mem.gcPauseSum-mem0.gcPauseSum, mem.gcMarkCPU-mem0.gcMarkCPU
	if mem.gcCycles > 0 {
		fmt.Fprintf(stdout, "  pactd's collector during the run: %d cycles, %.3f ms stop-the-world in all, longest recent pause %.3f ms, mark phase CPU %.0f ms (%.1f ms per cycle)\n",
			gcCycles, 1e3*gcPause, 1e3*mem.gcPauseMax, 1e3*gcMark, 1e3*gcMark/float64(max(gcCycles, 1)))
	}
	if valid {
		fmt.Fprintln(stdout, "  VALID")
	} else {
		fmt.Fprintf(stdout, "  INVALID: %s\n", loadstat.FailSummary(res.failSet))
	}
	err = loadstat.WriteKV(o.out, [][2]string{
		{"mode", o.mode}, {"alg", o.alg}, {"protocol", o.protocol}, {"http", o.httpVer}, {"codec", o.codec}, {"client", o.client}, {"gzip", fmt.Sprint(o.gzip && o.client == "connect-go")},
		{"c", fmt.Sprint(o.workers)}, {"conns", fmt.Sprint(o.conns)},
		{"rate", fmt.Sprintf("%.0f", o.rate)}, {"seconds", fmt.Sprintf("%.3f", res.wall.Seconds())},
		{"requests", fmt.Sprint(res.requests)}, {"failures", fmt.Sprint(res.failures)},
		{"valid", fmt.Sprint(valid)}, {"rps", fmt.Sprintf("%.0f", res.rps())},
		{"p50_ms", ms(res.quantile(0.50))}, {"p90_ms", ms(res.quantile(0.90))},
		{"p99_ms", ms(res.quantile(0.99))}, {"p999_ms", ms(res.quantile(0.999))}, {"max_ms", ms(res.quantile(1))},
		{"lag_p99_ms", ms(res.lagP99)}, {"late", fmt.Sprint(res.late)},
		{"client_cpu", fmt.Sprintf("%.2f", clientCPU)}, {"server_cpu", fmt.Sprintf("%.2f", serverCPU)},
		{"client_us_per_req", fmt.Sprintf("%.1f", clientUS)}, {"server_us_per_req", fmt.Sprintf("%.1f", serverUS)},
		{"server_switches_per_req", fmt.Sprintf("%.2f", srvSwitches)},
		{"server_reads_per_req", fmt.Sprintf("%.2f", srvReads)}, {"server_writes_per_req", fmt.Sprintf("%.2f", srvWrites)},
		{"server_rss_kb", fmt.Sprint(mem.rssKB)}, {"server_heap_inuse", fmt.Sprint(mem.heapInuse)},
		{"server_cache_entries", fmt.Sprint(mem.cacheEntries)}, {"pa_keys", fmt.Sprint(o.paKeys)},
		{"server_es256_tables", fmt.Sprint(mem.es256Tables)}, {"server_es256_table_bytes", fmt.Sprint(mem.es256Bytes)},
		{"server_es256_builds", fmt.Sprint(mem.es256Builds)}, {"server_es256_evictions", fmt.Sprint(mem.es256Evictions)},
		{"server_gc_cycles", fmt.Sprint(gcCycles)}, {"server_gc_pause_ms", fmt.Sprintf("%.3f", 1e3*gcPause)},
		{"server_gc_pause_max_ms", fmt.Sprintf("%.3f", 1e3*mem.gcPauseMax)}, {"server_gc_mark_cpu_ms", fmt.Sprintf("%.1f", 1e3*gcMark)},
		{"client_gc_cycles", fmt.Sprint(ownGC)}, {"client_gogc", fmt.Sprint(pace.percent)},
	})
	return valid, err
}
