// Package config loads pactd's configuration once, from flags and PACT_*
// environment variables (flags win over the environment, which wins over the
// defaults), and validates it. Unknown PACT_* variables are refused so a typo
// never silently falls back to a default.
package config

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"pactd.dev/pactd/server/tracing"
)

// Config is the complete, validated configuration of one pactd process.
type Config struct {
	// Listen is the host:port that serves Connect, gRPC, gRPC-Web, health,
	// reflection and /metrics.
	Listen string
	// MetricsListen, when set, serves /metrics on its own host:port instead.
	MetricsListen string
	// GRPCListen also serves the API over gRPC alone on this host:port with
	// grpc-go's own HTTP/2 transport: the fast path for gRPC frontends
	// (about 1.7 times the throughput per core of the main port). On by
	// default; empty when the setting is "off".
	GRPCListen string
	// ConsoleListen serves the operator web console (server/console) on
	// this host:port; empty (the default) leaves it off. Without TLS it
	// must be a loopback address: the console's sign-in sends an admin
	// credential.
	ConsoleListen string
	// DataDir holds the embedded SQLite database and other local state.
	DataDir string
	// DatabaseURL selects the store: empty for embedded SQLite in DataDir, a
	// postgres:// or postgresql:// URL for PostgreSQL, or sqlite:PATH.
	DatabaseURL string
	// AdminToken is a bootstrap admin bearer credential (stored hashed).
	AdminToken Secret
	// FrontendToken is a bootstrap frontend bearer credential (stored hashed).
	FrontendToken Secret
	// Audience is the Provider-wide audience PAs put in aud.
	Audience string
	// PublicURL is the Provider's public base URL; interface URLs are
	// {PublicURL}/a2a/{brandId}.
	PublicURL string
	// Dev allows plain-HTTP JWKS URIs on loopback hosts. Never in production.
	Dev bool
	// JWKSAllowHosts are the hosts (names or IP literals) whose https agent
	// issuers and JWKS URIs may be loopback, private or internal: PAs the
	// operator runs inside the network, such as a staging load-test PA. The
	// SSRF guard keeps refusing every other non-public host.
	JWKSAllowHosts []string
	// JWKSCAFile is a PEM file of CA certificates trusted for JWKS fetches
	// in addition to the system's roots.
	JWKSCAFile string
	// TLSCert and TLSKey are PEM file paths; when both are set pactd serves
	// TLS (HTTP/2 and HTTP/1.1) instead of h2c.
	TLSCert, TLSKey string
	// KeyEncryptionKey encrypts Provider private keys at rest.
	KeyEncryptionKey Secret
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// LogFormat is json or text.
	LogFormat string
	// ShutdownTimeout bounds graceful shutdown.
	ShutdownTimeout time.Duration
	// RateAgent is the sustained requests per second allowed per agent in
	// VerifyAgentRequest; 0 disables the limit.
	RateAgent float64
	// RateSubject is the sustained requests per second allowed per
	// (agent, sub); 0 disables the limit.
	RateSubject float64
	// CacheTTL bounds how long a replica acts on cached agent and Brand
	// state (the change feed normally applies other replicas' changes
	// sooner: within its revocation bound).
	CacheTTL time.Duration
	// DatabasePooler says what stands between pactd and PostgreSQL:
	// PoolerNone, or PoolerTransaction (PgBouncer with pool_mode=transaction
	// and the like), for which pactd runs statements without server-side
	// prepared statements and opens no LISTEN connection through it.
	DatabasePooler string
	// ChangePollInterval is how often a replica polls the change feed from
	// the last position it applied; the revocation bound is twice it.
	ChangePollInterval time.Duration
	// ChangeNotifyURL is the setting of the LISTEN connection that wakes
	// the poller early: "" (the database URL), "off", or a PostgreSQL URL
	// that reaches the server directly. NotifyURL resolves it.
	ChangeNotifyURL string
	// OutageGrace is how long, while the database is unreachable, pactd
	// keeps verifying PA JWTs (and admitting callers) from the agent, Brand
	// and credential state it last read; 0 fails closed at once. Anything
	// that needs the database (delegation, grants, writes) fails closed
	// regardless.
	OutageGrace time.Duration
	// GrantCacheSize bounds each replica's grant cache (entries, about 460
	// bytes each when full).
	GrantCacheSize int
	// TokenCacheSize bounds the PA repeat-token cache (entries); 0 disables
	// it. Each entry holds at most about 1.2 KiB, so this is the main bound
	// on pactd's memory under load.
	TokenCacheSize int
	// ES256Tables is whether PA, Brand and registration keys that verify
	// many tokens earn precomputed ES256 tables (package es256);
	// PACT_ES256_TABLES=off verifies every ES256 signature through
	// crypto/ecdsa.
	ES256Tables bool
	// ES256TableBytes bounds the memory all ES256 tables hold together
	// (about 222 KiB each); past it the least recently used are evicted.
	ES256TableBytes int64
	// AuditRetention is how long audit events are kept before pruning; 0
	// keeps them for ever.
	AuditRetention time.Duration
	// SelfRegistration is the policy for self-service PA registration
	// (POST /api/platforms): "off" (default), "pending" (created disabled
	// until an operator enables it) or "enabled" (accepted at once).
	SelfRegistration string
	// Webhook are the bounds of audit event delivery to webhook
	// destinations (core/webhook).
	Webhook WebhookConfig
	// Tracing is whether the standard OTEL_* variables of the same
	// environment turn trace export on (tracing.Enabled): the server then
	// opens spans. Not a PACT_* setting; read here so that nothing past
	// the loaded configuration consults the process environment.
	Tracing bool
}

