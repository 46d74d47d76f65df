// Command pactd is the trust-and-token backend of a PACT Provider. With no
// subcommand it serves; see "pactd help".
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"pactd.dev/pactd/cmd/pactd/admin"
	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/buildinfo"
	"pactd.dev/pactd/server/config"
	"pactd.dev/pactd/server/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, config.ErrHelp) { // -h: the usage was printed
			return
		}
		fmt.Fprintln(os.Stderr, "pactd:", err)
		stop()
		os.Exit(exitCode(err))
	}
}

// exitCode is the exit status for a failed run: the admin commands' own
// (1 for a failure, 2 for a usage error), else 2.
func exitCode(err error) int {
	var ae *admin.Error
	if errors.As(err, &ae) {
		return ae.ExitCode()
	}
	return 2
}

const usage = `usage: pactd [serve] [flags]      serve the PACT trust API (the default)
       pactd migrate [flags]        apply database migrations and exit
       pactd token create --role admin|frontend [flags]
                                    store a new caller credential in the database and print it once
       pactd version                print the version, commit and Go version
       pactd help                   this text

`

const usageFlags = `
Every subcommand takes -h; serve, migrate and token create take the flags below.
`

const tokenUsage = `usage: pactd token create --role admin|frontend [--name NAME] [flags]
       store a new caller credential in the configured database and print it once
       (standard output: the token; standard error: which database it went to).
       It refuses a database pactd has never served: start pactd on it first.
`

func run(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && isHelp(args[0]) {
		// "pactd -h": the subcommands first, then the flags of serve.
		cmd = "help"
	}
	switch cmd {
	case "serve":
		cfg, err := config.LoadCommand("usage: pactd [serve] [flags]\n       serve the PACT trust API\n", args, env, stderr)
		if err != nil {
			return withUsageHint(err, "pactd serve")
		}
		return serve(ctx, cfg, env, stdout, stderr)
	case "migrate":
		cfg, err := config.LoadCommand("usage: pactd migrate [flags]\n       apply the embedded migrations to the configured database and exit\n", args, env, stderr)
		if err != nil {
			return withUsageHint(err, "pactd migrate")
		}
		s, err := db.Open(ctx, cfg.DatabaseURL, cfg.DataDir, server.StoreOptions(cfg)...)
		if err != nil {
			return err
		}
		defer s.Close()
		v, err := db.LatestVersion(s.Engine())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "pactd: %s schema at version %d\n", s.Engine(), v)
		return err
	case "token":
		return tokenCmd(ctx, args, env, stdout, stderr)
	case "version":
		if len(args) > 0 {
			fmt.Fprint(stderr, "usage: pactd version\n       print the version, commit and Go version of this binary\n")
			if isHelp(args[0]) {
				return config.ErrHelp
			}
			return fmt.Errorf("version takes no arguments")
		}
		in := buildinfo.Get()
		_, err := fmt.Fprintf(stdout, "pactd %s (commit %s, %s)\n", in.Version, in.Commit, in.GoVersion)
		return err
	case "help":
		_, _ = config.LoadCommand(usage+admin.Summary()+usageFlags, []string{"-h"}, nil, stdout)
		return nil
	default:
		if admin.IsGroup(cmd) {
			return admin.Run(ctx, cmd, args, env, stdout, stderr)
		}
		_, _ = io.WriteString(stderr, usage)
		return fmt.Errorf("unknown command %q (see pactd -h)", cmd)
	}
}

// withUsageHint ends a bad command line's message with a line naming the
// -h that prints cmd's usage, as the admin commands' usage errors end;
// other errors are returned as they are.
func withUsageHint(err error, cmd string) error {
	var ce *config.CommandLineError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w\nrun \"%s -h\" for usage", err, cmd)
	}
	return err
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

