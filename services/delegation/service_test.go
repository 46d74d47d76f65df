package delegation_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/codes"
	"pactd.dev/pactd/token/delegtoken"
)

// Spec §6 items 26-29: the device authorization endpoint's refusals, each
// with its exact status and error, and the success shape.
func TestDeviceAuthorizationEndpoint(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		full := strings.Repeat("x", 17<<10)
		cases := []struct {
			name   string
			brand  string
			auth   string
			form   url.Values
			status int
			code   string // "" for a bare answer
		}{
			{"fail/26-no-authorization", "acme", "", deviceForm("orders:read"), 401, ""},
			{"fail/26-bad-pa-jwt", "acme", badAuth, deviceForm("orders:read"), 401, ""},
			{"fail/27-client-id-of-another-pa", "acme", paAuth, url.Values{"client_id": {pa2Issuer}, "scope": {"orders:read"}}, 401, "invalid_client"},
			{"fail/27-client-id-trailing-slash", "acme", paAuth, url.Values{"client_id": {paIssuer + "/"}, "scope": {"orders:read"}}, 401, "invalid_client"},
			{"fail/27-client-id-case", "acme", paAuth, url.Values{"client_id": {"https://PA.example"}, "scope": {"orders:read"}}, 401, "invalid_client"},
			{"fail/27-client-id-missing", "acme", paAuth, url.Values{"scope": {"orders:read"}}, 401, "invalid_client"},
			{"fail/unknown-brand", "nope", paAuth, deviceForm("orders:read"), 404, ""},
			{"fail/brand-without-delegation", "plain", paAuth, deviceForm("orders:read"), 400, "unauthorized_client"},
			{"fail/28-empty-scope", "acme", paAuth, deviceForm(""), 400, "invalid_scope"},
			{"fail/28-only-spaces", "acme", paAuth, deviceForm("   "), 400, "invalid_scope"},
			{"fail/28-unknown-scope", "acme", paAuth, deviceForm("orders:read orders:delete"), 400, "invalid_scope"},
			{"fail/28-scope-of-another-brand", "acme", paAuth, deviceForm("beta:read"), 400, "invalid_scope"},
			{"fail/28-tab-separated", "acme", paAuth, deviceForm("orders:read\torders:write"), 400, "invalid_scope"},
			{"fail/28-quote-in-scope", "acme", paAuth, deviceForm(`orders"read`), 400, "invalid_scope"},
			{"fail/29-details-invalid-json", "acme", paAuth, withDetails("orders:read", "[{"), 400, "invalid_authorization_details"},
			{"fail/29-details-empty-array", "acme", paAuth, withDetails("orders:read", "[]"), 400, "invalid_authorization_details"},
			{"fail/29-details-null", "acme", paAuth, withDetails("orders:read", "null"), 400, "invalid_authorization_details"},
			{"fail/29-details-present-but-empty", "acme", paAuth, withDetails("orders:read", ""), 400, "invalid_authorization_details"},
			{"fail/29-details-well-formed", "acme", paAuth, withDetails("orders:read", `[{"type":"https://acme.example/rebook","actions":["rebook"]}]`), 400, "invalid_authorization_details"},
			{"fail/body-too-large", "acme", paAuth, url.Values{"client_id": {paIssuer}, "scope": {"orders:read"}, "pad": {full}}, 413, "invalid_request"},
			{"fail/repeated-parameter", "acme", paAuth, url.Values{"client_id": {paIssuer}, "scope": {"orders:read", "orders:write"}}, 400, "invalid_request"},
			{"fail/pa-directory-down", "acme", faultAuth, deviceForm("orders:read"), 503, "server_error"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.post(tc.brand, "device_authorization", tc.auth, tc.form)
				switch {
				case tc.status == 401 && tc.code == "":
					wantBare401(t, r)
				case tc.code == "":
					if r.status != tc.status || r.body != "" || r.header.Get("WWW-Authenticate") != "" {
						t.Fatalf("got %d %q, want a bare %d", r.status, r.body, tc.status)
					}
				default:
					wantOAuthError(t, r, tc.status, tc.code)
				}
			})
		}
		t.Run("fail/not-a-form", func(t *testing.T) {
			r := e.do(http.MethodPost, "/a2a/acme/oauth/device_authorization", paAuth, "application/json", `{"client_id":"`+paIssuer+`"}`)
			wantOAuthError(t, r, 400, "invalid_request")
		})
		t.Run("fail/wrong-method", func(t *testing.T) {
			if r := e.do(http.MethodGet, "/a2a/acme/oauth/device_authorization", paAuth, "", ""); r.status != http.StatusMethodNotAllowed {
				t.Fatalf("GET device_authorization = %d, want 405", r.status)
			}
		})
		t.Run("ok/positive-control", func(t *testing.T) {
			r := e.post("acme", "device_authorization", paAuth, deviceForm("orders:read  orders:write orders:read"))
			if r.status != 200 || r.header.Get("Content-Type") != "application/json" || r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
				t.Fatalf("got %d %v %s", r.status, r.header, r.body)
			}
			var keys []string
			for k := range r.json(t) {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if fmt.Sprint(keys) != "[device_code expires_in interval user_code verification_uri verification_uri_complete]" {
				t.Fatalf("members = %v", keys)
			}
			m := r.json(t)
			dc, uc := m["device_code"].(string), m["user_code"].(string)
			if !regexp.MustCompile(`^dc_[A-Za-z0-9_-]{43}$`).MatchString(dc) {
				t.Errorf("device_code %q is not dc_ + 32 bytes base64url", dc)
			}
			if !regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`).MatchString(uc) {
				t.Errorf("user_code %q is not XXXX-XXXX of the consonant alphabet", uc)
			}
			consent := publicURL + "/a2a/acme/oauth/consent"
			if want := loginURL + "/login?return_to=" + url.QueryEscape(consent); m["verification_uri"] != want {
				t.Errorf("verification_uri = %v, want %s", m["verification_uri"], want)
			}
			if want := loginURL + "/login?return_to=" + url.QueryEscape(consent+"?user_code="+uc); m["verification_uri_complete"] != want {
				t.Errorf("verification_uri_complete = %v, want %s", m["verification_uri_complete"], want)
			}
			if m["expires_in"] != 600.0 || m["interval"] != 3.0 {
				t.Errorf("expires_in/interval = %v/%v, want 600/3", m["expires_in"], m["interval"])
			}
			// Stored: hashes only, requested scopes deduplicated in order.
			d, err := e.store.GetDeviceAuthorizationByDeviceCode(t.Context(), "acme", deviceHash(dc))
			if err != nil || fmt.Sprint(d.Scopes) != "[orders:read orders:write]" || d.AgentID != "agt_1" || d.ClientID != paIssuer ||
				d.Status != db.DevicePending || !d.ExpiresAt.Equal(start.Add(10*time.Minute)) {
				t.Fatalf("stored = %+v, %v", d, err)
			}
			if strings.Contains(string(d.UserCodeHash), strings.ReplaceAll(uc, "-", "")) || strings.Contains(string(d.DeviceCodeHash), dc) {
				t.Fatal("a code is stored in clear")
			}
		})
		t.Run("ok/trailing-slash-login-url", func(t *testing.T) {
			m := e.startDevice("beta", paAuth, paIssuer, "beta:read")
			if !strings.HasPrefix(m["verification_uri"].(string), "https://login.beta.example/login?return_to=") {
				t.Fatalf("verification_uri = %v", m["verification_uri"])
			}
		})
		t.Run("rpc/same-answers", func(t *testing.T) {
			resp, err := e.rpc.StartDeviceAuthorization(t.Context(), &pactv1.StartDeviceAuthorizationRequest{BrandId: "acme", Authorization: badAuth, ClientId: paIssuer, Scope: "orders:read"})
			if err != nil || resp.GetError().GetHttpStatus() != 401 || resp.GetError().GetWwwAuthenticate() != `Bearer realm="a2a"` || resp.GetError().GetBodyJson() != "" {
				t.Fatalf("RPC bad JWT = %v, %v", resp, err)
			}
			details := ""
			resp, err = e.rpc.StartDeviceAuthorization(t.Context(), &pactv1.StartDeviceAuthorizationRequest{BrandId: "acme", Authorization: paAuth, ClientId: paIssuer, Scope: "orders:read", AuthorizationDetails: &details})
			if err != nil || resp.GetError().GetError() != "invalid_authorization_details" || resp.GetError().GetHttpStatus() != 400 {
				t.Fatalf("RPC empty details = %v, %v", resp, err)
			}
			resp, err = e.rpc.StartDeviceAuthorization(t.Context(), &pactv1.StartDeviceAuthorizationRequest{BrandId: "acme", Authorization: paAuth, ClientId: paIssuer, Scope: "orders:read"})
			if err != nil || resp.GetError() != nil || resp.GetDeviceCode() == "" || !strings.Contains(resp.GetBodyJson(), resp.GetDeviceCode()) {
				t.Fatalf("RPC positive control = %v, %v", resp, err)
			}
			_, err = e.rpc.StartDeviceAuthorization(t.Context(), &pactv1.StartDeviceAuthorizationRequest{BrandId: "acme", Authorization: faultAuth, ClientId: paIssuer, Scope: "orders:read"})
			if connect.CodeOf(err) != connect.CodeUnavailable {
				t.Fatalf("RPC with the PA directory down: err = %v, want Unavailable", err)
			}
		})
	})
}

func withDetails(scope, details string) url.Values {
	f := deviceForm(scope)
	f.Set("authorization_details", details)
	return f
}

// Spec §6 items 26, 27, 30, 31: the token endpoint with the device grant.
func TestTokenEndpointDeviceGrant(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		ctx := t.Context()
		d := e.startDevice("acme", paAuth, paIssuer, "orders:read orders:write")
		dc, uc := d["device_code"].(string), d["user_code"].(string)

		// Refusals of the shared checks.
		wantBare401(t, e.post("acme", "token", "", deviceGrant(dc, paIssuer)))
		wantBare401(t, e.post("acme", "token", badAuth, deviceGrant(dc, paIssuer)))
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(dc, pa2Issuer)), 401, "invalid_client")
		if r := e.post("nope", "token", paAuth, deviceGrant(dc, paIssuer)); r.status != 404 || r.body != "" {
			t.Fatalf("unknown Brand: %d %q", r.status, r.body)
		}
		wantOAuthError(t, e.post("plain", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "unauthorized_client")
		wantOAuthError(t, e.post("acme", "token", paAuth, url.Values{"client_id": {paIssuer}, "device_code": {dc}}), 400, "invalid_request")
		wantOAuthError(t, e.post("acme", "token", paAuth, url.Values{"grant_type": {"password"}, "client_id": {paIssuer}}), 400, "unsupported_grant_type")
		wantOAuthError(t, e.post("acme", "token", paAuth, url.Values{"grant_type": {"authorization_code"}, "client_id": {paIssuer}, "code": {"x"}}), 400, "unsupported_grant_type")
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant("", paIssuer)), 400, "invalid_request")
		// 30: unknown, another Brand's, another PA's device code.
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant("dc_unknown", paIssuer)), 400, "invalid_grant")
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(strings.Repeat("A", 4096), paIssuer)), 400, "invalid_grant")
		wantOAuthError(t, e.post("beta", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "invalid_grant")
		wantOAuthError(t, e.post("acme", "token", pa2Auth, deviceGrant(dc, pa2Issuer)), 400, "invalid_grant")

		// 31: the first poll is pending; a second at once is slow_down and
		// the stored interval grows by 5 s; on time again is pending.
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "authorization_pending")
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "slow_down")
		stored, _ := e.store.GetDeviceAuthorizationByDeviceCode(ctx, "acme", deviceHash(dc))
		if stored.Interval != 8*time.Second {
			t.Fatalf("interval after slow_down = %s, want 8s", stored.Interval)
		}
		e.clk.Advance(7 * time.Second)
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "slow_down")
		e.clk.Advance(13 * time.Second)
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "authorization_pending")

		// Approved: the token response; the code is single-use.
		if _, err := e.approve("acme", uc, "user-42", "orders:read"); err != nil {
			t.Fatal(err)
		}
		r := e.post("acme", "token", paAuth, deviceGrant(dc, paIssuer))
		if r.status != 200 || r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
			t.Fatalf("redeem = %d %s", r.status, r.body)
		}
		m := r.json(t)
		if m["token_type"] != "Bearer" || m["expires_in"] != 3600.0 || m["scope"] != "orders:read" ||
			!regexp.MustCompile(`^rt_[A-Za-z0-9_-]{43}$`).MatchString(m["refresh_token"].(string)) {
			t.Fatalf("token response = %s", r.body)
		}
		if !strings.HasPrefix(r.body, `{"token_type":"Bearer","access_token":`) {
			t.Errorf("member order = %s", r.body)
		}
		claims, err := e.verifier.Verify(ctx, m["access_token"].(string), delegtoken.Expect{
			Issuer: publicURL + "/a2a/acme/oauth", Audience: publicURL + "/a2a/acme", ClientID: paIssuer})
		if err != nil || claims.Subject != "user-42" || fmt.Sprint(claims.Scopes) != "[orders:read]" ||
			!strings.HasPrefix(claims.GrantID, "a2agrant_") || claims.ExpiresAt.Sub(claims.IssuedAt) != time.Hour {
			t.Fatalf("delegation token claims = %+v, %v", claims, err)
		}
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "invalid_grant")

		// Denied and expired codes.
		d2 := e.startDevice("acme", paAuth, paIssuer, "orders:read")
		if _, err := e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "acme", UserCode: d2["user_code"].(string)}); err != nil {
			t.Fatal(err)
		}
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(d2["device_code"].(string), paIssuer)), 400, "access_denied")
		d3 := e.startDevice("acme", paAuth, paIssuer, "orders:read")
		e.clk.Advance(600 * time.Second)
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(d3["device_code"].(string), paIssuer)), 400, "expired_token")
		// An approved code not redeemed in time has expired too.
		d4 := e.startDevice("acme", paAuth, paIssuer, "orders:read")
		if _, err := e.approve("acme", d4["user_code"].(string), "user-42", "orders:read"); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(600 * time.Second)
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(d4["device_code"].(string), paIssuer)), 400, "expired_token")
	})
}

// Spec §6 item 32: refresh rotation and every refusal.
func TestTokenEndpointRefreshGrant(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		ctx := t.Context()
		tok := e.redeem(e.approvedCode("orders:read orders:write", "orders:read", "orders:write"))
		rt := tok["refresh_token"].(string)

		// Another Brand or PA: refused, and the token is not burned.
		wantOAuthError(t, e.post("beta", "token", paAuth, refreshGrant(rt, paIssuer)), 400, "invalid_grant")
		wantOAuthError(t, e.post("acme", "token", pa2Auth, refreshGrant(rt, pa2Issuer)), 400, "invalid_grant")
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant(rt, pa2Issuer)), 401, "invalid_client")
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant("rt_unknown", paIssuer)), 400, "invalid_grant")
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant("not-a-token", paIssuer)), 400, "invalid_grant")
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant("", paIssuer)), 400, "invalid_request")

		// Positive control: rotation gives a new refresh token and scope.
		e.clk.Advance(time.Minute)
		r := e.post("acme", "token", paAuth, refreshGrant(rt, paIssuer))
		if r.status != 200 {
			t.Fatalf("refresh: %d %s", r.status, r.body)
		}
		m := r.json(t)
		if m["refresh_token"] == rt || m["scope"] != "orders:read orders:write" {
			t.Fatalf("refresh response = %s", r.body)
		}
		rt2 := m["refresh_token"].(string)
		claims, err := e.verifier.Verify(ctx, m["access_token"].(string), delegtoken.Expect{Audience: publicURL + "/a2a/acme"})
		if err != nil || !claims.IssuedAt.Equal(start.Add(time.Minute)) {
			t.Fatalf("refreshed token claims = %+v, %v", claims, err)
		}

		// Revoked grant → invalid_grant.
		list, err := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "user-42"})
		if err != nil || len(list.GetGrants()) != 1 {
			t.Fatalf("ListGrants = %v, %v", list, err)
		}
		if _, err := e.rpc.RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: list.GetGrants()[0].GetGrantId()}); err != nil {
			t.Fatal(err)
		}
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant(rt2, paIssuer)), 400, "invalid_grant")

		// Expired grant (and refresh token) → invalid_grant.
		tok2 := e.redeem(e.approvedCode("orders:read", "orders:read"))
		e.clk.Advance(30 * 24 * time.Hour)
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant(tok2["refresh_token"].(string), paIssuer)), 400, "invalid_grant")
	})
}

// The end-to-end walk: start with three scopes, approve two,
// redeem (scope shows the two), refresh, reuse the old refresh token
// (invalid_grant) — and the grant is now revoked.
func TestEndToEndWalk(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		ctx := t.Context()
		d := e.startDevice("acme", paAuth, paIssuer, "orders:read orders:write profile:read")
		dc, uc := d["device_code"].(string), d["user_code"].(string)
		wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "authorization_pending")

		desc, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: strings.ToLower(strings.ReplaceAll(uc, "-", ""))})
		if err != nil || desc.GetAgentDisplayName() != "Pocket Assistant" || desc.GetAgentOrigin() != paIssuer ||
			desc.GetBrandDisplayName() != "Acme" || desc.GetUserCode() != uc || len(desc.GetScopes()) != 3 ||
			desc.GetScopes()[0].GetDescription() != "See your orders" || !desc.GetExpiresAt().AsTime().Equal(start.Add(10*time.Minute)) {
			t.Fatalf("DescribeConsent = %v, %v", desc, err)
		}
		ap, err := e.approve("acme", uc, "user-42", "profile:read", "orders:read")
		if err != nil || fmt.Sprint(ap.GetScopes()) != "[orders:read profile:read]" || !strings.HasPrefix(ap.GetGrantId(), "a2agrant_") {
			t.Fatalf("ApproveConsent = %v, %v", ap, err)
		}
		e.clk.Advance(3 * time.Second)
		tok := e.redeem(dc)
		if tok["scope"] != "orders:read profile:read" {
			t.Fatalf("redeemed scope = %v, want the two approved", tok["scope"])
		}
		old := tok["refresh_token"].(string)
		r := e.post("acme", "token", paAuth, refreshGrant(old, paIssuer))
		if r.status != 200 {
			t.Fatalf("refresh: %d %s", r.status, r.body)
		}
		fresh := r.json(t)["refresh_token"].(string)
		live, err := e.store.GrantLiveAt(ctx, ap.GetGrantId(), "acme", paIssuer, "user-42", e.clk.Now())
		if err != nil || !live {
			t.Fatalf("grant live before reuse = %v, %v", live, err)
		}
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant(old, paIssuer)), 400, "invalid_grant")
		live, err = e.store.GrantLiveAt(ctx, ap.GetGrantId(), "acme", paIssuer, "user-42", e.clk.Now())
		if err != nil || live {
			t.Fatalf("grant live after reuse = %v, %v; want revoked", live, err)
		}
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant(fresh, paIssuer)), 400, "invalid_grant")
		list, _ := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "user-42"})
		if len(list.GetGrants()) != 1 || list.GetGrants()[0].GetRevokeTime() == nil {
			t.Fatalf("ListGrants after reuse = %v; want the grant with a revoke time", list)
		}
		if strings.Contains(e.logs.String(), "refresh token reused; grant revoked") == false {
			t.Fatalf("reuse not logged:\n%s", e.logs.String())
		}
	})
}

// Spec §6 items 34-35: consent decisions happen once, only while pending,
// and grant only requested ∩ chosen.
func TestConsentDecisions(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		ctx := t.Context()
		wantCode := func(t *testing.T, err error, code connect.Code) {
			t.Helper()
			if connect.CodeOf(err) != code {
				t.Fatalf("err = %v, want %v", err, code)
			}
		}
		t.Run("35/not-requested-scopes-ignored", func(t *testing.T) {
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			ap, err := e.approve("acme", d["user_code"].(string), "user-1", "orders:read", "orders:write", "admin:all")
			if err != nil || fmt.Sprint(ap.GetScopes()) != "[orders:read]" {
				t.Fatalf("approve = %v, %v; want only orders:read", ap, err)
			}
		})
		t.Run("35/nothing-granted-is-a-deny", func(t *testing.T) {
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			ap, err := e.approve("acme", d["user_code"].(string), "user-1", "orders:write")
			if err != nil || ap.GetGrantId() != "" || len(ap.GetScopes()) != 0 {
				t.Fatalf("approve of nothing = %v, %v; want no grant", ap, err)
			}
			wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(d["device_code"].(string), paIssuer)), 400, "access_denied")
		})
		t.Run("34/decide-twice", func(t *testing.T) {
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			uc := d["user_code"].(string)
			if _, err := e.approve("acme", uc, "user-1", "orders:read"); err != nil {
				t.Fatal(err)
			}
			_, err := e.approve("acme", uc, "user-2", "orders:read")
			wantCode(t, err, connect.CodeFailedPrecondition)
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "acme", UserCode: uc})
			wantCode(t, err, connect.CodeFailedPrecondition)
			_, err = e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: uc})
			wantCode(t, err, connect.CodeFailedPrecondition)
			if rpcerr.Reason(err) != "ERROR_REASON_FAILED_PRECONDITION" {
				t.Fatalf("reason = %s", rpcerr.Reason(err))
			}
			list, _ := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "user-2"})
			if len(list.GetGrants()) != 0 {
				t.Fatalf("a second approval made a grant: %v", list)
			}
			// Consumed: still refused.
			e.redeem(d["device_code"].(string))
			_, err = e.approve("acme", uc, "user-2", "orders:read")
			wantCode(t, err, connect.CodeFailedPrecondition)
		})
		t.Run("34/approve-after-deny", func(t *testing.T) {
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			uc := d["user_code"].(string)
			if _, err := e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "acme", UserCode: uc}); err != nil {
				t.Fatal(err)
			}
			_, err := e.approve("acme", uc, "user-1", "orders:read")
			wantCode(t, err, connect.CodeFailedPrecondition)
			wantOAuthError(t, e.post("acme", "token", paAuth, deviceGrant(d["device_code"].(string), paIssuer)), 400, "access_denied")
		})
		t.Run("34/code-of-another-brand", func(t *testing.T) {
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			_, err := e.approve("beta", d["user_code"].(string), "user-1", "orders:read")
			wantCode(t, err, connect.CodeNotFound)
		})
		t.Run("fail/bad-calls", func(t *testing.T) {
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			uc := d["user_code"].(string)
			_, err := e.approve("acme", uc, "", "orders:read")
			wantCode(t, err, connect.CodeInvalidArgument)
			_, err = e.approve("acme", uc, "bad\nuser", "orders:read")
			wantCode(t, err, connect.CodeInvalidArgument)
			_, err = e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: uc, BrandUser: "u", BrandAssertion: "eyJ...", Scopes: []string{"orders:read"}})
			wantCode(t, err, connect.CodeInvalidArgument)
			_, err = e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme"})
			wantCode(t, err, connect.CodeInvalidArgument)
			_, err = e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "plain", UserCode: uc})
			wantCode(t, err, connect.CodeFailedPrecondition)
			_, err = e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "nope", UserCode: uc})
			wantCode(t, err, connect.CodeNotFound)
			_, err = e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: "AAAA-AAAA"})
			wantCode(t, err, connect.CodeNotFound)
			// Positive control: the same code is still pending and decidable.
			if _, err := e.approve("acme", strings.ToLower(uc), "user-1", "orders:read"); err != nil {
				t.Fatalf("positive control: %v", err)
			}
		})
		t.Run("signed-assertion-mode-needs-the-assertion", func(t *testing.T) {
			// The signed mode itself is tested in assertion_test.go.
			d := e.startDevice("signed", paAuth, paIssuer, "orders:read")
			_, err := e.approve("signed", d["user_code"].(string), "user-1", "orders:read")
			wantCode(t, err, connect.CodeInvalidArgument)
			// Describe works in every mode.
			if _, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "signed", UserCode: d["user_code"].(string)}); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("34/expired", func(t *testing.T) {
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			e.clk.Advance(10 * time.Minute)
			_, err := e.approve("acme", d["user_code"].(string), "user-1", "orders:read")
			wantCode(t, err, connect.CodeFailedPrecondition)
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "acme", UserCode: d["user_code"].(string)})
			wantCode(t, err, connect.CodeFailedPrecondition)
		})
	})
}

// User-code guessing is limited per Brand and audited without the code.
func TestUserCodeGuessingLimit(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t), func(d *delegation.Deps) { d.GuessLimit, d.GuessWindow = 5, time.Minute })
		ctx := t.Context()
		real := e.startDevice("acme", paAuth, paIssuer, "orders:read")["user_code"].(string)
		guesses := []string{"BBBB-BBBB", "BBBB-BBBC", "BBBB-BBBD", "BBBB-BBBF", "BBBB-BBBG"}
		if slices.Contains(guesses, real) {
			t.Skip("the drawn code is one of the guesses (p ≈ 2e-10)")
		}
		for _, g := range guesses {
			_, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: g})
			if connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("guess %s: err = %v, want NotFound", g, err)
			}
		}
		// Over the limit: even the real code is refused, with RetryInfo.
		_, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: real})
		if connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("lookup over the limit: err = %v, want ResourceExhausted", err)
		}
		var ce *connect.Error
		hasRetry := false
		if errors.As(err, &ce) {
			for _, d := range ce.Details() {
				if v, derr := d.Value(); derr == nil {
					if _, ok := v.(*errdetails.RetryInfo); ok {
						hasRetry = true
					}
				}
			}
		}
		if !hasRetry {
			t.Fatalf("no RetryInfo in %v", err)
		}
		_, err = e.approve("acme", real, "user-1", "orders:read")
		if connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("approve over the limit: err = %v", err)
		}
		// Another Brand is not affected.
		other := e.startDevice("beta", paAuth, paIssuer, "beta:read")["user_code"].(string)
		if _, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "beta", UserCode: other}); err != nil {
			t.Fatalf("other Brand: %v", err)
		}
		// In the next window lookups go again.
		e.clk.Advance(time.Minute)
		if _, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: real}); err != nil {
			t.Fatalf("after refill: %v", err)
		}
		logs := e.logs.String()
		if n := strings.Count(logs, "user code lookup failed"); n != 5 {
			t.Fatalf("%d audit lines for 5 failed lookups:\n%s", n, logs)
		}
		for _, g := range append(guesses, real, other) {
			for _, form := range []string{g, strings.ReplaceAll(g, "-", "")} {
				if strings.Contains(logs, form) {
					t.Fatalf("a user code appears in the log:\n%s", logs)
				}
			}
		}
	})
}

// TestUserCodeGuessingLimitUnderConcurrency: guesses sent all at once get
// no more lookups than the burst; the limit is spent before the store is
// asked, never after.
func TestUserCodeGuessingLimitUnderConcurrency(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t), func(d *delegation.Deps) { d.GuessLimit, d.GuessWindow = 5, time.Hour })
		var notFound, exhausted atomic.Int64
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				code := fmt.Sprintf("BBBB-%c%c%c%c", "BCDFGHJKLM"[i%10], "BCDFG"[i/10], 'B', 'B')
				_, err := e.rpc.DescribeConsent(t.Context(), &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: code, Source: "10.0.0.9"})
				switch connect.CodeOf(err) {
				case connect.CodeNotFound:
					notFound.Add(1)
				case connect.CodeResourceExhausted:
					exhausted.Add(1)
				default:
					t.Errorf("guess %s: err = %v", code, err)
				}
			})
		}
		wg.Wait()
		if notFound.Load() != 5 || exhausted.Load() != 45 {
			t.Fatalf("50 concurrent guesses: %d reached the store, %d refused; want 5 and 45", notFound.Load(), exhausted.Load())
		}
	})
}

// Races: 100 concurrent redemptions of one approved code give exactly one
// token; 20 concurrent refreshes of one refresh token give exactly one.
func TestRaces(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		dc := e.approvedCode("orders:read", "orders:read")
		statuses := race(100, func() int { return e.post("acme", "token", paAuth, deviceGrant(dc, paIssuer)).status })
		if statuses[200] != 1 || statuses[400] != 99 {
			t.Fatalf("100 concurrent redemptions: %v; want exactly one 200", statuses)
		}
		tok := e.redeem(e.approvedCode("orders:read", "orders:read"))
		rt := tok["refresh_token"].(string)
		statuses = race(20, func() int { return e.post("acme", "token", paAuth, refreshGrant(rt, paIssuer)).status })
		if statuses[200] != 1 || statuses[400] != 19 {
			t.Fatalf("20 concurrent refreshes: %v; want exactly one 200", statuses)
		}
	})
}

func race(n int, f func() int) map[int]int {
	var mu sync.Mutex
	out := map[int]int{}
	var wg sync.WaitGroup
	startGun := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startGun
			s := f()
			mu.Lock()
			out[s]++
			mu.Unlock()
		}()
	}
	close(startGun)
	wg.Wait()
	return out
}

// ListGrants is newest first even for grants approved within the same
// second (the store keeps whole seconds; the clock here does not move at
// all), on both stores.
func TestListGrantsNewestFirstWithinOneSecond(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		var approved []string // in the order they were approved
		for range 6 {
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			res, err := e.approve("acme", d["user_code"].(string), "user-42", "orders:read")
			if err != nil || res.GetGrantId() == "" {
				t.Fatalf("approve: %v, %v", res, err)
			}
			approved = append(approved, res.GetGrantId())
		}
		list, err := e.rpc.ListGrants(t.Context(), &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "user-42"})
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, g := range list.GetGrants() {
			listed = append(listed, g.GetGrantId())
		}
		want := slices.Clone(approved)
		slices.Reverse(want)
		if !slices.Equal(listed, want) {
			t.Fatalf("ListGrants = %v\nwant newest first %v", listed, want)
		}
	})
}

// Grants: listing newest first with paging, revocation by the Brand's
// frontend (scoped to a user) and by the PA (RFC 7009).
func TestGrantsAndRevocation(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		ctx := t.Context()
		var grants []string
		var refresh []string
		for range 3 {
			tok := e.redeem(e.approvedCode("orders:read", "orders:read"))
			refresh = append(refresh, tok["refresh_token"].(string))
			e.clk.Advance(time.Second)
		}
		var pageTok string
		for {
			list, err := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "user-42", Page: &pactv1.PageRequest{PageSize: 2, PageToken: pageTok}})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range list.GetGrants() {
				grants = append(grants, g.GetGrantId())
				if g.GetAgentDisplayName() != "Pocket Assistant" || g.GetAgentId() != "agt_1" || g.GetRevokeTime() != nil ||
					!g.GetExpireTime().AsTime().Equal(g.GetCreateTime().AsTime().Add(30*24*time.Hour)) {
					t.Fatalf("listed grant = %v", g)
				}
			}
			if pageTok = list.GetNextPageToken(); pageTok == "" {
				break
			}
		}
		if len(grants) != 3 || !slices.IsSortedFunc(grants, func(a, b string) int { return strings.Compare(b, a) }) {
			t.Fatalf("grants = %v; want 3, newest first", grants)
		}
		_, err := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme"})
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Fatalf("ListGrants without brand_user: %v", err)
		}

		// RevokeGrant scoped to another user, or at another Brand: NotFound.
		_, err = e.rpc.RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: grants[0], BrandUser: "user-43"})
		if connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("revoke another user's grant: %v", err)
		}
		_, err = e.rpc.RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: "beta", GrantId: grants[0]})
		if connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("revoke at another Brand: %v", err)
		}
		for range 2 { // idempotent
			if _, err := e.rpc.RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: grants[0], BrandUser: "user-42"}); err != nil {
				t.Fatal(err)
			}
		}
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant(refresh[2], paIssuer)), 400, "invalid_grant")

		// RFC 7009 by the PA.
		wantBare401(t, e.post("acme", "revoke", badAuth, url.Values{"client_id": {paIssuer}, "token": {refresh[1]}}))
		wantOAuthError(t, e.post("acme", "revoke", paAuth, url.Values{"client_id": {pa2Issuer}, "token": {refresh[1]}}), 401, "invalid_client")
		wantOAuthError(t, e.post("acme", "revoke", paAuth, url.Values{"client_id": {paIssuer}}), 400, "invalid_request")
		okRevoke := func(auth, client, token string) {
			t.Helper()
			r := e.post("acme", "revoke", auth, url.Values{"client_id": {client}, "token": {token}, "token_type_hint": {"refresh_token"}})
			if r.status != 200 || r.body != "" || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("revoke = %d %q", r.status, r.body)
			}
		}
		okRevoke(paAuth, paIssuer, "rt_unknown")
		okRevoke(paAuth, paIssuer, "garbage")
		okRevoke(pa2Auth, pa2Issuer, refresh[1]) // another PA's token: 200, nothing revoked
		r := e.post("acme", "token", paAuth, refreshGrant(refresh[1], paIssuer))
		if r.status != 200 {
			t.Fatalf("another PA's revocation took effect: %d %s", r.status, r.body)
		}
		okRevoke(paAuth, paIssuer, r.json(t)["refresh_token"].(string))
		live, _ := e.store.GrantLiveAt(ctx, grants[1], "acme", paIssuer, "user-42", e.clk.Now())
		if live {
			t.Fatal("grant live after RFC 7009 revocation of its refresh token")
		}
		// A delegation token revokes its grant too.
		tok := e.redeem(e.approvedCode("orders:read", "orders:read"))
		okRevoke(paAuth, paIssuer, tok["access_token"].(string))
		wantOAuthError(t, e.post("acme", "token", paAuth, refreshGrant(tok["refresh_token"].(string), paIssuer)), 400, "invalid_grant")
	})
}

// Step-up: a task id, the missing scopes and a login link, and no device
// authorization whose code nobody receives.
func TestStepUp(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t))
		ctx := t.Context()
		resp, err := e.rpc.StartStepUp(ctx, &pactv1.StartStepUpRequest{BrandId: "acme", AgentId: "agt_1", ContextId: "ctx-1",
			MissingScopes: []string{"orders:write", "orders:write", "profile:read"}})
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^t-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(resp.GetTaskId()) {
			t.Errorf("task id %q", resp.GetTaskId())
		}
		if fmt.Sprint(resp.GetMissingScopes()) != "[orders:write profile:read]" || len(resp.GetScopes()) != 2 || resp.GetScopes()[0].GetDescription() != "Change your orders" {
			t.Errorf("missing scopes = %v / %v", resp.GetMissingScopes(), resp.GetScopes())
		}
		link := resp.GetVerificationUriComplete()
		// The Brand login, returning to the consent page marked with the
		// task: nothing is pending, so that page says what comes next.
		if want := loginURL + "/login?return_to=" + url.QueryEscape(publicURL+"/a2a/acme/oauth/consent?step_up="+resp.GetTaskId()); link != want {
			t.Errorf("link = %s, want %s", link, want)
		}
		if strings.Contains(link, "user_code") {
			t.Errorf("step-up link carries a user code: %s", link)
		}
		for name, req := range map[string]*pactv1.StartStepUpRequest{
			"no-scopes":     {BrandId: "acme"},
			"unknown-scope": {BrandId: "acme", MissingScopes: []string{"orders:delete"}},
			"no-brand":      {MissingScopes: []string{"orders:read"}},
		} {
			if _, err := e.rpc.StartStepUp(ctx, req); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("%s: err = %v, want InvalidArgument", name, err)
			}
		}
		if _, err := e.rpc.StartStepUp(ctx, &pactv1.StartStepUpRequest{BrandId: "plain", MissingScopes: []string{"x"}}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Errorf("Brand without delegation: %v", err)
		}
		if _, err := e.rpc.StartStepUp(ctx, &pactv1.StartStepUpRequest{BrandId: "nope", MissingScopes: []string{"x"}}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("unknown Brand: %v", err)
		}
	})
}

// The metadata and JWKS endpoints pass the TokenService's answers through
// with CORS, and an unknown Brand is a bare 404.
func TestMetadataAndJWKSEndpoints(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	r := e.do(http.MethodGet, "/a2a/acme/oauth/.well-known/oauth-authorization-server", "", "", "")
	if r.status != 200 || r.body != `{"issuer":"x"}` || r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("Cache-Control") != "public, max-age=300" {
		t.Fatalf("metadata = %d %v %s", r.status, r.header, r.body)
	}
	if r := e.do(http.MethodGet, "/a2a/nope/oauth/.well-known/oauth-authorization-server", "", "", ""); r.status != 404 || r.body != "" {
		t.Fatalf("metadata of unknown Brand = %d %q", r.status, r.body)
	}
	r = e.do(http.MethodGet, "/a2a/acme/oauth/jwks.json", "", "", "")
	if r.status != 200 || r.body != `{"keys":[]}` || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("jwks = %d %v %s", r.status, r.header, r.body)
	}
}

// No code or token ever reaches the log.
func TestNoSecretsInLogs(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
	_ = e.post("acme", "token", paAuth, deviceGrant(d["device_code"].(string), paIssuer))
	if _, err := e.approve("acme", d["user_code"].(string), "user-42", "orders:read"); err != nil {
		t.Fatal(err)
	}
	tok := e.redeem(d["device_code"].(string))
	r := e.post("acme", "token", paAuth, refreshGrant(tok["refresh_token"].(string), paIssuer))
	_ = e.post("acme", "token", paAuth, refreshGrant(tok["refresh_token"].(string), paIssuer))
	logs := e.logs.String()
	if !strings.Contains(logs, "delegation issued") {
		t.Fatalf("control: the flow was not logged:\n%s", logs)
	}
	secrets := []string{d["device_code"].(string), d["user_code"].(string), strings.ReplaceAll(d["user_code"].(string), "-", ""),
		tok["refresh_token"].(string), tok["access_token"].(string), r.json(t)["refresh_token"].(string), "pa-1"}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Fatalf("secret %q… in the log:\n%s", s[:4], logs)
		}
	}
	if regexp.MustCompile(`dc_[A-Za-z0-9_-]{20}|rt_[A-Za-z0-9_-]{20}|eyJ[A-Za-z0-9_-]{10}`).MatchString(logs) {
		t.Fatalf("a secret shape in the log:\n%s", logs)
	}
}

func openSQLite(t *testing.T) db.Store {
	t.Helper()
	s := dbtest.Open(t, "", t.TempDir())
	return s
}

// PurgeExpired removes expired device authorizations, and only those.
func TestPurgeExpired(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	svc := delegation.New(delegation.Deps{Store: e.store, PA: fakePA{}, PublicURL: publicURL, Now: e.clk.Now})
	old := e.startDevice("acme", paAuth, paIssuer, "orders:read")["device_code"].(string)
	e.clk.Advance(10 * time.Minute)
	fresh := e.startDevice("acme", paAuth, paIssuer, "orders:read")["device_code"].(string)
	if n, err := svc.PurgeExpired(t.Context()); err != nil || n != 1 {
		t.Fatalf("PurgeExpired = %d, %v; want 1", n, err)
	}
	if _, err := e.store.GetDeviceAuthorizationByDeviceCode(t.Context(), "acme", deviceHash(old)); err == nil {
		t.Fatal("expired authorization survived the purge")
	}
	if _, err := e.store.GetDeviceAuthorizationByDeviceCode(t.Context(), "acme", deviceHash(fresh)); err != nil {
		t.Fatalf("live authorization purged: %v", err)
	}
}

// A PA's pending device authorizations are bounded at one Brand and in
// all: over a bound the device authorization endpoint answers 400
// invalid_request and stores nothing; a decided or expired authorization
// frees its place (positive controls at each step), on both stores.
func TestPendingDeviceAuthorizationsAreBounded(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t), func(d *delegation.Deps) { d.MaxPendingPerAgentBrand, d.MaxPendingPerAgent = 3, 5 })
		start := func(brand, scope string) response {
			return e.post(brand, "device_authorization", paAuth, url.Values{"client_id": {paIssuer}, "scope": {scope}})
		}
		wantRefused := func(name string, r response) {
			t.Helper()
			var body struct{ Error, ErrorDescription string }
			if err := json.Unmarshal([]byte(r.body), &body); err != nil || r.status != http.StatusBadRequest || body.Error != "invalid_request" {
				t.Fatalf("%s: %d %s; want 400 invalid_request", name, r.status, r.body)
			}
		}
		var codes []string
		for i := range 3 {
			r := start("acme", "orders:read")
			if r.status != http.StatusOK {
				t.Fatalf("ok/acme-%d: %d %s", i, r.status, r.body)
			}
			codes = append(codes, r.json(t)["user_code"].(string))
		}
		wantRefused("fourth at acme", start("acme", "orders:read"))
		for i := range 2 {
			if r := start("beta", "beta:read"); r.status != http.StatusOK {
				t.Fatalf("ok/beta-%d: %d %s", i, r.status, r.body)
			}
		}
		wantRefused("sixth in all", start("beta", "beta:read"))
		// Nothing was stored for the refusals: deciding the three acme codes
		// frees exactly three places, not more.
		if _, err := e.approve("acme", codes[0], "user-1", "orders:read"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rpc.DenyConsent(t.Context(), &pactv1.DenyConsentRequest{BrandId: "acme", UserCode: codes[1]}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if r := start("acme", "orders:read"); r.status != http.StatusOK {
				t.Fatalf("ok/after-decisions-%d: %d %s", i, r.status, r.body)
			}
		}
		wantRefused("full again", start("acme", "orders:read"))
		// Expired authorizations do not count.
		e.clk.Advance(base.DeviceCodeTTL)
		if r := start("acme", "orders:read"); r.status != http.StatusOK {
			t.Fatalf("ok/after-expiry: %d %s", r.status, r.body)
		}
	})
}

// Fresh sources while the Brand is over its limit share one more
// allowance of the Brand's limit, then they are refused too: cheap new
// sources cannot lift the Brand's bound (here 3 a window, 6 in all).
func TestFreshSourcesCannotLiftTheBrandLimit(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t), func(d *delegation.Deps) { d.GuessLimit, d.SourceGuessLimit, d.GuessWindow = 3, 2, 5*time.Minute })
		ctx := t.Context()
		real := e.startDevice("acme", paAuth, paIssuer, "orders:read")["user_code"].(string)
		describe := func(code, source string) error {
			_, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: code, Source: source})
			return err
		}
		notFound := 0
		for i := range 12 {
			code := fmt.Sprintf("BBBB-BB%c%c", codes.UserCodeAlphabet[i/20], codes.UserCodeAlphabet[i%20])
			if code == real {
				t.Skip("the drawn code is one of the guesses")
			}
			switch err := describe(code, fmt.Sprintf("192.0.2.%d", i)); connect.CodeOf(err) {
			case connect.CodeNotFound:
				notFound++
			case connect.CodeResourceExhausted:
			default:
				t.Fatalf("guess %d: %v", i, err)
			}
		}
		if notFound != 6 {
			t.Fatalf("12 fresh sources reached the store %d times; want 6 (the Brand's 3 and the fresh allowance's 3)", notFound)
		}
		// Now even a fresh source with the right code waits for the window.
		if err := describe(real, "198.51.100.1"); connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("fresh source after both allowances: %v, want ResourceExhausted", err)
		}
		e.clk.Advance(5 * time.Minute) // the next window; the code (10 minutes) is still pending
		if err := describe(real, "198.51.100.1"); err != nil {
			t.Fatalf("ok/next-window: %v", err)
		}
	})
}