// Getenv returns a lookup of key in environ ("KEY=value" entries, the last
// one winning as in the process environment); "" when it is absent.
func Getenv(environ []string) func(key string) string {
	return func(key string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
				return v
			}
		}
		return ""
	}
}

// Bounds of the audit-retention setting: the default is 90 days.
const (
	DefaultAuditRetention = 90 * 24 * time.Hour
	MinAuditRetention     = time.Hour
	MaxAuditRetention     = 10 * 365 * 24 * time.Hour
)

// parseRetention reads a Go duration or a whole number of days ("90d").
// WebhookConfig bounds the delivery of audit events to webhook
// destinations.
type WebhookConfig struct {
	// PollInterval is how often each replica looks for due deliveries.
	PollInterval time.Duration
	// Timeout bounds one delivery attempt.
	Timeout time.Duration
	// RetryBase is the wait after a first failed attempt, doubled after
	// each further failure up to RetryMax (with jitter).
	RetryBase, RetryMax time.Duration
	// MaxAttempts and MaxAge bound a delivery: past either, a failed
	// attempt leaves it dead until an operator retries it.
	MaxAttempts int
	MaxAge      time.Duration
	// AllowHosts are hosts (names or IP literals) whose destination URLs
	// may be loopback, private or internal: a SIEM inside the network.
	AllowHosts []string
}

func parseRetention(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || days != strconv.Itoa(n) {
			return 0, fmt.Errorf("not a whole number of days")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(v)
}

// Bounds of the token-cache-size setting: pajwt.DefaultCacheSize and
// pajwt.MaxCacheSize (a full cache of it is ≈ 3.5 GB), asserted equal by
// the tests (config stays a leaf that imports no verifier).
const (
	DefaultTokenCacheSize = 65536
	MaxTokenCacheSize     = 4 << 20
)

// Bounds of the es256-table-bytes setting: the default is
// es256.DefaultMaxBytes (asserted equal by the tests; config stays a leaf
// that imports no verifier). The least is a few tables; the most keeps the
// tables below 16 GiB.
const (
	DefaultES256TableBytes = 64 << 20
	MinES256TableBytes     = 1 << 20
	MaxES256TableBytes     = 16 << 30
)

// parseBytes reads a whole number of bytes, or of KiB, MiB or GiB with that
// suffix ("64MiB").
func parseBytes(v string) (int64, bool) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || v != strconv.FormatInt(n, 10) || n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}

// Bounds of the grant-cache-size setting; the default is
// grantcache.DefaultSize. The maximum keeps the cache near 5 GB at most.
const (
	DefaultGrantCacheSize = 100_000
	MinGrantCacheSize     = 1_000
	MaxGrantCacheSize     = 10_000_000
)

