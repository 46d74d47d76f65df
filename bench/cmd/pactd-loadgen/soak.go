package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// Bounds of the -mix runs.
const (
	// maxSoak is the longest run: a day-long soak.
	maxSoak = 24 * time.Hour
	// maxIntervals bounds the per-interval records (a 24-hour run at 1 s).
	maxIntervals = 86_400
	maxGrants    = 1000
	maxRepeat    = 65_536
	// repeatRefresh is how often the repeated tokens are minted again, so
	// they stay far from their 300 s lifetime in a soak.
	repeatRefresh = 60 * time.Second
	// grantScope is the scope the load-test grants hold.
	grantScope = "loadgen:read"
	// deviceGrantType is RFC 8628's grant type.
	deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"
)

// stagingRun is one -mix run's clients and state.
type stagingRun struct {
	o     options
	pa    *testPA
	s     *signer
	aud   string
	conns []stagingConn
	sched []string

	seq    atomic.Int64 // makes every minted token's jti unique
	next   atomic.Int64 // closed loop: the next request's index
	minted atomic.Int64
	mintNs atomic.Int64
	repeat atomic.Pointer[[]string]
	grants []*grantSlot
	grantQ chan int // the grants not being refreshed right now
}

// stagingConn is one HTTP connection's clients.
type stagingConn struct {
	verify pactv1connect.VerificationServiceClient
	deleg  pactv1connect.DelegationServiceClient
	token  pactv1connect.TokenServiceClient
}

// grantSlot is one delegation grant of a load-test user: its current
// tokens, rotated by refresh.
type grantSlot struct {
	user string
	mu   sync.RWMutex
	// access and refresh are the current tokens; expires the access token's.
	access, refresh string
	expires         time.Time
}

func (g *grantSlot) accessToken() string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.access
}

// mint signs a fresh PA token for sub (iat now, 300 s lifetime), counting
// its cost.
func (r *stagingRun) mint(sub string) string {
	t0 := time.Now()
	n := r.seq.Add(1)
	tok, err := r.s.sign(claims(r.pa.issuer, r.aud, sub, fmt.Sprintf("j%x", n), t0))
	r.mintNs.Add(int64(time.Since(t0)))
	r.minted.Add(1)
	if err != nil {
		return ""
	}
	return "Bearer " + tok
}

func (r *stagingRun) mintRepeat() {
	toks := make([]string, r.o.repeatTokens)
	for i := range toks {
		toks[i] = r.mint(fmt.Sprintf("repeat-%d", i))
	}
	r.repeat.Store(&toks)
}

// prepare mints what request i of kind needs (before its clock starts) and
// returns the call, which answers "" for the expected outcome.
func (r *stagingRun) prepare(kind string, i int64, c stagingConn) func(context.Context) string {
	brand := r.o.brand
	switch kind {
	case kindNew:
		authz := r.mint(fmt.Sprintf("new-%d", i))
		return func(ctx context.Context) string {
			resp, err := c.verify.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: brand, Authorization: authz})
			return outcome(resp, err)
		}
	case kindRepeat:
		toks := *r.repeat.Load()
		authz := toks[i%int64(len(toks))]
		return func(ctx context.Context) string {
			resp, err := c.verify.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: brand, Authorization: authz})
			return outcome(resp, err)
		}
	case kindFloor:
		return func(ctx context.Context) string {
			resp, err := c.verify.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: brand, Authorization: floorAuthorization})
			if got := outcome(resp, err); got != floorRefusal {
				if got == "" {
					return "allowed (a floor request must be refused)"
				}
				return got
			}
			return ""
		}
	case kindDelegated:
		g := r.grants[i%int64(len(r.grants))]
		authz, deleg := r.mint(g.user), "Bearer "+g.accessToken()
		return func(ctx context.Context) string {
			resp, err := c.verify.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: brand, Authorization: authz, UserDelegation: deleg})
			if f := outcome(resp, err); f != "" {
				return f
			}
			if resp.GetDelegation() == nil {
				return "allowed without the delegation"
			}
			return ""
		}
	case kindIntrospect:
		tok := r.grants[i%int64(len(r.grants))].accessToken()
		return func(ctx context.Context) string {
			resp, err := c.token.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: tok, BrandId: brand})
			switch {
			case err != nil:
				return rpcLabel(err)
			case !resp.GetActive():
				return "inactive"
			}
			return ""
		}
	case kindRefresh:
		return func(ctx context.Context) string {
			var slot int
			select {
			case slot = <-r.grantQ:
			case <-ctx.Done():
				return "rpc " + connect.CodeOf(ctx.Err()).String()
			}
			defer func() { r.grantQ <- slot }()
			return r.refreshGrant(ctx, c, r.grants[slot])
		}
	case kindDevice:
		authz := r.mint(fmt.Sprintf("device-%d", i))
		return func(ctx context.Context) string {
			resp, err := c.deleg.StartDeviceAuthorization(ctx, &pactv1.StartDeviceAuthorizationRequest{BrandId: brand, Authorization: authz,
				ClientId: r.pa.issuer, Scope: grantScope})
			switch {
			case err != nil:
				return rpcLabel(err)
			case resp.GetError() != nil:
				return "oauth " + resp.GetError().GetError()
			case resp.GetDeviceCode() == "":
				return "no device code"
			}
			return ""
		}
	}
	return func(context.Context) string { return "unknown kind " + kind }
}

