package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/rpcerr"
)

// delegationSettings are valid TRUSTED_FRONTEND settings with two scopes.
func delegationSettings() *pactv1.DelegationSettings {
	return &pactv1.DelegationSettings{
		Enabled: true, LoginUrl: "https://login.acme.example", LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND,
		Scopes: []*pactv1.Scope{{Id: "orders:write", Description: "Change your orders"}, {Id: "orders:read", Description: "See your orders"}},
	}
}

// Delegation settings are validated field by field and change the card
// exactly as spec §2.2 says; identity-only cards are untouched.
func TestDelegationSettingsAndCard(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		// Production rules for URLs (no loopback http); production also
		// needs a key-encryption key on PostgreSQL.
		kek := "PACT_KEY_ENCRYPTION_KEY=" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
		inst := start(t, testConfig(t, dbURL, t.TempDir(), "PACT_DEV=false", kek))
		ctx := t.Context()
		bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken))
		cases := []struct {
			name   string
			mutate func(d *pactv1.DelegationSettings)
			fields []string
		}{
			{"fail/no-scopes", func(d *pactv1.DelegationSettings) { d.Scopes = nil }, []string{"delegation.scopes"}},
			{"fail/51-scopes", func(d *pactv1.DelegationSettings) {
				d.Scopes = nil
				for i := range 51 {
					d.Scopes = append(d.Scopes, &pactv1.Scope{Id: "s" + strings.Repeat("x", i), Description: "d"})
				}
			}, []string{"delegation.scopes"}},
			{"fail/scope-id-with-space", func(d *pactv1.DelegationSettings) { d.Scopes[0].Id = "orders write" }, []string{"delegation.scopes[0].id"}},
			{"fail/scope-id-with-quote", func(d *pactv1.DelegationSettings) { d.Scopes[0].Id = `orders"` }, []string{"delegation.scopes[0].id"}},
			{"fail/scope-id-with-backslash", func(d *pactv1.DelegationSettings) { d.Scopes[0].Id = `a\\b` }, []string{"delegation.scopes[0].id"}},
			{"fail/scope-id-non-ascii", func(d *pactv1.DelegationSettings) { d.Scopes[0].Id = "commandes:lé" }, []string{"delegation.scopes[0].id"}},
			{"fail/scope-id-too-long", func(d *pactv1.DelegationSettings) { d.Scopes[0].Id = strings.Repeat("a", 129) }, []string{"delegation.scopes[0].id"}},
			{"fail/scope-id-duplicate", func(d *pactv1.DelegationSettings) { d.Scopes[1].Id = d.Scopes[0].Id }, []string{"delegation.scopes[1].id"}},
			{"fail/scope-description-empty", func(d *pactv1.DelegationSettings) { d.Scopes[0].Description = " " }, []string{"delegation.scopes[0].description"}},
			{"fail/scope-description-too-long", func(d *pactv1.DelegationSettings) { d.Scopes[1].Description = strings.Repeat("d", 501) }, []string{"delegation.scopes[1].description"}},
			{"fail/login-url-missing", func(d *pactv1.DelegationSettings) { d.LoginUrl = "" }, []string{"delegation.login_url"}},
			{"fail/login-url-http", func(d *pactv1.DelegationSettings) { d.LoginUrl = "http://login.acme.example" }, []string{"delegation.login_url"}},
			{"fail/login-url-loopback-without-dev", func(d *pactv1.DelegationSettings) { d.LoginUrl = "http://127.0.0.1:8080" }, []string{"delegation.login_url"}},
			{"fail/login-url-query", func(d *pactv1.DelegationSettings) { d.LoginUrl = "https://login.acme.example/?next=x" }, []string{"delegation.login_url"}},
			{"fail/login-url-private", func(d *pactv1.DelegationSettings) { d.LoginUrl = "https://10.1.2.3" }, []string{"delegation.login_url"}},
			{"fail/login-mode-unknown", func(d *pactv1.DelegationSettings) { d.LoginMode = 9 }, []string{"delegation.login_mode"}},
			{"fail/signed-assertion-without-issuer-and-jwks", func(d *pactv1.DelegationSettings) {
				d.LoginMode = pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION
			}, []string{"delegation.assertion_issuer", "delegation.assertion_jwks_uri"}},
			{"fail/unspecified-mode-means-signed", func(d *pactv1.DelegationSettings) {
				d.LoginMode = pactv1.BrandLoginMode_BRAND_LOGIN_MODE_UNSPECIFIED
				d.AssertionIssuer = "https://acme.example"
			}, []string{"delegation.assertion_jwks_uri"}},
			{"fail/bad-jwks-uri", func(d *pactv1.DelegationSettings) { d.AssertionJwksUri = "ftp://acme.example/jwks" }, []string{"delegation.assertion_jwks_uri"}},
		}
		for _, tc := range cases {
			d := delegationSettings()
			tc.mutate(d)
			_, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Delegation: d})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), tc.fields) {
				t.Fatalf("%s: err = %v, violations %v; want %v", tc.name, err, rpcerr.FieldViolations(err), tc.fields)
			}
		}
		if _, err := bc.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: "acme"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("a refused CreateBrand stored a row: %v", err)
		}
		// Positive controls: signed-assertion settings with issuer and JWKS,
		// disabled settings, and the trusted-frontend settings.
		signed := delegationSettings()
		signed.LoginMode, signed.AssertionIssuer, signed.AssertionJwksUri = pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION, "https://acme.example", "https://acme.example/.well-known/jwks.json"
		if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "signed", DisplayName: "S", Delegation: signed}); err != nil {
			t.Fatalf("ok/signed-assertion: %v", err)
		}
		if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "off", DisplayName: "Off", Delegation: &pactv1.DelegationSettings{}}); err != nil {
			t.Fatalf("ok/disabled: %v", err)
		}
		created, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Description: "Acme support", Delegation: delegationSettings()})
		if err != nil {
			t.Fatalf("ok/trusted-frontend: %v", err)
		}
		if got := created.GetBrand().GetDelegation(); got.GetLoginMode() != pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND || len(got.GetScopes()) != 2 {
			t.Fatalf("stored delegation = %v", got)
		}

		fc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(frontendToken))
		card, err := fc.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		const want = `{"name":"Acme","description":"Acme support","version":"1.0.0",` +
			`"supportedInterfaces":[{"url":"https://provider.example/a2a/acme","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],` +
			`"capabilities":{"streaming":false,"pushNotifications":false,"extendedAgentCard":false},` +
			`"securitySchemes":{"platformJwt":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}},` +
			`"userDelegation":{"oauth2SecurityScheme":{"flows":{"deviceCode":{` +
			`"deviceAuthorizationUrl":"https://provider.example/a2a/acme/oauth/device_authorization",` +
			`"tokenUrl":"https://provider.example/a2a/acme/oauth/token",` +
			`"refreshUrl":"https://provider.example/a2a/acme/oauth/token",` +
			`"scopes":{"orders:write":"Change your orders","orders:read":"See your orders"}}},` + // configured order, not alphabetical
			`"oauth2MetadataUrl":"https://provider.example/a2a/acme/oauth/.well-known/oauth-authorization-server"}}},` +
			`"securityRequirements":[{"schemes":{"platformJwt":{"list":[]}}},{"schemes":{"platformJwt":{"list":[]},"userDelegation":{"list":[]}}}],` +
			`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`
		if unsignedCard(t, inst, card.GetCardJson()) != want {
			t.Fatalf("delegation card = %s\nwant            %s", card.GetCardJson(), want)
		}
		// A disabled Brand's card is identity-only.
		off, err := fc.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "off"})
		if err != nil || strings.Contains(off.GetCardJson(), "userDelegation") || !strings.Contains(off.GetCardJson(), `"securityRequirements":[{"schemes":{"platformJwt":{"list":[]}}}]`) {
			t.Fatalf("disabled card = %v, %v", off, err)
		}
		// Turning delegation off with UpdateBrand removes the scheme.
		if _, err := bc.UpdateBrand(ctx, &pactv1.UpdateBrandRequest{Brand: &pactv1.Brand{BrandId: "acme", Delegation: &pactv1.DelegationSettings{}},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delegation"}}}); err != nil {
			t.Fatal(err)
		}
		card, err = fc.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "acme"})
		if err != nil || strings.Contains(card.GetCardJson(), "userDelegation") {
			t.Fatalf("card after disabling = %v, %v", card, err)
		}
		_, err = bc.UpdateBrand(ctx, &pactv1.UpdateBrandRequest{Brand: &pactv1.Brand{BrandId: "acme", Delegation: &pactv1.DelegationSettings{Enabled: true}},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delegation"}}})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Contains(rpcerr.FieldViolations(err), "brand.delegation.login_url") {
			t.Fatalf("UpdateBrand(incomplete delegation) err = %v (%v)", err, rpcerr.FieldViolations(err))
		}
	})
}