// Off is the value of grpc-listen that turns the native gRPC port off.
const Off = "off"

// The values of database-pooler.
const (
	PoolerNone        = "none"
	PoolerTransaction = "transaction"
)

// Secret is a configuration value that must never be printed or logged.
type Secret string

// String redacts the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString redacts the secret in %#v, which does not call String.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalText redacts the secret in encoding/json, slog and other encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue redacts the secret when it is logged on its own.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// option describes one setting: its flag, its environment variable, its
// default and where it goes.
type option struct {
	flag, env, def, usage string
	set                   func(c *Config, v string) error
}

// boolFlags take no value: --dev means --dev=true.
var boolFlags = map[string]bool{"dev": true}

func options() []option {
	str := func(p func(*Config) *string) func(*Config, string) error {
		return func(c *Config, v string) error { *p(c) = v; return nil }
	}
	secret := func(p func(*Config) *Secret) func(*Config, string) error {
		return func(c *Config, v string) error { *p(c) = Secret(v); return nil }
	}
	rate := func(p func(*Config) *float64) func(*Config, string) error {
		return func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0 && f <= 1e9) { // NaN fails both comparisons
				return fmt.Errorf("must be a non-negative number of requests per second")
			}
			*p(c) = f
			return nil
		}
	}
	// hosts reads a comma-separated list of host names or IP literals.
	hosts := func(p func(*Config) *[]string) func(*Config, string) error {
		return func(c *Config, v string) error {
			list := p(c)
			*list = nil
			for _, h := range strings.Split(v, ",") {
				h = strings.TrimSpace(h)
				if h == "" {
					continue
				}
				if len(h) > 253 || strings.ContainsAny(h, "/:@?#[] ") && !isIPv6Literal(h) {
					return fmt.Errorf("must be host names or IP literals separated by commas (no scheme, port or path), not %q", h)
				}
				if len(*list) == 64 {
					return fmt.Errorf("must name at most 64 hosts")
				}
				*list = append(*list, strings.ToLower(h))
			}
			return nil
		}
	}
	// duration reads a duration from lo to hi.
	duration := func(p func(*Config) *time.Duration, lo, hi time.Duration, example string) func(*Config, string) error {
		return func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < lo || d > hi {
				return fmt.Errorf("must be a duration between %s and %s, e.g. %s", lo, hi, example)
			}
			*p(c) = d
			return nil
		}
	}
	opts := []option{
		{"listen", "PACT_LISTEN", "127.0.0.1:7070", "host:port to serve Connect, gRPC and gRPC-Web on", str(func(c *Config) *string { return &c.Listen })},
		{"metrics-listen", "PACT_METRICS_LISTEN", "", "separate host:port for /metrics (default: the main port)", str(func(c *Config) *string { return &c.MetricsListen })},
		{"grpc-listen", "PACT_GRPC_LISTEN", "127.0.0.1:7071", "host:port serving gRPC only, on grpc-go's faster transport (the fast path for gRPC frontends); off disables it", func(c *Config, v string) error {
			if v == Off {
				c.GRPCListen = ""
				return nil
			}
			// Checked here rather than in validate so the error names the
			// variable or flag the value came from.
			if _, _, err := net.SplitHostPort(v); err != nil {
				return fmt.Errorf("must be host:port (e.g. 127.0.0.1:7071) or off, not %q", v)
			}
			c.GRPCListen = v
			return nil
		}},
		{"console-listen", "PACT_CONSOLE_LISTEN", "", "host:port of the operator web console (default: off); a loopback address unless pactd serves TLS", func(c *Config, v string) error {
			if v == "" {
				c.ConsoleListen = ""
				return nil
			}
			if _, _, err := net.SplitHostPort(v); err != nil {
				return fmt.Errorf("must be host:port (e.g. 127.0.0.1:7080) or empty for off, not %q", v)
			}
			c.ConsoleListen = v
			return nil
		}},
		{"data-dir", "PACT_DATA_DIR", ".pactd", "directory for the embedded database and local state", str(func(c *Config) *string { return &c.DataDir })},
		{"database-url", "PACT_DATABASE_URL", "", "postgres://… for PostgreSQL; empty for embedded SQLite in the data directory", str(func(c *Config) *string { return &c.DatabaseURL })},
		{"admin-token", "PACT_ADMIN_TOKEN", "", "bootstrap admin bearer token (prefer the environment variable)", secret(func(c *Config) *Secret { return &c.AdminToken })},
		{"frontend-token", "PACT_FRONTEND_TOKEN", "", "bootstrap frontend bearer token (prefer the environment variable)", secret(func(c *Config) *Secret { return &c.FrontendToken })},
		{"audience", "PACT_AUDIENCE", "", "Provider-wide audience PAs put in aud (default: {public-url}/a2a)", str(func(c *Config) *string { return &c.Audience })},
		{"public-url", "PACT_PUBLIC_URL", "http://localhost:3000", "the Provider's public base URL", str(func(c *Config) *string { return &c.PublicURL })},
		{"dev", "PACT_DEV", "false", "allow plain-HTTP JWKS URIs on loopback hosts (never in production)", func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("must be true or false")
			}
			c.Dev = b
			return nil
		}},
		{"jwks-allow-hosts", "PACT_JWKS_ALLOW_HOSTS", "", "comma-separated host names or IP literals whose https issuers and JWKS URIs may be loopback, private or internal (PAs inside your network; https still required)", hosts(func(c *Config) *[]string { return &c.JWKSAllowHosts })},
		{"jwks-ca-file", "PACT_JWKS_CA_FILE", "", "PEM file of CA certificates trusted for JWKS fetches besides the system's", str(func(c *Config) *string { return &c.JWKSCAFile })},
		{"tls-cert", "PACT_TLS_CERT", "", "PEM certificate file; with --tls-key serves TLS", str(func(c *Config) *string { return &c.TLSCert })},
		{"tls-key", "PACT_TLS_KEY", "", "PEM private key file", str(func(c *Config) *string { return &c.TLSKey })},
		{"key-encryption-key", "PACT_KEY_ENCRYPTION_KEY", "", "base64 32-byte key that encrypts Provider private keys at rest", secret(func(c *Config) *Secret { return &c.KeyEncryptionKey })},
		{"log-level", "PACT_LOG_LEVEL", "info", "debug, info, warn or error", str(func(c *Config) *string { return &c.LogLevel })},
		{"log-format", "PACT_LOG_FORMAT", "json", "json or text", str(func(c *Config) *string { return &c.LogFormat })},
		{"shutdown-timeout", "PACT_SHUTDOWN_TIMEOUT", "15s", "how long graceful shutdown may take", func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > 10*time.Minute {
				return fmt.Errorf("must be a duration between 0s and 10m, e.g. 15s")
			}
			c.ShutdownTimeout = d
			return nil
		}},
		{"rate-agent", "PACT_RATE_AGENT", "0", "requests/s allowed per agent (0: unlimited)", rate(func(c *Config) *float64 { return &c.RateAgent })},
		{"rate-subject", "PACT_RATE_SUBJECT", "0", "requests/s allowed per (agent, sub) (0: unlimited)", rate(func(c *Config) *float64 { return &c.RateSubject })},
		{"cache-ttl", "PACT_CACHE_TTL", "2s", "how long cached agent and Brand state may be used at most (the change feed applies changes sooner)", func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 100*time.Millisecond || d > time.Hour {
				return fmt.Errorf("must be a duration between 100ms and 1h, e.g. 2s")
			}
			c.CacheTTL = d
			return nil
		}},
		{"database-pooler", "PACT_DATABASE_POOLER", PoolerNone, "none, or transaction when PACT_DATABASE_URL goes through a transaction pooler (PgBouncer pool_mode=transaction): no server-side prepared statements, no LISTEN through it", func(c *Config, v string) error {
			if v != PoolerNone && v != PoolerTransaction {
				return fmt.Errorf("must be %s or %s", PoolerNone, PoolerTransaction)
			}
			c.DatabasePooler = v
			return nil
		}},
		{"change-poll-interval", "PACT_CHANGE_POLL_INTERVAL", "500ms", "how often each replica polls the change feed; the revocation bound is twice it", func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 10*time.Millisecond || d > 10*time.Second {
				return fmt.Errorf("must be a duration between 10ms and 10s, e.g. 500ms")
			}
			c.ChangePollInterval = d
			return nil
		}},
		{"change-notify-url", "PACT_CHANGE_NOTIFY_URL", "", "PostgreSQL URL of the LISTEN connection that wakes the change-feed poller early (default: the database URL; off: poll alone)", func(c *Config, v string) error {
			if v != "" && v != Off && !IsPostgresURL(v) {
				return fmt.Errorf("must be a postgres:// or postgresql:// URL, or off")
			}
			c.ChangeNotifyURL = v
			return nil
		}},
		{"outage-grace", "PACT_OUTAGE_GRACE", "5m", "while the database is unreachable, how long PA JWTs are still verified from last-known agent and Brand state (0: fail closed)", func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > 24*time.Hour {
				return fmt.Errorf("must be a duration between 0s and 24h, e.g. 5m")
			}
			c.OutageGrace = d
			return nil
		}},
		{"grant-cache-size", "PACT_GRANT_CACHE_SIZE", strconv.Itoa(DefaultGrantCacheSize), "grants each replica keeps in memory for delegated calls, about 460 bytes each; more distinct live grants than this within 10 minutes are read from the database again", func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < MinGrantCacheSize || n > MaxGrantCacheSize {
				return fmt.Errorf("must be a whole number of grants from %d to %d", MinGrantCacheSize, MaxGrantCacheSize)
			}
			c.GrantCacheSize = n
			return nil
		}},
		{"token-cache-size", "PACT_TOKEN_CACHE_SIZE", strconv.Itoa(DefaultTokenCacheSize), "entries of the PA repeat-token cache, each at most about 1.2 KiB: the main bound on memory under load (0: no cache)", func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > MaxTokenCacheSize {
				return fmt.Errorf("must be a whole number of entries from 0 (no cache) to %d", MaxTokenCacheSize)
			}
			c.TokenCacheSize = n
			return nil
		}},
		{"es256-tables", "PACT_ES256_TABLES", "on", "on: PA, Brand and registration keys that verify many tokens get precomputed ES256 tables (faster new-token verification, about 222 KiB per key within PACT_ES256_TABLE_BYTES); off: crypto/ecdsa for every signature", func(c *Config, v string) error {
			if v != "on" && v != Off {
				return fmt.Errorf("must be on or off")
			}
			c.ES256Tables = v == "on"
			return nil
		}},
		{"es256-table-bytes", "PACT_ES256_TABLE_BYTES", "64MiB", "memory all precomputed ES256 tables hold together, in bytes or with KiB, MiB or GiB (past it the least recently used are evicted)", func(c *Config, v string) error {
			n, ok := parseBytes(v)
			if !ok || n < MinES256TableBytes || n > MaxES256TableBytes {
				return fmt.Errorf("must be a whole number of bytes, KiB, MiB or GiB from 1MiB to 16GiB, e.g. 64MiB")
			}
			c.ES256TableBytes = n
			return nil
		}},
		{"audit-retention", "PACT_AUDIT_RETENTION", "90d", "how long audit events (signed receipts, grant events) are kept before they are pruned: a duration or whole days such as 90d (0: for ever)", func(c *Config, v string) error {
			d, err := parseRetention(v)
			if err != nil || (d != 0 && (d < MinAuditRetention || d > MaxAuditRetention)) {
				return fmt.Errorf("must be 0 (keep for ever) or a duration from 1h to 3650d, e.g. 90d or 720h")
			}
			c.AuditRetention = d
			return nil
		}},
		{"webhook-poll-interval", "PACT_WEBHOOK_POLL_INTERVAL", "1s", "how often each replica looks for audit event deliveries that are due", duration(func(c *Config) *time.Duration { return &c.Webhook.PollInterval }, 10*time.Millisecond, time.Minute, "1s")},
		{"webhook-timeout", "PACT_WEBHOOK_TIMEOUT", "10s", "how long one webhook delivery attempt may take", duration(func(c *Config) *time.Duration { return &c.Webhook.Timeout }, 100*time.Millisecond, time.Minute, "10s")},
		{"webhook-retry-base", "PACT_WEBHOOK_RETRY_BASE", "5s", "the wait after a first failed webhook delivery, doubled after each further failure (with jitter)", duration(func(c *Config) *time.Duration { return &c.Webhook.RetryBase }, 10*time.Millisecond, time.Hour, "5s")},
		{"webhook-retry-max", "PACT_WEBHOOK_RETRY_MAX", "1h", "the longest wait between two webhook delivery attempts", duration(func(c *Config) *time.Duration { return &c.Webhook.RetryMax }, 10*time.Millisecond, 24*time.Hour, "1h")},
		{"webhook-max-attempts", "PACT_WEBHOOK_MAX_ATTEMPTS", "100", "attempts after which a failing webhook delivery is dead (until an operator retries it)", func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return fmt.Errorf("must be a whole number of attempts from 1 to 10000")
			}
			c.Webhook.MaxAttempts = n
			return nil
		}},
		{"webhook-max-age", "PACT_WEBHOOK_MAX_AGE", "72h", "age (since its event) after which a failing webhook delivery is dead (until an operator retries it)", duration(func(c *Config) *time.Duration { return &c.Webhook.MaxAge }, time.Second, 30*24*time.Hour, "72h")},
		{"webhook-allow-hosts", "PACT_WEBHOOK_ALLOW_HOSTS", "", "comma-separated host names or IP literals whose webhook destination URLs may be loopback, private or internal (a SIEM inside your network; https still required)", hosts(func(c *Config) *[]string { return &c.Webhook.AllowHosts })},
		{"self-registration", "PACT_SELF_REGISTRATION", "off", "self-service PA registration through a frontend's POST /api/platforms: off, pending (an operator enables each PA) or enabled (accepted at once)", func(c *Config, v string) error {
			switch v {
			case "off", "pending", "enabled":
				c.SelfRegistration = v
				return nil
			}
			return fmt.Errorf("must be off, pending or enabled")
		}},
	}
	return opts
}