// rpcLabel labels an RPC error by its code.
func rpcLabel(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return "rpc " + ce.Code().String()
	}
	return "rpc " + err.Error()
}

// refreshGrant redeems g's refresh token (the caller holds g exclusively)
// and keeps the new tokens.
func (r *stagingRun) refreshGrant(ctx context.Context, c stagingConn, g *grantSlot) string {
	g.mu.RLock()
	rt := g.refresh
	g.mu.RUnlock()
	resp, err := c.deleg.IssueDelegation(ctx, &pactv1.IssueDelegationRequest{BrandId: r.o.brand, Authorization: r.mint(g.user),
		ClientId: r.pa.issuer, GrantType: "refresh_token", RefreshToken: rt})
	switch {
	case err != nil:
		return rpcLabel(err)
	case resp.GetError() != nil:
		return "oauth " + resp.GetError().GetError()
	case resp.GetAccessToken() == "":
		return "no access token"
	}
	g.mu.Lock()
	g.access, g.expires = resp.GetAccessToken(), time.Now().Add(time.Duration(resp.GetExpiresIn())*time.Second)
	if resp.GetRefreshToken() != "" {
		g.refresh = resp.GetRefreshToken()
	}
	g.mu.Unlock()
	return ""
}

// setupGrants runs the device grant for each load-test user through the
// RPCs, as a trusted frontend does: the PA asks, the User approves, the PA
// redeems the device code.
func (r *stagingRun) setupGrants(ctx context.Context) error {
	c := r.conns[0]
	for i := range r.o.grants {
		user := fmt.Sprintf("loadgen-user-%d", i)
		dev, err := c.deleg.StartDeviceAuthorization(ctx, &pactv1.StartDeviceAuthorizationRequest{BrandId: r.o.brand, Authorization: r.mint(user),
			ClientId: r.pa.issuer, Scope: grantScope})
		if err != nil {
			return fmt.Errorf("grant %d: StartDeviceAuthorization: %w", i, err)
		}
		if dev.GetError() != nil {
			return fmt.Errorf("grant %d: device authorization refused: %s (does Brand %q have delegation on, with scope %s and trusted-frontend login?)",
				i, dev.GetError().GetError(), r.o.brand, grantScope)
		}
		if _, err := c.deleg.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: r.o.brand, UserCode: dev.GetUserCode(), BrandUser: user,
			Scopes: []string{grantScope}}); err != nil {
			return fmt.Errorf("grant %d: ApproveConsent: %w", i, err)
		}
		tok, err := c.deleg.IssueDelegation(ctx, &pactv1.IssueDelegationRequest{BrandId: r.o.brand, Authorization: r.mint(user), ClientId: r.pa.issuer,
			GrantType: deviceGrantType, DeviceCode: dev.GetDeviceCode()})
		if err != nil {
			return fmt.Errorf("grant %d: IssueDelegation: %w", i, err)
		}
		if tok.GetAccessToken() == "" {
			return fmt.Errorf("grant %d: token endpoint: %v", i, tok.GetError())
		}
		r.grants = append(r.grants, &grantSlot{user: user, access: tok.GetAccessToken(), refresh: tok.GetRefreshToken(),
			expires: time.Now().Add(time.Duration(tok.GetExpiresIn()) * time.Second)})
	}
	r.grantQ = make(chan int, len(r.grants))
	for i := range r.grants {
		r.grantQ <- i
	}
	return nil
}

