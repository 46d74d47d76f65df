package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/freeport"
	"pactd.dev/pactd/internal/stdwebhook"
)

// siem is a webhook receiver on a fixed loopback port that can be stopped
// and started again: it verifies every request as a receiver must
// (stdwebhook.Verify with the destination's secret) and counts the
// requests per webhook-id.
type siem struct {
	t    *testing.T
	addr string
	key  []byte

	mu      sync.Mutex
	srv     *http.Server
	byID    map[string]int // webhook-id → requests
	eventOf map[string]string
	bad     []string // requests that did not verify, with the reason
}

func newSIEM(t *testing.T) *siem {
	ln, err := freeport.Listen()
	if err != nil {
		t.Fatal(err)
	}
	s := &siem{t: t, addr: ln.Addr().String(), byID: map[string]int{}, eventOf: map[string]string{}}
	s.serve(ln)
	t.Cleanup(s.stop)
	return s
}

func (s *siem) url() string { return "http://" + s.addr + "/pactd-events" }

func (s *siem) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.receive), ReadHeaderTimeout: 5 * time.Second}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// start listens on the same address again.
func (s *siem) start() {
	s.t.Helper()
	var ln net.Listener
	var err error
	for range 100 { // the port was ours a moment ago; wait for the kernel to release it
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("receiver restart on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

func (s *siem) stop() {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (s *siem) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || r.Method != http.MethodPost || r.URL.Path != "/pactd-events" || r.Header.Get("Content-Type") != "application/json" {
		s.bad = append(s.bad, fmt.Sprintf("%s %s %q: %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	id, err := stdwebhook.Verify(s.key, r.Header, body, time.Now(), 5*time.Minute)
	if err != nil {
		s.bad = append(s.bad, err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var p struct {
		Type string
		Data struct{ ID, Kind string }
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Type != p.Data.Kind || p.Data.ID == "" {
		s.bad = append(s.bad, fmt.Sprintf("payload %s: %v", body, err))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.byID[id]++
	s.eventOf[id] = p.Data.ID
	w.WriteHeader(http.StatusNoContent)
}

// received returns the distinct webhook-ids and the requests in all.
func (s *siem) received() (ids []string, requests int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, n := range s.byID {
		ids = append(ids, id)
		requests += n
	}
	slices.Sort(ids)
	return ids, requests
}

func webhooks(inst *instance, tok string) pactv1connect.WebhookServiceClient {
	return pactv1connect.NewWebhookServiceClient(h2c(), inst.url, withToken(tok))
}

// webhookEnv makes the dispatcher quick for tests: short polls, backoff
// and timeout, bounds no test reaches.
var webhookEnv = []string{"PACT_WEBHOOK_POLL_INTERVAL=20ms", "PACT_WEBHOOK_RETRY_BASE=20ms", "PACT_WEBHOOK_RETRY_MAX=200ms",
	"PACT_WEBHOOK_TIMEOUT=2s", "PACT_WEBHOOK_MAX_ATTEMPTS=10000", "PACT_WEBHOOK_MAX_AGE=1h"}

// waitUntil polls ok every 20 ms until it holds, failing the test after limit.
func waitUntil(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWebhooksSurviveReceiverOutageAndRestarts is the outbox end to end:
// with the receiver down, replicas record audit events (a delegated PA's
// grant events and receipts signed on each replica) and try to deliver
// each, failing; every replica stops and starts again on the same
// database; the receiver comes back. Then every event arrives, each
// webhook-id exactly once after de-duplication, every request's Standard
// Webhooks signature valid under the secret CreateWebhook returned, and the
// delivery state reads delivered. PostgreSQL with two replicas, SQLite
// with one.
func TestWebhooksSurviveReceiverOutageAndRestarts(t *testing.T) {
	t.Run("postgres-two-replicas", func(t *testing.T) {
		t.Parallel()
		dbURL := dbtest.PostgresURL(t)
		dirA, dirB := t.TempDir(), t.TempDir()
		runOutage(t, func() []*instance {
			return []*instance{start(t, testConfig(t, dbURL, dirA, webhookEnv...)), start(t, testConfig(t, dbURL, dirB, webhookEnv...))}
		})
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		runOutage(t, func() []*instance { return []*instance{start(t, testConfig(t, "", dir, webhookEnv...))} })
	})
}

func runOutage(t *testing.T, startAll func() []*instance) {
	ctx := t.Context()
	rx := newSIEM(t)
	reps := startAll()
	a := reps[0]
	created, err := webhooks(a, adminToken).CreateWebhook(ctx, &pactv1.CreateWebhookRequest{Url: rx.url(), Description: "SIEM"})
	if err != nil {
		t.Fatal(err)
	}
	whID := created.GetWebhook().GetWebhookId()
	if rx.key, err = stdwebhook.ParseSecret(created.GetSecret()); err != nil {
		t.Fatalf("secret %q: %v", created.GetSecret(), err)
	}
	rx.stop()

	// Events on every replica while the receiver is down.
	d := newDelegatedPA(t, a) // grant.created, grant.redeemed on A
	for i := range 3 {
		for _, inst := range reps {
			tc := pactv1connect.NewTokenServiceClient(h2c(), inst.url, withToken(frontendToken))
			if _, err := tc.SignReceipt(ctx, &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: d.grantID, PaIssuer: d.pa.issuer,
				BrandUser: "user-42", ScopesUsed: []string{"orders:read"}, Actions: []*pactv1.ReceiptAction{{Tool: "tool-" + strconv.Itoa(i)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	events := auditTrail(t, a)
	want := make([]string, 0, len(events))
	for _, e := range events {
		want = append(want, whID+"_"+e.GetId())
	}
	slices.Sort(want)
	if n := 2 + 3*len(reps); len(want) != n {
		t.Fatalf("%d audit events, want %d", len(want), n)
	}
	// Each delivery was tried and failed (connection refused) before the restart.
	waitUntil(t, 20*time.Second, "every delivery tried while the receiver is down", func() bool {
		res, err := webhooks(a, adminToken).ListWebhookDeliveries(ctx, &pactv1.ListWebhookDeliveriesRequest{WebhookId: whID})
		if err != nil || len(res.GetDeliveries()) != len(want) {
			return false
		}
		for _, dl := range res.GetDeliveries() {
			if dl.GetStatus() != pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_PENDING || dl.GetAttempts() < 1 || dl.GetLastError() == "" {
				return false
			}
		}
		return true
	})
	if ids, n := rx.received(); n != 0 {
		t.Fatalf("the stopped receiver got %v", ids)
	}
	st, err := webhooks(a, adminToken).GetWebhook(ctx, &pactv1.GetWebhookRequest{WebhookId: whID})
	if err != nil || st.GetWebhook().GetDeliveryState().GetPending() != int64(len(want)) || st.GetWebhook().GetDeliveryState().GetOldestPendingTime() == nil ||
		st.GetWebhook().GetDeliveryState().GetLastFailureError() == "" || st.GetWebhook().GetDeliveryState().GetLastFailureStatus() != 0 {
		t.Fatalf("delivery state while down: %v, %v", st.GetWebhook().GetDeliveryState(), err)
	}
	if m := samples(t, a); m["pactd_webhook_deliveries_total{outcome=\"retry\"}"] < 1 {
		t.Fatalf("retry metric %v", m["pactd_webhook_deliveries_total{outcome=\"retry\"}"])
	}

	// Restart everything; the receiver last.
	for _, inst := range reps {
		inst.stop()
	}
	reps = startAll()
	rx.start()

	waitUntil(t, 30*time.Second, "every event at the receiver", func() bool {
		ids, _ := rx.received()
		return len(ids) >= len(want)
	})
	waitUntil(t, 10*time.Second, "every delivery recorded as delivered", func() bool {
		st, err := webhooks(reps[len(reps)-1], adminToken).GetWebhook(ctx, &pactv1.GetWebhookRequest{WebhookId: whID})
		s := st.GetWebhook().GetDeliveryState()
		return err == nil && s.GetDelivered() == int64(len(want)) && s.GetPending() == 0 && s.GetDead() == 0
	})
	ids, requests := rx.received()
	rx.mu.Lock()
	bad := slices.Clone(rx.bad)
	rx.mu.Unlock()
	if len(bad) != 0 {
		t.Fatalf("requests that did not verify: %v", bad)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("received webhook-ids %v\nwant (one per event) %v", ids, want)
	}
	rx.mu.Lock()
	for _, id := range ids {
		if ev := rx.eventOf[id]; whID+"_"+ev != id {
			t.Errorf("webhook-id %s carries event %s", id, ev)
		}
	}
	rx.mu.Unlock()
	t.Logf("%d events, %d requests (%d duplicates, removed by webhook-id)", len(want), requests, requests-len(want))
	waitUntil(t, 5*time.Second, "pactd_webhook_lag_seconds and pactd_webhook_pending at 0", func() bool {
		m := samples(t, reps[0])
		return m["pactd_webhook_lag_seconds"] == 0 && m["pactd_webhook_pending"] == 0
	})
}