// isIPv6Literal reports whether h is a bare IPv6 address (no brackets).
func isIPv6Literal(h string) bool {
	a, err := netip.ParseAddr(h)
	return err == nil && a.Is6() && a.Zone() == ""
}

// clientEnv are the PACT_* variables only pactd's admin commands (pactd
// agent, brand, ...) read: PACT_ADDR, the pactd they call. A server ignores
// them, so an operator who exports them for the commands can still run
// pactd serve in the same shell. (PACT_ADMIN_TOKEN, which the commands also
// read, is a server setting as well.)
var clientEnv = map[string]bool{"PACT_ADDR": true}

// ClientEnvNames returns the PACT_* variables only the admin commands read
// (never a server setting), sorted.
func ClientEnvNames() []string {
	names := make([]string, 0, len(clientEnv))
	for k := range clientEnv {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// EnvNames returns every PACT_* environment variable pactd serve reads,
// sorted (the admin commands' own are ClientEnvNames).
func EnvNames() []string {
	var names []string
	for _, o := range options() {
		names = append(names, o.env)
	}
	sort.Strings(names)
	return names
}

// ErrHelp is returned by Load when -h or --help was given; usage has been
// written to the output.
var ErrHelp = flag.ErrHelp

// CommandLineError is a command line Load refused before reading any
// setting: an unknown flag, a flag without its value, a boolean flag with a
// value that is not one, or an argument. Nothing was written to the output
// (the usage would bury the one line that matters): the caller prints the
// error and says where the usage is.
type CommandLineError struct{ Err error }

// Error returns the flag package's message, such as "flag provided but not
// defined: -lisen".
func (e *CommandLineError) Error() string { return e.Err.Error() }

// Unwrap returns the flag package's error.
func (e *CommandLineError) Unwrap() error { return e.Err }

// Load builds the configuration from command-line arguments (without the
// program name or subcommand) and an environment lookup. -h writes the
// usage to out; a bad command line is a *CommandLineError.
func Load(args []string, environ []string, out io.Writer) (Config, error) {
	return LoadCommand("", args, environ, out)
}

// LoadCommand is Load for a subcommand: -h prints usage (the subcommand's
// synopsis) above the flags.
func LoadCommand(usage string, args []string, environ []string, out io.Writer) (Config, error) {
	var c Config
	opts := options()
	known := map[string]bool{}
	for _, o := range opts {
		known[o.env] = true
	}
	env := map[string]string{}
	var unknown []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "PACT_") {
			continue
		}
		if !known[k] {
			// Test harness variables are not pactd settings, and the admin
			// commands' own are not the server's.
			if clientEnv[k] || strings.HasPrefix(k, "PACT_TEST_") {
				continue
			}
			unknown = append(unknown, k)
			continue
		}
		env[k] = v
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, 0, len(known)+len(clientEnv))
		for k := range known {
			names = append(names, k)
		}
		names = append(names, ClientEnvNames()...) // a typo of PACT_ADDR is one too
		sort.Strings(names)
		for i, k := range unknown {
			if s := nearest(k, names); s != "" {
				unknown[i] = fmt.Sprintf("%s (did you mean %s?)", k, s)
			}
		}
		return c, fmt.Errorf("unknown environment variable(s) %s (known: see pactd serve -h)", strings.Join(unknown, ", "))
	}

	fs := flag.NewFlagSet("pactd", flag.ContinueOnError)
	// The flag package prints an error and the usage itself; only -h
	// prints here (below), an error goes back to the caller alone.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	flagVals := map[string]*string{}
	for _, o := range opts {
		v := &flagValue{boolean: boolFlags[o.flag]}
		flagVals[o.flag] = &v.s
		fs.Var(v, o.flag, fmt.Sprintf("%s (env %s, default %q)", o.usage, o.env, o.def))
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(out, "%s\nflags (each also a PACT_* environment variable; flags win):\n", cmp.Or(usage, "usage: pactd [serve] [flags]"))
		fs.SetOutput(out)
		fs.PrintDefaults()
		return c, err
	} else if err != nil {
		return c, &CommandLineError{err}
	}
	if fs.NArg() > 0 {
		return c, &CommandLineError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	var errs []error
	for _, o := range opts {
		v, source := o.def, "default"
		if ev, ok := env[o.env]; ok {
			v, source = ev, o.env
		}
		if given[o.flag] {
			v, source = *flagVals[o.flag], "--"+o.flag
		}
		if err := o.set(&c, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", source, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	c.Tracing = tracing.Enabled(Getenv(environ))
	return c, nil
}

func (c *Config) validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("listen: must be host:port: %w", err))
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			errs = append(errs, fmt.Errorf("metrics-listen: must be host:port: %w", err))
		}
	}
	errs = append(errs, c.portClashes()...)
	if c.DataDir == "" {
		errs = append(errs, errors.New("data-dir: must not be empty"))
	} else {
		c.DataDir = filepath.Clean(c.DataDir)
	}
	if c.DatabaseURL != "" && !IsPostgresURL(c.DatabaseURL) && !strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		//lint:ignore ST1005 the message ends in the scheme "sqlite:" it names, and stays as it is
		errs = append(errs, errors.New("database-url: must start with postgres://, postgresql:// or sqlite:"))
	}
	if c.DatabasePooler == PoolerTransaction && !IsPostgresURL(c.DatabaseURL) {
		errs = append(errs, errors.New("database-pooler: transaction needs a PostgreSQL database-url"))
	}
	pu, err := url.Parse(c.PublicURL)
	switch {
	case err != nil || !pu.IsAbs() || pu.Host == "":
		errs = append(errs, errors.New("public-url: must be an absolute http(s) URL"))
	case pu.Scheme != "https" && pu.Scheme != "http":
		errs = append(errs, errors.New("public-url: scheme must be http or https"))
	case strings.ContainsAny(c.PublicURL, "?#"): // an empty query or fragment too
		errs = append(errs, errors.New("public-url: must not have a query or fragment"))
	default:
		c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	}
	if c.Audience == "" && err == nil {
		c.Audience = c.PublicURL + "/a2a"
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("tls-cert, tls-key: give both or neither"))
	}
	if c.ConsoleListen != "" && c.TLSCert == "" && !loopbackHost(c.ConsoleListen) {
		errs = append(errs, fmt.Errorf("console-listen (PACT_CONSOLE_LISTEN) %s is not a loopback address and pactd serves no TLS: the console's sign-in sends an admin credential; bind it to 127.0.0.1 or [::1] (behind a TLS proxy) or set tls-cert and tls-key", c.ConsoleListen))
	}
	for name, tok := range map[string]Secret{"admin-token": c.AdminToken, "frontend-token": c.FrontendToken} {
		if tok != "" && len(tok) < 16 {
			errs = append(errs, fmt.Errorf("%s: must be at least 16 characters", name))
		}
	}
	if c.AdminToken != "" && c.AdminToken == c.FrontendToken {
		errs = append(errs, errors.New("admin-token, frontend-token: must differ"))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, errors.New("log-level: must be debug, info, warn or error"))
	}
	switch c.LogFormat {
	case "json", "text":
	default:
		errs = append(errs, errors.New("log-format: must be json or text"))
	}
	return errors.Join(errs...)
}

