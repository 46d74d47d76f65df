// Package hdtphost is a thin MCP host for HDTP 1.0 / PACT 2.2 on pactd,
// on the official Go MCP SDK (github.com/modelcontextprotocol/go-sdk).
//
// The SDK serves the MCP session: initialize (or server/discover), ping,
// notifications, the protocol-version header, stateless Streamable HTTP.
// Every tools/list and tools/call request body goes to pactd's
// hdtp.v1.HostService.OpenInbound instead, and the host writes back
// exactly what pactd answers: refusals, sealed answers, the caller's
// tools/list, the trust tools. When pactd dispatches a content tool, the
// host runs it (a Tool: the person's calendar, messages) and hands the
// result to CompleteInbound, whose body it writes. The SDK's server has
// no tool of its own, so a request that reaches it instead of pactd can
// only fail.
//
// Outbound, Deliver POSTs a call pactd sealed (SealOutbound, or an owner
// action of hdtp.v1.ContactService) to the peer's endpoint, after vetting
// the addresses it dials with TrustService.CheckAddress, and gives the
// answer to OpenOutboundResult, resending once when pactd says so.
//
// The posture is sealed-only (HDTP §13.4, the digest's §9): the host's TLS
// is an ordinary WebPKI certificate and never needs the leaf key, so calls
// prove themselves by envelope. It imports nothing of pactd but the
// generated Connect clients, so a host imports it from another module;
// docs/hdtp-hosts.md gives the same contract for hosts in other languages.
package hdtphost

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
)

// MaxBodyBytes is the largest request or answer body the host reads: a
// sealed send_media with 5 MiB of data and its framing, pactd's own bound.
// A larger request is answered 413 without calling pactd.
const MaxBodyBytes = 11 << 20

// Config configures a host.
type Config struct {
	// PactdURL is pactd's base URL, e.g. http://127.0.0.1:7070.
	PactdURL string
	// Token is the frontend credential pactd knows (PACT_FRONTEND_TOKEN).
	Token string
	// Tools are the content tools the host runs for the identities it
	// serves; DeclareTools tells pactd about them, per identity.
	Tools []Tool
	// Name and Version are the serverInfo initialize answers with.
	Name, Version string
	// PactdClient calls pactd; a client with a 70 s timeout when nil.
	PactdClient connect.HTTPClient
	// RootCAs are the certificate authorities trusted for peers' TLS; nil
	// means the system's.
	RootCAs *x509.CertPool
	// Dial, when set, replaces resolving and dialing a peer's host: a
	// network the operator routes on purpose (a test or a demo on
	// loopback). The address guard then judges the endpoint's name alone.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Endpoint is the URL a request came to, which names the identity at
	// pactd; by default "https://" + the Host header + the path as
	// received.
	Endpoint func(r *http.Request) string
	// SourceAddress is the caller's IP address, for pactd's guest and
	// source budgets; by default the connection's remote address. A host
	// behind a proxy returns the address the proxy saw.
	SourceAddress func(r *http.Request) string
	// TransportChain is the client certificate chain a TLS terminator
	// verified for nothing and passed on over a hop only it can write to;
	// nil in the sealed-only posture (no chain).
	TransportChain func(r *http.Request) [][]byte
	// Logger receives one line per failed call to pactd, per failed
	// delivery and per tool failure; never a body or a token.
	Logger *slog.Logger
}

// Host is an MCP host whose trust decisions are pactd's.
type Host struct {
	cfg     Config
	tools   map[string]Tool
	host    hdtpv1connect.HostServiceClient
	trust   hdtpv1connect.TrustServiceClient
	peers   *http.Client
	handler http.Handler
}

// New checks the configuration and returns the host.
func New(cfg Config) (*Host, error) {
	if u, err := url.ParseRequestURI(cfg.PactdURL); err != nil || u.Host == "" || cfg.Token == "" {
		return nil, errors.New("hdtphost: need pactd's URL and a frontend token")
	}
	h := &Host{cfg: cfg, tools: make(map[string]Tool, len(cfg.Tools))}
	for _, t := range cfg.Tools {
		if t.Name == "" || t.Run == nil {
			return nil, errors.New("hdtphost: a tool needs a name and a Run function")
		}
		if _, dup := h.tools[t.Name]; dup {
			return nil, errors.New("hdtphost: tool " + t.Name + " twice")
		}
		h.tools[t.Name] = t
	}
	if h.cfg.PactdClient == nil {
		h.cfg.PactdClient = &http.Client{Timeout: 70 * time.Second}
	}
	if h.cfg.Logger == nil {
		h.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if h.cfg.Endpoint == nil {
		h.cfg.Endpoint = requestEndpoint
	}
	if h.cfg.SourceAddress == nil {
		h.cfg.SourceAddress = remoteIP
	}
	h.cfg.Name = orDefault(h.cfg.Name, "hdtp-host")
	h.cfg.Version = orDefault(h.cfg.Version, "0.1.0")
	opts := []connect.ClientOption{connect.WithInterceptors(bearer(cfg.Token)),
		connect.WithSendMaxBytes(MaxBodyBytes + 1<<20), connect.WithReadMaxBytes(MaxBodyBytes + 1<<20)}
	h.host = hdtpv1connect.NewHostServiceClient(h.cfg.PactdClient, cfg.PactdURL, opts...)
	h.trust = hdtpv1connect.NewTrustServiceClient(h.cfg.PactdClient, cfg.PactdURL, opts...)
	h.peers = h.peerClient()
	h.handler = h.Forward(h.sdkHandler())
	return h, nil
}

// sdkHandler is the MCP SDK's Streamable HTTP handler for everything but
// tools/list and tools/call: stateless (each request stands alone, as
// every HDTP call does: trust is per call, never per session) and
// answering JSON rather than an event stream. Its DNS-rebinding guard is
// off: it protects servers on a person's own machine from browsers,
// while a host's endpoint is a public https URL, often behind a proxy on
// loopback.
func (h *Host) sdkHandler() http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: h.cfg.Name, Version: h.cfg.Version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
}

// ServeHTTP serves the MCP endpoint: Forward in front of the SDK's
// handler. Mount it at each identity's endpoint path, and InviteHandler
// at /i/ on the same hosts to serve invite landings.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// bearer sets the frontend credential on every call to pactd.
func bearer(token string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}
}

// requestEndpoint is "https://" + the Host header + the path as received:
// the identity's endpoint when the request came to it (pactd compares
// byte for byte, so any other spelling names no identity).
func requestEndpoint(r *http.Request) string {
	return "https://" + r.Host + r.URL.EscapedPath()
}

// remoteIP is the connection's remote IP address, without the port.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	return host
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
