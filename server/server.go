// Package server builds pactd: it opens the store, builds every service with
// the dependencies it needs, mounts them with health, reflection and metrics
// on one port, and runs until its context ends, then shuts down gracefully.
package server

import (
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"connectrpc.com/otelconnect"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"

	"pactd.dev/pactd/core/agentdir"
	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/core/brandcache"
	"pactd.dev/pactd/core/changefeed"
	"pactd.dev/pactd/core/grantcache"
	"pactd.dev/pactd/core/provkeys"
	corewebhook "pactd.dev/pactd/core/webhook"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/apidesc"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/keyseal"
	"pactd.dev/pactd/internal/ratelimit"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/urlrule"
	"pactd.dev/pactd/server/config"
	"pactd.dev/pactd/server/console"
	"pactd.dev/pactd/server/oauthhttp"
	"pactd.dev/pactd/server/reqlog"
	"pactd.dev/pactd/server/workpool"
	"pactd.dev/pactd/services/agent"
	"pactd.dev/pactd/services/audit"
	"pactd.dev/pactd/services/brand"
	"pactd.dev/pactd/services/conversation"
	"pactd.dev/pactd/services/credential"
	"pactd.dev/pactd/services/delegation"
	"pactd.dev/pactd/services/frontdoor"
	hdtpsvc "pactd.dev/pactd/services/hdtp"
	"pactd.dev/pactd/services/token"
	"pactd.dev/pactd/services/verification"
	webhooksvc "pactd.dev/pactd/services/webhook"
	"pactd.dev/pactd/token/delegtoken"
	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/pajwt"
)

// Server is a built, not yet running, pactd: Build completes it from the
// configuration and its dependencies, and Run serves it.
type Server struct {
	cfg   config.Config
	log   *slog.Logger
	clock Clock
	// traced is whether the OTEL_* environment turns trace export on
	// (config.Config.Tracing): only then do the span interceptors run, since
	// they cost every call CPU even when no span is exported.
	traced  bool
	store   db.Store
	handler http.Handler
	metrics http.Handler
	// tls is the certificate configuration of every port (PACT_TLS_CERT
	// and PACT_TLS_KEY, loaded once), or nil without TLS.
	tls *tls.Config
	// feed polls the change feed and applies other replicas' changes to
	// this replica's caches (package changefeed).
	feed *changefeed.Feed
	// health answers grpc.health.v1 on both ports.
	health *storeChecker
	// grpc is the native gRPC server of PACT_GRPC_LISTEN, or nil.
	grpc *grpc.Server
	// console is the operator console of PACT_CONSOLE_LISTEN, or nil.
	console *console.Console
	// replica is this process's id in the replicas' heartbeats.
	replica string
	// listeners are the sockets Run serves on: the ones the caller bound,
	// then the ones Run binds.
	listeners Listeners
	// purgers delete expired state; the purge loop runs each in turn.
	purgers []purger
	// loops are the background work Run starts beside the ports.
	loops []loop
	// tasks is one-off background work that must end before the store
	// closes (a key reload after a change).
	tasks *tasks
	// cleanup releases everything Build acquired, in reverse order.
	cleanup cleanup
}

// Deps are what Build takes besides the configuration. Every field is
// optional: the zero Deps is production's.
type Deps struct {
	// Logger receives the server's logs; none when nil.
	Logger *slog.Logger
	// Out receives a generated admin token, once, on a store's first
	// start; discarded when nil.
	Out io.Writer
	// Clock is the time of everything the server stamps, caches and runs
	// on a ticker (the change feed, heartbeats, the purge); the system
	// clock when nil. Request durations in logs and metrics are measured
	// on the system's monotonic clock whatever this is.
	Clock Clock
	// Rand is the randomness of device and user codes, refresh tokens and
	// task ids (the delegation service); crypto/rand when nil. Keys and
	// other secrets always come from crypto/rand (which a test makes
	// deterministic with testing/cryptotest).
	Rand io.Reader
	// Store, when set, is the store the server uses instead of opening the
	// configured database; the caller opened it (migrations applied) and
	// closes it after the server stops.
	Store db.Store
	// Listeners are sockets the caller bound before Build, which Run
	// serves on instead of binding the configured addresses. The server
	// owns them: each is closed when the server stops, or at once if
	// Build fails.
	Listeners Listeners
}

