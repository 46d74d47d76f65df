package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

const (
	adminToken    = "failover-admin-token-0123456789"
	frontendToken = "failover-frontend-token-0123456789"
	publicURL     = "https://provider.example"
	brandID       = "acme"
	rpcTimeout    = 2 * time.Second
)

// scenario is one failover run's shape.
type scenario struct {
	Sync                        bool
	Before, PromoteAfter, After time.Duration
	Lag                         time.Duration
	Writers, Verifiers          int
	Fsync                       bool
}

func (sc scenario) check() error {
	for name, d := range map[string]time.Duration{"-before": sc.Before, "-after": sc.After} {
		if d < time.Second || d > 5*time.Minute {
			return fmt.Errorf("%s must be between 1s and 5m", name)
		}
	}
	if sc.PromoteAfter < 0 || sc.PromoteAfter > 5*time.Minute {
		return errors.New("-promote-after must be between 0s and 5m")
	}
	if sc.Lag < 0 || sc.Lag >= sc.Before {
		return errors.New("-lag must be at least 0s and less than -before")
	}
	if sc.Writers < 1 || sc.Writers > 64 || sc.Verifiers < 1 || sc.Verifiers > 64 {
		return errors.New("-writers and -verifiers must be between 1 and 64")
	}
	return nil
}

// write is one attempted write: a credential (id) or a grant (its
// delegation token), acknowledged when ok.
type write struct {
	kind       string // "credential" or "grant"
	start, end time.Time
	ok         bool
	id, token  string
	replica    string
}

// verification is one VerifyAgentRequest.
type verification struct {
	start, end time.Time
	delegated  bool
	ok         bool
}

// run builds the pair and the replicas, runs the load through the
// failover, and checks every acknowledged write.
func (sc scenario) run(ctx context.Context) (*report, error) {
	pair, err := dbtest.StartPair(ctx, dbtest.PairOptions{Sync: sc.Sync, Fsync: sc.Fsync, Database: "pactd"})
	if err != nil {
		return nil, err
	}
	defer pair.Close()
	pa, err := newPA()
	if err != nil {
		return nil, err
	}
	defer pa.jwks.Close()
	dataDir, err := os.MkdirTemp("", "pactd-failover-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dataDir)
	var replicas []*replica
	defer func() {
		for _, r := range replicas {
			r.stop()
		}
	}()
	for _, name := range []string{"A", "B"} {
		r, err := startReplica(ctx, name, pair.URL("pactd"), dataDir)
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, r)
	}
	a := replicas[0]
	if _, err := a.agents.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "PA"}); err != nil {
		return nil, fmt.Errorf("register the PA: %w", err)
	}
	if _, err := a.brands.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: brandID, DisplayName: "Acme", Delegation: &pactv1.DelegationSettings{
		Enabled: true, LoginUrl: "https://login.acme.example", LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND,
		Scopes: []*pactv1.Scope{{Id: "orders:read", Description: "See your orders"}}}}); err != nil {
		return nil, fmt.Errorf("create the Brand: %w", err)
	}
	standing, err := grant(ctx, a, pa, "standing-user")
	if err != nil {
		return nil, fmt.Errorf("the grant made before the failover: %w", err)
	}

	rep := &report{Sync: sc.Sync}
	// The load stops by finishing the calls in flight (done), not by
	// cancelling them, so that no RPC fails for the test's own reasons.
	loadCtx, cancelLoad := context.WithCancel(ctx)
	defer cancelLoad()
	var done atomic.Bool
	var wg sync.WaitGroup
	stopLoad := func() { done.Store(true); wg.Wait() }
	for w := range sc.Writers {
		wg.Go(func() {
			for i := 0; !done.Load() && loadCtx.Err() == nil; i++ {
				r := replicas[(w+i)%len(replicas)]
				var wr write
				if i%2 == 0 {
					wr = createCredential(loadCtx, r, fmt.Sprintf("w%d-%d", w, i))
				} else {
					wr = createGrant(loadCtx, r, pa, fmt.Sprintf("user-w%d-%d", w, i))
				}
				if loadCtx.Err() != nil {
					return // interrupted
				}
				rep.addWrite(wr)
				pause(loadCtx, 10*time.Millisecond)
			}
		})
	}
	for v := range sc.Verifiers {
		wg.Go(func() {
			for i := 0; !done.Load() && loadCtx.Err() == nil; i++ {
				r := replicas[(v+i)%len(replicas)]
				delegated := i%2 == 1
				vr := verify(loadCtx, r, pa, standing, delegated)
				if loadCtx.Err() != nil {
					return
				}
				rep.addVerification(vr)
				pause(loadCtx, 5*time.Millisecond)
			}
		})
	}
	if sc.Lag > 0 {
		pause(ctx, sc.Before-sc.Lag)
		rep.holdAt = time.Now()
		if err := pair.HoldWALSender(ctx); err != nil {
			stopLoad()
			return nil, err
		}
		pause(ctx, sc.Lag)
	} else {
		pause(ctx, sc.Before)
	}
	rep.stopAt = time.Now()
	if err := pair.StopPrimary(); err != nil {
		stopLoad()
		return nil, err
	}
	rep.downAt = time.Now()
	pause(ctx, sc.PromoteAfter)
	rep.promoteAt = time.Now()
	if err := pair.Promote(); err != nil {
		stopLoad()
		return nil, err
	}
	rep.promotedAt = time.Now()
	pause(ctx, sc.After)
	stopLoad()
	rep.endAt = time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := rep.checkWrites(ctx, a); err != nil {
		return nil, err
	}
	for _, r := range replicas {
		rep.metrics = append(rep.metrics, r.scrape(ctx))
	}
	for _, r := range replicas {
		r.stop()
		rep.logs = append(rep.logs, r.logLines()...)
	}
	return rep, nil
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// replica is one pactd in this process, its clients and its log.
type replica struct {
	name, url string
	agents    pactv1connect.AgentServiceClient
	brands    pactv1connect.BrandServiceClient
	creds     pactv1connect.CredentialServiceClient
	deleg     pactv1connect.DelegationServiceClient
	verifier  pactv1connect.VerificationServiceClient
	tokens    pactv1connect.TokenServiceClient
	log       *lockedBuffer
	stop      func()
}

