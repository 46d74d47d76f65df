package e2e_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"pactd.dev/pactd/frontends/demo"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
)

// TestDelegationCardAndMetadata: the card's userDelegation scheme and the
// RFC 8414 metadata it points to agree, and the JWKS is reachable.
func TestDelegationCardAndMetadata(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		var card struct {
			SupportedInterfaces []struct {
				URL string `json:"url"`
			} `json:"supportedInterfaces"`
			SecuritySchemes map[string]struct {
				HTTP   *struct{ Scheme string } `json:"httpAuthSecurityScheme"`
				OAuth2 *struct {
					Flows struct {
						DeviceCode struct {
							DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
							TokenURL               string            `json:"tokenUrl"`
							RefreshURL             string            `json:"refreshUrl"`
							Scopes                 map[string]string `json:"scopes"`
						} `json:"deviceCode"`
					} `json:"flows"`
					MetadataURL string `json:"oauth2MetadataUrl"`
				} `json:"oauth2SecurityScheme"`
			} `json:"securitySchemes"`
			SecurityRequirements []struct {
				Schemes map[string]struct {
					List []string `json:"list"`
				} `json:"schemes"`
			} `json:"securityRequirements"`
		}
		w.getJSON(t, w.feURL+"/a2a/"+shop+"/.well-known/agent-card.json", &card)
		iface := w.feURL + "/a2a/" + shop
		issuer := iface + "/oauth"
		o := card.SecuritySchemes["userDelegation"].OAuth2
		if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != iface || o == nil ||
			card.SecuritySchemes["platformJwt"].HTTP == nil {
			t.Fatalf("card schemes %+v", card)
		}
		f := o.Flows.DeviceCode
		wantScopes := map[string]string{"orders:read": "See your orders and their delivery status",
			"orders:cancel": "Cancel your orders that have not shipped yet", "profile:read": "See your name and email address"}
		if f.DeviceAuthorizationURL != issuer+"/device_authorization" || f.TokenURL != issuer+"/token" ||
			o.MetadataURL != issuer+"/.well-known/oauth-authorization-server" || !maps.Equal(f.Scopes, wantScopes) {
			t.Fatalf("userDelegation scheme %+v", o)
		}
		// The identity-only requirement stays; a second names both schemes.
		var reqs []string
		for _, r := range card.SecurityRequirements {
			names := make([]string, 0, len(r.Schemes))
			for n := range r.Schemes {
				names = append(names, n)
			}
			slices.Sort(names)
			reqs = append(reqs, strings.Join(names, "+"))
		}
		if !slices.Equal(reqs, []string{"platformJwt", "platformJwt+userDelegation"}) {
			t.Fatalf("securityRequirements %v", reqs)
		}

		var md struct {
			Issuer                            string   `json:"issuer"`
			DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
			TokenEndpoint                     string   `json:"token_endpoint"`
			JWKSURI                           string   `json:"jwks_uri"`
			RevocationEndpoint                string   `json:"revocation_endpoint"`
			ScopesSupported                   []string `json:"scopes_supported"`
			GrantTypesSupported               []string `json:"grant_types_supported"`
			TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
		}
		r := w.getJSON(t, o.MetadataURL, &md)
		// RFC 8414 §2: issuer and response_types_supported are REQUIRED,
		// token_endpoint too unless only the implicit grant is offered, and
		// token_endpoint_auth_signing_alg_values_supported MUST be present
		// when private_key_jwt is listed (likewise for revocation); RFC 8628
		// §4 adds device_authorization_endpoint.
		var members map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.body), &members); err != nil {
			t.Fatalf("metadata %s: %v", r.body, err)
		}
		for _, m := range []string{"issuer", "response_types_supported", "token_endpoint", "device_authorization_endpoint",
			"token_endpoint_auth_signing_alg_values_supported", "revocation_endpoint_auth_signing_alg_values_supported"} {
			if _, ok := members[m]; !ok {
				t.Errorf("metadata lacks %s: %s", m, r.body)
			}
		}
		if string(members["response_types_supported"]) != "[]" || string(members["token_endpoint_auth_signing_alg_values_supported"]) != `["ES256","RS256"]` {
			t.Errorf("metadata response types / signing algs: %s", r.body)
		}
		if r.header.Get("Content-Type") != "application/json" || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("metadata headers %v", r.header)
		}
		if md.Issuer != issuer || md.DeviceAuthorizationEndpoint != f.DeviceAuthorizationURL || md.TokenEndpoint != f.TokenURL ||
			md.JWKSURI != issuer+"/jwks.json" || md.RevocationEndpoint != issuer+"/revoke" ||
			!slices.Equal(md.ScopesSupported, []string{"orders:read", "orders:cancel", "profile:read"}) ||
			!slices.Equal(md.GrantTypesSupported, []string{deviceGrant, "refresh_token"}) ||
			!slices.Equal(md.TokenEndpointAuthMethodsSupported, []string{"private_key_jwt"}) {
			t.Fatalf("metadata %s", r.body)
		}
		var set struct {
			Keys []struct{ Kty, Crv, Kid, Alg, Use string } `json:"keys"`
		}
		w.getJSON(t, md.JWKSURI, &set)
		if len(set.Keys) == 0 || set.Keys[0].Kty != "EC" || set.Keys[0].Crv != "P-256" || set.Keys[0].Alg != "ES256" || set.Keys[0].Kid == "" {
			t.Fatalf("JWKS %+v", set)
		}
		// An identity-only Brand has no userDelegation scheme.
		var plain struct {
			SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
		}
		w.getJSON(t, w.feURL+"/a2a/acme/.well-known/agent-card.json", &plain)
		if _, ok := plain.SecuritySchemes["userDelegation"]; ok {
			t.Fatalf("identity-only card offers delegation")
		}
		// Unknown OAuth paths are not proxied.
		wantBare(t, "unknown oauth path", w.do(t, "GET", "/a2a/"+shop+"/oauth/pact.v1.AgentService", ""), 404)
		wantBare(t, "GET token", w.do(t, "GET", "/a2a/"+shop+"/oauth/token", ""), 405)
	})
}