func serve(ctx context.Context, cfg config.Config, env []string, stdout, stderr io.Writer) error {
	log := newLogger(cfg, stderr)
	start := time.Now()
	// Tracing by the standard OTEL_* variables; off unless an endpoint is
	// set. First, so that the store and the handlers Build makes trace.
	stopTracing, err := tracing.Setup(ctx, config.Getenv(env), buildinfo.Get().Version)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			log.Warn("flush traces", slog.String("error", err.Error()))
		}
	}()
	// Then bind: a taken port is reported before anything is opened or
	// logged (such as the key-encryption-key notice of an SQLite start).
	// The server owns the listeners from Build on.
	var lns server.Listeners
	if lns.API, err = net.Listen("tcp", cfg.Listen); err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	// The native gRPC port is on by default, so a second pactd on one
	// machine meets it taken: say which setting to change.
	if cfg.GRPCListen != "" {
		if lns.GRPC, err = net.Listen("tcp", cfg.GRPCListen); err != nil {
			_ = lns.API.Close()
			return fmt.Errorf("listen for native gRPC on %s (PACT_GRPC_LISTEN; another address, or off to disable it): %w", cfg.GRPCListen, err)
		}
	}
	srv, err := server.Build(ctx, cfg, server.Deps{Logger: log, Out: stdout, Listeners: lns})
	if err != nil {
		return err
	}
	log.Info("pactd ready", slog.Float64("startup_ms", float64(time.Since(start).Microseconds())/1000))
	return srv.Run(ctx)
}

func tokenCmd(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		_, _ = config.LoadCommand(tokenUsage, []string{"-h"}, nil, stderr)
		return config.ErrHelp
	}
	if len(args) == 0 || args[0] != "create" {
		_, _ = io.WriteString(stderr, tokenUsage)
		return errors.New("usage: pactd token create --role admin|frontend")
	}
	args = args[1:]
	role, name := "", "created by pactd token create"
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if isHelp(a) {
			_, _ = config.LoadCommand(tokenUsage, []string{"-h"}, nil, stderr)
			return config.ErrHelp
		}
		if v, ok := flagValue(args, &i, "role"); ok {
			role = v
			continue
		}
		if v, ok := flagValue(args, &i, "name"); ok {
			name = v
			continue
		}
		rest = append(rest, a)
	}
	if role != string(db.RoleAdmin) && role != string(db.RoleFrontend) {
		return errors.New("--role must be admin or frontend")
	}
	if problem := auth.CheckLabel(name); problem != "" {
		return errors.New("--name " + problem)
	}
	cfg, err := config.Load(rest, env, stderr)
	if err != nil {
		return withUsageHint(err, "pactd token create")
	}
	where, sqlitePath := describeDatabase(cfg)
	if sqlitePath != "" {
		// Opening would create an empty store; a credential there is useless.
		if _, err := os.Stat(sqlitePath); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no pactd database at %s: start pactd once with this PACT_DATA_DIR (or set PACT_DATABASE_URL), "+
				"or pass the --data-dir of the running pactd; token create never creates a new store", sqlitePath)
		}
	}
	s, err := db.Open(ctx, cfg.DatabaseURL, cfg.DataDir, server.StoreOptions(cfg)...)
	if err != nil {
		return err
	}
	defer s.Close()
	// A store pactd has served holds at least its bootstrap or generated
	// admin credential; one that holds none was never served.
	if n, err := s.CountCredentials(ctx, db.RoleAdmin); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("%s has no admin credential, so pactd has never served it: start pactd on it first", where)
	}
	c, tok, err := auth.Create(ctx, s, db.Role(role), name, time.Time{}, time.Now())
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stderr, "pactd: stored %s credential %s (%q) in %s\n", role, c.ID, name, where); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}

// flagValue reads --name VALUE, --name=VALUE (or one dash) at args[*i],
// advancing *i past a separate value.
func flagValue(args []string, i *int, name string) (string, bool) {
	a := args[*i]
	for _, p := range []string{"--" + name, "-" + name} {
		if a == p && *i+1 < len(args) {
			*i++
			return args[*i], true
		}
		if strings.HasPrefix(a, p+"=") {
			return a[len(p)+1:], true
		}
	}
	return "", false
}

// describeDatabase names the configured store for a person, without
// credentials, and returns the SQLite file path ("" on PostgreSQL).
func describeDatabase(cfg config.Config) (where, sqlitePath string) {
	switch {
	case cfg.DatabaseURL == "":
		p := filepath.Join(cfg.DataDir, db.SQLiteFileName)
		return "the SQLite database " + p, p
	case strings.HasPrefix(cfg.DatabaseURL, "sqlite:"):
		p := strings.TrimPrefix(cfg.DatabaseURL, "sqlite:")
		return "the SQLite database " + p, p
	}
	u, err := url.Parse(cfg.DatabaseURL)
	if err != nil {
		return "the PostgreSQL database (unparsable URL)", ""
	}
	return "the PostgreSQL database " + u.Host + u.Path, ""
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