func startReplica(ctx context.Context, name, dbURL, dataDir string) (*replica, error) {
	env := []string{"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + frontendToken,
		"PACT_DATA_DIR=" + dataDir, "PACT_DATABASE_URL=" + dbURL, "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off",
		"PACT_PUBLIC_URL=" + publicURL, "PACT_DEV=true", "PACT_LOG_LEVEL=info",
		"PACT_KEY_ENCRYPTION_KEY=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}
	cfg, err := config.Load(nil, env, io.Discard)
	if err != nil {
		return nil, err
	}
	buf := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv, err := server.Build(ctx, cfg, server.Deps{Logger: log, Listeners: server.Listeners{API: ln}})
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", name, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Run(sctx); close(done) }()
	var once sync.Once
	r := &replica{name: name, url: "http://" + ln.Addr().String(), log: buf,
		stop: func() { once.Do(func() { cancel(); <-done }) }}
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: p, TLSClientConfig: &tls.Config{}}}
	admin, fe := connect.WithInterceptors(bearer(adminToken)), connect.WithInterceptors(bearer(frontendToken))
	r.agents = pactv1connect.NewAgentServiceClient(hc, r.url, admin)
	r.brands = pactv1connect.NewBrandServiceClient(hc, r.url, admin)
	r.creds = pactv1connect.NewCredentialServiceClient(hc, r.url, admin)
	r.deleg = pactv1connect.NewDelegationServiceClient(hc, r.url, fe)
	r.verifier = pactv1connect.NewVerificationServiceClient(hc, r.url, fe)
	r.tokens = pactv1connect.NewTokenServiceClient(hc, r.url, fe)
	return r, nil
}

// bearer sets the caller credential on every call.
func bearer(token string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}
}

// scrape reads the change feed's counters from the replica's /metrics.
func (r *replica) scrape(ctx context.Context) replicaMetrics {
	m := replicaMetrics{replica: r.name, values: map[string]string{}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return m
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range reportedMetrics {
			if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
				k, v, _ := strings.Cut(line, " ")
				m.values[k] = v
			}
		}
	}
	return m
}

// reportedMetrics are the replicas' metrics the report shows.
var reportedMetrics = []string{"pactd_change_feed_resyncs_total", "pactd_change_feed_poll_errors_total",
	"pactd_change_feed_listening", "pactd_grant_cache_lookups_total"}

// lockedBuffer collects one replica's JSON log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// logLine is one warning or error, or a change-feed line.
type logLine struct {
	replica, level, msg, detail string
	at                          time.Time
}