// portClashes refuses two of pactd's ports on one address: the second
// listener would fail at startup with a bare "address already in use", or,
// for a wildcard host, bind beside the other and split its traffic.
func (c *Config) portClashes() []error {
	type port struct{ name, env, addr string }
	ports := []port{{"listen", "PACT_LISTEN", c.Listen}, {"metrics-listen", "PACT_METRICS_LISTEN", c.MetricsListen}, {"grpc-listen", "PACT_GRPC_LISTEN", c.GRPCListen},
		{"console-listen", "PACT_CONSOLE_LISTEN", c.ConsoleListen}}
	var errs []error
	for i, a := range ports {
		for _, b := range ports[i+1:] {
			if sameAddress(a.addr, b.addr) {
				errs = append(errs, fmt.Errorf("%s (%s) %s is the same port as %s (%s) %s; each port needs its own address", b.name, b.env, b.addr, a.name, a.env, a.addr))
			}
		}
	}
	return errs
}

// loopbackHost reports whether a host:port names a loopback host: an IP
// literal in 127.0.0.0/8 or ::1, or "localhost".
func loopbackHost(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// sameAddress reports whether two host:port listen addresses would bind the
// same port: equal non-zero ports on equal hosts, or on hosts of which one
// is a wildcard. Port 0 (any free port) never clashes.
func sameAddress(a, b string) bool {
	ah, ap, errA := net.SplitHostPort(a)
	bh, bp, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil || ap != bp || ap == "0" {
		return false
	}
	wild := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ah == bh || wild(ah) || wild(bh)
}

// NotifyURL is the URL the LISTEN connection of the change feed opens, or
// "" for none (polling alone): the configured one, else the database URL
// when it is PostgreSQL's and no transaction pooler stands in the way
// (LISTEN through one is accepted but never delivers).
func (c Config) NotifyURL() string {
	switch {
	case c.ChangeNotifyURL == Off:
		return ""
	case c.ChangeNotifyURL != "":
		return c.ChangeNotifyURL
	case IsPostgresURL(c.DatabaseURL) && c.DatabasePooler != PoolerTransaction:
		return c.DatabaseURL
	}
	return ""
}

// IsPostgresURL reports whether a database URL selects PostgreSQL.
func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// flagValue holds a flag's text; a boolean one may be given without a value.
type flagValue struct {
	s       string
	boolean bool
}

func (v *flagValue) String() string { return v.s }

func (v *flagValue) Set(s string) error { v.s = s; return nil }

// IsBoolFlag lets the flag package accept --dev without "=true".
func (v *flagValue) IsBoolFlag() bool { return v.boolean }

// nearest returns the known name closest to name by edit distance, if it is
// close enough to be a likely typo: at most one edit per three characters
// after PACT_ (and at least one).
func nearest(name string, known []string) string {
	best, bestD := "", max(1, len(strings.TrimPrefix(name, "PACT_"))/3)+1
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes; the
// names are ASCII and bounded by the environment's size).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
