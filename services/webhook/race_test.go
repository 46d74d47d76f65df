package webhook_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/core/provkeys"
	corewebhook "pactd.dev/pactd/core/webhook"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/internal/urlrule"
	"pactd.dev/pactd/services/webhook"
)

// TestUpdateRacingRotation: UpdateWebhook and RotateWebhookSecret calls
// running at once on one destination never undo each other. Updates are
// serialized among themselves and rotations among themselves (two locks),
// so the expected state is known at every step: before each rotation the
// stored secret opens to the last rotation's secret, with the one before it
// as the previous secret, and before each update the stored URL and
// description are the last update's. An update and a rotation still run
// concurrently, which is the race: a writer that writes back the whole row
// it read restores the other's old columns.
func TestUpdateRacingRotation(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		box, err := provkeys.NewSecretBox(bytes.Repeat([]byte{5}, 32))
		if err != nil {
			t.Fatal(err)
		}
		clock := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		svc := webhook.New(webhook.Deps{Store: s, Secrets: box, Now: clock.Now, URLs: urlrule.Policy{AllowHosts: []string{"siem.internal"}}})
		ctx := t.Context()
		res, err := svc.CreateWebhook(ctx, &pactv1.CreateWebhookRequest{Url: "https://siem.internal/start", Description: "start"})
		if err != nil {
			t.Fatal(err)
		}
		id := res.GetWebhook().GetWebhookId()
		open := func(sealed []byte) string {
			p, err := box.Open(corewebhook.SecretPurpose, id, sealed)
			if err != nil {
				return "unopenable: " + err.Error()
			}
			return string(p)
		}

		var (
			rotMu             sync.Mutex
			current, previous = res.GetSecret(), ""
			updMu             sync.Mutex
			url, description  = "https://siem.internal/start", "start"
		)
		const workers, rounds = 4, 12
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					updMu.Lock()
					d, err := s.GetWebhookDestination(ctx, id)
					if err != nil || d.URL != url || d.Description != description {
						t.Errorf("before update %d/%d: stored %q %q (%v), want %q %q: an update was lost", w, i, d.URL, d.Description, err, url, description)
					}
					u, desc := fmt.Sprintf("https://siem.internal/%d/%d", w, i), fmt.Sprintf("worker %d round %d", w, i)
					_, err = svc.UpdateWebhook(ctx, &pactv1.UpdateWebhookRequest{
						Webhook:    &pactv1.Webhook{WebhookId: id, Url: u, Description: desc},
						UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"url", "description"}},
					})
					if err != nil {
						t.Errorf("update: %v", err)
					} else {
						url, description = u, desc
					}
					updMu.Unlock()

					rotMu.Lock()
					d, err = s.GetWebhookDestination(ctx, id)
					if got := open(d.SealedSecret); err != nil || got != current {
						t.Errorf("before rotation %d/%d: stored secret %q (%v), want the last rotation's %q", w, i, got, err, current)
					}
					if previous != "" {
						if got := open(d.PreviousSealedSecret); got != previous {
							t.Errorf("before rotation %d/%d: previous secret %q, want %q", w, i, got, previous)
						}
					}
					r, err := svc.RotateWebhookSecret(ctx, &pactv1.RotateWebhookSecretRequest{WebhookId: id})
					if err != nil {
						t.Errorf("rotate: %v", err)
					} else {
						current, previous = r.GetSecret(), current
					}
					rotMu.Unlock()
				}
			})
		}
		wg.Wait()
		d, err := s.GetWebhookDestination(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := open(d.SealedSecret); got != current {
			t.Errorf("final secret %q, want the last rotation's %q", got, current)
		}
		if got := open(d.PreviousSealedSecret); got != previous {
			t.Errorf("final previous secret %q, want %q", got, previous)
		}
		if d.URL != url || d.Description != description {
			t.Errorf("final %q %q, want the last update's %q %q", d.URL, d.Description, url, description)
		}
	})
}