// TestDelegationOAuthRefusals: the PA-facing OAuth refusals, each with a
// positive control.
func TestDelegationOAuthRefusals(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		good := "Bearer " + w.token(t, "user-1")
		read := w.paForm("scope", "orders:read")

		// Bad or missing PA JWT: a bare 401, on both endpoints.
		for _, ep := range []string{"device_authorization", "token"} {
			for name, auth := range map[string]string{"none": "", "garbage": "Bearer x.y.z", "basic": "Basic dXNlcjpwYXNz"} {
				r := w.oauthPost(t, shop, ep, auth, read)
				wantBare(t, ep+" "+name, r, 401)
				if r.header.Get("WWW-Authenticate") != `Bearer realm="a2a"` {
					t.Errorf("%s %s: WWW-Authenticate %q", ep, name, r.header.Get("WWW-Authenticate"))
				}
			}
		}
		// client_id other than the PA JWT's iss: 401 invalid_client.
		for _, id := range []string{w.issuer + "/", "https://other.example", ""} {
			f := w.paForm("scope", "orders:read")
			f.Set("client_id", id)
			wantOAuthError(t, "device client_id "+id, w.oauthPost(t, shop, "device_authorization", good, f), 401, "invalid_client")
			f = w.paForm("grant_type", deviceGrant, "device_code", "dc_x")
			f.Set("client_id", id)
			wantOAuthError(t, "token client_id "+id, w.oauthPost(t, shop, "token", good, f), 401, "invalid_client")
		}
		// Scopes: empty, unknown, another Brand's.
		for _, sc := range []string{"", "orders:write", "orders:read  profile", "openid"} {
			wantOAuthError(t, "scope "+sc, w.oauthPost(t, shop, "device_authorization", good, w.paForm("scope", sc)), 400, "invalid_scope")
		}
		wantOAuthError(t, "authorization_details", w.oauthPost(t, shop, "device_authorization", good,
			w.paForm("scope", "orders:read", "authorization_details", `[]`)), 400, "invalid_authorization_details")
		wantOAuthError(t, "identity-only Brand", w.oauthPost(t, "acme", "device_authorization", good, read), 400, "unauthorized_client")
		wantBare(t, "unknown Brand", w.oauthPost(t, "nobody", "device_authorization", good, read), 404)
		// Token endpoint.
		wantOAuthError(t, "unknown grant_type", w.oauthPost(t, shop, "token", good, w.paForm("grant_type", "password")), 400, "unsupported_grant_type")
		wantOAuthError(t, "unknown device_code", w.poll(t, "user-1", "dc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), 400, "invalid_grant")
		wantOAuthError(t, "unknown refresh_token", w.refresh(t, "user-1", "rt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), 400, "invalid_grant")

		// Positive control: the same requests, well formed, succeed; the
		// first poll is always authorization_pending.
		d := w.startDevice(t, "user-1", "orders:read orders:cancel")
		wantOAuthError(t, "first poll", w.poll(t, "user-1", d.DeviceCode), 400, "authorization_pending")
		// A device code of this Brand presented for another Brand is
		// unknown there (acme has no delegation: unauthorized_client first).
		wantOAuthError(t, "poll at another Brand", w.oauthPost(t, "acme", "token", good,
			w.paForm("grant_type", deviceGrant, "device_code", d.DeviceCode)), 400, "unauthorized_client")
	})
}

// TestDelegatedConversation walks a PA through PACT Delegated: step-up
// without a token, device grant with a subset approved, delegated turns
// with receipts, step-up for the ungranted scope, a tampered token, the
// Brand-user lock of a context, and revocation.
func TestDelegatedConversation(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		const sub = "user-1"

		// Account access without a token: the step-up task, not an error.
		first := decodeStepUp(t, w.send(t, shop, w.token(t, sub), userMsg("m-orders", "", "show my orders")), "orders:read")
		ctxID := first.Task.ContextID
		// The turn was not stored: the same messageId runs again.
		again := decodeStepUp(t, w.send(t, shop, w.token(t, sub), userMsg("m-orders", ctxID, "show my orders")), "orders:read")
		if again.Task.ContextID != ctxID || again.Task.ID == first.Task.ID {
			t.Fatalf("retried step-up %+v after %+v", again.Task, first.Task)
		}
		// A turn that needs no scope is answered, without a receipt.
		if r := decodeReply(t, w.send(t, shop, w.token(t, sub), userMsg("m-hello", ctxID, "hello"))); r.Message.ContextID != ctxID {
			t.Fatalf("identity turn left the context: %+v", r)
		}

		// Device grant: both scopes asked, only orders:read approved.
		d := w.startDevice(t, sub, "orders:read orders:cancel")
		wantOAuthError(t, "first poll", w.poll(t, sub, d.DeviceCode), 400, "authorization_pending")
		desc, err := w.deleg.DescribeConsent(t.Context(), &pactv1.DescribeConsentRequest{BrandId: shop, UserCode: d.UserCode})
		if err != nil {
			t.Fatalf("DescribeConsent: %v", err)
		}
		if desc.GetAgentDisplayName() != "E2E PA" || desc.GetAgentOrigin() != w.issuer || desc.GetBrandDisplayName() != "Shop Inc." ||
			desc.GetUserCode() != d.UserCode || len(desc.GetScopes()) != 2 || desc.GetScopes()[0].GetId() != "orders:read" {
			t.Fatalf("DescribeConsent = %v", desc)
		}
		// Scopes never requested are ignored: granted = requested ∩ chosen.
		if g := w.approve(t, d.UserCode, "alice", "orders:read", "admin:all"); !slices.Equal(g.GetScopes(), []string{"orders:read"}) {
			t.Fatalf("approved %v", g.GetScopes())
		}
		var tok tokenResponse
		wantOAuthJSON(t, "token", w.poll(t, sub, d.DeviceCode), &tok)
		if tok.TokenType != "Bearer" || tok.Scope != "orders:read" || tok.ExpiresIn != 3600 || !strings.HasPrefix(tok.RefreshToken, "rt_") {
			t.Fatalf("token response %+v", tok)
		}
		var hdr struct{ Alg, Typ, Kid string }
		var claims struct {
			Iss, Aud, Sub, Scope, Jti string
			ClientID                  string `json:"client_id"`
			GrantID                   string `json:"grant_id"`
			Iat, Exp                  int64
		}
		jwtPart(t, tok.AccessToken, 0, &hdr)
		jwtPart(t, tok.AccessToken, 1, &claims)
		if hdr.Alg != "ES256" || hdr.Typ != "at+jwt" || claims.Iss != w.feURL+"/a2a/shop/oauth" || claims.Aud != w.feURL+"/a2a/shop" ||
			claims.Sub != "alice" || claims.ClientID != w.issuer || claims.Scope != "orders:read" || !strings.HasPrefix(claims.GrantID, "a2agrant_") {
			t.Fatalf("delegation token %+v %+v", hdr, claims)
		}
		// RFC 9068 §2.2: iss, exp, aud, sub, client_id, iat and jti are
		// REQUIRED (the others are checked above).
		if claims.Jti == "" || claims.Iat == 0 || claims.Exp-claims.Iat != 3600 {
			t.Fatalf("delegation token lacks an RFC 9068 claim: %+v", claims)
		}
		wantOAuthError(t, "redeemed twice", w.poll(t, sub, d.DeviceCode), 400, "invalid_grant")

		// A delegated turn in the context the step-up left open: the
		// orders, with a receipt that verifies against pactd's JWKS.
		resp := w.delegated(t, sub, tok.AccessToken, userMsg("m-orders", ctxID, "show my orders"))
		rep, rc := w.verifyReceipt(t, resp)
		if rep.Message.ContextID != ctxID || !strings.Contains(rep.Message.Parts[0].Text, "#1002 Milk frother: processing") ||
			rc.User != "alice" || rc.GrantID != claims.GrantID || !slices.Equal(rc.ScopesUsed, []string{"orders:read"}) ||
			len(rc.Actions) != 1 || rc.Actions[0].Tool != "list_orders" {
			t.Fatalf("delegated reply %s", resp.body)
		}
		// A retry returns the stored reply, receipt included, unchanged.
		if r := w.delegated(t, sub, tok.AccessToken, userMsg("m-orders", ctxID, "show my orders")); r.body != resp.body {
			t.Fatalf("replay %s\nwant %s", r.body, resp.body)
		}
		// Every delegated reply carries a receipt, even one that used no scope.
		if _, rc := w.verifyReceipt(t, w.delegated(t, sub, tok.AccessToken, userMsg("m-hi", ctxID, "hello"))); len(rc.ScopesUsed) != 0 {
			t.Fatalf("help reply receipt %+v", rc)
		}

		// The ungranted scope: a step-up, and nothing is cancelled.
		decodeStepUp(t, w.delegated(t, sub, tok.AccessToken, userMsg("m-cancel", ctxID, "cancel order 1002")), "orders:cancel")
		// Asking again for both and approving both: the cancellation runs,
		// and its receipt names the action and hashes its arguments.
		both := w.connect(t, sub, "alice", "orders:read orders:cancel", "orders:read", "orders:cancel")
		if both.Scope != "orders:read orders:cancel" {
			t.Fatalf("scope %q", both.Scope)
		}
		_, rc = w.verifyReceipt(t, w.delegated(t, sub, both.AccessToken, userMsg("m-cancel", ctxID, "cancel order 1002")))
		if !slices.Equal(rc.ScopesUsed, []string{"orders:cancel"}) || len(rc.Actions) != 1 || rc.Actions[0].Tool != "cancel_order" ||
			rc.Actions[0].ArgsHash != "_rjrPQ1xDeZW7jX81lABaETgD3jn0tXW-ayuxPmjKTg" {
			t.Fatalf("cancel receipt %+v", rc)
		}

		// A tampered delegation token: 401 invalid_token, the agent not run.
		runs := w.agent.runs.Load()
		parts := strings.Split(tok.AccessToken, ".")
		flipped := []byte(parts[2])
		flipped[5] ^= 1
		for name, bad := range map[string]string{
			"fail/signature": parts[0] + "." + parts[1] + "." + string(flipped),
			"fail/payload":   parts[0] + "." + parts[1] + "x." + parts[2],
			"fail/garbage":   "x.y.z",
		} {
			wantInvalidToken(t, name, w.delegated(t, sub, bad, userMsg("m-bad", ctxID, "show my orders")))
		}
		wantInvalidToken(t, "fail/not-bearer", w.send(t, shop, w.token(t, sub), userMsg("m-bad", ctxID, "x"), "X-A2A-User-Delegation: "+tok.AccessToken))
		// The token at another Brand: one without delegation, and one with
		// (its aud is not that Brand's interface URL).
		if _, err := w.brands.CreateBrand(t.Context(), demo.BrandRequest("shop2", "Shop Two", w.feURL)); err != nil {
			t.Fatal(err)
		}
		withToken := "X-A2A-User-Delegation: Bearer " + tok.AccessToken
		wantInvalidToken(t, "fail/brand-without-delegation", w.send(t, "acme", w.token(t, sub), userMsg("m-bad", "", "x"), withToken))
		wantInvalidToken(t, "fail/other-delegated-brand", w.send(t, "shop2", w.token(t, sub), userMsg("m-bad", "", "x"), withToken))
		// The token presented by another PA (client_id ≠ its iss).
		other := w.issuer + "/other-pa"
		if _, err := w.agents.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: other, JwksUri: other + "/jwks.json", DisplayName: "Other PA"}); err != nil {
			t.Fatal(err)
		}
		c := w.claims(sub)
		c["iss"] = other
		wantInvalidToken(t, "fail/other-pa", w.send(t, shop, w.pa.sign(t, "ES256", w.pa.kid, c), userMsg("m-bad", "", "x"), withToken))
		if n := w.agent.runs.Load() - runs; n != 0 {
			t.Fatalf("the agent ran %d times for refused tokens", n)
		}

		// The context runs as alice: bob's token in it is refused.
		bob := w.connect(t, sub, "bob", "orders:read", "orders:read")
		wantA2A(t, "other Brand user", w.delegated(t, sub, bob.AccessToken, userMsg("m-bob", ctxID, "show my orders")), 400,
			errBody(a2aerr.InvalidParams, a2aerr.MsgOtherBrandUser))
		// Positive control: bob in a new context sees his own orders.
		if _, rc := w.verifyReceipt(t, w.delegated(t, sub, bob.AccessToken, userMsg("m-bob", "", "show my orders"))); rc.User != "bob" {
			t.Fatalf("bob's receipt names %s", rc.User)
		}

		// Revocation (the connected-apps page's RPC): the next delegated
		// call is 401 invalid_token.
		if _, err := w.deleg.RevokeGrant(t.Context(), &pactv1.RevokeGrantRequest{BrandId: shop, GrantId: claims.GrantID, BrandUser: "bob"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("revoking alice's grant as bob: %v", err)
		}
		if _, err := w.deleg.RevokeGrant(t.Context(), &pactv1.RevokeGrantRequest{BrandId: shop, GrantId: claims.GrantID, BrandUser: "alice"}); err != nil {
			t.Fatalf("RevokeGrant: %v", err)
		}
		wantInvalidToken(t, "revoked", w.delegated(t, sub, tok.AccessToken, userMsg("m-after", ctxID, "show my orders")))
		wantOAuthError(t, "refresh of a revoked grant", w.refresh(t, sub, tok.RefreshToken), 400, "invalid_grant")
		// Positive control: alice's other grant still works.
		w.verifyReceipt(t, w.delegated(t, sub, both.AccessToken, userMsg("m-after", ctxID, "show my orders")))
	})
}

