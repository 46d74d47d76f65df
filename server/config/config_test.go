package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/core/grantcache"
	"pactd.dev/pactd/server/config"
	"pactd.dev/pactd/token/es256"
	"pactd.dev/pactd/token/pajwt"
)

// Tokens long enough to pass validation, distinct, and easy to spot if they
// ever leak into output.
const (
	adminTok    = "admin-SECRET-0123456789abcdef"
	frontendTok = "frontend-SECRET-0123456789abcdef"
	kekVal      = "kek-SECRET-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
)

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	if config.DefaultGrantCacheSize != grantcache.DefaultSize {
		t.Errorf("DefaultGrantCacheSize = %d, want grantcache.DefaultSize %d", config.DefaultGrantCacheSize, grantcache.DefaultSize)
	}
	if config.MaxTokenCacheSize != pajwt.MaxCacheSize {
		t.Errorf("MaxTokenCacheSize = %d, want pajwt.MaxCacheSize %d", config.MaxTokenCacheSize, pajwt.MaxCacheSize)
	}
	if config.DefaultES256TableBytes != es256.DefaultMaxBytes {
		t.Errorf("DefaultES256TableBytes = %d, want es256.DefaultMaxBytes %d", config.DefaultES256TableBytes, es256.DefaultMaxBytes)
	}
	if config.DefaultTokenCacheSize != pajwt.DefaultCacheSize {
		t.Errorf("DefaultTokenCacheSize = %d, want pajwt.DefaultCacheSize %d", config.DefaultTokenCacheSize, pajwt.DefaultCacheSize)
	}
	c, err := config.Load(nil, nil, io.Discard)
	if err != nil {
		t.Fatalf("Load with nothing set: %v", err)
	}
	want := config.Config{
		Listen:          "127.0.0.1:7070",
		DataDir:         ".pactd",
		PublicURL:       "http://localhost:3000",
		Audience:        "http://localhost:3000/a2a",
		LogLevel:        "info",
		LogFormat:       "json",
		ShutdownTimeout: 15 * time.Second,
		CacheTTL:        2 * time.Second,
		OutageGrace:     5 * time.Minute,
		GRPCListen:      "127.0.0.1:7071",
		TokenCacheSize:  65536,

		ChangePollInterval: 500 * time.Millisecond,
		DatabasePooler:     "none",
		GrantCacheSize:     100_000,
		AuditRetention:     90 * 24 * time.Hour,
		SelfRegistration:   "off",
		Webhook: config.WebhookConfig{PollInterval: time.Second, Timeout: 10 * time.Second, RetryBase: 5 * time.Second,
			RetryMax: time.Hour, MaxAttempts: 100, MaxAge: 72 * time.Hour},
		ES256Tables:     true,
		ES256TableBytes: 64 << 20,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
}