// keepGrantsFresh refreshes, unmeasured, every grant whose access token
// ends within two minutes, so a soak longer than the token's lifetime keeps
// sending live delegation tokens whatever the mix.
func (r *stagingRun) keepGrantsFresh(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Take every grant in turn (a refresh request may hold one), and
		// refresh those whose access token ends soon.
		for range r.grants {
			var slot int
			select {
			case slot = <-r.grantQ:
			case <-ctx.Done():
				return
			}
			g := r.grants[slot]
			g.mu.RLock()
			soon := time.Until(g.expires) < 2*time.Minute
			g.mu.RUnlock()
			if soon {
				cctx, cancel := context.WithTimeout(ctx, r.o.timeout)
				_ = r.refreshGrant(cctx, r.conns[0], g)
				cancel()
			}
			r.grantQ <- slot
		}
	}
}

// job is one open-loop request: its index and the time it is due.
type job struct {
	i   int64
	due time.Time
}

// runResult is what the driver measured besides the recorder.
type runResult struct {
	wall      time.Duration
	late      int64
	lag       hist
	unsent    int64
	cpuClient time.Duration
}

// driveMix sends the mix for the run's duration: closed loop with -c
// workers, or open loop on the rate shape with latency from each request's
// due time (no coordinated omission).
func (r *stagingRun) driveMix(ctx context.Context, rec *recorder) *runResult {
	o := r.o
	hard, cancel := context.WithTimeout(ctx, o.duration+o.timeout)
	defer cancel()
	res := &runResult{}
	var lagMu sync.Mutex
	start := rec.start
	deadline := start.Add(o.duration)
	jobs := make(chan job, o.workers)
	open := !o.shape.closed()
	if open {
		go func() {
			defer close(jobs)
			t := time.Duration(0)
			for i := int64(0); t < o.duration; i++ {
				if o.maxReqs > 0 && i >= o.maxReqs {
					return
				}
				select {
				case jobs <- job{i, start.Add(t)}:
				case <-hard.Done():
					return
				}
				t += time.Duration(float64(time.Second) / o.shape.at(t))
			}
		}()
	}
	flushDone := make(chan struct{})
	go func() {
		defer close(flushDone)
		tk := time.NewTicker(o.interval)
		defer tk.Stop()
		for {
			select {
			case <-hard.Done():
				return
			case now := <-tk.C:
				rec.flush(now, o.timeout+o.interval, false, r.rateAt)
			}
		}
	}()
	cpu0 := cpuTime()
	var wg sync.WaitGroup
	for w := range o.workers {
		c := r.conns[w%len(r.conns)]
		wg.Go(func() {
			var late int64
			var lag hist
			defer func() {
				lagMu.Lock()
				res.late += late
				res.lag.merge(&lag)
				lagMu.Unlock()
			}()
			for hard.Err() == nil {
				var i int64
				var due time.Time
				if open {
					j, ok := <-jobs
					if !ok {
						return
					}
					i, due = j.i, j.due
				} else {
					i = r.next.Add(1) - 1
					if o.maxReqs > 0 && i >= o.maxReqs {
						return
					}
				}
				kind := r.sched[i%int64(len(r.sched))]
				call := r.prepare(kind, i, c)
				var from time.Time
				if open {
					if wait := time.Until(due); wait > 0 {
						tm := time.NewTimer(wait)
						select {
						case <-hard.Done():
							tm.Stop()
							rec.fail(kind, "not sent before the deadline")
							return
						case <-tm.C:
						}
						from = time.Now()
					} else {
						from = due
						if -wait > time.Millisecond {
							late++
						}
					}
					lag.add(int64(time.Since(due)))
				} else {
					from = time.Now()
					if !from.Before(deadline) {
						return
					}
				}
				cctx, ccancel := context.WithTimeout(hard, o.timeout)
				f := call(cctx)
				ccancel()
				if hard.Err() != nil && f != "" {
					rec.fail(kind, "not answered before the deadline")
					continue
				}
				rec.record(kind, from, time.Since(from), f)
			}
		})
	}
	wg.Wait()
	res.wall = time.Since(start)
	res.cpuClient = cpuTime() - cpu0
	cancel()
	<-flushDone
	if open {
		for j := range jobs { // due but never sent
			rec.fail(r.sched[j.i%int64(len(r.sched))], "not sent before the deadline")
			res.unsent++
		}
	}
	rec.flush(time.Now(), 0, true, r.rateAt)
	return res
}

