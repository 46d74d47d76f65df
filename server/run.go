package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/apidesc"
	"pactd.dev/pactd/server/buildinfo"
	"pactd.dev/pactd/server/config"
)

// Run serves every port and runs the background loops until ctx ends, then
// shuts the ports down gracefully within the configured timeout, stops the
// loops, and releases everything Build acquired (Close). A server runs
// once.
func (s *Server) Run(ctx context.Context) error {
	return errors.Join(s.serve(ctx), s.Close())
}

// port is one listener and the server on it; Run treats every port alike.
type port struct {
	ln net.Listener
	// serve serves on ln until shutdown or close.
	serve func(net.Listener) error
	// shutdown stops accepting and waits for the calls in flight, until
	// ctx ends.
	shutdown func(ctx context.Context) error
	// close stops at once.
	close func()
}

// httpPort serves srv on ln, over TLS when the server has a certificate.
func (s *Server) httpPort(ln net.Listener, srv *http.Server) port {
	srv.TLSConfig = s.tls
	serve := srv.Serve
	if s.tls != nil {
		serve = func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }
	}
	return port{ln: ln, serve: serve, shutdown: srv.Shutdown, close: func() { _ = srv.Close() }}
}

// grpcPort serves g on ln (its TLS is a server option).
func grpcPort(ln net.Listener, g *grpc.Server) port {
	return port{ln: ln, serve: g.Serve, close: g.Stop, shutdown: func(ctx context.Context) error {
		stopped := make(chan struct{})
		go func() { g.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
			return nil
		case <-ctx.Done():
			g.Stop()
			return nil
		}
	}}
}

// bind returns *ln, listening on addr first when the caller gave none; a
// listener it binds goes on the cleanup path.
func (s *Server) bind(ln *net.Listener, addr, what string) (net.Listener, error) {
	if *ln == nil {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen for %s: %w", what, err)
		}
		s.cleanup.push(what+" listener", closeListener(l))
		*ln = l
	}
	return *ln, nil
}

// ports binds what the caller did not and returns every port the
// configuration turns on, the API port first.
func (s *Server) ports() ([]port, error) {
	ln, err := s.bind(&s.listeners.API, s.cfg.Listen, "the API")
	if err != nil {
		return nil, err
	}
	ports := []port{s.httpPort(ln, &http.Server{
		Handler:           s.handler,
		Protocols:         apiProtocols(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    apidesc.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	})}
	if s.grpc != nil {
		gln, err := s.bind(&s.listeners.GRPC, s.cfg.GRPCListen, "native gRPC")
		if err != nil {
			return nil, err
		}
		ports = append(ports, grpcPort(gln, s.grpc))
		s.log.Info("pactd serving native gRPC", slog.String("addr", gln.Addr().String()))
	}
	if s.cfg.MetricsListen != "" {
		mln, err := s.bind(&s.listeners.Metrics, s.cfg.MetricsListen, "metrics")
		if err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.metrics)
		// Plain HTTP: a separate metrics port is for a trusted network.
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		ports = append(ports, port{ln: mln, serve: msrv.Serve, shutdown: msrv.Shutdown, close: func() { _ = msrv.Close() }})
	}
	if s.console != nil {
		cln, err := s.bind(&s.listeners.Console, s.cfg.ConsoleListen, "the console")
		if err != nil {
			return nil, err
		}
		ports = append(ports, s.httpPort(cln, &http.Server{Handler: s.console,
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
			MaxHeaderBytes: 16 << 10, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}))
		s.log.Info("pactd serving the console", slog.String("addr", cln.Addr().String()), slog.Bool("tls", s.tls != nil))
	}
	return ports, nil
}

// apiProtocols are the API port's: HTTP/1.1, HTTP/2 over TLS, and h2c.
func apiProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	p.SetHTTP2(true)
	return p
}