// TestLoad holds the precedence (flag, then PACT_* environment, then
// default) and the derived values, with ok/... cases that must load.
func TestLoad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		args  []string
		env   []string
		check func(t *testing.T, c config.Config)
	}{
		{
			name: "ok/notify-url-defaults-to-the-database",
			env:  []string{"PACT_DATABASE_URL=postgres://db.internal/pactd", "PACT_CHANGE_POLL_INTERVAL=250ms"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "NotifyURL", c.NotifyURL(), "postgres://db.internal/pactd")
				eq(t, "ChangePollInterval", c.ChangePollInterval.String(), "250ms")
			},
		},
		{
			name: "ok/notify-url-of-its-own",
			env:  []string{"PACT_DATABASE_URL=postgres://pooler.internal/pactd", "PACT_DATABASE_POOLER=transaction", "PACT_CHANGE_NOTIFY_URL=postgresql://db.internal/pactd"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "NotifyURL", c.NotifyURL(), "postgresql://db.internal/pactd")
			},
		},
		{
			name: "ok/behind-a-transaction-pooler-polls-alone",
			env:  []string{"PACT_DATABASE_URL=postgres://pooler.internal:6432/pactd", "PACT_DATABASE_POOLER=transaction"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "DatabasePooler", c.DatabasePooler, "transaction")
				eq(t, "NotifyURL", c.NotifyURL(), "")
			},
		},
		{
			name: "ok/audit-retention-days",
			env:  []string{"PACT_AUDIT_RETENTION=30d"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "AuditRetention", c.AuditRetention.String(), "720h0m0s")
			},
		},
		{
			name: "ok/audit-retention-duration",
			args: []string{"--audit-retention", "36h"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "AuditRetention", c.AuditRetention.String(), "36h0m0s")
			},
		},
		{
			name: "ok/audit-retention-forever",
			env:  []string{"PACT_AUDIT_RETENTION=0"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "AuditRetention", c.AuditRetention.String(), "0s")
			},
		},
		{
			name: "ok/webhook-bounds",
			env: []string{"PACT_WEBHOOK_POLL_INTERVAL=50ms", "PACT_WEBHOOK_TIMEOUT=2s", "PACT_WEBHOOK_RETRY_BASE=20ms", "PACT_WEBHOOK_RETRY_MAX=1s",
				"PACT_WEBHOOK_MAX_ATTEMPTS=7", "PACT_WEBHOOK_MAX_AGE=2h", "PACT_WEBHOOK_ALLOW_HOSTS=SIEM.internal,10.0.0.9"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "Webhook", fmt.Sprint(c.Webhook), "{50ms 2s 20ms 1s 7 2h0m0s [siem.internal 10.0.0.9]}")
			},
		},
		{
			name: "ok/grant-cache-size",
			env:  []string{"PACT_GRANT_CACHE_SIZE=2000000"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "GrantCacheSize", strconv.Itoa(c.GrantCacheSize), "2000000")
			},
		},
		{
			name: "ok/notify-off-and-sqlite-polls-alone",
			env:  []string{"PACT_DATABASE_URL=postgres://db.internal/pactd", "PACT_CHANGE_NOTIFY_URL=off"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "NotifyURL", c.NotifyURL(), "")
				sqlite, err := config.Load(nil, nil, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				eq(t, "NotifyURL(sqlite)", sqlite.NotifyURL(), "")
			},
		},
		{
			name: "ok/env-beats-default",
			env:  []string{"PACT_LISTEN=127.0.0.1:8080", "PACT_LOG_LEVEL=debug"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "Listen", c.Listen, "127.0.0.1:8080")
				eq(t, "LogLevel", c.LogLevel, "debug")
			},
		},
		{
			name: "ok/flag-beats-env",
			args: []string{"--listen", "127.0.0.1:9090", "-log-level=warn"},
			env:  []string{"PACT_LISTEN=127.0.0.1:8080", "PACT_LOG_LEVEL=debug"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "Listen", c.Listen, "127.0.0.1:9090")
				eq(t, "LogLevel", c.LogLevel, "warn")
			},
		},
		{
			name: "ok/dev-is-a-boolean-flag",
			args: []string{"--dev", "--listen", "127.0.0.1:9091"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "Dev", strconv.FormatBool(c.Dev), "true")
				eq(t, "Listen", c.Listen, "127.0.0.1:9091")
			},
		},
		{
			name: "ok/dev-false-flag-beats-env",
			args: []string{"-dev=false"},
			env:  []string{"PACT_DEV=true"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "Dev", strconv.FormatBool(c.Dev), "false")
			},
		},
		{
			name: "ok/flag-beats-default",
			args: []string{"--data-dir", "/var/lib/pactd/", "--log-format", "text"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "DataDir", c.DataDir, "/var/lib/pactd")
				eq(t, "LogFormat", c.LogFormat, "text")
			},
		},
		{
			name: "ok/env-and-flag-for-different-settings",
			args: []string{"--log-format=text"},
			env:  []string{"PACT_LOG_LEVEL=error"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "LogFormat", c.LogFormat, "text")
				eq(t, "LogLevel", c.LogLevel, "error")
				eq(t, "Listen", c.Listen, "127.0.0.1:7070")
			},
		},
		{
			name: "ok/public-url-trailing-slash-trimmed",
			env:  []string{"PACT_PUBLIC_URL=https://provider.example/"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "PublicURL", c.PublicURL, "https://provider.example")
				eq(t, "Audience", c.Audience, "https://provider.example/a2a")
			},
		},
		{
			name: "ok/public-url-with-path",
			args: []string{"--public-url", "https://provider.example/pact/"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "PublicURL", c.PublicURL, "https://provider.example/pact")
				eq(t, "Audience", c.Audience, "https://provider.example/pact/a2a")
			},
		},
		{
			name: "ok/audience-derived-from-flag-public-url-over-env",
			args: []string{"--public-url=https://flag.example"},
			env:  []string{"PACT_PUBLIC_URL=https://env.example"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "PublicURL", c.PublicURL, "https://flag.example")
				eq(t, "Audience", c.Audience, "https://flag.example/a2a")
			},
		},
		{
			name: "ok/audience-given",
			env:  []string{"PACT_PUBLIC_URL=https://provider.example", "PACT_AUDIENCE=https://aud.example"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "Audience", c.Audience, "https://aud.example")
			},
		},
		{
			name: "ok/postgres-url",
			env:  []string{"PACT_DATABASE_URL=postgres://u@127.0.0.1:5432/pactd"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "DatabaseURL", c.DatabaseURL, "postgres://u@127.0.0.1:5432/pactd")
			},
		},
		{
			name: "ok/postgresql-url",
			args: []string{"--database-url", "postgresql://u@db/pactd"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "DatabaseURL", c.DatabaseURL, "postgresql://u@db/pactd")
			},
		},
		{
			name: "ok/sqlite-url",
			env:  []string{"PACT_DATABASE_URL=sqlite:/var/lib/pactd/pactd.db"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "DatabaseURL", c.DatabaseURL, "sqlite:/var/lib/pactd/pactd.db")
			},
		},
		{
			name: "ok/tokens-tls-kek",
			env: []string{
				"PACT_ADMIN_TOKEN=" + adminTok, "PACT_FRONTEND_TOKEN=" + frontendTok,
				"PACT_KEY_ENCRYPTION_KEY=" + kekVal,
				"PACT_TLS_CERT=/etc/pactd/cert.pem", "PACT_TLS_KEY=/etc/pactd/key.pem",
			},
			check: func(t *testing.T, c config.Config) {
				eq(t, "AdminToken", c.AdminToken.Reveal(), adminTok)
				eq(t, "FrontendToken", c.FrontendToken.Reveal(), frontendTok)
				eq(t, "KeyEncryptionKey", c.KeyEncryptionKey.Reveal(), kekVal)
				eq(t, "TLSCert", c.TLSCert, "/etc/pactd/cert.pem")
				eq(t, "TLSKey", c.TLSKey, "/etc/pactd/key.pem")
			},
		},
		{
			name: "ok/admin-token-only",
			args: []string{"--admin-token", adminTok},
			check: func(t *testing.T, c config.Config) {
				eq(t, "AdminToken", c.AdminToken.Reveal(), adminTok)
				eq(t, "FrontendToken", c.FrontendToken.Reveal(), "")
			},
		},
		{
			name: "ok/numbers-and-dev",
			env:  []string{"PACT_SHUTDOWN_TIMEOUT=2m", "PACT_RATE_AGENT=12.5", "PACT_DEV=true"},
			args: []string{"--rate-subject", "3"},
			check: func(t *testing.T, c config.Config) {
				if c.ShutdownTimeout != 2*time.Minute {
					t.Errorf("ShutdownTimeout = %v, want 2m", c.ShutdownTimeout)
				}
				if c.RateAgent != 12.5 || c.RateSubject != 3 {
					t.Errorf("RateAgent, RateSubject = %v, %v; want 12.5, 3", c.RateAgent, c.RateSubject)
				}
				if !c.Dev {
					t.Error("Dev = false, want true")
				}
			},
		},
		{
			name: "ok/flag-false-beats-env-true",
			args: []string{"--dev=false"},
			env:  []string{"PACT_DEV=true"},
			check: func(t *testing.T, c config.Config) {
				if c.Dev {
					t.Error("Dev = true, want false (the flag wins)")
				}
			},
		},
		{
			name: "ok/metrics-listen",
			env:  []string{"PACT_METRICS_LISTEN=127.0.0.1:9100"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "MetricsListen", c.MetricsListen, "127.0.0.1:9100")
			},
		},
		{
			name: "ok/grpc-listen-off",
			env:  []string{"PACT_GRPC_LISTEN=off"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "GRPCListen", c.GRPCListen, "")
			},
		},
		{
			name: "ok/grpc-listen-flag-off-beats-env",
			args: []string{"--grpc-listen=off"},
			env:  []string{"PACT_GRPC_LISTEN=127.0.0.1:9000"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "GRPCListen", c.GRPCListen, "")
			},
		},
		{
			name: "ok/grpc-listen-given",
			env:  []string{"PACT_GRPC_LISTEN=0.0.0.0:7071", "PACT_LISTEN=0.0.0.0:7070"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "GRPCListen", c.GRPCListen, "0.0.0.0:7071")
			},
		},
		{
			// Port 0 asks for any free port: never a clash.
			name: "ok/every-port-zero",
			env:  []string{"PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=127.0.0.1:0", "PACT_METRICS_LISTEN=127.0.0.1:0"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "GRPCListen", c.GRPCListen, "127.0.0.1:0")
			},
		},
		{
			name: "ok/same-port-on-different-hosts",
			env:  []string{"PACT_LISTEN=127.0.0.1:7070", "PACT_GRPC_LISTEN=127.0.0.2:7070"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "GRPCListen", c.GRPCListen, "127.0.0.2:7070")
			},
		},
		{
			name: "ok/console-listen-loopback",
			env:  []string{"PACT_CONSOLE_LISTEN=127.0.0.1:7080"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "ConsoleListen", c.ConsoleListen, "127.0.0.1:7080")
			},
		},
		{
			name: "ok/console-listen-ipv6-loopback-flag",
			args: []string{"--console-listen", "[::1]:7080"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "ConsoleListen", c.ConsoleListen, "[::1]:7080")
			},
		},
		{
			name: "ok/console-listen-localhost",
			env:  []string{"PACT_CONSOLE_LISTEN=localhost:7080"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "ConsoleListen", c.ConsoleListen, "localhost:7080")
			},
		},
		{
			// With TLS any interface may serve it.
			name: "ok/console-listen-any-with-tls",
			env:  []string{"PACT_CONSOLE_LISTEN=0.0.0.0:7080", "PACT_TLS_CERT=c.pem", "PACT_TLS_KEY=k.pem"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "ConsoleListen", c.ConsoleListen, "0.0.0.0:7080")
			},
		},
		{
			name: "ok/console-listen-empty-is-off",
			env:  []string{"PACT_CONSOLE_LISTEN="},
			check: func(t *testing.T, c config.Config) {
				eq(t, "ConsoleListen", c.ConsoleListen, "")
			},
		},
		{
			name: "ok/jwks-allow-hosts",
			env:  []string{"PACT_JWKS_ALLOW_HOSTS= PA.staging.internal ,127.0.0.1,,::1", "PACT_JWKS_CA_FILE=ca.pem"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "JWKSAllowHosts", strings.Join(c.JWKSAllowHosts, " "), "pa.staging.internal 127.0.0.1 ::1")
				eq(t, "JWKSCAFile", c.JWKSCAFile, "ca.pem")
			},
		},
		{
			name: "ok/token-cache-size",
			env:  []string{"PACT_TOKEN_CACHE_SIZE=1000"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "TokenCacheSize", strconv.Itoa(c.TokenCacheSize), "1000")
			},
		},
		{
			name: "ok/token-cache-size-zero-disables",
			args: []string{"--token-cache-size", "0"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "TokenCacheSize", strconv.Itoa(c.TokenCacheSize), "0")
			},
		},
		{
			name: "ok/es256-tables-off",
			env:  []string{"PACT_ES256_TABLES=off"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "ES256Tables", strconv.FormatBool(c.ES256Tables), "false")
			},
		},
		{
			name: "ok/es256-table-bytes-units",
			env:  []string{"PACT_ES256_TABLE_BYTES=2GiB"},
			args: []string{"--es256-table-bytes", "1048576"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "ES256TableBytes (the flag wins)", strconv.FormatInt(c.ES256TableBytes, 10), "1048576")
			},
		},
		{
			name: "ok/es256-table-bytes-mib",
			env:  []string{"PACT_ES256_TABLE_BYTES=256MiB"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "ES256TableBytes", strconv.FormatInt(c.ES256TableBytes, 10), strconv.Itoa(256<<20))
			},
		},
		{
			name: "ok/token-cache-size-max",
			env:  []string{"PACT_TOKEN_CACHE_SIZE=4194304"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "TokenCacheSize", strconv.Itoa(c.TokenCacheSize), "4194304")
			},
		},
		{
			name: "ok/test-harness-and-foreign-variables-ignored",
			env:  []string{"PACT_TEST_POSTGRES_URL=postgres://x@y/z", "PACT_TEST_ANYTHING=1", "HOME=/root", "PATH=/bin", "NOEQUALS"},
			check: func(t *testing.T, c config.Config) {
				eq(t, "Listen", c.Listen, "127.0.0.1:7070")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Load(tc.args, tc.env, io.Discard)
			if err != nil {
				t.Fatalf("Load(%q, %q): %v", tc.args, tc.env, err)
			}
			tc.check(t, c)
		})
	}
}