// The OAuth wire endpoints and the delegation RPCs are mounted: the PA JWT
// authenticates the OAuth endpoints (no pactd credential), the RPCs take
// the frontend credential.
func TestDelegationIsMounted(t *testing.T) {
	inst := start(t, testConfig(t, "", t.TempDir()))
	ctx := t.Context()
	bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken))
	if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Delegation: delegationSettings()}); err != nil {
		t.Fatal(err)
	}
	post := func(path, auth string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, inst.url+path, strings.NewReader(url.Values{"client_id": {"https://pa.example"}, "scope": {"orders:read"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, auth := range []string{"", "Bearer " + adminToken, "Bearer not.a.jwt"} {
		resp := post("/a2a/acme/oauth/device_authorization", auth)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer realm="a2a"` || len(body) != 0 {
			t.Fatalf("device_authorization with %q = %d %q %q; want a bare 401", auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	// The metadata (from the TokenService) agrees with the card (spec §2.3).
	resp, err := http.Get(inst.url + "/a2a/acme/oauth/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		meta["token_endpoint"] != "https://provider.example/a2a/acme/oauth/token" ||
		meta["device_authorization_endpoint"] != "https://provider.example/a2a/acme/oauth/device_authorization" {
		t.Fatalf("metadata = %d %v, %v", resp.StatusCode, meta, err)
	}
	dc := pactv1connect.NewDelegationServiceClient(h2c(), inst.url, withToken(frontendToken))
	if _, err := dc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: "BCDF-GHJK"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("DescribeConsent(unknown code) over the wire: %v, want NotFound", err)
	}
	step, err := dc.StartStepUp(ctx, &pactv1.StartStepUpRequest{BrandId: "acme", MissingScopes: []string{"orders:write"}})
	if err != nil || !strings.Contains(step.GetVerificationUriComplete(), "/login?return_to=") {
		t.Fatalf("StartStepUp = %v, %v", step, err)
	}
	anon := pactv1connect.NewDelegationServiceClient(h2c(), inst.url)
	if _, err := anon.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "u"}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("ListGrants without a credential: %v, want Unauthenticated", err)
	}
}

// The whole device grant through a running pactd with a real PA JWT: the
// OAuth wire endpoints, the consent RPCs with the frontend credential, a
// delegation token signed by a key the Brand's JWKS endpoint publishes,
// rotation and reuse detection.
func TestDelegationEndToEndThroughPactd(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir()))
		ctx := t.Context()
		pa := newTestPA(t)
		if _, err := agents(inst, adminToken).RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "Test PA"}); err != nil {
			t.Fatal(err)
		}
		bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken))
		if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Delegation: delegationSettings()}); err != nil {
			t.Fatal(err)
		}
		jwt := "Bearer " + pa.token(t, map[string]any{"alg": "ES256", "kid": pa.kid, "typ": "JWT"}, pa.claims("https://provider.example/a2a", time.Now()))
		post := func(endpoint string, form url.Values) (int, map[string]any) {
			t.Helper()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, inst.url+"/a2a/acme/oauth/"+endpoint, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", jwt)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			return resp.StatusCode, m
		}
		status, dev := post("device_authorization", url.Values{"client_id": {pa.issuer}, "scope": {"orders:read orders:write"}})
		if status != 200 {
			t.Fatalf("device_authorization = %d %v", status, dev)
		}
		grant := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {dev["device_code"].(string)}, "client_id": {pa.issuer}}
		if status, m := post("token", grant); status != 400 || m["error"] != "authorization_pending" {
			t.Fatalf("first poll = %d %v", status, m)
		}
		if status, m := post("token", url.Values{"grant_type": grant["grant_type"], "device_code": grant["device_code"], "client_id": {pa.issuer + "/"}}); status != 401 || m["error"] != "invalid_client" {
			t.Fatalf("client_id mismatch = %d %v", status, m)
		}
		dc := pactv1connect.NewDelegationServiceClient(h2c(), inst.url, withToken(frontendToken))
		desc, err := dc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: dev["user_code"].(string)})
		if err != nil || desc.GetAgentDisplayName() != "Test PA" || desc.GetAgentOrigin() != pa.issuer || len(desc.GetScopes()) != 2 {
			t.Fatalf("DescribeConsent = %v, %v", desc, err)
		}
		if _, err := dc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: dev["user_code"].(string), BrandUser: "user-42", Scopes: []string{"orders:read"}}); err != nil {
			t.Fatal(err)
		}
		status, tok := post("token", grant)
		if status != 200 || tok["scope"] != "orders:read" || tok["token_type"] != "Bearer" {
			t.Fatalf("redeem = %d %v", status, tok)
		}
		// The token's kid is published at the Brand's JWKS endpoint.
		hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok["access_token"].(string), ".")[0])
		var h map[string]any
		_ = json.Unmarshal(hdr, &h)
		resp, err := http.Get(inst.url + "/a2a/acme/oauth/jwks.json")
		if err != nil {
			t.Fatal(err)
		}
		jwks, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if h["typ"] != "at+jwt" || h["kid"] == nil || !strings.Contains(string(jwks), fmt.Sprintf("%q", h["kid"])) {
			t.Fatalf("token header %v; JWKS %s", h, jwks)
		}
		refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {pa.issuer}}
		if status, m := post("token", refresh); status != 200 || m["refresh_token"] == tok["refresh_token"] {
			t.Fatalf("refresh = %d %v", status, m)
		}
		if status, m := post("token", refresh); status != 400 || m["error"] != "invalid_grant" {
			t.Fatalf("reused refresh token = %d %v", status, m)
		}
		list, err := dc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "user-42"})
		if err != nil || len(list.GetGrants()) != 1 || list.GetGrants()[0].GetRevokeTime() == nil {
			t.Fatalf("grant after reuse = %v, %v; want revoked", list, err)
		}
	})
}
