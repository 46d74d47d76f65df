package dbtest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

func runWebhooks(t *testing.T, newStore Factory) {
	t.Run("webhooks/destinations", func(t *testing.T) { t.Parallel(); testWebhookDestinations(t, newStore(t)) })
	t.Run("webhooks/enqueue", func(t *testing.T) { t.Parallel(); testWebhookEnqueue(t, newStore(t)) })
	t.Run("webhooks/claim-finish", func(t *testing.T) { t.Parallel(); testWebhookClaimFinish(t, newStore(t)) })
	t.Run("webhooks/concurrent-claims", func(t *testing.T) { t.Parallel(); testWebhookConcurrentClaims(t, newStore(t)) })
	t.Run("webhooks/paused-and-purge", func(t *testing.T) { t.Parallel(); testWebhookPausedAndPurge(t, newStore(t)) })
}

func webhookDest(id string, now time.Time) db.WebhookDestination {
	return db.WebhookDestination{ID: id, URL: "https://siem.example/hook", Description: "SIEM", Enabled: true,
		SealedSecret: []byte("sealed"), CreateTime: now.Truncate(time.Second).UTC(), UpdateTime: now.Truncate(time.Second).UTC()}
}

// recordEvent stores an event of kind for brand at t.
func recordEvent(t *testing.T, s db.Store, kind db.AuditKind, brand string, at time.Time) db.AuditEvent {
	t.Helper()
	e, err := s.RecordAuditEvent(t.Context(), db.AuditEvent{Kind: kind, BrandID: brand, Time: at, Actor: db.ActorFrontend, Detail: "d"})
	if err != nil {
		t.Fatalf("RecordAuditEvent: %v", err)
	}
	return e
}