// Listeners are the sockets of a server's ports. A nil one is bound by Run
// from the configuration.
type Listeners struct {
	// API serves Connect, gRPC, gRPC-Web, health and reflection
	// (PACT_LISTEN).
	API net.Listener
	// GRPC serves the native gRPC port (PACT_GRPC_LISTEN, which must not
	// be off).
	GRPC net.Listener
	// Console serves the operator console (PACT_CONSOLE_LISTEN, which must
	// be set).
	Console net.Listener
	// Metrics serves /metrics (PACT_METRICS_LISTEN, which must be set).
	Metrics net.Listener
}

// Clock is the time a Server runs on: Now stamps and ages state, and
// NewTicker paces its loops. *testclock.Clock is one; systemClock, the
// default, is the other.
type Clock interface {
	Now() time.Time
	// NewTicker is time.NewTicker: ticks receives the time every d until
	// stop is called.
	NewTicker(d time.Duration) (ticks <-chan time.Time, stop func())
}

// systemClock is time.Now and time.NewTicker.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Build is pactd's composition root. It completes the configuration (the
// TLS certificate, the JWKS roots, the key-encryption key), opens the store
// (applying migrations) unless deps has one, bootstraps credentials
// (writing a generated admin token to deps.Out, once), builds every
// service with the dependencies it needs, and mounts them. Whatever it
// acquires is released on one path: if Build fails, before it returns;
// otherwise when Run returns, or by Close.
func Build(ctx context.Context, cfg config.Config, deps Deps) (_ *Server, err error) {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Out == nil {
		deps.Out = io.Discard
	}
	if deps.Clock == nil {
		deps.Clock = systemClock{}
	}
	if deps.Rand == nil {
		deps.Rand = rand.Reader
	}
	s := &Server{cfg: cfg, traced: cfg.Tracing, clock: deps.Clock, listeners: deps.Listeners, tasks: newTasks()}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	// Every line carries its request's id; repeated identical faults are
	// rate-limited (package reqlog).
	log := slog.New(reqlog.NewHandler(deps.Logger.Handler(), nil))
	s.log = log
	now := s.clock.Now
	if err := s.ownListeners(); err != nil {
		return nil, err
	}
	if s.tls, err = loadTLS(cfg); err != nil {
		return nil, err
	}
	jwksRoots, err := jwksRootCAs(cfg.JWKSCAFile)
	if err != nil {
		return nil, err
	}
	// The key-encryption key first: without one on PostgreSQL pactd refuses
	// to start (unless PACT_DEV=true) before touching the database.
	shared := config.IsPostgresURL(cfg.DatabaseURL)
	if deps.Store != nil {
		shared = deps.Store.Engine() == "postgres"
	}
	kek, err := provkeys.LoadKEK(provkeys.KEKSource{Configured: cfg.KeyEncryptionKey.Reveal(), DataDir: cfg.DataDir,
		SharedStore: shared, Dev: cfg.Dev, Logger: log})
	if err != nil {
		return nil, err
	}
	s.store = deps.Store
	if s.store == nil {
		if s.store, err = db.Open(ctx, cfg.DatabaseURL, cfg.DataDir, StoreOptions(cfg)...); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		s.cleanup.push("store", s.store.Close)
	}
	store := s.store
	// Pushed after the store, so it ends before the store closes.
	s.cleanup.push("background tasks", s.tasks.stop)
	if err := auth.Bootstrap(ctx, store, cfg.AdminToken.Reveal(), cfg.FrontendToken.Reveal(), now(), deps.Out); err != nil {
		return nil, fmt.Errorf("bootstrap credentials: %w", err)
	}
	s.replica = ids.New("rep_", now())
	reg := prometheus.NewRegistry()
	// Besides the default Go metrics, the collector's CPU by phase
	// (go_cpu_classes_gc_{mark_assist,mark_dedicated,mark_idle,pause}_cpu_seconds_total
	// from runtime/metrics), so a latency tail can be laid beside the mark
	// work that caused it.
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
		collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/cpu/classes/gc/`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerProcessMetrics(reg, store)
	s.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	authn := auth.NewAuthenticator(store, cfg.OutageGrace, now)
	s.cleanup.push("credential last-use writes", func() error { authn.Wait(); return nil })
	keyRing, err := provkeys.Open(ctx, provkeys.Config{Store: store, KEK: kek, Now: now, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	tokenSigner := delegtoken.NewSigner(keyRing, now) // also the delegation service's Minter

	jwks, err := jose.NewJWKSClient(jose.Config{AllowLoopbackHTTP: cfg.Dev, AllowHosts: cfg.JWKSAllowHosts, RootCAs: jwksRoots, OnFetch: jwksFetches(reg),
		Tables: es256Tables(cfg.ES256Tables, cfg.ES256TableBytes, reg), Now: now})
	if err != nil {
		return nil, fmt.Errorf("jwks client: %w", err)
	}
	// pajwt reads CacheSize 0 as its default and a negative one as no
	// cache; the configuration says 0 for no cache.
	cacheSize := cfg.TokenCacheSize
	if cacheSize == 0 {
		cacheSize = -1
	}
	paVerifier, err := pajwt.New(pajwt.Config{Keys: jwks, Now: now, CacheSize: cacheSize})
	if err != nil {
		return nil, fmt.Errorf("PA JWT verifier: %w", err)
	}
	registerTokenCacheMetric(reg, paVerifier)
	// The caches that hold state other replicas change, and the feed that
	// tells them (package changefeed); the feed starts with Run.
	fed := &fedCaches{log: log, keys: keyRing, authn: authn, tasks: s.tasks}
	s.feed = changefeed.New(changefeed.Config{Store: store, Interval: cfg.ChangePollInterval, Apply: fed.apply, Resync: fed.resync,
		Now: now, NewTicker: s.clock.NewTicker, Logger: log, Registerer: reg})
	agents := agentdir.New(store, cfg.Audience, cfg.CacheTTL, cfg.OutageGrace, s.feed, now)
	fed.agents = agents
	pa := agentdir.PAVerifier{Verifier: paVerifier, Directory: agents}
	tokenVerifier := delegtoken.NewVerifier(keyRing, now)
	brands := brandcache.New(store, cfg.CacheTTL, cfg.OutageGrace, s.feed, now)
	fed.brands = brands
	// Grant liveness from memory, for every delegated call (package
	// grantcache): revocations arrive through the feed.
	grants := grantcache.New(store, cfg.GrantCacheSize, s.feed, now, reg)
	fed.grants = grants
	cached := cachedStore{Store: store, brands: brands, grants: grants}
	verifier := verification.New(verification.Deps{
		PA: pa, Brands: brands, Now: now, Logger: log, Registerer: reg,
		Delegation:   verification.DelegationTokens{Tokens: tokenVerifier, Grants: grants, PublicURL: cfg.PublicURL, Now: now},
		AgentLimit:   ratelimit.New(cfg.RateAgent, burst(cfg.RateAgent), now),
		SubjectLimit: ratelimit.New(cfg.RateSubject, burst(cfg.RateSubject), now),
	})

	auditMetrics := newAuditMetrics(reg)
	deleg := delegation.New(delegation.Deps{Store: cached, PA: pa, Minter: tokenSigner, PublicURL: cfg.PublicURL, Now: now, Rand: deps.Rand, Logger: log, BrandKeys: jwks,
		Sessions: delegtoken.ConsentSessions{Signer: tokenSigner, Verifier: tokenVerifier}, OnAudit: auditMetrics.recorded, Grants: grants, Registerer: reg})
	auditSvc := audit.New(audit.Deps{Store: store, Retention: cfg.AuditRetention, Now: now, Logger: log, OnPrune: auditMetrics.pruned})
	secrets, err := provkeys.NewSecretBox(kek)
	if err != nil {
		return nil, fmt.Errorf("secret box: %w", err)
	}
	// The audit trail's outbox, delivered to webhook destinations; every
	// replica runs the dispatcher (leased claims keep each delivery to one).
	wc := cfg.Webhook
	webhooks := corewebhook.New(corewebhook.Config{Store: store, Secrets: secrets, Now: now, NewTicker: s.clock.NewTicker, Logger: log, Registerer: reg,
		PollInterval: wc.PollInterval, Timeout: wc.Timeout, RetryBase: wc.RetryBase, RetryMax: wc.RetryMax,
		MaxAttempts: wc.MaxAttempts, MaxAge: wc.MaxAge, Dev: cfg.Dev, AllowHosts: wc.AllowHosts})
	// HDTP / PACT 2 (hdtp.v1): leaf keys sealed under the same KEK.
	hdtpSvc, err := hdtpServices(store, kek, now, log, reg, auditMetrics.recorded)
	if err != nil {
		return nil, err
	}
	// What the hourly purge deletes, one entry per kind of expired state.
	s.purgers = []purger{
		{"expired delegation state", deleg.PurgeExpired},
		{"change-feed rows past their retention", func(ctx context.Context) (int64, error) {
			return store.PruneChanges(ctx, now().Add(-changefeed.Retention))
		}},
		{"audit events past PACT_AUDIT_RETENTION", auditSvc.Prune},
		{"HDTP leaf keys past their notAfter", hdtpSvc.Identity.Sweep},
		{"HDTP host replay records, former pins, invites and calls past their windows", hdtpSvc.Host.Purge},
		{"webhook deliveries past their retention", webhooks.Purge},
	}
	svc := Services{
		Credential: credential.New(credential.Deps{Store: store, Now: now, Logger: log, OnRevoke: authn.Forget}),
		Agent: agent.New(agent.Deps{Store: store, Audience: cfg.Audience, Dev: cfg.Dev, AllowHosts: cfg.JWKSAllowHosts, Now: now, Logger: log, OnChange: agents.Changed,
			SelfRegistration: cfg.SelfRegistration, RegistrationKeys: jwks, OnSelfRegistration: selfRegistrations(reg)}),
		Brand:        brand.New(brand.Deps{Store: store, PublicURL: cfg.PublicURL, Dev: cfg.Dev, Now: now, Logger: log, OnChange: brands.Forget, CardSigner: keyRing}),
		Verification: verifier,
		Conversation: conversation.New(conversation.Deps{Store: store, Now: now, Logger: log}),
		Delegation:   deleg,
		Token: token.New(token.Deps{Brands: brands, Grants: grants, Keys: keyRing, Verifier: tokenVerifier,
			Signer: tokenSigner, Audit: store, OnAudit: auditMetrics.recorded, PublicURL: cfg.PublicURL, Now: now, Logger: log}),
		Audit:        auditSvc,
		HDTPIdentity: hdtpSvc.Identity,
		HDTPTrust:    hdtpSvc.Trust,
		HDTPHost:     hdtpSvc.Host,
		HDTPContact:  hdtpSvc.Contact,
		HDTPInvite:   hdtpSvc.Invite,
		Webhook: webhooksvc.New(webhooksvc.Deps{Store: store, Secrets: secrets, Now: now, Logger: log,
			URLs: urlrule.Policy{Dev: cfg.Dev, AllowHosts: wc.AllowHosts}}),
	}
	// The front door calls the services above in process and serves
	// pactd's OAuth endpoints through their HTTP handler; its secret keys
	// turn handles and page forms alike on every replica.
	doorSecret, err := hkdf.Key(sha256.New, kek, nil, "pactd front door", 32)
	if err != nil {
		return nil, fmt.Errorf("front door secret: %w", err)
	}
	if svc.FrontDoor, err = frontdoor.New(frontdoor.Deps{
		Verify: verifier, Brands: svc.Brand, Turns: svc.Conversation, Delegation: deleg,
		Receipts: svc.Token, Registration: svc.Agent, OAuth: oauthEndpoints(svc, log),
		Secret: doorSecret, PublicURL: cfg.PublicURL, Now: now, Logger: log,
	}); err != nil {
		return nil, fmt.Errorf("front door: %w", err)
	}
	if cfg.ConsoleListen != "" {
		if err := s.newConsole(svc, authn, keyRing, now); err != nil {
			return nil, err
		}
	}
	s.health = &storeChecker{store: store, services: serviceNames, grace: cfg.OutageGrace, now: now}
	metrics := newRPCMetrics(reg)
	workers := workpool.New(streamWorkers)
	s.handler = onWorkers(workers, withRequestID(s.mux(svc, authn, metrics, newHTTPMetrics(reg))))
	if cfg.GRPCListen != "" {
		s.grpc = s.newGRPCServer(svc, authn, metrics, workers)
	}
	// The background work Run starts beside the ports, each on s.clock.
	s.loops = []loop{
		{"change feed", s.feed.Run},
		{"replica heartbeat", s.heartbeat},
		{"purge", s.purgeLoop},
		// At shutdown it lets the attempts under way finish (each within
		// its timeout) and hands back the leases it did not use.
		{"webhook deliveries", webhooks.Run},
	}
	if u := cfg.NotifyURL(); u != "" {
		s.loops = append(s.loops, loop{"change notifications", func(ctx context.Context) { s.listen(ctx, u) }})
	}
	return s, nil
}

// ownListeners puts the listeners the caller bound on the cleanup path, and
// refuses one for a port the configuration turns off.
func (s *Server) ownListeners() error {
	for _, l := range []struct {
		ln   net.Listener
		what string
		on   bool
	}{
		{s.listeners.API, "API", true},
		{s.listeners.GRPC, "native gRPC", s.cfg.GRPCListen != ""},
		{s.listeners.Console, "console", s.cfg.ConsoleListen != ""},
		{s.listeners.Metrics, "metrics", s.cfg.MetricsListen != ""},
	} {
		if l.ln == nil {
			continue
		}
		s.cleanup.push(l.what+" listener", closeListener(l.ln))
		if !l.on {
			return fmt.Errorf("a %s listener was given, but the configuration turns that port off", l.what)
		}
	}
	return nil
}

// loadTLS loads PACT_TLS_CERT and PACT_TLS_KEY once for every port; nil
// without TLS.
func loadTLS(cfg config.Config) (*tls.Config, error) {
	if cfg.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// fedCaches are this replica's caches of state other replicas change; the
// change feed drops what they hold for each change (apply) or everything
// (resync).
type fedCaches struct {
	log    *slog.Logger
	agents *agentdir.Directory
	brands *brandcache.Cache
	grants *grantcache.Cache
	authn  *auth.Authenticator
	keys   *provkeys.Ring
	// tasks runs the key reloads, so the store outlives them.
	tasks *tasks
}

func (f *fedCaches) apply(cs []db.Change) {
	reload := false
	for _, c := range cs {
		switch c.Kind {
		case db.ChangeAgent:
			f.agents.Forget(c.Key)
			f.grants.ForgetClient(c.Key) // a deleted agent's grants are deleted with it
		case db.ChangeGrant:
			f.grants.Forget(c.Key)
		case db.ChangeBrand:
			f.brands.Forget(c.Key)
		case db.ChangeCredential:
			f.authn.Forget()
		case db.ChangeKey:
			reload = true
		}
	}
	if reload {
		f.reloadKeys()
	}
}

func (f *fedCaches) resync() {
	f.agents.ForgetAll()
	f.brands.ForgetAll()
	f.grants.ForgetAll()
	f.authn.Forget()
	f.reloadKeys()
}

// reloadKeys reloads the key ring in the background, bounded in time (a
// new key signs only once every replica has had minutes to load it).
func (f *fedCaches) reloadKeys() {
	f.tasks.Go(func(stopping context.Context) {
		ctx, cancel := context.WithTimeout(stopping, 10*time.Second)
		defer cancel()
		if err := f.keys.Refresh(ctx); err != nil && stopping.Err() == nil { // not cut short by the server stopping
			f.log.Warn("reload signing keys after a change", slog.String("error", err.Error()))
		}
	})
}

// StoreOptions are the db.Open options the configuration asks for.
func StoreOptions(cfg config.Config) []db.Option {
	if cfg.DatabasePooler == config.PoolerTransaction {
		return []db.Option{db.BehindTransactionPooler()}
	}
	return nil
}

// cachedStore is the store with Brand reads served by the cache, for
// services that take the whole store but read a Brand on every request,
// and grant revocations applied to this replica's grant cache at once
// (other replicas learn them from the feed).
type cachedStore struct {
	db.Store
	brands *brandcache.Cache
	grants *grantcache.Cache
}

// GetBrand reads through the cache.
func (c cachedStore) GetBrand(ctx context.Context, id string) (db.Brand, error) {
	return c.brands.GetBrand(ctx, id)
}

// RevokeGrant revokes in the store, then forgets the grant here.
func (c cachedStore) RevokeGrant(ctx context.Context, id string, now time.Time) (bool, error) {
	revoked, err := c.Store.RevokeGrant(ctx, id, now)
	c.grants.Forget(id)
	return revoked, err
}

// burst is the bucket size for a rate: one second's worth, at least 1.
func burst(rate float64) int { return max(1, int(rate)) }

// Services are the handlers pactd mounts, on the main port and on the
// native gRPC port alike. Every field is set: an RPC that is not built
// answers Unimplemented through the generated handler the service embeds.
type Services struct {
	Credential   pactv1connect.CredentialServiceHandler
	Agent        pactv1connect.AgentServiceHandler
	Brand        pactv1connect.BrandServiceHandler
	Verification pactv1connect.VerificationServiceHandler
	Conversation pactv1connect.ConversationServiceHandler
	Delegation   pactv1connect.DelegationServiceHandler
	Token        pactv1connect.TokenServiceHandler
	Audit        pactv1connect.AuditServiceHandler
	FrontDoor    pactv1connect.FrontDoorServiceHandler
	// HDTPIdentity, HDTPTrust, HDTPHost, HDTPContact and HDTPInvite are
	// hdtp.v1's services.
	HDTPIdentity hdtpv1connect.IdentityServiceHandler
	HDTPTrust    hdtpv1connect.TrustServiceHandler
	Webhook      pactv1connect.WebhookServiceHandler
	HDTPHost     hdtpv1connect.HostServiceHandler
	HDTPContact  hdtpv1connect.ContactServiceHandler
	HDTPInvite   hdtpv1connect.InviteServiceHandler
}

// oauthEndpoints are pactd's OAuth endpoints in RFC wire form (package
// oauthhttp) on a mux of their own.
func oauthEndpoints(svc Services, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	oauthhttp.New(svc.Delegation, svc.Token, log).Register(mux)
	return mux
}

// hdtpSet is hdtp.v1's services.
type hdtpSet struct {
	Identity *hdtpsvc.Identities
	Trust    *hdtpsvc.Trust
	Host     *hdtpsvc.Host
	Contact  *hdtpsvc.Contacts
	Invite   *hdtpsvc.Invites
}

// hdtpServices builds hdtp.v1's services: the identity service holds leaf
// keys sealed under the KEK; all use the one public-address rule.
func hdtpServices(store db.Store, kek []byte, now func() time.Time, log *slog.Logger, reg prometheus.Registerer,
	onAudit func(db.AuditKind)) (hdtpSet, error) {
	sealer, err := keyseal.New(kek)
	if err != nil {
		return hdtpSet{}, fmt.Errorf("hdtp leaf keys: %w", err)
	}
	// Call and outbound handles open on every replica: their key comes
	// from the key-encryption key, as the front door's does.
	secret, err := hkdf.Key(sha256.New, kek, nil, "pactd hdtp handles", 32)
	if err != nil {
		return hdtpSet{}, fmt.Errorf("hdtp handle secret: %w", err)
	}
	d := hdtpsvc.Deps{Store: store, Sealer: sealer, IsPublic: urlrule.IsPublicAddr, Now: now, Logger: log, Registerer: reg,
		HandleSecret: secret, OnAudit: onAudit}
	ids := hdtpsvc.NewIdentities(d)
	host, err := hdtpsvc.NewHost(d, ids)
	if err != nil {
		return hdtpSet{}, err
	}
	return hdtpSet{Identity: ids, Trust: hdtpsvc.NewTrust(d, ids), Host: host, Contact: hdtpsvc.NewContacts(host), Invite: hdtpsvc.NewInvites(host)}, nil
}

// descriptors resolves the API's descriptors for reflection: the documented
// ones of internal/apidesc, or (if those could not be read, which a test
// rules out) the ones linked into the binary, without comments.
func (s *Server) descriptors() protodesc.Resolver {
	r, err := apidesc.Resolver()
	if err != nil {
		s.log.Error("reflection without documentation", slog.String("error", err.Error()))
		return protoregistry.GlobalFiles
	}
	return r
}

// serviceNames are the fully qualified names health and reflection report.
var serviceNames = []string{
	pactv1connect.CredentialServiceName,
	pactv1connect.AgentServiceName,
	pactv1connect.BrandServiceName,
	pactv1connect.VerificationServiceName,
	pactv1connect.ConversationServiceName,
	pactv1connect.DelegationServiceName,
	pactv1connect.TokenServiceName,
	pactv1connect.AuditServiceName,
	pactv1connect.WebhookServiceName,
	pactv1connect.FrontDoorServiceName,
	hdtpv1connect.IdentityServiceName,
	hdtpv1connect.TrustServiceName,
	hdtpv1connect.HostServiceName,
	hdtpv1connect.ContactServiceName,
	hdtpv1connect.InviteServiceName,
}

// recoverPanic turns a handler's panic into rpcerr.Internal, logging the
// panic once (as grpcRecover does on the native gRPC port).
func (s *Server) recoverPanic(ctx context.Context, spec connect.Spec, _ http.Header, p any) error {
	s.log.ErrorContext(ctx, "panic in handler", slog.String("procedure", spec.Procedure), slog.Any("panic", p))
	reqlog.MarkFaultLogged(ctx)
	return rpcerr.Internal()
}

func (s *Server) mux(svc Services, authn *auth.Authenticator, m *rpcMetrics, hm *httpMetrics) http.Handler {
	// Interceptors, outermost first: the server span (its parent the
	// caller's W3C traceparent: callers are pactd's own frontends), then
	// observe (log + metrics), which sees every call, including refused
	// ones; then authentication and role checks.
	interceptors := []connect.Interceptor{observer{log: s.log, m: m}, authn.Interceptor()}
	if s.traced {
		spans, err := otelconnect.NewInterceptor(otelconnect.WithTrustRemote())
		if err != nil {
			panic(err) // only for invalid options
		}
		interceptors = append([]connect.Interceptor{spans}, interceptors...)
	}
	opts := []connect.HandlerOption{
		connect.WithInterceptors(interceptors...),
		connect.WithReadMaxBytes(apidesc.MaxRequestBytes),
		// Most answers are a few hundred bytes to a kilobyte: compressing
		// them costs more CPU than it saves bandwidth on a LAN.
		connect.WithCompressMinBytes(4096),
		connect.WithRecover(s.recoverPanic),
	}
	opts = append(opts, strictJSONCodecs()...)
	mux := http.NewServeMux()
	// The OAuth endpoints in RFC wire form; the PA JWT is their client
	// authentication, so they sit outside the caller-credential interceptor.
	// They get server spans of their own (httpSpans), and the RPCs'
	// metrics, fault logging and panic recovery (observeHTTP); on this port
	// only they live under /a2a/.
	oauthHandler := s.observeHTTP(hm, oauthEndpoints(svc, s.log))
	if s.traced {
		oauthHandler = httpSpans(oauthHandler)
	}
	mux.Handle("/a2a/", oauthHandler)
	// The RPC handlers: connect-go's bare 415 gets a body that says what to
	// send (explainUnsupported).
	handle := func(path string, h http.Handler) { mux.Handle(path, explainUnsupported(h, servedUnary)) }
	handle(pactv1connect.NewCredentialServiceHandler(svc.Credential, opts...))
	handle(pactv1connect.NewAgentServiceHandler(svc.Agent, opts...))
	handle(pactv1connect.NewBrandServiceHandler(svc.Brand, opts...))
	handle(pactv1connect.NewVerificationServiceHandler(svc.Verification, opts...))
	handle(pactv1connect.NewConversationServiceHandler(svc.Conversation, opts...))
	handle(pactv1connect.NewDelegationServiceHandler(svc.Delegation, opts...))
	handle(pactv1connect.NewTokenServiceHandler(svc.Token, opts...))
	handle(pactv1connect.NewAuditServiceHandler(svc.Audit, opts...))
	handle(pactv1connect.NewWebhookServiceHandler(svc.Webhook, opts...))
	// The front door carries whole HTTP requests, bodies up to 1 MiB.
	doorOpts := append(slices.Clone(opts), connect.WithReadMaxBytes(frontdoor.MaxRequestBytes))
	handle(pactv1connect.NewFrontDoorServiceHandler(svc.FrontDoor, doorOpts...))
	handle(hdtpv1connect.NewIdentityServiceHandler(svc.HDTPIdentity, opts...))
	handle(hdtpv1connect.NewTrustServiceHandler(svc.HDTPTrust, opts...))
	// The host service carries whole JSON-RPC bodies, sealed media
	// included.
	hostOpts := append(slices.Clone(opts), connect.WithReadMaxBytes(hdtpsvc.MaxHostRequestBytes))
	handle(hdtpv1connect.NewHostServiceHandler(svc.HDTPHost, hostOpts...))
	handle(hdtpv1connect.NewContactServiceHandler(svc.HDTPContact, opts...))
	handle(hdtpv1connect.NewInviteServiceHandler(svc.HDTPInvite, opts...))

	handle(grpchealth.NewHandler(s.health))
	// Reflection answers from the documented descriptors, so a client's
	// describe shows the .proto comments.
	reflector := grpcreflect.NewReflector(grpcreflect.NamerFunc(func() []string { return serviceNames }),
		grpcreflect.WithDescriptorResolver(s.descriptors()))
	handleStream := func(path string, h http.Handler) { mux.Handle(path, explainUnsupported(h, servedStream)) }
	handleStream(grpcreflect.NewHandlerV1(reflector))
	handleStream(grpcreflect.NewHandlerV1Alpha(reflector))
	if s.cfg.MetricsListen == "" {
		// On the API port only an admin credential reads metrics (nothing
		// but health and reflection answers an unauthenticated caller); a
		// separate PACT_METRICS_LISTEN port is for a trusted network.
		mux.Handle("GET /metrics", adminOnly(authn, s.metrics))
	}
	return mux
}

// adminOnly serves h to callers with an admin credential, and a bare 401
// to everyone else.
func adminOnly(a *auth.Authenticator, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if role, err := a.Authenticate(r.Context(), r.Header.Get("Authorization")); err != nil || role != db.RoleAdmin {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pactd"`)
			http.Error(w, "an admin credential is required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// storeChecker answers grpc.health.v1 per service. Every service needs the
// store, except that VerificationService verifies PA JWTs from last-known
// agent and Brand state through an outage of up to the outage grace: it
// (and the overall status, "", which follows the hot path) stays SERVING
// while the store has answered within the grace, and the others report
// NOT_SERVING as soon as a ping fails.
type storeChecker struct {
	store    db.Store
	services []string
	grace    time.Duration
	now      func() time.Time

	mu     sync.Mutex
	lastOK time.Time // the last successful ping
}

func (c *storeChecker) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	known := req.Service == ""
	for _, n := range c.services {
		known = known || n == req.Service
	}
	if !known {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %s", req.Service))
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := c.store.Ping(pctx)
	now := c.now()
	c.mu.Lock()
	if err == nil {
		c.lastOK = now
	}
	lastOK := c.lastOK
	c.mu.Unlock()
	if err == nil {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
	}
	if (req.Service == "" || req.Service == pactv1connect.VerificationServiceName) && !lastOK.IsZero() && now.Sub(lastOK) < c.grace {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
}

// Handler is the root HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// Close releases everything Build acquired, in reverse order: the
// listeners given or bound, background tasks, and the store it opened. Run
// calls it when it returns; a server served only through Handler calls it
// itself. Only the first call does anything.
func (s *Server) Close() error { return s.cleanup.run() }

// maxCAFileBytes bounds PACT_JWKS_CA_FILE.
const maxCAFileBytes = 1 << 20

// jwksRootCAs returns the roots JWKS fetches trust: nil (the system's) when
// file is empty, else the system's roots plus the file's certificates.
func jwksRootCAs(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("jwks-ca-file: %w", err)
	}
	defer f.Close()
	pem, err := io.ReadAll(io.LimitReader(f, maxCAFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jwks-ca-file: %w", err)
	}
	if len(pem) > maxCAFileBytes {
		return nil, fmt.Errorf("jwks-ca-file: %s is larger than %d bytes", file, maxCAFileBytes)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("jwks-ca-file: %s holds no PEM certificate", file)
	}
	return pool, nil
}
