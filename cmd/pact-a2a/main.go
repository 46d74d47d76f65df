// Command pact-a2a is the reference A2A frontend of a PACT Provider: it
// serves /a2a/{brandId}/… to personal agents and asks pactd about
// everything else. It is a thin program on package pactd.dev/pactd/frontends/pacta2a
// (settings, listening, shutdown); the Brand logic is package
// pactd.dev/pactd/frontends/demo's, or EchoAgent.
//
// Settings (flags win over the environment; docs/frontends.md):
//
//	-listen     A2A_LISTEN           host:port to serve on (default 127.0.0.1:3000)
//	-pactd      PACTD_URL            pactd's base URL (default http://127.0.0.1:7070)
//	-demo       A2A_DEMO=true        serve the demo Brand: its agent (package demo) and
//	                                 its sign-in page at /demo/{brandId}/login, which
//	                                 also signs Users in for the consent pages
//	-agent-url  A2A_AGENT_URL        the Brand logic in another process (demo.RemoteAgent)
//	            PACT_FRONTEND_TOKEN  the frontend credential pactd knows (required)
//
// Its own settings avoid the PACT_ prefix, which pactd reserves.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"pactd.dev/pactd/frontends/demo"
	"pactd.dev/pactd/frontends/pacta2a"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "pact-a2a:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	fs := flag.NewFlagSet("pact-a2a", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", or(getenv("A2A_LISTEN"), "127.0.0.1:3000"), "host:port to serve A2A on (env A2A_LISTEN)")
	pactd := fs.String("pactd", or(getenv("PACTD_URL"), "http://127.0.0.1:7070"), "pactd's base URL (env PACTD_URL)")
	withDemo := fs.Bool("demo", getenv("A2A_DEMO") == "true", "serve the demo Brand's agent and sign-in page (env A2A_DEMO=true)")
	agentURL := fs.String("agent-url", getenv("A2A_AGENT_URL"), "the Brand logic in another process (env A2A_AGENT_URL)")
	publicURL := fs.String("public-url", getenv("A2A_PUBLIC_URL"), "this frontend's public base URL, pactd's PACT_PUBLIC_URL; when set, POST /api/platforms (self-service PA registration, pactd's PACT_SELF_REGISTRATION, aud = that URL + /api/platforms) is served (env A2A_PUBLIC_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	cfg := pacta2a.Config{PactdURL: *pactd, Token: getenv("PACT_FRONTEND_TOKEN"), Logger: log,
		// The caller's W3C traceparent goes on to pactd (trace.go).
		HTTPClient: pactdClient()}
	mux := http.NewServeMux()
	var login *demo.Login
	if *withDemo {
		login = demo.NewLogin()
		cfg.Agent, cfg.Sessions = demo.NewAgent(), login
		mux.Handle("/demo/", login)
	}
	if *agentURL != "" {
		cfg.Agent = demo.NewRemoteAgent(*agentURL)
	}
	h, err := pacta2a.NewHandler(cfg)
	if err != nil {
		return fmt.Errorf("%w (set PACT_FRONTEND_TOKEN)", err)
	}
	if login != nil {
		login.BrandName = h.BrandName // the sign-in names the Brand by its display name
	}
	mux.Handle("/", h)
	if *publicURL != "" {
		// pactd answers it, with aud = its PACT_PUBLIC_URL + /api/platforms.
		mux.Handle(pacta2a.RegistrationPath, h)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           withTraceContext(pacta2a.Recover(mux, log)), // the sign-in's panics too become 500s
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("pact-a2a serving", slog.String("addr", ln.Addr().String()), slog.String("pactd", *pactd))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
