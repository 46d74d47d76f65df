package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/core/webhook"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/internal/stdwebhook"
	"pactd.dev/pactd/internal/testkit/testclock"
)

// receiver records what reaches it and answers with status.
type receiver struct {
	mu     sync.Mutex
	status int
	got    []received
	srv    *httptest.Server
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Clone(), b})
		st := r.status
		r.mu.Unlock()
		if st == http.StatusFound {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(st)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

type fixture struct {
	store db.Store
	box   *provkeys.SecretBox
	clock *testclock.Clock
	key   []byte
}

// setup opens a store with one destination at url and returns the
// fixture; the destination's id is "wh_test".
func setup(t *testing.T, url string) fixture {
	t.Helper()
	s := dbtest.Open(t, "", t.TempDir())
	box, err := provkeys.NewSecretBox(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	secret := stdwebhook.NewSecret()
	key, _ := stdwebhook.ParseSecret(secret)
	clock := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	if _, err := s.CreateWebhookDestination(t.Context(), db.WebhookDestination{ID: "wh_test", URL: url, Enabled: true,
		SealedSecret: box.Seal(webhook.SecretPurpose, "wh_test", []byte(secret)), CreateTime: clock.Now(), UpdateTime: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	return fixture{s, box, clock, key}
}

func (f fixture) dispatcher(mod ...func(*webhook.Config)) *webhook.Dispatcher {
	cfg := webhook.Config{Store: f.store, Secrets: f.box, Owner: "test", Now: f.clock.Now, Dev: true,
		RetryBase: 10 * time.Second, RetryMax: time.Minute, MaxAttempts: 3, MaxAge: time.Hour, Timeout: 5 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	return webhook.New(cfg)
}

func (f fixture) record(t *testing.T, kind db.AuditKind) db.AuditEvent {
	t.Helper()
	e, err := f.store.RecordAuditEvent(t.Context(), db.AuditEvent{Kind: kind, Time: f.clock.Now(), BrandID: "acme", BrandUser: "u1",
		GrantID: "g1", Scopes: []string{"orders:read"}, Actions: []db.AuditAction{{Tool: "lookup", ArgsHash: "h"}}, Actor: db.ActorPA, Detail: "d"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (f fixture) delivery(t *testing.T) db.WebhookDelivery {
	t.Helper()
	ds, err := f.store.ListWebhookDeliveries(t.Context(), db.WebhookDeliveryFilter{}, 0, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %v, %v; want one", ds, err)
	}
	return ds[0]
}

// TestDelivered: the POST carries the event as the documented JSON, the
// three Standard Webhooks headers with the message id of the destination
// and event, and a signature the receiver verifies with the secret; a 2xx
// answer makes the delivery delivered.
func TestDelivered(t *testing.T) {
	r := newReceiver(t, http.StatusNoContent)
	f := setup(t, r.srv.URL+"/hook?token=x")
	e := f.record(t, db.AuditReceiptSigned)
	if n := f.dispatcher().Poll(t.Context()); n != 1 {
		t.Fatalf("Poll claimed %d", n)
	}
	got := r.received()
	if len(got) != 1 {
		t.Fatalf("received %d requests", len(got))
	}
	h, body := got[0].header, got[0].body
	want := `{"type":"receipt.signed","timestamp":"2026-12-01T09:00:00Z","data":{"id":"` + itoa(e.ID) + `","kind":"receipt.signed",` +
		`"time":"2026-12-01T09:00:00Z","brandId":"acme","brandUser":"u1","agentId":"","paIssuer":"","grantId":"g1",` +
		`"scopes":["orders:read"],"actions":[{"tool":"lookup","argsHash":"h"}],"actor":"pa","detail":"d"}}`
	if string(body) != want {
		t.Fatalf("body\n%s\nwant\n%s", body, want)
	}
	if h.Get("Content-Type") != "application/json" || h.Get("webhook-id") != "wh_test_"+itoa(e.ID) || h.Get("webhook-timestamp") != itoa(f.clock.Now().Unix()) {
		t.Fatalf("headers %v", h)
	}
	if id, err := stdwebhook.Verify(f.key, h, body, f.clock.Now(), time.Minute); err != nil || id != "wh_test_"+itoa(e.ID) {
		t.Fatalf("receiver verification: %q, %v", id, err)
	}
	d := f.delivery(t)
	if d.State != db.DeliveryDelivered || d.Attempts != 1 || d.LastStatus != 204 || d.LastError != "" {
		t.Fatalf("delivery %+v", d)
	}
	if n := f.dispatcher().Poll(t.Context()); n != 0 || len(r.received()) != 1 {
		t.Fatal("a delivered delivery was sent again")
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestRetryThenDead: a failed attempt (HTTP 500, a redirect, no answer)
// schedules the next within the backoff's bounds; the
// attempt bound leaves it dead; the age bound too.
func TestRetryThenDead(t *testing.T) {
	r := newReceiver(t, http.StatusInternalServerError)
	f := setup(t, r.srv.URL)
	f.record(t, db.AuditGrantRevoked)
	disp := f.dispatcher()
	disp.Poll(t.Context())
	d := f.delivery(t)
	wait := d.NextAttempt.Sub(f.clock.Now())
	if d.State != db.DeliveryPending || d.Attempts != 1 || d.LastStatus != 500 || d.LastError != "HTTP 500" || wait < 5*time.Second || wait > 10*time.Second {
		t.Fatalf("after one failure %+v (wait %v, want 5s-10s)", d, wait)
	}
	if disp.Poll(t.Context()); len(r.received()) != 1 {
		t.Fatal("sent again before its next attempt")
	}
	r.mu.Lock()
	r.status = http.StatusFound
	r.mu.Unlock()
	f.clock.Advance(wait)
	disp.Poll(t.Context())
	d = f.delivery(t)
	wait = d.NextAttempt.Sub(f.clock.Now())
	if d.State != db.DeliveryPending || d.Attempts != 2 || d.LastStatus != 302 || !strings.Contains(d.LastError, "redirects are not followed") ||
		wait < 10*time.Second || wait > 20*time.Second {
		t.Fatalf("after a redirect %+v (wait %v, want 10s-20s)", d, wait)
	}
	r.srv.Close() // no answer: a refused connection, or EOF on a kept-alive one
	f.clock.Advance(wait)
	disp.Poll(t.Context())
	d = f.delivery(t)
	if d.State != db.DeliveryDead || d.Attempts != 3 || d.LastStatus != 0 || d.LastError == "" || d.Done.IsZero() {
		t.Fatalf("after the third failure %+v; want dead", d)
	}

	// The age bound: one failure past MaxAge is dead at once.
	r2 := newReceiver(t, http.StatusServiceUnavailable)
	f2 := setup(t, r2.srv.URL)
	f2.record(t, db.AuditGrantCreated)
	f2.clock.Advance(time.Hour)
	f2.dispatcher().Poll(t.Context())
	if d := f2.delivery(t); d.State != db.DeliveryDead || d.Attempts != 1 {
		t.Fatalf("a failure past the age bound left %+v", d)
	}
}

// TestDialGuard: without PACT_DEV a loopback receiver is refused at dial
// time (the guard), the attempt fails with the guard's reason and nothing
// reaches the receiver; allowing the host lets it through (the control).
func TestDialGuard(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	f := setup(t, r.srv.URL)
	f.record(t, db.AuditGrantCreated)
	f.dispatcher(func(c *webhook.Config) { c.Dev = false }).Poll(t.Context())
	d := f.delivery(t)
	if len(r.received()) != 0 || d.State != db.DeliveryPending || !strings.Contains(d.LastError, "loopback") {
		t.Fatalf("guarded attempt: %d received, %+v", len(r.received()), d)
	}
	f.clock.Advance(time.Minute)
	f.dispatcher(func(c *webhook.Config) { c.Dev = false; c.AllowHosts = []string{"127.0.0.1"} }).Poll(t.Context())
	if d := f.delivery(t); len(r.received()) != 1 || d.State != db.DeliveryDelivered {
		t.Fatalf("allowed host: %d received, %+v", len(r.received()), d)
	}
}

// TestSecretDoesNotOpen: a secret sealed under another key-encryption key
// sends nothing and records why.
func TestSecretDoesNotOpen(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	f := setup(t, r.srv.URL)
	f.record(t, db.AuditGrantCreated)
	other, _ := provkeys.NewSecretBox(bytes.Repeat([]byte{4}, 32))
	f.box = other
	f.dispatcher().Poll(t.Context())
	if d := f.delivery(t); len(r.received()) != 0 || !strings.Contains(d.LastError, "does not open") {
		t.Fatalf("%d received, %+v", len(r.received()), d)
	}
}

// TestPreviousSecret: with a previous secret whose window has not ended,
// the signature header lists the current secret's signature and then the
// previous one's, and a receiver on either verifies it; once the clock
// reaches the window's end, the current one's alone. A previous secret
// that does not open sends nothing, as a current one would not.
func TestPreviousSecret(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	f := setup(t, r.srv.URL)
	ctx := t.Context()
	prevSecret := stdwebhook.NewSecret()
	prevKey, _ := stdwebhook.ParseSecret(prevSecret)
	d, err := f.store.GetWebhookDestination(ctx, "wh_test")
	if err != nil {
		t.Fatal(err)
	}
	// withPrevious makes previous the stored previous secret, valid for an
	// hour, and the fixture's the current one again: a rotation to previous,
	// then one back to the current secret with an overlap.
	withPrevious := func(previous []byte) {
		t.Helper()
		if _, err := f.store.RotateWebhookSecret(ctx, "wh_test", previous, time.Time{}, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.RotateWebhookSecret(ctx, "wh_test", d.SealedSecret, f.clock.Now().Add(time.Hour), f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	withPrevious(f.box.Seal(webhook.SecretPurpose, "wh_test", []byte(prevSecret)))
	last := func() received {
		t.Helper()
		got := r.received()
		if len(got) == 0 {
			t.Fatal("nothing received")
		}
		return got[len(got)-1]
	}
	f.record(t, db.AuditGrantCreated)
	f.dispatcher().Poll(ctx)
	got := last()
	sigs := strings.Fields(got.header.Get("webhook-signature"))
	if len(sigs) != 2 || sigs[0] != stdwebhook.Sign(f.key, got.header.Get("webhook-id"), f.clock.Now(), got.body) ||
		sigs[1] != stdwebhook.Sign(prevKey, got.header.Get("webhook-id"), f.clock.Now(), got.body) {
		t.Fatalf("inside the window: webhook-signature %q", got.header.Get("webhook-signature"))
	}
	for _, k := range [][]byte{f.key, prevKey} {
		if _, err := stdwebhook.Verify(k, got.header, got.body, f.clock.Now(), time.Minute); err != nil {
			t.Fatalf("inside the window: %v", err)
		}
	}

	f.clock.Advance(time.Hour)
	f.record(t, db.AuditGrantCreated)
	f.dispatcher().Poll(ctx)
	got = last()
	if sigs := strings.Fields(got.header.Get("webhook-signature")); len(sigs) != 1 {
		t.Fatalf("at the window's end: webhook-signature %q", got.header.Get("webhook-signature"))
	}
	if _, err := stdwebhook.Verify(prevKey, got.header, got.body, f.clock.Now(), time.Minute); !errors.Is(err, stdwebhook.ErrBadSignature) {
		t.Fatalf("at the window's end the previous secret verifies: %v", err)
	}

	other, _ := provkeys.NewSecretBox(bytes.Repeat([]byte{4}, 32))
	withPrevious(other.Seal(webhook.SecretPurpose, "wh_test", []byte(prevSecret)))
	n := len(r.received())
	e := f.record(t, db.AuditGrantCreated)
	f.dispatcher().Poll(ctx)
	ds, _ := f.store.ListWebhookDeliveries(ctx, db.WebhookDeliveryFilter{}, 0, 1)
	if len(r.received()) != n || len(ds) != 1 || ds[0].EventID != e.ID || !strings.Contains(ds[0].LastError, "previous signing secret does not open") {
		t.Fatalf("a previous secret that does not open: %d received, %+v", len(r.received())-n, ds)
	}
}

// TestRunPollsOnItsClock: Run polls at once, then each time its clock
// reaches the next poll interval (the ticker is the clock's, so a test
// clock's Advance is a poll).
func TestRunPollsOnItsClock(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	f := setup(t, r.srv.URL)
	f.record(t, db.AuditGrantCreated)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		f.dispatcher(func(c *webhook.Config) { c.PollInterval = time.Second; c.NewTicker = f.clock.NewTicker }).Run(ctx)
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	waitReceived := func(n int, what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(r.received()) < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("received %d, want %d: %s", len(r.received()), n, what)
			}
		}
	}
	waitReceived(1, "the poll at start")
	f.record(t, db.AuditGrantRefreshed)
	if err := f.clock.WaitForTicker(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	waitReceived(2, "a poll one interval of the clock later")
}

// TestRunStopsAndReleases: Run delivers every due delivery, and returns
// when its context ends.
func TestRunStopsAndReleases(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	f := setup(t, r.srv.URL)
	for range 3 {
		f.record(t, db.AuditGrantCreated)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		f.dispatcher(func(c *webhook.Config) { c.PollInterval = 10 * time.Millisecond }).Run(ctx)
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(r.received()) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if n := len(r.received()); n != 3 {
		t.Fatalf("received %d, want 3", n)
	}
	if p, err := f.store.ListWebhookDeliveries(t.Context(), db.WebhookDeliveryFilter{State: db.DeliveryPending}, 0, 10); err != nil || len(p) != 0 {
		t.Fatalf("pending after Run: %v, %v", p, err)
	}
}
