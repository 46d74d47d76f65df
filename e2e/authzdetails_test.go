package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"pactd/frontends/demo"
	pactv1 "pactd/gen/pact/v1"
	"pactd/gen/pact/v1/pactv1connect"
)

// PACT §5.7 end to end, through the reference frontend (its OAuth reverse
// proxy, consent RPCs and the demo agent) against the demo Brand with its
// order-cancel type: bad details are refused at the frontend's device
// authorization endpoint, approved details reach the token response and
// the token, and the agent cancels only the order they name.
func TestResourceBoundDelegation(t *testing.T) {
	engines(t, func(t *testing.T, dbURL string) {
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
			desc.GetAuthorizationDetails()[0].GetWords() != "Cancel one order: order 1002; allowed cancel" ||
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