// TestLoadRefuses holds every rule: each failing case must name the setting
// (or the variable or flag it came from) in the error.
func TestLoadRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		env  []string
		want []string // substrings of the error
	}{
		{"fail/unknown-env", nil, []string{"PACT_LISTN=127.0.0.1:1"}, []string{"PACT_LISTN", "unknown"}},
		{"fail/unknown-env-all-named", nil, []string{"PACT_ZZZ=1", "PACT_AAA=2", "PACT_LISTEN=127.0.0.1:1"}, []string{"PACT_AAA", "PACT_ZZZ"}},
		{"fail/unknown-env-prefix-only", nil, []string{"PACT_=1"}, []string{"PACT_"}},
		{"fail/unknown-flag", []string{"--listne=x"}, nil, []string{"listne"}},
		{"fail/extra-argument", []string{"serve"}, nil, []string{"serve"}},

		{"fail/jwks-allow-hosts-url", nil, []string{"PACT_JWKS_ALLOW_HOSTS=https://pa.example"}, []string{"PACT_JWKS_ALLOW_HOSTS", "no scheme, port or path", "https://pa.example"}},
		{"fail/jwks-allow-hosts-port", nil, []string{"PACT_JWKS_ALLOW_HOSTS=pa.example:443"}, []string{"PACT_JWKS_ALLOW_HOSTS", "pa.example:443"}},
		{"fail/listen-no-port", []string{"--listen", "127.0.0.1"}, nil, []string{"listen"}},
		{"fail/listen-empty-env", nil, []string{"PACT_LISTEN="}, []string{"listen"}},
		{"fail/metrics-listen", nil, []string{"PACT_METRICS_LISTEN=9100"}, []string{"metrics-listen"}},
		{"fail/grpc-listen-no-port", nil, []string{"PACT_GRPC_LISTEN=7071"}, []string{"PACT_GRPC_LISTEN", "host:port", "off"}},
		{"fail/grpc-listen-empty", nil, []string{"PACT_GRPC_LISTEN="}, []string{"PACT_GRPC_LISTEN", "off"}},
		{"fail/grpc-listen-flag", []string{"--grpc-listen", "Off"}, nil, []string{"--grpc-listen", "host:port"}},
		{"fail/grpc-listen-is-listen", nil, []string{"PACT_GRPC_LISTEN=127.0.0.1:7070"}, []string{"PACT_GRPC_LISTEN", "PACT_LISTEN", "own address"}},
		{"fail/grpc-listen-is-metrics", nil, []string{"PACT_GRPC_LISTEN=127.0.0.1:9100", "PACT_METRICS_LISTEN=127.0.0.1:9100"}, []string{"PACT_GRPC_LISTEN", "PACT_METRICS_LISTEN", "own address"}},
		{"fail/grpc-listen-wildcard-clash", nil, []string{"PACT_LISTEN=0.0.0.0:7071"}, []string{"PACT_GRPC_LISTEN", "PACT_LISTEN", "own address"}},
		{"fail/grpc-listen-empty-host-clash", []string{"--listen", ":7000", "--grpc-listen", "127.0.0.1:7000"}, nil, []string{"PACT_GRPC_LISTEN", "PACT_LISTEN"}},
		{"fail/metrics-listen-is-listen", nil, []string{"PACT_METRICS_LISTEN=127.0.0.1:7070"}, []string{"PACT_METRICS_LISTEN", "PACT_LISTEN", "own address"}},
		{"fail/console-listen-no-port", nil, []string{"PACT_CONSOLE_LISTEN=7080"}, []string{"PACT_CONSOLE_LISTEN", "host:port"}},
		{"fail/console-listen-off-word", []string{"--console-listen", "off"}, nil, []string{"--console-listen", "host:port"}},
		{"fail/console-listen-is-listen", nil, []string{"PACT_CONSOLE_LISTEN=127.0.0.1:7070"}, []string{"PACT_CONSOLE_LISTEN", "PACT_LISTEN", "own address"}},
		{"fail/console-listen-is-grpc", nil, []string{"PACT_CONSOLE_LISTEN=127.0.0.1:7071"}, []string{"PACT_CONSOLE_LISTEN", "PACT_GRPC_LISTEN", "own address"}},
		{"fail/console-listen-wildcard-without-tls", nil, []string{"PACT_CONSOLE_LISTEN=0.0.0.0:7080"}, []string{"console-listen", "not a loopback address", "no TLS"}},
		{"fail/console-listen-empty-host-without-tls", nil, []string{"PACT_CONSOLE_LISTEN=:7080"}, []string{"console-listen", "not a loopback address"}},
		{"fail/console-listen-private-without-tls", nil, []string{"PACT_CONSOLE_LISTEN=10.0.0.5:7080"}, []string{"console-listen", "not a loopback address"}},
		{"fail/console-listen-name-without-tls", nil, []string{"PACT_CONSOLE_LISTEN=console.internal:7080"}, []string{"console-listen", "not a loopback address"}},
		{"fail/data-dir-empty", []string{"--data-dir="}, nil, []string{"data-dir"}},

		{"fail/database-pooler-unknown", nil, []string{"PACT_DATABASE_URL=postgres://h/db", "PACT_DATABASE_POOLER=session"}, []string{"PACT_DATABASE_POOLER", "none or transaction"}},
		{"fail/database-pooler-on-sqlite", nil, []string{"PACT_DATABASE_POOLER=transaction"}, []string{"database-pooler", "PostgreSQL"}},
		{"fail/es256-tables-unknown", nil, []string{"PACT_ES256_TABLES=true"}, []string{"PACT_ES256_TABLES", "on or off"}},
		{"fail/es256-tables-case", []string{"--es256-tables", "OFF"}, nil, []string{"--es256-tables", "on or off"}},
		{"fail/es256-table-bytes-too-small", nil, []string{"PACT_ES256_TABLE_BYTES=1000KiB"}, []string{"PACT_ES256_TABLE_BYTES", "from 1MiB to 16GiB"}},
		{"fail/es256-table-bytes-too-large", nil, []string{"PACT_ES256_TABLE_BYTES=17GiB"}, []string{"PACT_ES256_TABLE_BYTES", "from 1MiB to 16GiB"}},
		{"fail/es256-table-bytes-unit", nil, []string{"PACT_ES256_TABLE_BYTES=64MB"}, []string{"PACT_ES256_TABLE_BYTES", "KiB, MiB or GiB"}},
		{"fail/es256-table-bytes-negative", nil, []string{"PACT_ES256_TABLE_BYTES=-64MiB"}, []string{"PACT_ES256_TABLE_BYTES"}},
		{"fail/es256-table-bytes-overflow", nil, []string{"PACT_ES256_TABLE_BYTES=9999999999999GiB"}, []string{"PACT_ES256_TABLE_BYTES"}},
		{"fail/grant-cache-size-too-small", nil, []string{"PACT_GRANT_CACHE_SIZE=999"}, []string{"PACT_GRANT_CACHE_SIZE", "from 1000 to 10000000"}},
		{"fail/grant-cache-size-not-a-number", []string{"--grant-cache-size", "1e6"}, nil, []string{"--grant-cache-size"}},
		{"fail/change-poll-interval-too-short", nil, []string{"PACT_CHANGE_POLL_INTERVAL=5ms"}, []string{"PACT_CHANGE_POLL_INTERVAL", "between 10ms and 10s"}},
		{"fail/change-poll-interval-too-long", []string{"--change-poll-interval", "11s"}, nil, []string{"--change-poll-interval", "between 10ms and 10s"}},
		{"fail/change-poll-interval-not-a-duration", nil, []string{"PACT_CHANGE_POLL_INTERVAL=1"}, []string{"PACT_CHANGE_POLL_INTERVAL"}},
		{"fail/change-notify-url-not-postgres", nil, []string{"PACT_CHANGE_NOTIFY_URL=mysql://h/db"}, []string{"PACT_CHANGE_NOTIFY_URL", "postgres://", "off"}},

		{"fail/database-url-mysql", nil, []string{"PACT_DATABASE_URL=mysql://u@h/db"}, []string{"database-url"}},
		{"fail/database-url-no-scheme", []string{"--database-url", "/var/lib/pactd.db"}, nil, []string{"database-url"}},
		{"fail/database-url-postgres-no-slashes", nil, []string{"PACT_DATABASE_URL=postgres:db"}, []string{"database-url"}},

		{"fail/public-url-relative", nil, []string{"PACT_PUBLIC_URL=/pact"}, []string{"public-url"}},
		{"fail/public-url-no-host", nil, []string{"PACT_PUBLIC_URL=https://"}, []string{"public-url"}},
		{"fail/public-url-ftp", []string{"--public-url", "ftp://provider.example"}, nil, []string{"public-url"}},
		{"fail/public-url-query", nil, []string{"PACT_PUBLIC_URL=https://provider.example/?a=b"}, []string{"public-url"}},
		{"fail/public-url-empty-query", nil, []string{"PACT_PUBLIC_URL=https://provider.example/?"}, []string{"public-url"}},
		{"fail/public-url-fragment", nil, []string{"PACT_PUBLIC_URL=https://provider.example/#x"}, []string{"public-url"}},
		{"fail/public-url-empty-fragment", nil, []string{"PACT_PUBLIC_URL=https://provider.example/#"}, []string{"public-url"}},
		{"fail/public-url-unparsable", nil, []string{"PACT_PUBLIC_URL=http://[::1"}, []string{"public-url"}},

		{"fail/tls-cert-without-key", nil, []string{"PACT_TLS_CERT=/c.pem"}, []string{"tls-cert", "tls-key"}},
		{"fail/tls-key-without-cert", []string{"--tls-key", "/k.pem"}, nil, []string{"tls-cert", "tls-key"}},

		{"fail/admin-token-short", nil, []string{"PACT_ADMIN_TOKEN=short"}, []string{"admin-token"}},
		{"fail/frontend-token-short", []string{"--frontend-token", "0123456789abcde"}, nil, []string{"frontend-token"}},
		{"fail/admin-equals-frontend", nil, []string{"PACT_ADMIN_TOKEN=" + adminTok, "PACT_FRONTEND_TOKEN=" + adminTok}, []string{"admin-token", "frontend-token"}},

		{"fail/log-level", nil, []string{"PACT_LOG_LEVEL=verbose"}, []string{"log-level"}},
		{"fail/log-level-case", []string{"--log-level", "INFO"}, nil, []string{"log-level"}},
		{"fail/log-format", nil, []string{"PACT_LOG_FORMAT=xml"}, []string{"log-format"}},

		{"fail/shutdown-timeout-garbage", nil, []string{"PACT_SHUTDOWN_TIMEOUT=soon"}, []string{"PACT_SHUTDOWN_TIMEOUT"}},
		{"fail/shutdown-timeout-zero", []string{"--shutdown-timeout", "0s"}, nil, []string{"--shutdown-timeout"}},
		{"fail/shutdown-timeout-negative", nil, []string{"PACT_SHUTDOWN_TIMEOUT=-5s"}, []string{"PACT_SHUTDOWN_TIMEOUT"}},
		{"fail/shutdown-timeout-too-long", nil, []string{"PACT_SHUTDOWN_TIMEOUT=11m"}, []string{"PACT_SHUTDOWN_TIMEOUT"}},
		{"fail/shutdown-timeout-no-unit", nil, []string{"PACT_SHUTDOWN_TIMEOUT=15"}, []string{"PACT_SHUTDOWN_TIMEOUT"}},
		{"fail/outage-grace-negative", nil, []string{"PACT_OUTAGE_GRACE=-1s"}, []string{"PACT_OUTAGE_GRACE"}},
		{"fail/outage-grace-too-long", nil, []string{"PACT_OUTAGE_GRACE=25h"}, []string{"PACT_OUTAGE_GRACE"}},
		{"fail/outage-grace-no-unit", nil, []string{"PACT_OUTAGE_GRACE=300"}, []string{"PACT_OUTAGE_GRACE"}},
		{"fail/webhook-poll-interval-zero", nil, []string{"PACT_WEBHOOK_POLL_INTERVAL=0s"}, []string{"PACT_WEBHOOK_POLL_INTERVAL", "between 10ms and 1m0s"}},
		{"fail/webhook-timeout-too-long", nil, []string{"PACT_WEBHOOK_TIMEOUT=2m"}, []string{"PACT_WEBHOOK_TIMEOUT"}},
		{"fail/webhook-retry-base-word", nil, []string{"PACT_WEBHOOK_RETRY_BASE=soon"}, []string{"PACT_WEBHOOK_RETRY_BASE"}},
		{"fail/webhook-retry-max-too-long", nil, []string{"PACT_WEBHOOK_RETRY_MAX=25h"}, []string{"PACT_WEBHOOK_RETRY_MAX"}},
		{"fail/webhook-max-attempts-zero", nil, []string{"PACT_WEBHOOK_MAX_ATTEMPTS=0"}, []string{"PACT_WEBHOOK_MAX_ATTEMPTS", "from 1 to 10000"}},
		{"fail/webhook-max-age-too-long", nil, []string{"PACT_WEBHOOK_MAX_AGE=721h"}, []string{"PACT_WEBHOOK_MAX_AGE"}},
		{"fail/webhook-allow-hosts-url", nil, []string{"PACT_WEBHOOK_ALLOW_HOSTS=https://siem.example"}, []string{"PACT_WEBHOOK_ALLOW_HOSTS", "no scheme, port or path"}},
		{"fail/audit-retention-too-short", nil, []string{"PACT_AUDIT_RETENTION=30m"}, []string{"PACT_AUDIT_RETENTION"}},
		{"fail/audit-retention-too-long", nil, []string{"PACT_AUDIT_RETENTION=3651d"}, []string{"PACT_AUDIT_RETENTION"}},
		{"fail/audit-retention-negative", nil, []string{"PACT_AUDIT_RETENTION=-1h"}, []string{"PACT_AUDIT_RETENTION"}},
		{"fail/audit-retention-days-sign", nil, []string{"PACT_AUDIT_RETENTION=+9d"}, []string{"PACT_AUDIT_RETENTION"}},
		{"fail/audit-retention-garbage", []string{"--audit-retention", "a while"}, nil, []string{"--audit-retention"}},

		{"fail/rate-agent-negative", nil, []string{"PACT_RATE_AGENT=-1"}, []string{"PACT_RATE_AGENT"}},
		{"fail/rate-subject-negative-flag", []string{"--rate-subject=-0.5"}, nil, []string{"--rate-subject"}},
		{"fail/rate-agent-garbage", nil, []string{"PACT_RATE_AGENT=fast"}, []string{"PACT_RATE_AGENT"}},
		{"fail/rate-agent-nan", nil, []string{"PACT_RATE_AGENT=NaN"}, []string{"PACT_RATE_AGENT"}},
		{"fail/rate-subject-inf", nil, []string{"PACT_RATE_SUBJECT=+Inf"}, []string{"PACT_RATE_SUBJECT"}},

		{"fail/token-cache-size-negative", nil, []string{"PACT_TOKEN_CACHE_SIZE=-1"}, []string{"PACT_TOKEN_CACHE_SIZE", "4194304"}},
		{"fail/token-cache-size-too-big", []string{"--token-cache-size=4194305"}, nil, []string{"--token-cache-size", "4194304"}},
		{"fail/token-cache-size-garbage", nil, []string{"PACT_TOKEN_CACHE_SIZE=64k"}, []string{"PACT_TOKEN_CACHE_SIZE"}},
		{"fail/token-cache-size-empty", nil, []string{"PACT_TOKEN_CACHE_SIZE="}, []string{"PACT_TOKEN_CACHE_SIZE"}},

		{"fail/dev-not-bool", nil, []string{"PACT_DEV=yes"}, []string{"PACT_DEV"}},
		{"fail/flag-source-named", []string{"--dev=maybe"}, []string{"PACT_DEV=true"}, []string{"--dev"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			_, err := config.Load(tc.args, tc.env, &out)
			if err == nil {
				t.Fatalf("Load(%q, %q) succeeded; want an error naming %q", tc.args, tc.env, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// TestUnknownEnvSuggests: a typo of a known PACT_* name is refused with the
// nearest known name; a name far from every known one gets no guess.
func TestUnknownEnvSuggests(t *testing.T) {
	t.Parallel()
	cases := []struct{ env, want string }{
		{"PACT_LISTN=127.0.0.1:1", "PACT_LISTN (did you mean PACT_LISTEN?)"},
		{"PACT_DATABSE_URL=postgres://h/db", "PACT_DATABSE_URL (did you mean PACT_DATABASE_URL?)"},
		{"PACT_KEY_ENCRYPTION=x", "PACT_KEY_ENCRYPTION (did you mean PACT_KEY_ENCRYPTION_KEY?)"},
		{"PACT_ADRR=http://127.0.0.1:7070", "PACT_ADRR (did you mean PACT_ADDR?)"}, // the admin commands' variable
	}
	for _, tc := range cases {
		_, err := config.Load(nil, []string{tc.env}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s) error = %v, want it to contain %q", tc.env, err, tc.want)
		}
	}
	_, err := config.Load(nil, []string{"PACT_ZZZ=1"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "PACT_ZZZ") || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Load(PACT_ZZZ) error = %v, want PACT_ZZZ named without a guess", err)
	}
}

// TestClientVariablesDoNotStopTheServer: PACT_ADDR is the admin commands'
// variable (pactd agent, brand, ...), so pactd serve, which refuses unknown
// PACT_* names, must start with it exported, whatever its value; it is no
// server setting.
func TestClientVariablesDoNotStopTheServer(t *testing.T) {
	t.Parallel()
	if got := config.ClientEnvNames(); !slices.Equal(got, []string{"PACT_ADDR"}) {
		t.Fatalf("ClientEnvNames() = %q, want [PACT_ADDR]", got)
	}
	for _, v := range []string{"http://127.0.0.1:7070", "https://pactd.internal:7070", "not a URL at all"} {
		c, err := config.Load(nil, []string{"PACT_ADDR=" + v, "PACT_LISTEN=127.0.0.1:7170"}, io.Discard)
		if err != nil {
			t.Fatalf("Load with PACT_ADDR=%q: %v", v, err)
		}
		if c.Listen != "127.0.0.1:7170" {
			t.Errorf("Listen = %q: PACT_ADDR must not change the server's settings", c.Listen)
		}
	}
	for _, n := range config.EnvNames() {
		if slices.Contains(config.ClientEnvNames(), n) {
			t.Errorf("%s is both a server setting and a client-only variable", n)
		}
	}
	// Positive control: an unknown name beside it is still refused.
	if _, err := config.Load(nil, []string{"PACT_ADDR=http://127.0.0.1:7070", "PACT_LISTN=x"}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "PACT_LISTN") || strings.Contains(err.Error(), "PACT_ADDR ") {
		t.Errorf("Load with PACT_ADDR and PACT_LISTN: %v, want PACT_LISTN alone refused", err)
	}
}

func TestLoadReportsEveryBrokenRule(t *testing.T) {
	t.Parallel()
	_, err := config.Load([]string{"--listen=nope", "--log-format=xml"}, []string{"PACT_LOG_LEVEL=loud"}, io.Discard)
	if err == nil {
		t.Fatal("Load succeeded; want three errors")
	}
	for _, w := range []string{"listen", "log-format", "log-level"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
}

func TestLoadHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := config.Load([]string{"-h"}, nil, &out)
	if !errors.Is(err, config.ErrHelp) || !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Load(-h) error = %v, want ErrHelp", err)
	}
	for _, w := range []string{"-listen", "PACT_LISTEN", "127.0.0.1:7070", "-admin-token", "PACT_ADMIN_TOKEN",
		"-grpc-listen", "PACT_GRPC_LISTEN", "127.0.0.1:7071", "off disables it", "-token-cache-size", "PACT_TOKEN_CACHE_SIZE", "65536"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("usage does not mention %q:\n%s", w, out.String())
		}
	}
}

func TestSecretString(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		secret config.Secret
		want   string
	}{
		{"ok/empty", "", ""},
		{"ok/short", "x", "[redacted]"},
		{"ok/token", adminTok, "[redacted]"},
		{"ok/redacted-lookalike", "[redacted]", "[redacted]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.secret.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := tc.secret.Reveal(); got != string(tc.secret) {
				t.Errorf("Reveal() = %q, want the value", got)
			}
		})
	}
}

