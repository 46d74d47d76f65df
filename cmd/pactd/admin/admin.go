// Package admin is pactd's own admin client: the subcommands pactd agent,
// brand, credential, grant, key, hdtp and health, which call a running pactd
// over the RPCs it serves (Connect over HTTP by default, gRPC with -grpc),
// with the generated clients of pactd.dev/pactd/gen only. The one exception
// is hdtp's development wallet (hdtpwallet.go), which works offline with
// internal/hdtp/cert and calls no pactd. It prints aligned tables for
// people and, with -o json, the response message as protojson for scripts.
//
// The credential comes from PACT_ADMIN_TOKEN (or -token-file); it is sent
// as "Authorization: Bearer …" and never printed.
package admin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Groups are the top-level pactd subcommands this package serves, in the
// order help lists them.
var Groups = []string{"agent", "brand", "credential", "grant", "audit", "webhook", "key", "hdtp", "health"}

// IsGroup reports whether name is one of Groups.
func IsGroup(name string) bool { return slices.Contains(Groups, name) }

// Error is a failed admin command: the message to print (the command's
// name first; one line per field violation) and the exit status, 2 for a
// usage error and 1 for everything else.
type Error struct {
	Code int
	Msg  string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// ExitCode is the process exit status for the error.
func (e *Error) ExitCode() int { return e.Code }

// usageError is a bad command line: exit status 2. The usage itself is
// not printed with it (only -h prints it): the message comes first and
// alone, then a line saying where the usage is (withHint).
func usageError(format string, args ...any) error {
	return &Error{Code: 2, Msg: fmt.Sprintf(format, args...)}
}

// withHint ends a usage error's message with the command that prints the
// usage of cmd ("pactd agent list"); other errors are returned as they are.
func withHint(err error, cmd string) error {
	var e *Error
	if errors.As(err, &e) && e.Code == 2 && !strings.HasSuffix(e.Msg, usageHint(cmd)) {
		e.Msg += "\n" + usageHint(cmd)
	}
	return err
}

// usageHint is the line after a usage error.
func usageHint(cmd string) string { return `run "` + cmd + ` -h" for usage` }

// failure is a command that ran and failed: exit status 1.
func failure(format string, args ...any) error {
	return &Error{Code: 1, Msg: fmt.Sprintf(format, args...)}
}

// command is one admin subcommand, such as "agent register".
type command struct {
	group, name string
	// args is the synopsis after the name; summary one line of what it does.
	args, summary string
	// minArgs and maxArgs bound the positional arguments.
	minArgs, maxArgs int
	// noAuth: the command sends no credential (health).
	noAuth bool
	// setup defines the command's own flags on fs and returns what runs it
	// once they are parsed.
	setup func(fs *flag.FlagSet) func(ctx context.Context, s *session, args []string) error
}

func (c *command) full() string { return strings.TrimSpace(c.group + " " + c.name) }

// commands lists every admin subcommand, group by group in Groups' order.
func commands() []*command {
	var all []*command
	all = append(all, agentCommands()...)
	all = append(all, brandCommands()...)
	all = append(all, brandAgentCommands()...)
	all = append(all, credentialCommands()...)
	all = append(all, grantCommands()...)
	all = append(all, auditCommands()...)
	all = append(all, webhookCommands()...)
	all = append(all, keyCommands()...)
	all = append(all, hdtpCommands()...)
	all = append(all, hdtpContactCommands()...)
	all = append(all, hdtpWalletCommands()...)
	all = append(all, healthCommand())
	return all
}

// groupCommands returns the commands of one group.
func groupCommands(group string) []*command {
	var out []*command
	for _, c := range commands() {
		if c.group == group {
			out = append(out, c)
		}
	}
	return out
}

// groupSummary is the one-line description of each group.
var groupSummary = map[string]string{
	"agent":      "personal agents (AgentService)",
	"brand":      "Brands, their delegation settings, agent policy and Agent Cards (BrandService)",
	"credential": "caller credentials (CredentialService)",
	"grant":      "a Brand user's delegation grants (DelegationService)",
	"audit":      "the audit trail: signed receipts and grant events (AuditService)",
	"webhook":    "destinations the audit trail is pushed to, and their delivery state (WebhookService)",
	"key":        "the Provider's signing keys (TokenService)",
	"hdtp":       "HDTP / PACT 2 identities, their keys, chains and cards, contacts, invites and the trust helpers (hdtp.v1)",
	"health":     "grpc.health.v1 Check (no credential)",
}

// Summary is the admin commands' part of pactd help.
func Summary() string {
	var b strings.Builder
	b.WriteString("admin commands: call a running pactd; each takes -h:\n")
	for _, g := range Groups {
		var names []string
		for _, c := range groupCommands(g) {
			if c.name != "" {
				names = append(names, c.name)
			}
		}
		line := "pactd " + g
		if len(names) > 0 {
			line += " " + strings.Join(names, "|")
		}
		b.WriteString("       " + line + "\n")
	}
	b.WriteString("       They call PACT_ADDR (default " + defaultAddr + "; with -grpc the native gRPC\n" +
		"       port, " + defaultGRPCAddr + ") with the credential in PACT_ADMIN_TOKEN.\n")
	return b.String()
}

// Run runs the admin command "pactd GROUP ARGS…". env holds KEY=VALUE
// lines (PACT_ADDR, PACT_ADMIN_TOKEN). -h prints the usage to stderr and
// returns flag.ErrHelp. Every other error is an *Error; a usage error's
// message ends in a line naming the -h that prints the usage.
func Run(ctx context.Context, group string, args, env []string, stdout, stderr io.Writer) error {
	if !IsGroup(group) {
		return usageError("unknown command %q", group)
	}
	cmds := groupCommands(group)
	var cmd *command
	if len(cmds) == 1 && cmds[0].name == "" { // health: no verb
		cmd = cmds[0]
	} else {
		if len(args) > 0 && isHelp(args[0]) {
			printGroupUsage(stderr, group, cmds)
			return flag.ErrHelp
		}
		if len(args) == 0 {
			return withHint(usageError("%s: name a command (%s)", group, verbs(cmds)), "pactd "+group)
		}
		// A command is named by one word ("hdtp create") or two ("hdtp
		// contact list").
		used := 0
		for _, c := range cmds {
			switch {
			case c.name == args[0]:
				cmd, used = c, 1
			case len(args) > 1 && c.name == args[0]+" "+args[1]:
				cmd, used = c, 2
			}
		}
		if cmd == nil {
			return withHint(usageError("%s: unknown command %q (one of %s)", group, args[0], verbs(cmds)), "pactd "+group)
		}
		args = args[used:]
	}
	return withHint(cmd.run(ctx, args, env, stdout, stderr), "pactd "+cmd.full())
}

func verbs(cmds []*command) string {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

func printGroupUsage(w io.Writer, group string, cmds []*command) {
	fmt.Fprintf(w, "usage: pactd %s <command> [flags]\n       %s\n\ncommands:\n", group, groupSummary[group])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range cmds {
		fmt.Fprintf(tw, "  %s\t%s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nEvery command takes -h for its flags and the connection flags (-addr, -grpc, -ca, -o json, …).\n")
}

// run parses the command line of one command and runs it.
func (c *command) run(ctx context.Context, args, env []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pactd "+c.full(), flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by the caller
	exec := c.setup(fs)
	own := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { own[f.Name] = true })
	cf := addConnFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.printUsage(stderr, fs, own)
		return flag.ErrHelp
	}
	if err != nil {
		return usageError("%s: %v", c.full(), err)
	}
	if len(pos) < c.minArgs || len(pos) > c.maxArgs {
		switch {
		case c.maxArgs == 0:
			return usageError("%s takes no arguments, got %q", c.full(), pos)
		case len(pos) < c.minArgs:
			return usageError("%s: missing %s", c.full(), c.args)
		default:
			return usageError("%s: too many arguments: %q", c.full(), pos)
		}
	}
	s, err := cf.session(c, env, stdout, stderr)
	if err != nil {
		return err
	}
	defer s.close()
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	if err := exec(ctx, s, pos); err != nil {
		var e *Error
		if errors.As(err, &e) {
			if !strings.HasPrefix(e.Msg, c.full()+":") {
				e.Msg = c.full() + ": " + e.Msg
			}
			return e
		}
		return s.rpcError(err)
	}
	return nil
}

// parseInterleaved parses flags that may stand before, between or after
// the positional arguments ("agent get agt_… -o json"); "--" ends the
// flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// printUsage prints the command's synopsis, its own flags, then the
// connection flags every admin command shares.
func (c *command) printUsage(w io.Writer, fs *flag.FlagSet, own map[string]bool) {
	fmt.Fprintf(w, "usage: pactd %s [flags]\n       %s\n", strings.Join(strings.Fields(c.full()+" "+c.args), " "), c.summary)
	var mine, conn []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if own[f.Name] {
			mine = append(mine, f)
		} else {
			conn = append(conn, f)
		}
	})
	if len(mine) > 0 {
		fmt.Fprintf(w, "\nflags:\n")
		printFlags(w, mine)
	}
	fmt.Fprintf(w, "\nconnection and output flags (every admin command):\n")
	printFlags(w, conn)
}

func printFlags(w io.Writer, flags []*flag.Flag) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range flags {
		name, usage := flag.UnquoteUsage(f)
		arg := "-" + f.Name
		if name != "" {
			arg += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", arg, usage)
	}
	_ = tw.Flush()
}
