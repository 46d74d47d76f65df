package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/server/buildinfo"
	"pactd.dev/pactd/server/console"
)

// heartbeatEvery is how often a replica records its heartbeat (the change
// feed position it applied) for the console's overview.
const heartbeatEvery = 15 * time.Second

// replicaRetention is how long a replica's last heartbeat is kept.
const replicaRetention = time.Hour

// newConsole builds the operator console over the same services the RPCs
// use (PACT_CONSOLE_LISTEN); Serve serves it on its own listener.
func (s *Server) newConsole(svc Services, authn *auth.Authenticator, keys *provkeys.Ring, now func() time.Time) error {
	c, err := console.New(console.Deps{
		Store: s.store, Authn: authn, Keys: keys, Feed: s.feed,
		Agents: svc.Agent, Brands: svc.Brand, Delegation: svc.Delegation, Audit: svc.Audit, Credentials: svc.Credential, Tokens: svc.Token,
		Webhooks: svc.Webhook,
		Replica: s.replica, Version: buildinfo.Get().Version, Secure: s.cfg.TLSCert != "", Now: now, Logger: s.log,
	})
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	s.console = c
	return nil
}

// ConsoleHandler is the operator console, or nil when PACT_CONSOLE_LISTEN
// is off (for tests and embedding).
func (s *Server) ConsoleHandler() http.Handler {
	if s.console == nil {
		return nil
	}
	return s.console
}

// serveConsole listens on PACT_CONSOLE_LISTEN (or ConsoleListener) and
// serves the console there, over TLS when pactd has a certificate; the
// server it returns is shut down with the others.
func (s *Server) serveConsole(errc chan<- error) (*http.Server, error) {
	ln := s.ConsoleListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.ConsoleListen); err != nil {
			return nil, fmt.Errorf("listen for the console: %w", err)
		}
	}
	srv := &http.Server{Handler: s.console, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
		MaxHeaderBytes: 16 << 10, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	if s.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCert, s.cfg.TLSKey)
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("console: load TLS certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	s.log.Info("pactd serving the console", slog.String("addr", ln.Addr().String()), slog.Bool("tls", s.cfg.TLSCert != ""))
	return srv, nil
}

// heartbeat records this replica's heartbeat every heartbeatEvery until
// ctx ends, and forgets replicas silent for replicaRetention.
func (s *Server) heartbeat(ctx context.Context) {
	host, _ := os.Hostname()
	start := time.Now()
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		now := time.Now()
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
		case <-t.C:
		}
	}
}
