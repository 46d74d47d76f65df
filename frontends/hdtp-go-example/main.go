// Command hdtp-go-example is an HDTP / PACT 2 host on the Go MCP SDK with
// pactd behind it (frontends/hdtphost): it serves its identities' MCP
// endpoints and invite landings, runs their calendars (check_availability,
// frontends/hdtpdemo), and offers the person's agent a side door on
// loopback to call contacts and deliver the calls owner actions return.
// Every setting comes from the environment, the same names as the
// TypeScript example's (frontends/hdtp-js-example):
//
//	HDTP_LISTEN          host:port of the MCP endpoint (default 127.0.0.1:8443)
//	PACTD_URL            pactd's base URL (default http://127.0.0.1:7070)
//	PACT_FRONTEND_TOKEN  pactd's frontend credential (required)
//	HDTP_IDENTITIES      the identity ids to declare the tools for, comma-separated
//	HDTP_CALENDAR        the busy times, JSON {"<endpoint>":[{"start","end"}]}
//	HDTP_TLS_CERT, HDTP_TLS_KEY   PEM files: serve TLS (else plain HTTP, behind a TLS edge)
//	HDTP_CA_FILE         PEM file of the authorities trusted for peers (else the system's)
//	HDTP_ROUTES          development only: name=host:port,... dials a peer's name there
//	AGENT_LISTEN, AGENT_TOKEN     the agent's side door (POST /call, POST /deliver), loopback
package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"pactd.dev/pactd/frontends/hdtpdemo"
	"pactd.dev/pactd/frontends/hdtphost"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hdtp-go-example:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, env func(string) string, stdout io.Writer) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg := hdtphost.Config{PactdURL: or(env("PACTD_URL"), "http://127.0.0.1:7070"), Token: env("PACT_FRONTEND_TOKEN"),
		Name: "hdtp-go-example", Logger: logger}
	var cals hdtpdemo.Calendars
	if err := json.Unmarshal([]byte(or(env("HDTP_CALENDAR"), "{}")), &cals); err != nil {
		return fmt.Errorf("HDTP_CALENDAR: %w", err)
	}
	cfg.Tools = []hdtphost.Tool{hdtpdemo.AvailabilityTool(cals)}
	if f := env("HDTP_CA_FILE"); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return errors.New("HDTP_CA_FILE holds no certificate")
		}
	}
	if routes := routes(env("HDTP_ROUTES")); routes != nil {
		var d net.Dialer
		cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := routes[addr]; ok {
				return d.DialContext(ctx, network, to)
			}
			return nil, fmt.Errorf("HDTP_ROUTES has no route to %s", addr)
		}
	}
	host, err := hdtphost.New(cfg)
	if err != nil {
		return err
	}
	for _, id := range strings.Split(env("HDTP_IDENTITIES"), ",") {
		if id != "" {
			if err := host.DeclareTools(ctx, id); err != nil {
				return fmt.Errorf("declare the tools of %s: %w", id, err)
			}
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/i/", host.InviteHandler())
	mux.Handle("/", host) // every path: pactd knows which are endpoints
	ln, err := net.Listen("tcp", or(env("HDTP_LISTEN"), "127.0.0.1:8443"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 2)
	go func() {
		if env("HDTP_TLS_CERT") != "" {
			served <- srv.ServeTLS(ln, env("HDTP_TLS_CERT"), env("HDTP_TLS_KEY"))
		} else {
			served <- srv.Serve(ln)
		}
	}()
	defer srv.Close()
	if a := env("AGENT_LISTEN"); a != "" {
		if env("AGENT_TOKEN") == "" {
			return errors.New("AGENT_LISTEN needs AGENT_TOKEN")
		}
		aln, err := net.Listen("tcp", a)
		if err != nil {
			return err
		}
		side := &http.Server{Handler: sideDoor(host, env("AGENT_TOKEN")), ReadHeaderTimeout: 10 * time.Second}
		go func() { served <- side.Serve(aln) }()
		defer side.Close()
		fmt.Fprintf(stdout, "agent side door on http://%s\n", aln.Addr())
	}
	fmt.Fprintf(stdout, "hdtp-go-example serving on %s\n", ln.Addr())
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return err
	}
}

// sideDoor is the agent's way out, for the person's own agent only (a
// bearer token, on loopback): POST /call {identity_id, contact_root, tool,
// arguments} calls a contact's tool; POST /deliver with an OutboundCall in
// its JSON form (what pactd hdtp contact … -o json prints) delivers it.
// Both answer {"result":…,"sealed":…} or {"refusal":{…}}.
func sideDoor(host *hdtphost.Host, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hdtphost.MaxBodyBytes))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		var res *hdtphost.Result
		switch r.URL.Path {
		case "/call":
			var c struct {
				IdentityID  string          `json:"identity_id"`
				ContactRoot string          `json:"contact_root"`
				Tool        string          `json:"tool"`
				Arguments   json.RawMessage `json:"arguments"`
			}
			if err = json.Unmarshal(body, &c); err == nil {
				res, err = host.Call(r.Context(), c.IdentityID, c.ContactRoot, c.Tool, c.Arguments)
			}
		case "/deliver":
			var call hdtpv1.OutboundCall
			if err = protojson.Unmarshal(body, &call); err == nil {
				res, err = host.Deliver(r.Context(), &call)
			}
		default:
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		_ = json.NewEncoder(w).Encode(answer(res))
	})
}

// answer is the side door's JSON form of a result.
func answer(res *hdtphost.Result) any {
	if f := res.Refusal; f != nil {
		return map[string]any{"refusal": map[string]any{"code": f.Code, "retry_after": f.RetryAfter, "data": f.Data, "local": f.Local, "reason": f.Reason}}
	}
	return map[string]any{"result": res.JSON, "sealed": res.Sealed}
}

// routes reads HDTP_ROUTES: name=host:port pairs, for a peer's endpoint
// name on port 443.
func routes(s string) map[string]string {
	if s == "" {
		return nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if name, to, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			m[net.JoinHostPort(name, "443")] = to
		}
	}
	return m
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