// rateAt is the target rate at t (0 in closed loop).
func (r *stagingRun) rateAt(t time.Duration) float64 {
	if r.o.shape.closed() {
		return 0
	}
	return r.o.shape.at(t)
}

// newStagingConns builds -conns connections' clients to pactd.
func newStagingConns(o options, frontend string) ([]stagingConn, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	target := o.addr
	if o.verify != "" {
		target = o.verify
	}
	var out []stagingConn
	for range o.conns {
		var opts []connect.ClientOption
		if o.protocol == "grpc" {
			opts = append(opts, connect.WithGRPC())
		}
		if o.codec == "json" {
			opts = append(opts, connect.WithProtoJSON())
		}
		if !o.gzip {
			opts = append(opts, connect.WithAcceptCompression("gzip", nil, nil))
		}
		mk := func(base string) (connect.HTTPClient, error) {
			hc, err := httpClient(base, o.tls, o.httpVer == "1.1", o.workers)
			if err != nil {
				return nil, err
			}
			closers = append(closers, hc.CloseIdleConnections)
			return bearerClient{hc, "Bearer " + frontend}, nil
		}
		vh, err := mk(target)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		mh, err := mk(o.addr)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		out = append(out, stagingConn{
			verify: pactv1connect.NewVerificationServiceClient(vh, target, opts...),
			deleg:  pactv1connect.NewDelegationServiceClient(mh, o.addr, opts...),
			token:  pactv1connect.NewTokenServiceClient(mh, o.addr, opts...),
		})
	}
	return out, closeAll, nil
}

// setupStagingWorld registers the PA and makes sure the Brand exists with
// delegation on (trusted-frontend login, scope loadgen:read), with the
// admin credential. It returns the audience pactd assigned to the agent.
func setupStagingWorld(ctx context.Context, o options, admin string, pa *testPA) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	hc, err := httpClient(o.addr, o.tls, false, 1)
	if err != nil {
		return "", err
	}
	defer hc.CloseIdleConnections()
	c := bearerClient{hc, "Bearer " + admin}
	reg, err := pactv1connect.NewAgentServiceClient(c, o.addr).RegisterAgent(ctx, &pactv1.RegisterAgentRequest{
		Issuer: pa.issuer, JwksUri: pa.jwksURI, DisplayName: paDisplayName,
	})
	if err != nil {
		return "", fmt.Errorf("RegisterAgent %s: %w", pa.issuer, err)
	}
	if !reg.GetAgent().GetEnabled() {
		return "", fmt.Errorf("agent %s is disabled", reg.GetAgent().GetId())
	}
	bc := pactv1connect.NewBrandServiceClient(c, o.addr)
	_, err = bc.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: o.brand})
	if connect.CodeOf(err) == connect.CodeNotFound {
		_, err = bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{
			BrandId: o.brand, DisplayName: "Load test Brand", Description: "Brand used by pactd-loadgen",
			Delegation: &pactv1.DelegationSettings{Enabled: true, LoginUrl: "https://login.loadgen.example",
				LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND,
				Scopes:    []*pactv1.Scope{{Id: grantScope, Description: "Load-test grant"}}},
		})
		if connect.CodeOf(err) == connect.CodeAlreadyExists {
			err = nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("brand %q: %w", o.brand, err)
	}
	return reg.GetAgent().GetAudience(), nil
}

