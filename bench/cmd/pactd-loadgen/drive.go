package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"pactd.dev/pactd/bench/internal/loadstat"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// verifyFunc sends one VerifyAgentRequest with the given Authorization
// value. It returns "" when the answer was allowed=true with status 200, and
// otherwise a short failure label (the RPC code or the deny reason).
type verifyFunc func(ctx context.Context, authz string) string

// h2cClient is an HTTP client speaking HTTP/2 without TLS (prior knowledge),
// with its own transport and so its own connection.
func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{
		Protocols:       p,
		TLSClientConfig: &tls.Config{},
	}}
}

// bearerClient adds a fixed Authorization header to every request.
type bearerClient struct {
	c     *http.Client
	value string
}

// Do sets the Authorization header and sends r.
func (b bearerClient) Do(r *http.Request) (*http.Response, error) {
	r.Header.Set("Authorization", b.value)
	return b.c.Do(r)
}

// newVerifiers returns conns independent verifiers: one HTTP/2 connection
// each. client is "connect-go" (protocol "grpc" or "connect") or "grpc-go"
// (protocol "grpc" only). gzip says whether connect-go advertises gzip for
// responses, as it does by default (grpc-go advertises nothing unless a
// compressor is registered, and this program registers none). The returned
// close function releases them.
// wire is how connect-go clients reach pactd: the HTTP version ("2" on
// h2c, or "1.1" with workers connections), and the codec ("proto" or
// "json", the Connect protocol's two).
type wire struct {
	http, codec string
	workers     int
}

func newVerifiers(base, client, protocol string, w wire, conns int, gzip bool, frontendToken, brand string) ([]verifyFunc, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	fns, err := buildVerifiers(base, client, protocol, w, conns, gzip, frontendToken, brand, &closers)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return fns, closeAll, nil
}

func buildVerifiers(base, client, protocol string, w wire, conns int, gzip bool, frontendToken, brand string, closers *[]func()) ([]verifyFunc, error) {
	var fns []verifyFunc
	for range conns {
		switch client {
		case "connect-go":
			var opts []connect.ClientOption
			switch protocol {
			case "grpc":
				opts = append(opts, connect.WithGRPC())
			case "connect":
			default:
				return nil, fmt.Errorf("unknown protocol %q", protocol)
			}
			if !gzip {
				opts = append(opts, connect.WithAcceptCompression("gzip", nil, nil))
			}
			if w.codec == "json" {
				opts = append(opts, connect.WithProtoJSON())
			}
			hc := h2cClient()
			if w.http == "1.1" {
				hc = loadstat.HTTP1Client(w.workers)
			}
			*closers = append(*closers, hc.CloseIdleConnections)
			vc := pactv1connect.NewVerificationServiceClient(bearerClient{hc, "Bearer " + frontendToken}, base, opts...)
			fns = append(fns, func(ctx context.Context, authz string) string {
				resp, err := vc.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: brand, Authorization: authz})
				return outcome(resp, err)
			})
		case "http1":
			if protocol != "connect" || w.http != "1.1" {
				return nil, errors.New("-client http1 speaks only -protocol connect -http 1.1")
			}
			hv, err := newHTTP1Verifier(base, w.codec, frontendToken, brand, w.workers)
			if err != nil {
				return nil, err
			}
			*closers = append(*closers, hv.close)
			fns = append(fns, hv.verify)
		case "h2grpc":
			if protocol != "grpc" || w.http != "2" || w.codec != "proto" {
				return nil, errors.New("-client h2grpc speaks only -protocol grpc over HTTP/2 with -codec proto")
			}
			hv, err := newH2GRPCVerifier(base, frontendToken, brand)
			if err != nil {
				return nil, err
			}
			*closers = append(*closers, hv.close)
			fns = append(fns, hv.verify)
		case "grpc-go":
			if protocol != "grpc" {
				return nil, errors.New("grpc-go speaks only -protocol grpc")
			}
			u, err := url.Parse(base)
			if err != nil {
				return nil, err
			}
			conn, err := grpc.NewClient("passthrough:///"+u.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return nil, err
			}
			*closers = append(*closers, func() { _ = conn.Close() })
			vc := pactv1.NewVerificationServiceClient(conn)
			md := metadata.Pairs("authorization", "Bearer "+frontendToken)
			fns = append(fns, func(ctx context.Context, authz string) string {
				resp, err := vc.VerifyAgentRequest(metadata.NewOutgoingContext(ctx, md),
					&pactv1.VerifyAgentRequestRequest{BrandId: brand, Authorization: authz})
				return outcome(resp, err)
			})
		default:
			return nil, fmt.Errorf("unknown client %q", client)
		}
	}
	return fns, nil
}

// floorAuthorization is the -mode floor Authorization value: a bearer value
// that is not a compact JWS, refused before any JOSE work.
const floorAuthorization = "Bearer floor"

// floorRefusal is the outcome label of the refusal -mode floor expects.
const floorRefusal = "denied 401 DENY_REASON_MALFORMED"

// expectFloorRefusal turns f into a -mode floor check: the refusal is the
// expected answer (""), anything else, an allow included, a failure.
func expectFloorRefusal(f verifyFunc) verifyFunc {
	return func(ctx context.Context, authz string) string {
		switch got := f(ctx, authz); got {
		case floorRefusal:
			return ""
		case "":
			return "allowed (a floor request must be refused)"
		default:
			return got
		}
	}
}

