package e2e_test

import (
	"net/http"
	"net/url"
	"testing"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// TestSignedConsentSkippedWhenGranted: with the Brand's
// skip_consent_when_granted on, a User who already granted orders:read to
// this PA is not shown the page again for orders:read: the assertion the
// Brand's login posts answers 303 to the connected page as after an allow,
// and the PA's poll gets the token. A request for more than the grant holds
// shows the page as usual. By a client that keeps no cookies, on both
// stores.
func TestSignedConsentSkippedWhenGranted(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		ctx := t.Context()
		b := newStateless()
		got, err := w.brands.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: mart})
		if err != nil {
			t.Fatal(err)
		}
		d := got.GetBrand().GetDelegation()
		d.SkipConsentWhenGranted = true
		if _, err := w.brands.UpdateBrand(ctx, &pactv1.UpdateBrandRequest{Brand: &pactv1.Brand{BrandId: mart, Delegation: d},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delegation"}}}); err != nil {
			t.Fatal(err)
		}
		poll := func(dc string) response {
			return w.oauthPost(t, mart, "token", "Bearer "+w.token(t, "user-1"), w.paForm("grant_type", deviceGrant, "device_code", dc))
		}

		// The first grant goes through the page.
		first := w.martDevice(t, "user-1", "orders:read")
		_, f, _ := w.consentFor(t, b, first, "bob")
		if r := b.do(t, f.action, url.Values{"session": {f.hidden["session"]}, "decision": {"allow"}, "scope": {"orders:read"}}); r.status != http.StatusSeeOther {
			t.Fatalf("first allow: %d %s", r.status, r.body)
		}
		var tok tokenResponse
		wantOAuthJSON(t, "first token", poll(first.DeviceCode), &tok)

		// The same request again: no page.
		again := w.martDevice(t, "user-1", "orders:read")
		link, _ := url.Parse(again.VerificationURIComplete)
		returnTo := link.Query().Get("return_to")
		r := b.do(t, returnTo, url.Values{"assertion": {w.site.login(t, w, returnTo, "bob", "bob@mart.example")}})
		loc, err := url.Parse(r.header.Get("Location"))
		if r.status != http.StatusSeeOther || err != nil || loc.Scheme+"://"+loc.Host+loc.Path != w.feURL+"/a2a/mart/oauth/connected" ||
			loc.Query().Get("status") != "approved" || loc.Query().Get("scope") != "orders:read" || loc.Query().Get("client") != w.issuer {
			t.Fatalf("covered request: %d Location %q %s; want 303 to connected?status=approved", r.status, r.header.Get("Location"), r.body)
		}
		var second tokenResponse
		wantOAuthJSON(t, "token after the skipped consent", poll(again.DeviceCode), &second)
		if second.Scope != "orders:read" || second.AccessToken == "" {
			t.Fatalf("token after the skipped consent: %+v", second)
		}

		// More than the grant holds: the page, with its session.
		more := w.martDevice(t, "user-1", "orders:read orders:cancel")
		page, f2, _ := w.consentFor(t, b, more, "bob")
		if page.status != http.StatusOK || f2.hidden["session"] == "" {
			t.Fatalf("uncovered request: %d; want the consent page", page.status)
		}
	})
}
