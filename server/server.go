// Package server builds pactd: it opens the store, builds every service with
// the dependencies it needs, mounts them with health, reflection and metrics
// on one port, and runs until its context ends, then shuts down gracefully.
package server

import (
	"context"
	"crypto/hkdf"
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

// Server is a built, not yet running, pactd.
type Server struct {
	cfg config.Config
	log *slog.Logger
	// traced is whether the OTEL_* environment turns trace export on
	// (config.Config.Tracing): only then do the span interceptors run, since
	// they cost every call CPU even when no span is exported.
	traced  bool
	store   db.Store
	handler http.Handler
	metrics http.Handler
	// feed polls the change feed and applies other replicas' changes to
	// this replica's caches (package changefeed).
	feed *changefeed.Feed
	// health answers grpc.health.v1 on both ports.
	health *storeChecker
	// grpc is the native gRPC server of PACT_GRPC_LISTEN, or nil.
	grpc *grpc.Server

	// GRPCListener, when set before Serve, is used for the native gRPC
	// port instead of listening on PACT_GRPC_LISTEN (pactd serve binds it
	// before opening the store, so a taken port is reported first; tests
	// pass one on :0).
	GRPCListener net.Listener
	// ConsoleListener, when set before Serve, is used for the console
	// instead of listening on PACT_CONSOLE_LISTEN (tests pass one on :0).
	ConsoleListener net.Listener
	// console is the operator console of PACT_CONSOLE_LISTEN, or nil.
	console *console.Console
	// replica is this process's id in the replicas' heartbeats.
	replica string
	// purge deletes expired delegation state (device codes, used Brand
	// assertions, refresh tokens of expired grants), change-feed rows past
	// their retention and audit events past PACT_AUDIT_RETENTION, and
	// destroys HDTP leaf keys past their notAfter; Serve runs it hourly.
	purge func(ctx context.Context) (int64, error)
	// webhooks delivers the audit trail's outbox to webhook destinations;
	// Serve runs it.
	webhooks *corewebhook.Dispatcher
}

// purgeEvery is how often expired delegation state is deleted.
const purgeEvery = time.Hour

// purgeLoop deletes expired delegation state until ctx ends. Every replica
// runs it; the deletes are idempotent.
func (s *Server) purgeLoop(ctx context.Context) {
	t := time.NewTicker(purgeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		n, err := s.purge(pctx)
		cancel()
		if err != nil {
			s.log.Warn("purge expired delegation state, old change-feed rows and old audit events", slog.String("error", err.Error()))
		} else if n > 0 {
			s.log.Info("purged expired delegation state, old change-feed rows and old audit events", slog.Int64("rows", n))
		}
	}
}

// listen holds the LISTEN connection that wakes the change-feed poller
// early, until ctx ends; it logs when it connects and when it fails (the
// poller works without it).
func (s *Server) listen(ctx context.Context, url string) {
	err := db.ListenForChanges(ctx, url, s.feed.Wake, func(up bool, err error) {
		s.feed.Listening(up)
		if up {
			s.log.Info("change feed: LISTEN connection up; notifications wake the poller")
		} else {
			s.log.Warn("change feed: LISTEN connection failed; polling alone until it is back", slog.String("error", err.Error()))
		}
	})
	if err != nil {
		s.log.Warn("change feed: no LISTEN connection", slog.String("error", err.Error()))
	}
}

// Option changes how New builds a Server beyond its configuration.
type Option func(*options)

type options struct {
	now func() time.Time
}

// WithClock makes now the clock of everything the server times (tokens,
// keys, caches, deliveries) instead of time.Now: for tests that move time
// forward, such as past a signing key's activation.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// New opens the store (applying migrations), bootstraps credentials (writing
// a generated admin token to out, once) and builds the handler.
func New(ctx context.Context, cfg config.Config, log *slog.Logger, out io.Writer, opts ...Option) (*Server, error) {
	o := options{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	// Every line carries its request's id; repeated identical faults are
	// rate-limited (package reqlog).
	log = slog.New(reqlog.NewHandler(log.Handler(), nil))
	// The key-encryption key first: without one on PostgreSQL pactd refuses
	// to start (unless PACT_DEV=true) before touching the database.
	kek, err := provkeys.LoadKEK(provkeys.KEKSource{Configured: cfg.KeyEncryptionKey.Reveal(), DataDir: cfg.DataDir,
		SharedStore: config.IsPostgresURL(cfg.DatabaseURL), Dev: cfg.Dev, Logger: log})
	if err != nil {
		return nil, err
	}
	store, err := db.Open(ctx, cfg.DatabaseURL, cfg.DataDir, StoreOptions(cfg)...)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	now := o.now
	if err := auth.Bootstrap(ctx, store, cfg.AdminToken.Reveal(), cfg.FrontendToken.Reveal(), now(), out); err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("bootstrap credentials: %w", err)
	}
	s := &Server{cfg: cfg, log: log, store: store, traced: cfg.Tracing, replica: ids.New("rep_", now())}
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
	keyRing, err := provkeys.Open(ctx, provkeys.Config{Store: store, KEK: kek, Now: now, Logger: log})
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	tokenSigner := delegtoken.NewSigner(keyRing, now) // also the delegation service's Minter

	jwksRoots, err := jwksRootCAs(cfg.JWKSCAFile)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	jwks, err := jose.NewJWKSClient(jose.Config{AllowLoopbackHTTP: cfg.Dev, AllowHosts: cfg.JWKSAllowHosts, RootCAs: jwksRoots, OnFetch: jwksFetches(reg),
		Tables: es256Tables(cfg.ES256Tables, cfg.ES256TableBytes, reg)})
	if err != nil {
		_ = store.Close()
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
		_ = store.Close()
		return nil, fmt.Errorf("PA JWT verifier: %w", err)
	}
	registerTokenCacheMetric(reg, paVerifier)
	// The caches that hold state other replicas change, and the feed that
	// tells them (package changefeed); the feed starts with Serve.
	fed := &fedCaches{log: log, keys: keyRing, authn: authn}
	s.feed = changefeed.New(changefeed.Config{Store: store, Interval: cfg.ChangePollInterval, Apply: fed.apply, Resync: fed.resync,
		Now: now, Logger: log, Registerer: reg})
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
	deleg := delegation.New(delegation.Deps{Store: cached, PA: pa, Minter: tokenSigner, PublicURL: cfg.PublicURL, Now: now, Logger: log, BrandKeys: jwks,
		Sessions: delegtoken.ConsentSessions{Signer: tokenSigner, Verifier: tokenVerifier}, OnAudit: auditMetrics.recorded, Grants: grants, Registerer: reg})
	auditSvc := audit.New(audit.Deps{Store: store, Retention: cfg.AuditRetention, Now: now, Logger: log, OnPrune: auditMetrics.pruned})
	secrets, err := provkeys.NewSecretBox(kek)
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("secret box: %w", err)
	}
	wc := cfg.Webhook
	s.webhooks = corewebhook.New(corewebhook.Config{Store: store, Secrets: secrets, Now: now, Logger: log, Registerer: reg,
		PollInterval: wc.PollInterval, Timeout: wc.Timeout, RetryBase: wc.RetryBase, RetryMax: wc.RetryMax,
		MaxAttempts: wc.MaxAttempts, MaxAge: wc.MaxAge, Dev: cfg.Dev, AllowHosts: wc.AllowHosts})
	// HDTP / PACT 2 (hdtp.v1): leaf keys sealed under the same KEK.
	hdtpSvc, err := hdtpServices(store, kek, now, log, reg, auditMetrics.recorded)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	s.purge = func(ctx context.Context) (int64, error) {
		n, err := deleg.PurgeExpired(ctx)
		if err != nil {
			return n, err
		}
		m, err := store.PruneChanges(ctx, now().Add(-changefeed.Retention))
		if err != nil {
			return n + m, err
		}
		a, err := auditSvc.Prune(ctx)
		if err != nil {
			return n + m + a, err
		}
		h, err := hdtpSvc.Identity.Sweep(ctx)
		if err != nil {
			return n + m + a + h, err
		}
		hh, err := hdtpSvc.Host.Purge(ctx)
		h += hh
		if err != nil {
			return n + m + a + h, err
		}
		w, err := s.webhooks.Purge(ctx)
		return n + m + a + h + w, err
	}
	svc := Services{
		Credential: credential.New(credential.Deps{Store: store, Now: now, Logger: log, OnRevoke: authn.Forget}),
		Agent: agent.New(agent.Deps{Store: store, Audience: cfg.Audience, Dev: cfg.Dev, AllowHosts: cfg.JWKSAllowHosts, Logger: log, OnChange: agents.Changed,
			SelfRegistration: cfg.SelfRegistration, RegistrationKeys: jwks, OnSelfRegistration: selfRegistrations(reg)}),
		Brand:        brand.New(brand.Deps{Store: store, PublicURL: cfg.PublicURL, Dev: cfg.Dev, Logger: log, OnChange: brands.Forget, CardSigner: keyRing}),
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
		_ = store.Close()
		return nil, fmt.Errorf("front door secret: %w", err)
	}
	if svc.FrontDoor, err = frontdoor.New(frontdoor.Deps{
		Verify: verifier, Brands: svc.Brand, Turns: svc.Conversation, Delegation: deleg,
		Receipts: svc.Token, Registration: svc.Agent, OAuth: oauthEndpoints(svc, log),
		Secret: doorSecret, PublicURL: cfg.PublicURL, Now: now, Logger: log,
	}); err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("front door: %w", err)
	}
	if cfg.ConsoleListen != "" {
		if err := s.newConsole(svc, authn, keyRing, now); err != nil {
			_ = store.Close()
			return nil, err
		}
	}
	metrics := newRPCMetrics(reg)
	workers := workpool.New(streamWorkers)
	s.handler = onWorkers(workers, withRequestID(s.mux(svc, authn, metrics, newHTTPMetrics(reg))))
	if cfg.GRPCListen != "" {
		if s.grpc, err = s.newGRPCServer(svc, authn, metrics, workers); err != nil {
			_ = store.Close()
			return nil, fmt.Errorf("native gRPC server: %w", err)
		}
	}
	return s, nil
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
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.keys.Refresh(ctx); err != nil {
			f.log.Warn("reload signing keys after a change", slog.String("error", err.Error()))
		}
	}()
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

	checker := &storeChecker{store: s.store, services: serviceNames, grace: s.cfg.OutageGrace, now: time.Now}
	s.health = checker
	handle(grpchealth.NewHandler(checker))
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