// stagingCmd is a -mix run. It returns whether the run was valid (no more
// failures than -max-errors).
func stagingCmd(ctx context.Context, o options, stdout, stderr io.Writer) (bool, error) {
	frontend := os.Getenv("PACT_FRONTEND_TOKEN")
	if frontend == "" {
		return false, errors.New("PACT_FRONTEND_TOKEN (a frontend credential) must be set")
	}
	pa, err := o.startPA()
	if err != nil {
		return false, err
	}
	defer pa.Close()
	aud := o.audience
	switch o.register {
	case "auto":
		admin := os.Getenv("PACT_ADMIN_TOKEN")
		if admin == "" {
			return false, errors.New("-register auto needs PACT_ADMIN_TOKEN (or use -register print, and -register skip -audience once registered)")
		}
		if aud, err = setupStagingWorld(ctx, o, admin, pa); err != nil {
			return false, err
		}
	case "print":
		fmt.Fprintln(stdout, registerCommand(o.addr, pa.issuer, pa.jwksURI, o.tls))
		return true, nil
	}
	s, err := pa.signer(o.alg)
	if err != nil {
		return false, err
	}
	mix, _ := parseMix(o.mixSpec)
	r := &stagingRun{o: o, pa: pa, s: s, aud: aud, sched: schedule(mix)}
	conns, closeConns, err := newStagingConns(o, frontend)
	if err != nil {
		return false, err
	}
	defer closeConns()
	r.conns = conns
	r.mintRepeat()
	// One call first, so a misconfiguration shows its reason plainly.
	pctx, pcancel := context.WithTimeout(ctx, 15*time.Second)
	f := r.prepare(kindNew, -1, conns[0])(pctx)
	pcancel()
	if f != "" {
		return false, fmt.Errorf("first VerifyAgentRequest failed: %s (is the PA registered with this audience, and can pactd fetch %s?)", f, pa.jwksURI)
	}
	if needsGrants(mix) {
		gctx, gcancel := context.WithTimeout(ctx, 60*time.Second)
		err := r.setupGrants(gctx)
		gcancel()
		if err != nil {
			return false, err
		}
	}
	runCtx, stopBG := context.WithCancel(ctx)
	defer stopBG()
	go func() {
		t := time.NewTicker(repeatRefresh)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				r.mintRepeat()
			}
		}
	}()
	if needsGrants(mix) {
		go r.keepGrantsFresh(runCtx)
	}
	fetches0 := pa.fetches.Load()
	minted0, mintNs0 := r.minted.Load(), r.mintNs.Load()
	started := time.Now()
	rec := newRecorder(started, o.interval)
	res := r.driveMix(ctx, rec)
	stopBG()
	sum := r.summarize(rec, res, started, mix, r.minted.Load()-minted0, time.Duration(r.mintNs.Load()-mintNs0), pa.fetches.Load()-fetches0)
	sum.Valid = sum.Errors <= o.maxErrors && sum.Requests > 0 && ctx.Err() == nil
	printSummary(stdout, sum)
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, sum); err != nil {
			return false, err
		}
	}
	if o.htmlOut != "" {
		if err := writeHTML(o.htmlOut, sum); err != nil {
			return false, err
		}
	}
	return sum.Valid, nil
}