// pendingOf lists a destination's pending deliveries' event ids, oldest first.
func pendingOf(t *testing.T, s db.Store, dest string) []int64 {
	t.Helper()
	ds, err := s.ListWebhookDeliveries(t.Context(), db.WebhookDeliveryFilter{DestinationID: dest, State: db.DeliveryPending}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, d := range slices.Backward(ds) {
		out = append(out, d.EventID)
	}
	return out
}

// testWebhookDestinations: create, get, list, update and delete round-trip
// every field (the previous secret and its overlap end included); an update
// writes only the settings it names and a rotation only the secrets; an id
// taken is ErrConflict, an unknown one ErrNotFound.
func testWebhookDestinations(t *testing.T, s db.Store) {
	ctx := t.Context()
	d := webhookDest("wh_a", at)
	d.Kinds = []db.AuditKind{db.AuditGrantCreated, db.AuditGrantRevoked}
	d.BrandIDs = []string{"acme", "beta"}
	got, err := s.CreateWebhookDestination(ctx, d)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(d) {
		t.Fatalf("create = %+v, %v; want %+v", got, err, d)
	}
	if _, err := s.CreateWebhookDestination(ctx, d); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("create again: %v, want ErrConflict", err)
	}
	if got, err := s.GetWebhookDestination(ctx, "wh_a"); err != nil || fmt.Sprint(got) != fmt.Sprint(d) {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := s.GetWebhookDestination(ctx, "wh_none"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("get unknown: %v", err)
	}
	if _, err := s.CreateWebhookDestination(ctx, webhookDest("wh_b", at)); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListWebhookDestinations(ctx, "", 10)
	if err != nil || len(list) != 2 || list[0].ID != "wh_a" || list[1].ID != "wh_b" {
		t.Fatalf("list = %v, %v", list, err)
	}
	if list, _ := s.ListWebhookDestinations(ctx, "wh_a", 10); len(list) != 1 || list[0].ID != "wh_b" {
		t.Fatalf("list after wh_a = %v", list)
	}
	// An update writes the settings it names and the update time; the
	// others, and the secret, stay as stored.
	url, enabled, noKinds, noBrands := "https://other.example/h", false, []db.AuditKind(nil), []string(nil)
	d.URL, d.Kinds, d.BrandIDs, d.Enabled = url, nil, nil, false
	d.UpdateTime = d.UpdateTime.Add(time.Minute)
	if got, err := s.UpdateWebhookDestination(ctx, "wh_a", db.WebhookUpdate{URL: &url, Kinds: &noKinds, BrandIDs: &noBrands,
		Enabled: &enabled, UpdateTime: d.UpdateTime}); err != nil || fmt.Sprint(got) != fmt.Sprint(d) {
		t.Fatalf("update = %+v, %v; want %+v", got, err, d)
	}
	// A rotation with an overlap: the stored sealed secret becomes the
	// previous one, valid until a time kept to the millisecond; get and
	// list read both back; a later rotation without overlap clears it.
	d.PreviousSealedSecret, d.SealedSecret = d.SealedSecret, []byte("newer")
	d.PreviousUntil = at.Add(24*time.Hour + 1234*time.Millisecond).Truncate(time.Millisecond).UTC()
	d.UpdateTime = d.UpdateTime.Add(time.Minute)
	if got, err := s.RotateWebhookSecret(ctx, "wh_a", []byte("newer"), d.PreviousUntil, d.UpdateTime); err != nil || fmt.Sprint(got) != fmt.Sprint(d) {
		t.Fatalf("rotate with an overlap = %+v, %v; want %+v", got, err, d)
	}
	if got, err := s.GetWebhookDestination(ctx, "wh_a"); err != nil || string(got.PreviousSealedSecret) != "sealed" ||
		!got.PreviousUntil.Equal(d.PreviousUntil) || string(got.SealedSecret) != "newer" {
		t.Fatalf("get after rotation = %+v, %v", got, err)
	}
	if list, _ := s.ListWebhookDestinations(ctx, "", 10); len(list) != 2 || string(list[0].PreviousSealedSecret) != "sealed" ||
		!list[0].PreviousUntil.Equal(d.PreviousUntil) || len(list[1].PreviousSealedSecret) != 0 || !list[1].PreviousUntil.IsZero() {
		t.Fatalf("list after rotation = %+v", list)
	}
	// An update leaves both secrets as they are.
	desc := "other"
	if got, err := s.UpdateWebhookDestination(ctx, "wh_a", db.WebhookUpdate{Description: &desc, UpdateTime: d.UpdateTime}); err != nil ||
		got.Description != desc || got.URL != url || string(got.SealedSecret) != "newer" || string(got.PreviousSealedSecret) != "sealed" ||
		!got.PreviousUntil.Equal(d.PreviousUntil) {
		t.Fatalf("update after rotation = %+v, %v", got, err)
	}
	if got, err := s.RotateWebhookSecret(ctx, "wh_a", []byte("newest"), time.Time{}, d.UpdateTime); err != nil ||
		len(got.PreviousSealedSecret) != 0 || !got.PreviousUntil.IsZero() || string(got.SealedSecret) != "newest" || got.Description != desc {
		t.Fatalf("rotate without an overlap = %+v, %v", got, err)
	}
	if _, err := s.UpdateWebhookDestination(ctx, "wh_none", db.WebhookUpdate{URL: &url, UpdateTime: at}); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("update unknown: %v", err)
	}
	if _, err := s.RotateWebhookSecret(ctx, "wh_none", []byte("x"), time.Time{}, at); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("rotate unknown: %v", err)
	}
	if err := s.DeleteWebhookDestination(ctx, "wh_a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWebhookDestination(ctx, "wh_a"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

// testWebhookEnqueue: recording an audit event queues one delivery per
// enabled destination whose kind and Brand filters match, due at the
// event's time; a disabled destination, another kind or another Brand gets
// none; an event without a Brand matches only destinations without a
// Brand filter; a destination deleted takes its deliveries along.
func testWebhookEnqueue(t *testing.T, s db.Store) {
	ctx := t.Context()
	all := webhookDest("wh_all", at)
	kinds := webhookDest("wh_kinds", at)
	kinds.Kinds = []db.AuditKind{db.AuditGrantRevoked, db.AuditReceiptSigned}
	brands := webhookDest("wh_brands", at)
	brands.BrandIDs = []string{"beta", "acme"}
	off := webhookDest("wh_off", at)
	off.Enabled = false
	for _, d := range []db.WebhookDestination{all, kinds, brands, off} {
		if _, err := s.CreateWebhookDestination(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	t0 := at.Truncate(time.Second).UTC()
	e1 := recordEvent(t, s, db.AuditGrantRevoked, "acme", t0)      // all, kinds, brands
	e2 := recordEvent(t, s, db.AuditGrantCreated, "acmex", t0)     // all (acmex is not acme)
	e3 := recordEvent(t, s, db.AuditReceiptSigned, "", t0)         // all, kinds
	e4 := recordEvent(t, s, db.AuditGrantRedeemed, "beta", t0)     // all, brands
	e5 := recordEvent(t, s, db.AuditKind("grant.revoke"), "x", t0) // all (a prefix of a listed kind is not it)
	want := map[string][]int64{
		"wh_all": {e1.ID, e2.ID, e3.ID, e4.ID, e5.ID}, "wh_kinds": {e1.ID, e3.ID}, "wh_brands": {e1.ID, e4.ID}, "wh_off": nil,
	}
	for dest, ids := range want {
		if got := pendingOf(t, s, dest); !slices.Equal(got, ids) {
			t.Errorf("%s pending events %v, want %v", dest, got, ids)
		}
	}
	ds, _ := s.ListWebhookDeliveries(ctx, db.WebhookDeliveryFilter{DestinationID: "wh_all"}, 0, 1)
	if len(ds) != 1 || !ds[0].NextAttempt.Equal(t0) || !ds[0].Since.Equal(t0) || ds[0].Attempts != 0 || ds[0].State != db.DeliveryPending {
		t.Fatalf("newest delivery %+v: want pending, due and since %v", ds, t0)
	}
	stats, err := s.WebhookStats(ctx, "")
	if err != nil || len(stats) != 4 || stats[0].DestinationID != "wh_all" || stats[0].Pending != 5 || !stats[0].OldestPending.Equal(t0) ||
		stats[2].DestinationID != "wh_kinds" || stats[2].Pending != 2 || stats[3].Pending != 0 || !stats[3].OldestPending.IsZero() {
		t.Fatalf("stats = %+v, %v", stats, err)
	}
	g, err := s.WebhookOutboxGauges(ctx)
	if err != nil || g.Pending != 9 || g.Dead != 0 || !g.OldestPending.Equal(t0) {
		t.Fatalf("gauges = %+v, %v", g, err)
	}
	if err := s.DeleteWebhookDestination(ctx, "wh_all"); err != nil {
		t.Fatal(err)
	}
	if g, _ := s.WebhookOutboxGauges(ctx); g.Pending != 4 {
		t.Fatalf("after deleting wh_all, %d pending; want 4", g.Pending)
	}
}

// testWebhookClaimFinish: a claim leases due deliveries whose lease ended,
// with their events, oldest due first; a leased one is not claimed again
// until its lease ends; an attempt is recorded only under the lease that
// holds it; a dead delivery comes back with a retry; released deliveries
// are claimable at once; purging removes only finished ones.
func testWebhookClaimFinish(t *testing.T, s db.Store) {
	ctx := t.Context()
	if _, err := s.CreateWebhookDestination(ctx, webhookDest("wh_1", at)); err != nil {
		t.Fatal(err)
	}
	t0 := at.Truncate(time.Second).UTC()
	e1 := recordEvent(t, s, db.AuditGrantCreated, "acme", t0)
	e2 := recordEvent(t, s, db.AuditGrantRevoked, "acme", t0.Add(time.Second))
	now := t0.Add(500 * time.Millisecond) // e2 is not due yet
	lease := now.Add(time.Minute)

	c, err := s.ClaimWebhookDeliveries(ctx, "r1", now, lease, 10)
	if err != nil || len(c) != 1 || c[0].EventID != e1.ID || !c[0].EventFound || c[0].Event.Kind != db.AuditGrantCreated ||
		c[0].Event.BrandID != "acme" || c[0].LeaseOwner != "r1" || !c[0].LeaseUntil.Equal(lease) {
		t.Fatalf("claim = %+v, %v", c, err)
	}
	later := t0.Add(2 * time.Second)
	c2, err := s.ClaimWebhookDeliveries(ctx, "r2", later, later.Add(time.Minute), 10)
	if err != nil || len(c2) != 1 || c2[0].EventID != e2.ID {
		t.Fatalf("second claim = %+v, %v: want only e2 (e1 is leased to r1)", c2, err)
	}
	// r2 cannot record r1's delivery.
	if ok, err := s.FinishWebhookDelivery(ctx, db.DeliveryOutcome{ID: c[0].ID, Owner: "r2", State: db.DeliveryDelivered, Now: later}); ok || err != nil {
		t.Fatalf("finish under another lease = %v, %v", ok, err)
	}
	// A failed attempt: pending again at NextAttempt, lease ended.
	retryAt := later.Add(10 * time.Second)
	if ok, err := s.FinishWebhookDelivery(ctx, db.DeliveryOutcome{ID: c[0].ID, Owner: "r1", State: db.DeliveryPending,
		Now: later, NextAttempt: retryAt, Status: 503, Error: "HTTP 503"}); !ok || err != nil {
		t.Fatalf("finish failed attempt = %v, %v", ok, err)
	}
	if c, _ := s.ClaimWebhookDeliveries(ctx, "r3", retryAt.Add(-time.Millisecond), retryAt.Add(time.Minute), 10); len(c) != 0 {
		t.Fatalf("claimed before its next attempt: %+v", c)
	}
	// r1's lease on it ended with the attempt; r2 dies holding e2: its
	// lease runs out and another owner claims it.
	c3, err := s.ClaimWebhookDeliveries(ctx, "r3", later.Add(time.Minute), later.Add(2*time.Minute), 10)
	if err != nil || len(c3) != 2 || c3[0].EventID != e2.ID || c3[1].EventID != e1.ID || c3[1].Attempts != 1 {
		t.Fatalf("claim after the leases ended = %+v, %v; want e2 then e1 (by due time)", c3, err)
	}
	if ok, _ := s.FinishWebhookDelivery(ctx, db.DeliveryOutcome{ID: c3[0].ID, Owner: "r2", State: db.DeliveryDelivered, Now: later}); ok {
		t.Fatal("an expired lease recorded an attempt after another owner claimed the delivery")
	}
	done := later.Add(time.Minute)
	if ok, _ := s.FinishWebhookDelivery(ctx, db.DeliveryOutcome{ID: c3[0].ID, Owner: "r3", State: db.DeliveryDelivered, Now: done, Status: 204}); !ok {
		t.Fatal("finish delivered")
	}
	if ok, _ := s.FinishWebhookDelivery(ctx, db.DeliveryOutcome{ID: c3[1].ID, Owner: "r3", State: db.DeliveryDead, Now: done, Status: 500, Error: "HTTP 500"}); !ok {
		t.Fatal("finish dead")
	}
	if ok, _ := s.FinishWebhookDelivery(ctx, db.DeliveryOutcome{ID: c3[1].ID, Owner: "r3", State: db.DeliveryDelivered, Now: done}); ok {
		t.Fatal("a dead delivery was finished again")
	}
	stats, err := s.WebhookStats(ctx, "wh_1")
	if err != nil || len(stats) != 1 || stats[0].Pending != 0 || stats[0].Dead != 1 || stats[0].Delivered != 1 ||
		!stats[0].LastDelivered.Equal(done) || !stats[0].LastFailure.Equal(done) || stats[0].LastStatus != 500 || stats[0].LastError != "HTTP 500" {
		t.Fatalf("stats = %+v, %v", stats, err)
	}
	dead, _ := s.ListWebhookDeliveries(ctx, db.WebhookDeliveryFilter{State: db.DeliveryDead}, 0, 10)
	if len(dead) != 1 || dead[0].Attempts != 2 || !dead[0].Done.Equal(done) || dead[0].LastStatus != 500 {
		t.Fatalf("dead = %+v", dead)
	}
	// Retry: pending, due now, attempts and age bound reset.
	retry := done.Add(time.Hour)
	if n, err := s.RetryDeadWebhookDeliveries(ctx, "wh_1", 0, retry); n != 1 || err != nil {
		t.Fatalf("retry = %d, %v", n, err)
	}
	if n, _ := s.RetryDeadWebhookDeliveries(ctx, "wh_1", 0, retry); n != 0 {
		t.Fatalf("retry again = %d", n)
	}
	c4, err := s.ClaimWebhookDeliveries(ctx, "r4", retry, retry.Add(time.Minute), 10)
	if err != nil || len(c4) != 1 || c4[0].Attempts != 0 || !c4[0].Since.Equal(retry) {
		t.Fatalf("claim after retry = %+v, %v", c4, err)
	}
	if err := s.ReleaseWebhookDeliveries(ctx, "r4", []int64{c4[0].ID}); err != nil {
		t.Fatal(err)
	}
	if c5, _ := s.ClaimWebhookDeliveries(ctx, "r5", retry, retry.Add(time.Minute), 10); len(c5) != 1 {
		t.Fatalf("claim after release = %+v", c5)
	}
	// A pruned event: the claim says so.
	if _, err := s.PruneAuditEvents(ctx, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	c6, _ := s.ClaimWebhookDeliveries(ctx, "r6", retry.Add(2*time.Minute), retry.Add(3*time.Minute), 10)
	if len(c6) != 1 || c6[0].EventFound {
		t.Fatalf("claim of a pruned event's delivery = %+v", c6)
	}
	// Purge: the delivered one (done before the cut) goes; the pending one stays.
	if n, err := s.PurgeWebhookDeliveries(ctx, done.Add(time.Millisecond), done.Add(time.Millisecond)); n != 1 || err != nil {
		t.Fatalf("purge = %d, %v", n, err)
	}
	if all, _ := s.ListWebhookDeliveries(ctx, db.WebhookDeliveryFilter{}, 0, 10); len(all) != 1 || all[0].State != db.DeliveryPending {
		t.Fatalf("after purge = %+v", all)
	}
}

// testWebhookConcurrentClaims: owners claiming at once never get one
// delivery twice, and together get every due one.
func testWebhookConcurrentClaims(t *testing.T, s db.Store) {
	ctx := t.Context()
	if _, err := s.CreateWebhookDestination(ctx, webhookDest("wh_c", at)); err != nil {
		t.Fatal(err)
	}
	t0 := at.Truncate(time.Second).UTC()
	const events = 60
	for range events {
		recordEvent(t, s, db.AuditGrantCreated, "acme", t0)
	}
	var (
		mu   sync.Mutex
		seen = map[int64]string{}
		wg   sync.WaitGroup
		errs = make(chan error, 8)
	)
	for w := range 4 {
		owner := fmt.Sprintf("r%d", w)
		wg.Go(func() {
			for {
				c, err := s.ClaimWebhookDeliveries(ctx, owner, t0, t0.Add(time.Minute), 7)
				if err != nil {
					errs <- err
					return
				}
				if len(c) == 0 {
					return
				}
				mu.Lock()
				for _, d := range c {
					if prev, ok := seen[d.ID]; ok {
						errs <- fmt.Errorf("delivery %d claimed by %s and %s", d.ID, prev, owner)
					}
					seen[d.ID] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != events {
		t.Fatalf("%d deliveries claimed, want %d", len(seen), events)
	}
}

// testWebhookPausedAndPurge: a disabled destination's queued deliveries
// are not claimed until it is enabled again; purging keeps dead
// deliveries past the delivered cut-off until their own.
func testWebhookPausedAndPurge(t *testing.T, s db.Store) {
	ctx := t.Context()
	d := webhookDest("wh_p", at)
	if _, err := s.CreateWebhookDestination(ctx, d); err != nil {
		t.Fatal(err)
	}
	t0 := at.Truncate(time.Second).UTC()
	recordEvent(t, s, db.AuditGrantCreated, "acme", t0)
	recordEvent(t, s, db.AuditGrantRevoked, "acme", t0)
	off, on := false, true
	if _, err := s.UpdateWebhookDestination(ctx, d.ID, db.WebhookUpdate{Enabled: &off, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.ClaimWebhookDeliveries(ctx, "r", t0, t0.Add(time.Minute), 10); err != nil || len(c) != 0 {
		t.Fatalf("claimed %d of a disabled destination (%v)", len(c), err)
	}
	recordEvent(t, s, db.AuditGrantRedeemed, "acme", t0) // not queued while disabled
	if _, err := s.UpdateWebhookDestination(ctx, d.ID, db.WebhookUpdate{Enabled: &on, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	c, err := s.ClaimWebhookDeliveries(ctx, "r", t0, t0.Add(time.Minute), 10)
	if err != nil || len(c) != 2 {
		t.Fatalf("claimed %d after enabling (%v), want the 2 queued before", len(c), err)
	}
	done := t0.Add(time.Minute)
	s.FinishWebhookDelivery(ctx, db.DeliveryOutcome{ID: c[0].ID, Owner: "r", State: db.DeliveryDelivered, Now: done})
	s.FinishWebhookDelivery(ctx, db.DeliveryOutcome{ID: c[1].ID, Owner: "r", State: db.DeliveryDead, Now: done, Error: "x"})
	cut := done.Add(time.Second)
	if n, err := s.PurgeWebhookDeliveries(ctx, cut, done.Add(-time.Second)); n != 1 || err != nil {
		t.Fatalf("purge delivered only = %d, %v", n, err)
	}
	if n, err := s.PurgeWebhookDeliveries(ctx, cut, cut); n != 1 || err != nil {
		t.Fatalf("purge dead = %d, %v", n, err)
	}
}
