// Command a2a-go-example is an A2A server built on the official Go SDK,
// github.com/a2aproject/a2a-go/v2, with PACT in front of it: package
// pacta2a serves every PACT route and hands the turns pactd lets through to
// the SDK, whose executor runs the demo Brand (orders, step-up, receipts,
// the resource-bound cancel). Every PACT-specific line ends in a "// PACT"
// comment; main_test.go counts them, and docs/frontend-servers.md gives the figure.
//
//	PACT_FRONTEND_TOKEN=… go run ./frontends/a2a-go-example -pactd http://127.0.0.1:7070 -demo
//
// Settings (flags win over the environment), those of docs/frontends.md:
//
//	-listen     A2A_LISTEN           host:port to serve on (default 127.0.0.1:3000)
//	-pactd      PACTD_URL            pactd's base URL (default http://127.0.0.1:7070)
//	            PACT_FRONTEND_TOKEN  the frontend credential pactd knows (required)
//	-demo       A2A_DEMO=true        the demo Brand's logic and its sign-in at /demo/{brandId}/login
//	-agent-url  A2A_AGENT_URL        the Brand logic in another process (demo.RemoteAgent)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"pactd.dev/pactd/frontends/demo"
	"pactd.dev/pactd/frontends/pacta2a"
)

// executor is the Brand's agent as a2a-go runs it. Its Brand logic is
// written against pacta2a.Agent, so one logic serves this server and the
// standalone frontend (cmd/pact-a2a).
type executor struct {
	brand pacta2a.Agent // PACT: the demo Brand's logic, here or in another process
}

// Execute answers one turn: a message (with what the receipt names) or a
// step-up task when the caller lacks a scope.
func (e executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		turn, _ := pacta2a.TurnOf(ec)      // PACT: the caller and grant pactd verified (Interceptor lets no other call in)
		r, err := e.brand.Reply(ctx, turn) // PACT
		switch {
		case err != nil:
			yield(nil, err)
		case len(r.NeedScopes) > 0: // PACT: a step-up
			yield(pacta2a.StepUpTask(ec, r.Text, r.NeedScopes...), nil) // PACT
		default:
			msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(r.Text))
			yield(pacta2a.WithReceipt(msg, r.ScopesUsed, r.Actions...), nil) // PACT: what the signed receipt names
		}
	}
}

// Cancel is never called through PACT, which answers tasks/{id}:cancel
// itself; a2a-go's interface needs it.
func (executor) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrTaskNotCancelable) }
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "a2a-go-example:", err)
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
	fs := flag.NewFlagSet("a2a-go-example", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", or(getenv("A2A_LISTEN"), "127.0.0.1:3000"), "host:port to serve A2A on (env A2A_LISTEN)")
	pactd := fs.String("pactd", or(getenv("PACTD_URL"), "http://127.0.0.1:7070"), "pactd's base URL (env PACTD_URL)")     // PACT
	withDemo := fs.Bool("demo", getenv("A2A_DEMO") == "true", "the demo Brand and its sign-in page (env A2A_DEMO=true)")  // PACT
	agentURL := fs.String("agent-url", getenv("A2A_AGENT_URL"), "the Brand logic in another process (env A2A_AGENT_URL)") // PACT
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	cfg := pacta2a.Config{PactdURL: *pactd, Token: getenv("PACT_FRONTEND_TOKEN"), Logger: log} // PACT
	mux := http.NewServeMux()
	var brand pacta2a.Agent = pacta2a.EchoAgent{} // PACT
	var login *demo.Login                         // PACT
	if *withDemo {                                // PACT
		login = demo.NewLogin()                      // PACT: the Brand's sign-in, for the consent pages
		brand, cfg.Sessions = demo.NewAgent(), login // PACT
		mux.Handle("/demo/", login)                  // PACT
	} // PACT
	if *agentURL != "" { // PACT
		brand = demo.NewRemoteAgent(*agentURL) // PACT
	} // PACT

	// The A2A server a Provider already has, on a2a-go...
	sdk := a2asrv.NewTenantRESTHandler("/a2a/{*}", a2asrv.NewHandler(executor{brand},
		a2asrv.WithCallInterceptors(pacta2a.Interceptor()), // PACT: the verified caller becomes the SDK's user
		a2asrv.WithTaskStore(pacta2a.NewTaskStore(0, 0)),   // PACT: step-up tasks are forgotten, not kept forever
		a2asrv.WithLogger(log)))
	// ...with PACT in front of it, where the SDK's handler was mounted.
	fe, err := pacta2a.Wrap(cfg, sdk) // PACT
	if err != nil {                   // PACT
		return fmt.Errorf("%w (set PACT_FRONTEND_TOKEN)", err) // PACT
	} // PACT
	if login != nil { // PACT
		login.BrandName = fe.BrandName // PACT: the sign-in names the Brand by its display name
	} // PACT
	mux.Handle("/a2a/", fe) // PACT: instead of mux.Handle("/a2a/", sdk)
	mux.Handle("/{$}", fe)  // PACT: the root page listing the Brands

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           pacta2a.Recover(mux, log), // PACT: a panic anywhere (the sign-in too) is a 500, never a crash
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("pact-a2a serving", slog.String("addr", ln.Addr().String()), slog.String("pactd", *pactd)) // PACT: what pact-demo and the e2e suite wait for
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
