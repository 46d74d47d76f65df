package webhook_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"pactd.dev/pactd/core/provkeys"
	corewebhook "pactd.dev/pactd/core/webhook"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/stdwebhook"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/internal/urlrule"
	"pactd.dev/pactd/services/webhook"
)

// rotation is a service and a dispatcher on one store and one fake clock,
// with a receiver that keeps the last request it got.
type rotation struct {
	svc   *webhook.Service
	store db.Store
	clock *testclock.Clock
	disp  *corewebhook.Dispatcher
	id    string

	mu     sync.Mutex
	header http.Header
	body   []byte
}

func newRotation(t *testing.T) (*rotation, string) {
	t.Helper()
	r := &rotation{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.header, r.body = req.Header.Clone(), b
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.store = dbtest.Open(t, "", t.TempDir())
	box, err := provkeys.NewSecretBox(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	r.clock = testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	r.svc = webhook.New(webhook.Deps{Store: r.store, Secrets: box, Now: r.clock.Now, URLs: urlrule.Policy{Dev: true}})
	r.disp = corewebhook.New(corewebhook.Config{Store: r.store, Secrets: box, Owner: "test", Now: r.clock.Now, Dev: true,
		RetryBase: 10 * time.Second, RetryMax: time.Minute, MaxAttempts: 3, MaxAge: time.Hour, Timeout: 5 * time.Second})
	res, err := r.svc.CreateWebhook(t.Context(), &pactv1.CreateWebhookRequest{Url: srv.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	r.id = res.GetWebhook().GetWebhookId()
	return r, res.GetSecret()
}

// deliver records an audit event now, lets the dispatcher send it and
// returns the request the receiver got.
func (r *rotation) deliver(t *testing.T) (http.Header, []byte) {
	t.Helper()
	if _, err := r.store.RecordAuditEvent(t.Context(), db.AuditEvent{Kind: db.AuditReceiptSigned, Time: r.clock.Now(), BrandID: "acme",
		Actor: db.ActorPA, Detail: "d"}); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.header = nil
	r.mu.Unlock()
	if n := r.disp.Poll(t.Context()); n != 1 {
		t.Fatalf("Poll claimed %d deliveries, want 1", n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.header == nil {
		t.Fatal("the receiver got nothing")
	}
	return r.header, r.body
}

func (r *rotation) rotate(t *testing.T, overlap *durationpb.Duration) *pactv1.RotateWebhookSecretResponse {
	t.Helper()
	res, err := r.svc.RotateWebhookSecret(t.Context(), &pactv1.RotateWebhookSecretRequest{WebhookId: r.id, PreviousValidFor: overlap})
	if err != nil || !strings.HasPrefix(res.GetSecret(), "whsec_") {
		t.Fatalf("rotate = %v, %v", res, err)
	}
	return res
}

// expiry is the previous secret's end as Get and List show it now (zero
// when unset); both must agree.
func (r *rotation) expiry(t *testing.T) time.Time {
	t.Helper()
	g, err := r.svc.GetWebhook(t.Context(), &pactv1.GetWebhookRequest{WebhookId: r.id})
	if err != nil {
		t.Fatal(err)
	}
	l, err := r.svc.ListWebhooks(t.Context(), &pactv1.ListWebhooksRequest{})
	if err != nil || len(l.GetWebhooks()) != 1 {
		t.Fatalf("ListWebhooks = %v, %v", l, err)
	}
	got, listed := g.GetWebhook().GetPreviousSecretExpireTime(), l.GetWebhooks()[0].GetPreviousSecretExpireTime()
	if (got == nil) != (listed == nil) || got != nil && !got.AsTime().Equal(listed.AsTime()) {
		t.Fatalf("Get shows %v, List %v", got, listed)
	}
	if got == nil {
		return time.Time{}
	}
	return got.AsTime()
}

// receivers checks a request as a receiver holding each secret would:
// those in accept verify it, those in refuse get ErrBadSignature; and the
// header lists exactly want signatures, the first under accept[0] (the new
// secret comes first).
func receivers(t *testing.T, now time.Time, h http.Header, body []byte, want int, accept, refuse []string) {
	t.Helper()
	sigs := strings.Split(h.Get("webhook-signature"), " ")
	if len(sigs) != want {
		t.Fatalf("webhook-signature %q has %d signatures, want %d", h.Get("webhook-signature"), len(sigs), want)
	}
	for _, s := range accept {
		k, _ := stdwebhook.ParseSecret(s)
		if _, err := stdwebhook.Verify(k, h, body, now, 5*time.Minute); err != nil {
			t.Fatalf("a receiver with %s…: %v, want accepted", s[:10], err)
		}
	}
	first, _ := stdwebhook.ParseSecret(accept[0])
	ts := time.Unix(mustInt(t, h.Get("webhook-timestamp")), 0)
	if sigs[0] != stdwebhook.Sign(first, h.Get("webhook-id"), ts, body) {
		t.Fatalf("the first signature is not the newest secret's")
	}
	for _, s := range refuse {
		k, _ := stdwebhook.ParseSecret(s)
		if _, err := stdwebhook.Verify(k, h, body, now, 5*time.Minute); !errors.Is(err, stdwebhook.ErrBadSignature) {
			t.Fatalf("a receiver with %s…: %v, want ErrBadSignature", s[:10], err)
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// TestRotationOverlap: one signature before a rotation; two during its
// overlap (a receiver still on the old secret accepts, as does one on the
// new); one after the window (the old receiver refuses); Get and List show
// the window's end only while it lasts. An overlap of 0 drops the old
// secret at once, and rotating inside a window keeps only the secret it
// replaces.
func TestRotationOverlap(t *testing.T) {
	r, s1 := newRotation(t)
	h, b := r.deliver(t)
	receivers(t, r.clock.Now(), h, b, 1, []string{s1}, nil)
	if !r.expiry(t).IsZero() {
		t.Fatal("a destination never rotated shows a previous secret")
	}

	// Rotated with an hour's overlap.
	start := r.clock.Now()
	res := r.rotate(t, durationpb.New(time.Hour))
	s2 := res.GetSecret()
	if end := res.GetPreviousSecretExpireTime().AsTime(); !end.Equal(start.Add(time.Hour)) || !r.expiry(t).Equal(end) {
		t.Fatalf("previous secret ends %v (Get/List %v), want %v", end, r.expiry(t), start.Add(time.Hour))
	}
	r.clock.Advance(59 * time.Minute)
	h, b = r.deliver(t)
	receivers(t, r.clock.Now(), h, b, 2, []string{s2, s1}, nil)

	// The window over: the new secret alone.
	r.clock.Advance(time.Minute)
	h, b = r.deliver(t)
	receivers(t, r.clock.Now(), h, b, 1, []string{s2}, []string{s1})
	if !r.expiry(t).IsZero() {
		t.Fatal("Get and List still show a previous secret after its window")
	}

	// Overlap 0: replaced at once, as after a leak.
	res = r.rotate(t, durationpb.New(0))
	s3 := res.GetSecret()
	if res.GetPreviousSecretExpireTime() != nil || !r.expiry(t).IsZero() {
		t.Fatalf("overlap 0 shows a previous secret: %v", res.GetPreviousSecretExpireTime())
	}
	h, b = r.deliver(t)
	receivers(t, r.clock.Now(), h, b, 1, []string{s3}, []string{s2, s1})

	// Unset: the default day. Rotating again inside it keeps s4 only.
	start = r.clock.Now()
	res = r.rotate(t, nil)
	s4 := res.GetSecret()
	if !res.GetPreviousSecretExpireTime().AsTime().Equal(start.Add(webhook.DefaultPreviousValidFor)) {
		t.Fatalf("default overlap ends %v", res.GetPreviousSecretExpireTime().AsTime())
	}
	r.clock.Advance(time.Hour)
	res = r.rotate(t, durationpb.New(2*time.Hour))
	s5 := res.GetSecret()
	if !r.expiry(t).Equal(r.clock.Now().Add(2 * time.Hour)) {
		t.Fatalf("the second rotation's window ends %v", r.expiry(t))
	}
	h, b = r.deliver(t)
	receivers(t, r.clock.Now(), h, b, 2, []string{s5, s4}, []string{s3})
}

// TestRotationRefused: an overlap below 0, above MaxPreviousValidFor or
// not a valid duration is InvalidArgument naming previous_valid_for, and
// the destination is stored as it was; the bound itself is accepted.
func TestRotationRefused(t *testing.T) {
	r, _ := newRotation(t)
	r.rotate(t, durationpb.New(time.Hour)) // a previous secret that must survive
	before, err := r.store.GetWebhookDestination(t.Context(), r.id)
	if err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(time.Minute)
	for name, d := range map[string]*durationpb.Duration{
		"negative":      durationpb.New(-time.Second),
		"over 7 days":   durationpb.New(webhook.MaxPreviousValidFor + time.Second),
		"a year":        durationpb.New(365 * 24 * time.Hour),
		"mixed signs":   {Seconds: 10, Nanos: -1},
		"nanos too big": {Seconds: 0, Nanos: 1_000_000_000},
	} {
		_, err := r.svc.RotateWebhookSecret(t.Context(), &pactv1.RotateWebhookSecretRequest{WebhookId: r.id, PreviousValidFor: d})
		if got := fields(t, err); !slices.Equal(got, []string{"previous_valid_for"}) {
			t.Errorf("%s: fields %v, want [previous_valid_for]", name, got)
		}
		after, err := r.store.GetWebhookDestination(t.Context(), r.id)
		if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("%s: stored %+v, want unchanged %+v", name, after, before)
		}
	}
	res := r.rotate(t, durationpb.New(webhook.MaxPreviousValidFor))
	if !res.GetPreviousSecretExpireTime().AsTime().Equal(r.clock.Now().Add(webhook.MaxPreviousValidFor)) {
		t.Fatalf("7 days: ends %v", res.GetPreviousSecretExpireTime().AsTime())
	}
}