// TestSecretsNeverPrinted loads a configuration with every secret set and
// prints it in the ways a careless caller might: no output may hold a value.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	c, err := config.Load(
		[]string{"--frontend-token", frontendTok},
		[]string{"PACT_ADMIN_TOKEN=" + adminTok, "PACT_KEY_ENCRYPTION_KEY=" + kekVal},
		io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logJSON, logText bytes.Buffer
	slog.New(slog.NewJSONHandler(&logJSON, nil)).Info("config", "config", c, "admin", c.AdminToken)
	slog.New(slog.NewTextHandler(&logText, nil)).Info("config", "config", c, "admin", c.AdminToken)
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"%v":        fmt.Sprintf("%v", c),
		"%+v":       fmt.Sprintf("%+v", c),
		"%#v":       fmt.Sprintf("%#v", c),
		"%v-ptr":    fmt.Sprintf("%v", &c),
		"%v-secret": fmt.Sprintf("%v %s %q %#v", c.AdminToken, c.AdminToken, c.AdminToken, c.AdminToken),
		"json":      string(js),
		"slog-json": logJSON.String(),
		"slog-text": logText.String(),
	}
	for how, s := range outputs {
		for _, secret := range []string{adminTok, frontendTok, kekVal, "SECRET"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s output reveals a secret: %s", how, s)
				break
			}
		}
	}
	if !strings.Contains(outputs["%v"], "[redacted]") {
		t.Errorf("%%v output has no [redacted] marker, so the check above saw no secret field: %s", outputs["%v"])
	}
}