// serve is Run without the final Close.
func (s *Server) serve(ctx context.Context) error {
	ports, err := s.ports()
	if err != nil {
		return err
	}
	errc := make(chan error, len(ports))
	for _, p := range ports {
		go func() { errc <- p.serve(p.ln) }()
	}
	loopCtx, stopLoops := context.WithCancel(ctx)
	defer stopLoops()
	loops := startLoops(loopCtx, s.loops)
	grpcAddr := config.Off // logged beside the main address, so one line says where to point each client
	if s.listeners.GRPC != nil {
		grpcAddr = s.listeners.GRPC.Addr().String()
	}
	s.log.Info("pactd serving", slog.String("addr", s.listeners.API.Addr().String()), slog.String("grpc_addr", grpcAddr),
		slog.String("store", s.store.Engine()), slog.Bool("tls", s.tls != nil), slog.Bool("dev", s.cfg.Dev))
	select {
	case err := <-errc:
		for _, p := range ports {
			p.close()
		}
		stopLoops()
		loops.wait(context.Background())
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("pactd shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	for _, p := range ports {
		if err := p.shutdown(sctx); err != nil {
			errs = append(errs, err)
		}
	}
	// The loops stop after the ports, so calls in flight keep their caches
	// fed; the store closes after the loops.
	stopLoops()
	if running := loops.wait(sctx); len(running) > 0 {
		s.log.Warn("background loops still running at the end of the shutdown timeout", slog.Any("loops", running))
	}
	return errors.Join(errs...)
}

// loop is background work Run starts beside the ports: run returns soon
// after ctx ends.
type loop struct {
	name string
	run  func(ctx context.Context)
}

// runningLoops are the loops Run started.
type runningLoops struct {
	mu      sync.Mutex
	running map[string]int // by name, the loops not yet returned
	left    int
	done    chan struct{} // closed when the last loop returns
}

// startLoops starts each loop on ctx.
func startLoops(ctx context.Context, loops []loop) *runningLoops {
	r := &runningLoops{running: map[string]int{}, left: len(loops), done: make(chan struct{})}
	for _, l := range loops {
		r.running[l.name]++
	}
	if len(loops) == 0 {
		close(r.done)
	}
	for _, l := range loops {
		go func() {
			l.run(ctx)
			r.returned(l.name)
		}()
	}
	return r
}

// returned records that a loop returned.
func (r *runningLoops) returned(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[name]--; r.running[name] == 0 {
		delete(r.running, name)
	}
	if r.left--; r.left == 0 {
		close(r.done)
	}
}

// wait waits for the loops to return, until ctx ends, and returns the
// names of those still running.
func (r *runningLoops) wait(ctx context.Context) []string {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.running))
	for n := range r.running {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// purger deletes one kind of expired state and returns how many rows went.
type purger struct {
	what  string
	purge func(ctx context.Context) (int64, error)
}

// purgeEvery is how often expired state is deleted.
const purgeEvery = time.Hour

// purgeLoop runs every purger each purgeEvery until ctx ends. Every replica
// runs it; the deletes are idempotent.
func (s *Server) purgeLoop(ctx context.Context) {
	ticks, stop := s.clock.NewTicker(purgeEvery)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		for _, p := range s.purgers {
			pctx, cancel := context.WithTimeout(ctx, time.Minute)
			n, err := p.purge(pctx)
			cancel()
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Warn("purge "+p.what, slog.String("error", err.Error()))
			case n > 0:
				s.log.Info("purged "+p.what, slog.Int64("rows", n))
			}
		}
	}
}

// heartbeatEvery is how often a replica records its heartbeat (the change
// feed position it applied) for the console's overview.
const heartbeatEvery = 15 * time.Second

// replicaRetention is how long a replica's last heartbeat is kept.
const replicaRetention = time.Hour

// heartbeat records this replica's heartbeat at once and then every
// heartbeatEvery until ctx ends, and forgets replicas silent for
// replicaRetention.
func (s *Server) heartbeat(ctx context.Context) {
	host, _ := os.Hostname()
	start := s.clock.Now()
	ticks, stop := s.clock.NewTicker(heartbeatEvery)
	defer stop()
	for {
		bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		now := s.clock.Now()
		err := s.store.BeatReplica(bctx, db.Replica{ID: s.replica, Host: host, Version: buildinfo.Get().Version, StartTime: start,
			SeenTime: now, FeedPosition: s.feed.Position()})
		if err == nil {
			_, err = s.store.PruneReplicas(bctx, now.Add(-replicaRetention))
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			s.log.Debug("replica heartbeat", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
	}
}

// listen holds the LISTEN connection that wakes the change-feed poller
// early, until ctx ends; it logs when it connects and when it fails (the
// poller works without it).
func (s *Server) listen(ctx context.Context, url string) {
	err := db.ListenForChanges(ctx, url, s.feed.Wake, func(up bool, err error) {
		s.feed.Listening(up)
		if up {
			s.log.Info("change feed: LISTEN connection up; notifications wake the poller")
		} else {
			s.log.Warn("change feed: LISTEN connection failed; polling alone until it is back", slog.String("error", err.Error()))
		}
	})
	if err != nil {
		s.log.Warn("change feed: no LISTEN connection", slog.String("error", err.Error()))
	}
}
