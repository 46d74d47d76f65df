package admin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"

	"connectrpc.com/connect"

	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

const (
	// defaultAddr is the local pactd's main port (PACT_LISTEN's default).
	defaultAddr = "http://127.0.0.1:7070"
	// defaultGRPCAddr is the local pactd's native gRPC port
	// (PACT_GRPC_LISTEN's default), the one -grpc calls by default.
	defaultGRPCAddr = "http://127.0.0.1:7071"
	// maxResponseBytes bounds every response the commands read.
	maxResponseBytes = 16 << 20
	// maxTokenBytes bounds the credential read from a file.
	maxTokenBytes = 4 << 10
)

// connFlags are the connection and output flags every admin command takes.
type connFlags struct {
	addr, ca, cert, key, tokenFile, output string
	grpc                                   bool
	timeout                                time.Duration
}

func addConnFlags(fs *flag.FlagSet) *connFlags {
	c := &connFlags{}
	fs.StringVar(&c.addr, "addr", "", "`URL` of the pactd to call, http(s)://host:port (env PACT_ADDR; default "+defaultAddr+", with -grpc "+defaultGRPCAddr+")")
	fs.BoolVar(&c.grpc, "grpc", false, "call over gRPC (HTTP/2) instead of Connect, for pactd's native gRPC port")
	fs.StringVar(&c.ca, "ca", "", "PEM `FILE` of the CA certificates to trust for https (default: the system's)")
	fs.StringVar(&c.cert, "cert", "", "PEM client certificate `FILE` for https (with -key), for a proxy that asks for one")
	fs.StringVar(&c.key, "key", "", "PEM private key `FILE` of -cert")
	fs.StringVar(&c.tokenFile, "token-file", "", "read the credential from `FILE` instead of PACT_ADMIN_TOKEN")
	fs.StringVar(&c.output, "o", "table", "output `format`: table (for people) or json (the response as protojson, for scripts)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "give up after this `duration`")
	return c
}

// session is one command's connection to pactd and its output.
type session struct {
	op          string // "agent register", for messages
	out, errOut io.Writer
	json        bool
	base        string
	where       string // base and the setting that named it, for messages: "http://127.0.0.1:7070 (PACT_ADDR)"
	client      *http.Client
	opts        []connect.ClientOption // protocol, size bound and credential
	bare        []connect.ClientOption // the same without the credential
}

func (s *session) close() { s.client.CloseIdleConnections() }

// session checks the flags and the environment and builds the connection.
func (cf *connFlags) session(c *command, env []string, stdout, stderr io.Writer) (*session, error) {
	op := c.full()
	s := &session{op: op, out: stdout, errOut: stderr}
	switch cf.output {
	case "table":
	case "json":
		s.json = true
	default:
		return nil, usageError("%s: -o must be table or json, not %q", op, cf.output)
	}
	if cf.timeout <= 0 {
		return nil, usageError("%s: -timeout must be positive", op)
	}
	addr, source := cf.addr, "-addr"
	if addr == "" {
		addr, source = lookup(env, "PACT_ADDR"), "PACT_ADDR"
	}
	if addr == "" {
		addr, source = defaultAddr, "the default address"
		if cf.grpc {
			addr = defaultGRPCAddr
		}
	}
	u, err := checkAddr(addr)
	if err != nil {
		return nil, usageError("%s: %s %q: %v", op, source, addr, err)
	}
	s.base = strings.TrimRight(u.String(), "/")
	s.where = s.base + " (" + source + ")"
	if source == "the default address" {
		s.where = s.base + " (the default address; PACT_ADDR or -addr names another)"
	}

	tlsConf, err := cf.tlsConfig(u, op)
	if err != nil {
		return nil, err
	}
	protocols := new(http.Protocols)
	switch {
	case u.Scheme == "https":
		protocols.SetHTTP1(true)
		protocols.SetHTTP2(true) // chosen by ALPN; gRPC needs it
	case cf.grpc:
		protocols.SetUnencryptedHTTP2(true) // h2c, as pactd serves it
	default:
		protocols.SetHTTP1(true)
	}
	s.client = &http.Client{Transport: &http.Transport{
		Protocols:             protocols,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cf.timeout,
	}}
	s.bare = []connect.ClientOption{connect.WithReadMaxBytes(maxResponseBytes)}
	if cf.grpc {
		s.bare = append(s.bare, connect.WithGRPC())
	}
	s.opts = s.bare
	if !c.noAuth {
		tok, err := cf.credential(env, op, s.where)
		if err != nil {
			return nil, err
		}
		if u.Scheme == "http" && !loopback(u.Hostname()) {
			fmt.Fprintf(stderr, "pactd %s: warning: the credential goes to %s over plain HTTP; use https:// beyond this machine\n", op, u.Host)
		}
		s.opts = append(append([]connect.ClientOption{}, s.bare...), connect.WithInterceptors(bearer(tok)))
	}
	return s, nil
}

// checkAddr accepts an absolute http or https URL with a host, an optional
// path prefix (pactd behind a proxy) and nothing else: user information
// would be printed in messages, a query or fragment means a mistake.
func checkAddr(addr string) (*url.URL, error) {
	u, err := url.Parse(addr)
	switch {
	case !strings.Contains(addr, "://"), err == nil && u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("must start with http:// or https:// (for example " + defaultAddr + ")")
	case err != nil:
		return nil, errors.New("not a URL")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("has no host")
	case u.User != nil:
		return nil, errors.New("must not hold user information; the credential comes from PACT_ADMIN_TOKEN")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, errors.New("must not have a query or fragment")
	}
	return u, nil
}

func (cf *connFlags) tlsConfig(u *url.URL, op string) (*tls.Config, error) {
	if u.Scheme != "https" {
		for name, v := range map[string]string{"-ca": cf.ca, "-cert": cf.cert, "-key": cf.key} {
			if v != "" {
				return nil, usageError("%s: %s needs an https:// address", op, name)
			}
		}
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if cf.ca != "" {
		pem, err := os.ReadFile(cf.ca)
		if err != nil {
			return nil, failure("%s: -ca: %v", op, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, failure("%s: -ca %s holds no PEM certificate", op, cf.ca)
		}
		conf.RootCAs = pool
	}
	if (cf.cert == "") != (cf.key == "") {
		return nil, usageError("%s: give -cert and -key together", op)
	}
	if cf.cert != "" {
		pair, err := tls.LoadX509KeyPair(cf.cert, cf.key)
		if err != nil {
			return nil, failure("%s: -cert/-key: %v", op, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// credential returns the bearer token from -token-file or PACT_ADMIN_TOKEN
// for the pactd at where. It is never part of a message: errors say where
// it came from, not what it is.
func (cf *connFlags) credential(env []string, op, where string) (string, error) {
	tok, source := lookup(env, "PACT_ADMIN_TOKEN"), "PACT_ADMIN_TOKEN"
	if cf.tokenFile != "" {
		source = "-token-file " + cf.tokenFile
		f, err := os.Open(cf.tokenFile)
		if err != nil {
			return "", failure("%s: -token-file: %v", op, err)
		}
		b, err := io.ReadAll(io.LimitReader(f, maxTokenBytes+1))
		_ = f.Close()
		if err != nil {
			return "", failure("%s: -token-file: %v", op, err)
		}
		if len(b) > maxTokenBytes {
			return "", failure("%s: %s is over %d bytes: not a pactd credential", op, source, maxTokenBytes)
		}
		tok = strings.TrimSpace(string(b))
	}
	switch {
	case tok == "":
		return "", failure("%s: no credential for the pactd at %s: set PACT_ADMIN_TOKEN to an admin token of that pactd "+
			"(it printed one at its first start; pactd token create --role admin makes another), or pass -token-file FILE", op, where)
	case strings.IndexFunc(tok, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsPrint(r) || r == ' ' }) >= 0:
		return "", failure("%s: the credential in %s has a space, a control or a non-ASCII character: not a pactd credential", op, source)
	}
	return tok, nil
}

// bearer sends the credential on every call.
func bearer(tok string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+tok)
			return next(ctx, req)
		}
	}
}

// lookup finds a variable in KEY=VALUE lines; the last one wins, as in a
// process environment built by appending.
func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// The generated clients, each over the session's connection.

func (s *session) agents() pactv1connect.AgentServiceClient {
	return pactv1connect.NewAgentServiceClient(s.client, s.base, s.opts...)
}

func (s *session) brands() pactv1connect.BrandServiceClient {
	return pactv1connect.NewBrandServiceClient(s.client, s.base, s.opts...)
}

func (s *session) credentials() pactv1connect.CredentialServiceClient {
	return pactv1connect.NewCredentialServiceClient(s.client, s.base, s.opts...)
}

func (s *session) delegation() pactv1connect.DelegationServiceClient {
	return pactv1connect.NewDelegationServiceClient(s.client, s.base, s.opts...)
}

func (s *session) audit() pactv1connect.AuditServiceClient {
	return pactv1connect.NewAuditServiceClient(s.client, s.base, s.opts...)
}

func (s *session) webhooks() pactv1connect.WebhookServiceClient {
	return pactv1connect.NewWebhookServiceClient(s.client, s.base, s.opts...)
}

func (s *session) tokens() pactv1connect.TokenServiceClient {
	return pactv1connect.NewTokenServiceClient(s.client, s.base, s.opts...)
}