func TestErrorsDoNotEchoSecrets(t *testing.T) {
	t.Parallel()
	_, err := config.Load(nil, []string{"PACT_DATABASE_URL=mysql://user:SECRET-pw@host/db", "PACT_ADMIN_TOKEN=SECRET"}, io.Discard)
	if err == nil {
		t.Fatal("Load succeeded; want errors")
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error reveals a secret value: %v", err)
	}
}

func eq(t *testing.T, field, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", field, got, want)
	}
}

// TestTracingFromTheInjectedEnvironment: whether the server traces is
// read from the environment Load is given, never from the process's, so a
// caller (cmd/pactd, a test) decides it without touching os.Environ.
func TestTracingFromTheInjectedEnvironment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		want bool
	}{
		{"ok/endpoint", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"}, true},
		{"ok/traces-endpoint", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces"}, true},
		{"ok/exporter-otlp", []string{"OTEL_TRACES_EXPORTER=otlp"}, true},
		{"off/nothing", nil, false},
		{"off/sdk-disabled", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_SDK_DISABLED=true"}, false},
		{"off/exporter-none", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER=none"}, false},
		{"off/last-wins", []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_TRACES_EXPORTER=none"}, false},
	} {
		c, err := config.Load(nil, tc.env, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Tracing != tc.want {
			t.Errorf("%s: Tracing = %v, want %v", tc.name, c.Tracing, tc.want)
		}
	}
}

func TestGetenv(t *testing.T) {
	t.Parallel()
	get := config.Getenv([]string{"A=1", "B=", "C=x=y", "A=2", "NOEQUALS"})
	for k, want := range map[string]string{"A": "2", "B": "", "C": "x=y", "NOEQUALS": "", "PATH": ""} {
		if got := get(k); got != want {
			t.Errorf("Getenv(%s) = %q, want %q", k, got, want)
		}
	}
}

// TestLoadCommandLineErrors: a bad command line is a *CommandLineError
// carrying the flag package's message, and nothing is written to the
// output (no usage above or below the one line that matters); a valid
// command line is the positive control.
func TestLoadCommandLineErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lisen", "127.0.0.1:7070"}, "flag provided but not defined: -lisen"},
		{[]string{"--listen"}, "flag needs an argument: -listen"},
		{[]string{"--listen", "127.0.0.1:7070", "extra"}, `unexpected argument "extra"`},
	} {
		var out bytes.Buffer
		_, err := config.Load(tc.args, nil, &out)
		var ce *config.CommandLineError
		if !errors.As(err, &ce) || err.Error() != tc.want {
			t.Errorf("Load(%q) = %v (%T), want a *CommandLineError %q", tc.args, err, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("Load(%q) wrote %q; want nothing", tc.args, out.String())
		}
	}
	var out bytes.Buffer
	c, err := config.Load([]string{"--listen", "127.0.0.1:7170", "--grpc-listen=off"}, nil, &out)
	if err != nil || c.Listen != "127.0.0.1:7170" || out.Len() != 0 {
		t.Errorf("Load of a valid command line: %v, listen %q, output %q", err, c.Listen, out.String())
	}
}
