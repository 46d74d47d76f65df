package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/frontends/demo"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// PACT §5.7 end to end, through the reference frontend (its OAuth reverse
// proxy, consent RPCs and the demo agent) against the demo Brand with its
// order-cancel type: bad details are refused at the frontend's device
// authorization endpoint, approved details reach the token response and
// the token, and the agent cancels only the order they name.
func TestResourceBoundDelegation(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		const sub = "user-rar"
		entry := `{"type":"` + demo.OrderCancelType + `","order_id":"1002","actions":["cancel"]}`
		want := `[{"actions":["cancel"],"order_id":"1002","type":"` + demo.OrderCancelType + `"}]`

		// The metadata advertises the type (a PA checks before sending).
		var md struct {
			Types []string `json:"authorization_details_types_supported"`
		}
		w.getJSON(t, w.feURL+"/a2a/"+shop+"/oauth/.well-known/oauth-authorization-server", &md)
		if len(md.Types) != 1 || md.Types[0] != demo.OrderCancelType {
			t.Fatalf("authorization_details_types_supported = %v", md.Types)
		}

		// Refusals (spec §6 case 29) through the frontend.
		for name, details := range map[string]string{
			"wrong-action":  `[{"type":"` + demo.OrderCancelType + `","order_id":"1002","actions":["refund"]}]`,
			"extra-field":   `[{"type":"` + demo.OrderCancelType + `","order_id":"1002","actions":["cancel"],"note":"x"}]`,
			"without-scope": `[` + entry + `]`, // scope below lacks orders:cancel
			"null":          `null`,
		} {
			scope := "orders:read orders:cancel"
			if name == "without-scope" {
				scope = "orders:read"
			}
			r := w.oauthPost(t, shop, "device_authorization", "Bearer "+w.token(t, sub), w.paForm("scope", scope, "authorization_details", details))
			wantOAuthError(t, name, r, 400, "invalid_authorization_details")
		}

		// The grant: both scopes, limited to order 1002.
		var d deviceAuthorization
		wantOAuthJSON(t, "device authorization", w.oauthPost(t, shop, "device_authorization", "Bearer "+w.token(t, sub),
			w.paForm("scope", "orders:read orders:cancel", "authorization_details", `[`+entry+`]`)), &d)
		desc, err := w.deleg.DescribeConsent(t.Context(), &pactv1.DescribeConsentRequest{BrandId: shop, UserCode: d.UserCode})
		if err != nil || len(desc.GetAuthorizationDetails()) != 1 ||
			desc.GetAuthorizationDetails()[0].GetWords() != "Only order 1002: cancel it" || // the demo Brand's consent_template
			desc.GetAuthorizationDetails()[0].GetScope() != demo.ScopeOrdersCancel {
			t.Fatalf("DescribeConsent = %v, %v", desc, err)
		}
		w.approve(t, d.UserCode, "alice", "orders:read", "orders:cancel")
		var tok struct {
			tokenResponse
			AuthorizationDetails json.RawMessage `json:"authorization_details"`
		}
		wantOAuthJSON(t, "token", w.poll(t, sub, d.DeviceCode), &tok)
		if string(tok.AuthorizationDetails) != want || tok.Scope != "orders:read orders:cancel" {
			t.Fatalf("token response scope %q authorization_details %s; want %s", tok.Scope, tok.AuthorizationDetails, want)
		}
		var claims struct {
			AuthorizationDetails json.RawMessage `json:"authorization_details"`
		}
		jwtPart(t, tok.AccessToken, 1, &claims)
		if string(claims.AuthorizationDetails) != want {
			t.Fatalf("token claim authorization_details = %s; want %s", claims.AuthorizationDetails, want)
		}

		// Introspection (RFC 9396 §9.1) returns the grant's details.
		tc := pactv1connect.NewTokenServiceClient(http.DefaultClient, w.pactdURL, bearer(frontendToken))
		in, err := tc.IntrospectToken(t.Context(), &pactv1.IntrospectTokenRequest{Token: tok.AccessToken, BrandId: shop})
		if err != nil || !in.GetActive() || in.GetAuthorizationDetailsJson() != want || len(in.GetAuthorizationDetails()) != 1 ||
			in.GetAuthorizationDetails()[0].GetType() != demo.OrderCancelType {
			t.Fatalf("IntrospectToken = %v, %v", in, err)
		}
		// A refresh keeps them exactly.
		var next struct {
			tokenResponse
			AuthorizationDetails json.RawMessage `json:"authorization_details"`
		}
		wantOAuthJSON(t, "refresh", w.refresh(t, sub, tok.RefreshToken), &next)
		if string(next.AuthorizationDetails) != want {
			t.Fatalf("refreshed authorization_details = %s; want %s", next.AuthorizationDetails, want)
		}
		tok.AccessToken = next.AccessToken

		// The agent enforces them: order 1001 is not in the details, so no
		// action, a step-up; order 1002 is cancelled, with a receipt.
		decodeStepUp(t, w.delegated(t, sub, tok.AccessToken, userMsg("m-c1", "", "cancel order 1001")), demo.ScopeOrdersCancel)
		resp := w.delegated(t, sub, tok.AccessToken, userMsg("m-c2", "", "cancel order 1002"))
		rep, rc := w.verifyReceipt(t, resp)
		if !strings.Contains(rep.Message.Parts[0].Text, "order #1002") || !strings.Contains(rep.Message.Parts[0].Text, "cancelled") ||
			len(rc.Actions) != 1 || rc.Actions[0].Tool != "cancel_order" {
			t.Fatalf("cancel 1002 = %s", resp.body)
		}
	})
}