// Close releases the store.
func (s *Server) Close() error { return s.store.Close() }

// Serve serves on ln until ctx ends, then shuts down gracefully within the
// configured timeout. It closes the store when it returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.Close()
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	protocols.SetHTTP2(true)
	srv := &http.Server{
		Handler:           s.handler,
		Protocols:         protocols,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    apidesc.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	servers := []*http.Server{srv}
	errc := make(chan error, 4)
	if s.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCert, s.cfg.TLSKey)
		if err != nil {
			return fmt.Errorf("load TLS certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	grpcAddr := config.Off // logged beside the main address, so one line says where to point each client
	if s.grpc != nil {
		gln := s.GRPCListener
		if gln == nil {
			var err error
			if gln, err = net.Listen("tcp", s.cfg.GRPCListen); err != nil {
				_ = srv.Close()
				return fmt.Errorf("listen for native gRPC: %w", err)
			}
		}
		go func() { errc <- s.grpc.Serve(gln) }()
		grpcAddr = gln.Addr().String()
		s.log.Info("pactd serving native gRPC", slog.String("addr", grpcAddr))
	}
	if s.cfg.MetricsListen != "" {
		mln, err := net.Listen("tcp", s.cfg.MetricsListen)
		if err != nil {
			_ = srv.Close()
			if s.grpc != nil {
				s.grpc.Stop()
			}
			return fmt.Errorf("listen for metrics: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.metrics)
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, msrv)
		go func() { errc <- msrv.Serve(mln) }()
	}
	if s.console != nil {
		csrv, err := s.serveConsole(errc)
		if err != nil {
			for _, x := range servers {
				_ = x.Close()
			}
			if s.grpc != nil {
				s.grpc.Stop()
			}
			return err
		}
		servers = append(servers, csrv)
	}
	listenCtx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	go s.feed.Run(listenCtx)
	go s.heartbeat(listenCtx)
	if u := s.cfg.NotifyURL(); u != "" {
		go s.listen(listenCtx, u)
	}
	go s.purgeLoop(listenCtx)
	webhooksDone := make(chan struct{})
	go func() { s.webhooks.Run(listenCtx); close(webhooksDone) }()
	s.log.Info("pactd serving", slog.String("addr", ln.Addr().String()), slog.String("grpc_addr", grpcAddr), slog.String("store", s.store.Engine()),
		slog.Bool("tls", s.cfg.TLSCert != ""), slog.Bool("dev", s.cfg.Dev))
	select {
	case err := <-errc:
		for _, x := range servers {
			_ = x.Close()
		}
		if s.grpc != nil {
			s.grpc.Stop()
		}
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("pactd shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	if s.grpc != nil {
		stopped := make(chan struct{})
		go func() { s.grpc.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-sctx.Done():
			s.grpc.Stop()
		}
	}
	for _, x := range servers {
		if err := x.Shutdown(sctx); err != nil {
			errs = append(errs, err)
		}
	}
	// The webhook dispatcher finishes the attempts under way (each within
	// its timeout) and hands back the leases it did not use.
	stopListening()
	select {
	case <-webhooksDone:
	case <-sctx.Done():
	}
	return errors.Join(errs...)
}

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