// TestDelegationRefreshAndDenial: refresh rotation, reuse (which revokes
// the grant), and a denied consent.
func TestDelegationRefreshAndDenial(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		const sub = "user-2"
		tok := w.connect(t, sub, "carol", "orders:read", "orders:read")

		var next tokenResponse
		wantOAuthJSON(t, "refresh", w.refresh(t, sub, tok.RefreshToken), &next)
		if next.RefreshToken == tok.RefreshToken || !strings.HasPrefix(next.RefreshToken, "rt_") || next.Scope != "orders:read" || next.AccessToken == "" {
			t.Fatalf("refresh %+v", next)
		}
		// Each token has its own jti (RFC 9068 §2.2), refreshed or not.
		var first, second struct{ Jti string }
		jwtPart(t, tok.AccessToken, 1, &first)
		jwtPart(t, next.AccessToken, 1, &second)
		if first.Jti == "" || second.Jti == "" || first.Jti == second.Jti {
			t.Fatalf("jti of the first token %q and of the refreshed one %q", first.Jti, second.Jti)
		}
		w.verifyReceipt(t, w.delegated(t, sub, next.AccessToken, userMsg("m-1", "", "show my orders")))
		// Another client (client_id) cannot use the token; it stays usable.
		f := w.paForm("grant_type", "refresh_token", "refresh_token", next.RefreshToken)
		f.Set("client_id", w.disabled)
		wantOAuthError(t, "refresh as another client", w.oauthPost(t, shop, "token", "Bearer "+w.token(t, sub), f), 401, "invalid_client")

		// Reuse of the rotated token: invalid_grant, and the grant is
		// revoked (its tokens stop working).
		wantOAuthError(t, "reuse", w.refresh(t, sub, tok.RefreshToken), 400, "invalid_grant")
		wantOAuthError(t, "refresh after reuse", w.refresh(t, sub, next.RefreshToken), 400, "invalid_grant")
		wantInvalidToken(t, "token after reuse", w.delegated(t, sub, next.AccessToken, userMsg("m-2", "", "show my orders")))
		grants, err := w.deleg.ListGrants(t.Context(), &pactv1.ListGrantsRequest{BrandId: shop, BrandUser: "carol"})
		if err != nil || len(grants.GetGrants()) != 1 || grants.GetGrants()[0].GetRevokeTime() == nil {
			t.Fatalf("ListGrants after reuse: %v %v", grants, err)
		}

		// Denial: the next poll is access_denied, and stays so.
		d := w.startDevice(t, sub, "orders:read")
		if _, err := w.deleg.DenyConsent(t.Context(), &pactv1.DenyConsentRequest{BrandId: shop, UserCode: d.UserCode}); err != nil {
			t.Fatalf("DenyConsent: %v", err)
		}
		wantOAuthError(t, "denied", w.poll(t, sub, d.DeviceCode), 400, "access_denied")
		wantOAuthError(t, "denied again", w.poll(t, sub, d.DeviceCode), 400, "access_denied")
		// A decided code cannot be approved afterwards.
		if _, err := w.deleg.ApproveConsent(t.Context(), &pactv1.ApproveConsentRequest{BrandId: shop, UserCode: d.UserCode, BrandUser: "carol", Scopes: []string{"orders:read"}}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("approve after deny: %v", err)
		}
		// Approving nothing is a deny too.
		d = w.startDevice(t, sub, "orders:read")
		if g := w.approve(t, d.UserCode, "carol"); g.GetGrantId() != "" {
			t.Fatalf("empty approval made grant %s", g.GetGrantId())
		}
		wantOAuthError(t, "nothing approved", w.poll(t, sub, d.DeviceCode), 400, "access_denied")
	})
}