// The consent and connected pages of a resource-bound request show the
// Brand's own words (the demo Brand's consent_template, "Only order
// {order_id}: cancel it"), as the User's browser gets them from each
// frontend, in both Brand login modes; a template with HTML's special
// characters reaches the page escaped, as plain text.
func TestConsentPageShowsBrandWords(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		entry := func(order string) string {
			return `[{"type":"` + demo.OrderCancelType + `","order_id":"` + order + `","actions":["cancel"]}]`
		}
		device := func(brand, details string) deviceAuthorization {
			var d deviceAuthorization
			wantOAuthJSON(t, "device authorization", w.oauthPost(t, brand, "device_authorization", "Bearer "+w.token(t, "user-w"),
				w.paForm("scope", "orders:read orders:cancel", "authorization_details", details)), &d)
			return d
		}
		// The entry's words sit under the scope it needs.
		detailsOf := func(words string) string {
			return `<label for="scope-1">Cancel your orders that have not shipped yet <span class="id">orders:cancel</span></label>` + "\n</div>\n" +
				`<ul class="details" aria-label="Only for"><li>` + words + `</li></ul>`
		}

		// Trusted-frontend Brand: the page after the Brand's sign-in.
		d := device(shop, entry("1002"))
		u := newUser(t, w)
		u.signIn(t, d.VerificationURIComplete, "alice")
		consentPath := "/a2a/" + shop + "/oauth/consent?user_code=" + d.UserCode
		page := u.visit(t, consentPath, nil)
		if page.status != http.StatusOK || !strings.Contains(page.body, detailsOf("Only order 1002: cancel it")) ||
			strings.Contains(page.body, "Cancel one order:") {
			t.Fatalf("consent page %d lacks the Brand's words under orders:cancel:\n%s", page.status, page.body)
		}
		r := u.visit(t, "/a2a/"+shop+"/oauth/consent/decision", url.Values{"csrf": {hidden(t, page.body, "csrf")}, "user_code": {d.UserCode},
			"decision": {"allow"}, "scope": {"orders:read", "orders:cancel"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("allow: %d %s", r.status, r.body)
		}
		apps := u.visit(t, "/a2a/"+shop+"/oauth/connected", nil)
		if !strings.Contains(apps.body, `<span class="id">orders:cancel</span><ul class="hint"><li>Only order 1002: cancel it</li></ul></li>`) {
			t.Fatalf("connected page lacks the grant's words:\n%s", apps.body)
		}

		// The words are plain text: HTML in a template is escaped on the page.
		got, err := w.brands.GetBrand(t.Context(), &pactv1.GetBrandRequest{BrandId: shop})
		if err != nil {
			t.Fatal(err)
		}
		deleg := got.GetBrand().GetDelegation()
		deleg.GetAuthorizationDetailsTypes()[0].ConsentTemplate = `Only order {order_id} <b>&</b> "it's" {{x}}`
		if _, err := w.brands.UpdateBrand(t.Context(), &pactv1.UpdateBrandRequest{Brand: &pactv1.Brand{BrandId: shop, Delegation: deleg},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delegation"}}}); err != nil {
			t.Fatal(err)
		}
		d = device(shop, entry("1003"))
		page = u.visit(t, "/a2a/"+shop+"/oauth/consent?user_code="+d.UserCode, nil)
		if !strings.Contains(page.body, detailsOf(`Only order 1003 &lt;b&gt;&amp;&lt;/b&gt; &#34;it&#39;s&#34; {x}`)) || strings.Contains(page.body, "<b>&") {
			t.Fatalf("consent page does not show the template escaped:\n%s", page.body)
		}

		// Signed-assertion Brand: the page the Brand's login posts to.
		d = device(mart, entry("1004"))
		page, _, _ = w.consentFor(t, newStateless(), d, "bob")
		if !strings.Contains(page.body, detailsOf("Only order 1004: cancel it")) {
			t.Fatalf("signed-assertion consent page lacks the Brand's words:\n%s", page.body)
		}
	})
}