// summarize builds the run's summary.
func (r *stagingRun) summarize(rec *recorder, res *runResult, started time.Time, mix []mixEntry, minted int64, mintTime time.Duration, fetches int64) *summary {
	o := r.o
	s := &summary{
		Tool: "pactd-loadgen", Target: o.addr, VerifyTarget: cmpOr(o.verify, o.addr), Protocol: o.protocol, Codec: o.codec, HTTP: o.httpVer,
		Workers: o.workers, Conns: o.conns, Started: started.UTC().Format(time.RFC3339), DurationS: o.duration.Seconds(),
		IntervalS: o.interval.Seconds(), WallS: res.wall.Seconds(), GOMAXPROCS: runtime.GOMAXPROCS(0), LoadAverage: loadAverage(),
		Mix: map[string]int{}, JWKSFetches: fetches, Brand: o.brand, Issuer: r.pa.issuer,
	}
	for _, m := range mix {
		s.Mix[m.kind] = m.weight
		s.MixOrder = append(s.MixOrder, m.kind)
	}
	if o.shape.closed() {
		s.Loop = "closed"
	} else {
		s.Loop = "open"
		s.RateShape = o.rateDesc()
	}
	rec.mu.Lock()
	s.Requests = int64(rec.total.n)
	s.Latency = rec.total.summary()
	s.ByKind = map[string]kindSummary{}
	for k, ks := range rec.kinds {
		s.ByKind[k] = kindSummary{Requests: int64(ks.h.n), Errors: ks.errors, latencySummary: ks.h.summary()}
	}
	rec.mu.Unlock()
	s.Failures = rec.failLabels()
	for _, f := range s.Failures {
		s.Errors += f.Count
	}
	s.Throughput = float64(s.Requests) / res.wall.Seconds()
	s.Intervals = rec.intervals(r.rateAt)
	s.Late = res.late
	s.SendLagP99 = msRound(res.lag.quantile(0.99))
	s.Mint.Tokens = minted
	if minted > 0 {
		us := float64(mintTime.Microseconds()) / float64(minted)
		s.Mint.MicrosPerToken = float64(int(us*10)) / 10
		if us > 0 {
			s.Mint.CeilingPerS = float64(int(1e6 / us * float64(runtime.GOMAXPROCS(0))))
		}
		s.Mint.PerSecond = float64(minted) / res.wall.Seconds()
		s.Mint.Share = float64(int(1000*s.Mint.PerSecond/max(s.Mint.CeilingPerS, 1))) / 1000
	}
	s.ClientCPU = float64(int(100*res.cpuClient.Seconds()/res.wall.Seconds())) / 100
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// loadAverage is /proc/loadavg's first three fields ("" elsewhere), for
// reading figures taken on a shared machine.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// printSummary writes the run for a person.
func printSummary(w io.Writer, s *summary) {
	loop := "closed loop"
	if s.Loop == "open" {
		loop = "open loop " + s.RateShape
	}
	fmt.Fprintf(w, "pactd-loadgen -mix %s, %s, %d workers, %s %s/%s HTTP %s, %.0fs (GOMAXPROCS=%d, load average %s)\n",
		s.mixString(), loop, s.Workers, s.VerifyTarget, s.Protocol, s.Codec, s.HTTP, s.DurationS, s.GOMAXPROCS, s.LoadAverage)
	fmt.Fprintf(w, "  requests %d in %.2fs = %.0f/s, errors %d\n", s.Requests, s.WallS, s.Throughput, s.Errors)
	fmt.Fprintf(w, "  latency ms (from each request's due time): p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
		s.Latency.P50, s.Latency.P90, s.Latency.P99, s.Latency.P999, s.Latency.Max)
	for _, k := range allKinds {
		if ks, ok := s.ByKind[k]; ok {
			fmt.Fprintf(w, "    %-10s %8d req %6d err  p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n", k, ks.Requests, ks.Errors, ks.P50, ks.P99, ks.P999, ks.Max)
		}
	}
	if s.Loop == "open" {
		fmt.Fprintf(w, "  send lag p99 %.3f ms; %d requests left > 1 ms late (all workers busy or minting)\n", s.SendLagP99, s.Late)
	}
	fmt.Fprintf(w, "  minting: %d tokens, %.1f µs each, ceiling %.0f/s on %d threads (%.0f%% used); loadgen CPU %.0f%% of one core\n",
		s.Mint.Tokens, s.Mint.MicrosPerToken, s.Mint.CeilingPerS, s.GOMAXPROCS, 100*s.Mint.Share, 100*s.ClientCPU)
	if s.Mint.Share > 0.5 {
		fmt.Fprintln(w, "  WARNING: minting uses more than half of the tool's ceiling: it may limit the run; give the tool more cores")
	}
	for _, f := range s.Failures {
		fmt.Fprintf(w, "  error %6d × %s\n", f.Count, f.Label)
	}
	if s.Valid {
		fmt.Fprintln(w, "  VALID")
	} else {
		fmt.Fprintln(w, "  INVALID")
	}
}

// kinds of summary keys in the order the mix named them.
func (s *summary) mixString() string {
	parts := make([]string, 0, len(s.MixOrder))
	for _, k := range s.MixOrder {
		parts = append(parts, fmt.Sprintf("%s=%d", k, s.Mix[k]))
	}
	return strings.Join(parts, ",")
}