func (r *replica) logLines() []logLine {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(r.log.b.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		level, _ := m["level"].(string)
		msg, _ := m["msg"].(string)
		if level != "WARN" && level != "ERROR" && !strings.HasPrefix(msg, "change feed") {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(m["time"]))
		var detail []string
		for _, k := range []string{"procedure", "code", "error"} {
			if v, ok := m[k]; ok {
				detail = append(detail, fmt.Sprintf("%s=%v", k, strings.Join(strings.Fields(fmt.Sprint(v)), " ")))
			}
		}
		out = append(out, logLine{replica: r.name, level: level, msg: msg, detail: strings.Join(detail, " "), at: at})
	}
	return out
}

// pa is a personal agent whose JWKS this process serves.
type pa struct {
	key    *ecdsa.PrivateKey
	jwks   *httptest.Server
	issuer string
}

func newPA() (*pa, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	raw, err := key.PublicKey.Bytes()
	if err != nil {
		return nil, err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	body := fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","x":%q,"y":%q,"kid":"k1","alg":"ES256","use":"sig"}]}`, b64(raw[1:33]), b64(raw[33:]))
	p := &pa{key: key}
	p.jwks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	p.issuer = p.jwks.URL
	return p, nil
}

// jwt is a new PA JWT ("Bearer ...") for sub.
func (p *pa) jwt(sub string) string {
	b64 := base64.RawURLEncoding.EncodeToString
	h, _ := json.Marshal(map[string]any{"alg": "ES256", "typ": "JWT", "kid": "k1"})
	now := time.Now().Unix()
	c, _ := json.Marshal(map[string]any{"iss": p.issuer, "sub": sub, "aud": publicURL + "/a2a", "iat": now, "exp": now + 120,
		"jti": strconv.FormatInt(time.Now().UnixNano(), 36)})
	input := b64(h) + "." + b64(c)
	d := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, p.key, d[:])
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return "Bearer " + input + "." + b64(append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...))
}

func createCredential(ctx context.Context, r *replica, name string) write {
	w := write{kind: "credential", start: time.Now(), replica: r.name}
	cctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := r.creds.CreateCredential(cctx, &pactv1.CreateCredentialRequest{Role: pactv1.CallerRole_CALLER_ROLE_FRONTEND, Name: name})
	w.end = time.Now()
	if err == nil {
		w.ok, w.id, w.token = true, resp.GetCredential().GetId(), resp.GetToken()
	}
	return w
}

func createGrant(ctx context.Context, r *replica, p *pa, user string) write {
	w := write{kind: "grant", start: time.Now(), replica: r.name}
	tok, err := grant(ctx, r, p, user)
	w.end = time.Now()
	if err == nil {
		w.ok, w.token = true, tok
	}
	return w
}

// grant runs the device grant for a Brand user through r's RPCs (the PA
// asks, the User approves at the trusted frontend, the PA redeems) and
// returns the delegation token: acknowledged once the token is issued.
func grant(ctx context.Context, r *replica, p *pa, user string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 3*rpcTimeout)
	defer cancel()
	dev, err := r.deleg.StartDeviceAuthorization(cctx, &pactv1.StartDeviceAuthorizationRequest{BrandId: brandID, Authorization: p.jwt(user),
		ClientId: p.issuer, Scope: "orders:read"})
	if err != nil {
		return "", err
	}
	if dev.GetError() != nil {
		return "", fmt.Errorf("device authorization: %v", dev.GetError())
	}
	if _, err := r.deleg.ApproveConsent(cctx, &pactv1.ApproveConsentRequest{BrandId: brandID, UserCode: dev.GetUserCode(), BrandUser: user,
		Scopes: []string{"orders:read"}}); err != nil {
		return "", err
	}
	tok, err := r.deleg.IssueDelegation(cctx, &pactv1.IssueDelegationRequest{BrandId: brandID, Authorization: p.jwt(user), ClientId: p.issuer,
		GrantType: "urn:ietf:params:oauth:grant-type:device_code", DeviceCode: dev.GetDeviceCode()})
	if err != nil {
		return "", err
	}
	if tok.GetAccessToken() == "" {
		return "", fmt.Errorf("token endpoint: %v", tok.GetError())
	}
	return tok.GetAccessToken(), nil
}

func verify(ctx context.Context, r *replica, p *pa, delegation string, delegated bool) verification {
	v := verification{start: time.Now(), delegated: delegated}
	req := &pactv1.VerifyAgentRequestRequest{BrandId: brandID, Authorization: p.jwt("standing-user")}
	if delegated {
		req.UserDelegation = "Bearer " + delegation
	}
	cctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := r.verifier.VerifyAgentRequest(cctx, req)
	v.end = time.Now()
	v.ok = err == nil && resp.GetAllowed() && (!delegated || resp.GetDelegation() != nil)
	return v
}