// expectMixed turns f into a -mode mixed check: the floor value must be
// refused as -mode floor expects, every token allowed.
func expectMixed(f verifyFunc) verifyFunc {
	floor := expectFloorRefusal(f)
	return func(ctx context.Context, authz string) string {
		if authz == floorAuthorization {
			return floor(ctx, authz)
		}
		return f(ctx, authz)
	}
}

// outcome labels one answer: "" for allowed with status 200.
func outcome(resp *pactv1.VerifyAgentRequestResponse, err error) string {
	switch {
	case err != nil:
		var ce *connect.Error
		if errors.As(err, &ce) {
			return "rpc " + ce.Code().String() + ": " + ce.Message()
		}
		return "rpc " + err.Error()
	case !resp.GetAllowed() || resp.GetHttpStatus() != 200:
		return fmt.Sprintf("denied %d %s", resp.GetHttpStatus(), resp.GetReason())
	}
	return ""
}

// loadSpec describes one measured run.
type loadSpec struct {
	workers  int           // concurrent workers (closed loop: also in flight)
	duration time.Duration // how long to send
	maxReqs  int64         // stop after this many requests (0: no count limit)
	rate     float64       // open loop: intended requests/s; 0 is closed loop
	grace    time.Duration // how long in-flight requests may take after duration
}

// loadResult is what a run measured.
type loadResult struct {
	requests int64
	failures int64
	failSet  map[string]int64
	wall     time.Duration
	lat      []int64 // sorted latencies, ns
	lagP99   time.Duration
	late     int64 // open loop: requests sent more than 1 ms after their intended time
}

func (r *loadResult) rps() float64 { return float64(r.requests) / r.wall.Seconds() }

// quantile returns the q-quantile of the latencies (nearest rank).
func (r *loadResult) quantile(q float64) time.Duration {
	return time.Duration(loadstat.Quantile(r.lat, q))
}

// workerStats is one worker's private record, merged at the end.
type workerStats struct {
	lat   []int64
	lag   []int64
	fails map[string]int64
	late  int64
}

// drive runs spec against fns with tokens taken from toks in order, cycling.
//
// Closed loop: each worker sends its next request as soon as the previous
// one returns, until the duration ends; latency is the call's own duration.
// Open loop: request i is due at start + i/rate whatever happened before; a
// free worker waits for its due time. Latency is measured from the due time
// when the request left late because every worker was busy (so server-side
// queueing is not hidden: no coordinated omission), and from the actual send
// when a worker slept until it was due (timer slack is the load generator's,
// not the server's).
func drive(ctx context.Context, spec loadSpec, fns []verifyFunc, toks []string) *loadResult {
	ctx, cancel := context.WithTimeout(ctx, spec.duration+spec.grace)
	defer cancel()
	var next atomic.Int64
	total := spec.maxReqs
	var interval float64
	if spec.rate > 0 {
		interval = float64(time.Second) / spec.rate
		if n := int64(spec.rate * spec.duration.Seconds()); total == 0 || n < total {
			total = n
		}
	}
	stats := make([]workerStats, spec.workers)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(spec.duration)
	for w := range spec.workers {
		call := fns[w%len(fns)]
		st := &stats[w]
		st.fails = map[string]int64{}
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if total > 0 && i >= total {
					return
				}
				tok := toks[i%int64(len(toks))]
				var from time.Time
				if spec.rate > 0 {
					due := start.Add(time.Duration(float64(i) * interval))
					now := time.Now()
					if wait := due.Sub(now); wait > 0 {
						timer := time.NewTimer(wait)
						select {
						case <-ctx.Done():
							timer.Stop()
							return
						case <-timer.C:
						}
						from = time.Now()
					} else {
						from = due
						if -wait > time.Millisecond {
							st.late++
						}
					}
					st.lag = append(st.lag, int64(time.Since(due)))
				} else {
					from = time.Now()
					if !from.Before(deadline) {
						return
					}
				}
				if f := call(ctx, tok); f != "" {
					st.fails[f]++
				}
				st.lat = append(st.lat, int64(time.Since(from)))
			}
		})
	}
	wg.Wait()
	r := &loadResult{wall: time.Since(start), failSet: map[string]int64{}}
	var lags []int64
	for i := range stats {
		r.lat = append(r.lat, stats[i].lat...)
		lags = append(lags, stats[i].lag...)
		r.late += stats[i].late
		for k, v := range stats[i].fails {
			r.failSet[k] += v
			r.failures += v
		}
	}
	if spec.rate > 0 && total > 0 && int64(len(r.lat)) < total {
		// The hard deadline cut the run short: the unsent are failures.
		r.failSet["not sent before the deadline"] += total - int64(len(r.lat))
		r.failures += total - int64(len(r.lat))
	}
	r.requests = int64(len(r.lat))
	slices.Sort(r.lat)
	if len(lags) > 0 {
		slices.Sort(lags)
		r.lagP99 = time.Duration(lags[int(math.Ceil(0.99*float64(len(lags))))-1])
	}
	return r
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
