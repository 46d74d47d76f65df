package webhook_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/core/provkeys"
	corewebhook "pactd.dev/pactd/core/webhook"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/testclock"
	"pactd.dev/pactd/internal/urlrule"
	"pactd.dev/pactd/services/webhook"
)

func newService(t *testing.T) (*webhook.Service, db.Store, *provkeys.SecretBox, *testclock.Clock) {
	t.Helper()
	s := dbtest.Open(t, "", t.TempDir())
	box, err := provkeys.NewSecretBox(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	clock := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	return webhook.New(webhook.Deps{Store: s, Secrets: box, Now: clock.Now, URLs: urlrule.Policy{AllowHosts: []string{"siem.internal"}}}), s, box, clock
}

// fields returns the field violations of an InvalidArgument error.
func fields(t *testing.T, err error) []string {
	t.Helper()
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("err = %v, want InvalidArgument", err)
	}
	return rpcerr.FieldViolations(err)
}

// TestCreateAndSecret: the secret is returned once, stored only sealed
// for this destination, and opens to the returned value; the filters
// round-trip; a private host named in the allow list is accepted.
func TestCreateAndSecret(t *testing.T) {
	svc, s, box, _ := newService(t)
	ctx := t.Context()
	res, err := svc.CreateWebhook(ctx, &pactv1.CreateWebhookRequest{Url: "https://siem.internal/hook?token=t", Description: "SIEM",
		EventKinds: []pactv1.AuditEventKind{pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REVOKED, pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED},
		BrandIds:   []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	w := res.GetWebhook()
	if !strings.HasPrefix(w.GetWebhookId(), "wh_") || !strings.HasPrefix(res.GetSecret(), "whsec_") || !w.GetEnabled() {
		t.Fatalf("created %v", res)
	}
	d, err := s.GetWebhookDestination(ctx, w.GetWebhookId())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(d.SealedSecret, []byte(res.GetSecret())) {
		t.Fatal("the secret is stored in the clear")
	}
	if p, err := box.Open(corewebhook.SecretPurpose, d.ID, d.SealedSecret); err != nil || string(p) != res.GetSecret() {
		t.Fatalf("sealed secret opens to %q, %v", p, err)
	}
	if !slices.Equal(d.Kinds, []db.AuditKind{db.AuditGrantRevoked, db.AuditReceiptSigned}) || !slices.Equal(d.BrandIDs, []string{"acme"}) {
		t.Fatalf("stored filters %v %v", d.Kinds, d.BrandIDs)
	}
	got, err := svc.GetWebhook(ctx, &pactv1.GetWebhookRequest{WebhookId: w.GetWebhookId()})
	if err != nil || got.GetWebhook().GetUrl() != "https://siem.internal/hook?token=t" || len(got.GetWebhook().GetEventKinds()) != 2 ||
		got.GetWebhook().GetDeliveryState().GetPending() != 0 {
		t.Fatalf("GetWebhook = %v, %v", got, err)
	}
	rot, err := svc.RotateWebhookSecret(ctx, &pactv1.RotateWebhookSecretRequest{WebhookId: w.GetWebhookId()})
	if err != nil || rot.GetSecret() == res.GetSecret() {
		t.Fatalf("rotate = %v, %v", rot, err)
	}
	d, _ = s.GetWebhookDestination(ctx, w.GetWebhookId())
	if p, _ := box.Open(corewebhook.SecretPurpose, d.ID, d.SealedSecret); string(p) != rot.GetSecret() {
		t.Fatal("the rotated secret is not the stored one")
	}
}

// TestRefusals: each bad field is named; nothing is stored.
func TestRefusals(t *testing.T) {
	svc, s, _, _ := newService(t)
	ctx := t.Context()
	many := make([]string, db.MaxWebhookFilterItems+1)
	for i := range many {
		many[i] = "b" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	for _, c := range []struct {
		name string
		req  *pactv1.CreateWebhookRequest
		want []string
	}{
		{"no url", &pactv1.CreateWebhookRequest{}, []string{"url"}},
		{"http to a public host", &pactv1.CreateWebhookRequest{Url: "http://siem.example/h"}, []string{"url"}},
		{"loopback without dev", &pactv1.CreateWebhookRequest{Url: "https://127.0.0.1/h"}, []string{"url"}},
		{"private address", &pactv1.CreateWebhookRequest{Url: "https://192.168.1.2/h"}, []string{"url"}},
		{"user info", &pactv1.CreateWebhookRequest{Url: "https://u:p@siem.example/h"}, []string{"url"}},
		{"fragment", &pactv1.CreateWebhookRequest{Url: "https://siem.example/h#x"}, []string{"url"}},
		{"description too long", &pactv1.CreateWebhookRequest{Url: "https://siem.example/h", Description: strings.Repeat("é", webhook.MaxDescription+1)}, []string{"description"}},
		{"unknown kind", &pactv1.CreateWebhookRequest{Url: "https://siem.example/h", EventKinds: []pactv1.AuditEventKind{99}}, []string{"event_kinds[0]"}},
		{"unspecified kind", &pactv1.CreateWebhookRequest{Url: "https://siem.example/h", EventKinds: []pactv1.AuditEventKind{0}}, []string{"event_kinds[0]"}},
		{"kind twice", &pactv1.CreateWebhookRequest{Url: "https://siem.example/h", EventKinds: []pactv1.AuditEventKind{1, 1}}, []string{"event_kinds[1]"}},
		{"bad brand", &pactv1.CreateWebhookRequest{Url: "https://siem.example/h", BrandIds: []string{"a b"}}, []string{"brand_ids[0]"}},
		{"too many brands", &pactv1.CreateWebhookRequest{Url: "https://siem.example/h", BrandIds: many}, []string{"brand_ids"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.CreateWebhook(ctx, c.req)
			if got := fields(t, err); !slices.Equal(got, c.want) {
				t.Fatalf("fields %v, want %v", got, c.want)
			}
		})
	}
	if list, _ := s.ListWebhookDestinations(ctx, "", 10); len(list) != 0 {
		t.Fatalf("refused creates stored %v", list)
	}
	// The positive control, then update refusals.
	res, err := svc.CreateWebhook(ctx, &pactv1.CreateWebhookRequest{Url: "https://siem.example/h"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetWebhook().GetWebhookId()
	for _, c := range []struct {
		name  string
		paths []string
		w     *pactv1.Webhook
		want  []string
	}{
		{"empty mask", nil, &pactv1.Webhook{WebhookId: id}, []string{"update_mask"}},
		{"unknown path", []string{"secret"}, &pactv1.Webhook{WebhookId: id}, []string{"update_mask"}},
		{"bad url", []string{"url"}, &pactv1.Webhook{WebhookId: id, Url: "https://10.0.0.1/"}, []string{"webhook.url"}},
	} {
		_, err := svc.UpdateWebhook(ctx, &pactv1.UpdateWebhookRequest{Webhook: c.w, UpdateMask: &fieldmaskpb.FieldMask{Paths: c.paths}})
		if got := fields(t, err); !slices.Equal(got, c.want) {
			t.Errorf("%s: fields %v, want %v", c.name, got, c.want)
		}
	}
	for _, bad := range []string{"nope", "wh_" + strings.Repeat("Z", 27), "wh_01JZZZZZZZZZZZZZZZZZZZZZZZ"} {
		if _, err := svc.GetWebhook(ctx, &pactv1.GetWebhookRequest{WebhookId: bad}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("GetWebhook(%q) = %v, want NotFound", bad, err)
		}
	}
	if _, err := svc.DeleteWebhook(ctx, &pactv1.DeleteWebhookRequest{}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("DeleteWebhook() = %v, want InvalidArgument", err)
	}
	if _, err := svc.ListWebhookDeliveries(ctx, &pactv1.ListWebhookDeliveriesRequest{Status: 9}); !slices.Equal(fields(t, err), []string{"status"}) {
		t.Errorf("ListWebhookDeliveries(status 9) = %v", err)
	}
	if _, err := svc.ListWebhookDeliveries(ctx, &pactv1.ListWebhookDeliveriesRequest{WebhookId: "x"}); !slices.Equal(fields(t, err), []string{"webhook_id"}) {
		t.Errorf("ListWebhookDeliveries(webhook x) = %v", err)
	}
}

// TestLimit: at most MaxWebhooks destinations.
func TestLimit(t *testing.T) {
	svc, _, _, clock := newService(t)
	for range webhook.MaxWebhooks {
		clock.Advance(time.Millisecond)
		if _, err := svc.CreateWebhook(t.Context(), &pactv1.CreateWebhookRequest{Url: "https://siem.example/h"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateWebhook(t.Context(), &pactv1.CreateWebhookRequest{Url: "https://siem.example/h"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("create past the limit = %v, want FailedPrecondition", err)
	}
	res, err := svc.ListWebhooks(t.Context(), &pactv1.ListWebhooksRequest{Page: &pactv1.PageRequest{PageSize: 60}})
	if err != nil || len(res.GetWebhooks()) != 60 || res.GetNextPageToken() == "" {
		t.Fatalf("first page %d, %q, %v", len(res.GetWebhooks()), res.GetNextPageToken(), err)
	}
	res2, err := svc.ListWebhooks(t.Context(), &pactv1.ListWebhooksRequest{Page: &pactv1.PageRequest{PageSize: 60, PageToken: res.GetNextPageToken()}})
	if err != nil || len(res2.GetWebhooks()) != 40 || res2.GetNextPageToken() != "" {
		t.Fatalf("second page %d, %q, %v", len(res2.GetWebhooks()), res2.GetNextPageToken(), err)
	}
}
