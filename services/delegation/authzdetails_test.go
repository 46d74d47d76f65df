package delegation_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/token/authzdetails"
	"pactd.dev/pactd/token/delegtoken"
)

// The Brand of these tests declares two RFC 9396 types (PACT §5.7).
const (
	cancelType  = "https://acme.example/authorization/order-cancel/v1"
	profileType = "https://acme.example/authorization/profile-view/v1"
)

// seedRAR stores Brand "rar": trusted-frontend login, three scopes, and
// the two types: order cancel (union of exact orders, scope
// orders:cancel) and profile view (one entry per request, scope
// profile:read).
func seedRAR(t *testing.T, s db.Store) {
	t.Helper()
	b := db.Brand{ID: "rar", DisplayName: "Rar", CreateTime: start, UpdateTime: start, Delegation: db.Delegation{
		Enabled: true, LoginURL: loginURL, LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND.String(),
		Scopes: []db.Scope{
			{ID: "orders:read", Description: "See your orders"},
			{ID: "orders:cancel", Description: "Cancel your orders"},
			{ID: "profile:read", Description: "See your profile"},
		},
		AuthorizationDetailsTypes: []authzdetails.Type{
			{Type: cancelType, Description: "Cancel an order", Scope: "orders:cancel", Combination: authzdetails.CombineUnion,
				Fields: []authzdetails.Field{
					{Name: "order_id", Kind: authzdetails.KindString, Required: true, Label: "order", Pattern: `^[0-9]{4}$`},
					{Name: "actions", Kind: authzdetails.KindEnumArray, Required: true, Label: "actions", Values: []string{"cancel"}},
				}},
			{Type: profileType, Description: "See part of your profile", Scope: "profile:read", Combination: authzdetails.CombineSingle,
				Fields: []authzdetails.Field{
					{Name: "section", Kind: authzdetails.KindEnum, Required: true, Label: "section", Values: []string{"address", "email"}},
					{Name: "note", Kind: authzdetails.KindString, Label: "note", Pattern: `^[a-z ]{1,20}$`},
				}},
		},
	}}
	if _, err := s.CreateBrand(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

func cancelEntry(order string) string {
	return `{"type":"` + cancelType + `","order_id":"` + order + `","actions":["cancel"]}`
}

func rarForm(scope, details string) url.Values {
	return url.Values{"client_id": {paIssuer}, "scope": {scope}, "authorization_details": {details}}
}

// deviceRows counts the device authorizations stored (PurgeExpiredDelegation
// far in the future deletes and counts every one; the tests that call it
// hold no refresh tokens or used assertions).
func deviceRows(t *testing.T, s db.Store) int64 {
	t.Helper()
	n, err := s.PurgeExpiredDelegation(t.Context(), start.Add(365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Spec §2.4 check 4, §6 case 29, RFC 9396 §5: every bad authorization_details
// is 400 invalid_authorization_details with an error_description, and
// stores nothing; the positive controls are stored.
func TestDeviceAuthorizationRefusesBadDetails(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		seedRAR(t, s)
		const scope = "orders:read orders:cancel profile:read"
		many := make([]string, authzdetails.MaxEntries+1)
		for i := range many {
			many[i] = cancelEntry(fmt.Sprintf("%04d", 1000+i))
		}
		big := "[" + strings.Repeat(" ", authzdetails.MaxRequestBytes) + cancelEntry("1002") + "]"
		cases := []struct{ name, scope, details, says string }{
			{"malformed-json", scope, `[{`, "JSON"},
			{"trailing-data", scope, `[` + cancelEntry("1002") + `] []`, "after"},
			{"invalid-utf8", scope, "[{\"type\":\"" + cancelType + "\",\"order_id\":\"\xff\"}]", "UTF-8"},
			{"null", scope, `null`, "array"},
			{"empty-array", scope, `[]`, "empty"},
			{"present-but-empty", scope, ``, "JSON"},
			{"object-not-array", scope, cancelEntry("1002"), "array"},
			{"string-not-array", scope, `"` + cancelType + `"`, "array"},
			{"entry-not-object", scope, `["` + cancelType + `"]`, "authorization_details[0] is not a JSON object"},
			{"entry-null", scope, `[` + cancelEntry("1002") + `,null]`, "authorization_details[1] is not a JSON object"},
			{"type-missing", scope, `[{"order_id":"1002","actions":["cancel"]}]`, "type"},
			{"type-not-string", scope, `[{"type":7,"order_id":"1002","actions":["cancel"]}]`, "type"},
			{"type-unknown", scope, `[{"type":"https://acme.example/authorization/refund/v1","order_id":"1002"}]`, "not a type"},
			{"field-unknown", scope, `[{"type":"` + cancelType + `","order_id":"1002","actions":["cancel"],"amount":"5"}]`, `"amount"`},
			{"member-duplicated", scope, `[{"type":"` + cancelType + `","order_id":"1002","order_id":"1003","actions":["cancel"]}]`, "twice"},
			{"type-duplicated", scope, `[{"type":"` + profileType + `","type":"` + cancelType + `","order_id":"1002","actions":["cancel"]}]`, "twice"},
			{"required-missing", scope, `[{"type":"` + cancelType + `","actions":["cancel"]}]`, `"order_id"`},
			{"kind-number-for-string", scope, `[{"type":"` + cancelType + `","order_id":1002,"actions":["cancel"]}]`, "must be a string"},
			{"kind-string-for-array", scope, `[{"type":"` + cancelType + `","order_id":"1002","actions":"cancel"}]`, "array"},
			{"kind-object-for-enum", scope, `[{"type":"` + profileType + `","section":{"v":"address"}}]`, "must be a string"},
			{"pattern-mismatch", scope, `[` + cancelEntry("10a2") + `]`, "order_id"},
			{"pattern-must-match-whole-value", scope, `[` + cancelEntry("10021") + `]`, "order_id"},
			{"enum-value-not-allowed", scope, `[{"type":"` + profileType + `","section":"phone"}]`, "section"},
			{"action-not-allowed", scope, `[{"type":"` + cancelType + `","order_id":"1002","actions":["refund"]}]`, "actions[0]"},
			{"action-among-allowed", scope, `[{"type":"` + cancelType + `","order_id":"1002","actions":["cancel","refund"]}]`, "actions[1]"},
			{"actions-empty", scope, `[{"type":"` + cancelType + `","order_id":"1002","actions":[]}]`, "empty"},
			{"actions-repeated", scope, `[{"type":"` + cancelType + `","order_id":"1002","actions":["cancel","cancel"]}]`, "repeats"},
			{"scope-not-requested", "orders:read", `[` + cancelEntry("1002") + `]`, `"orders:cancel"`},
			{"one-entry-without-its-scope", "orders:cancel", `[` + cancelEntry("1002") + `,{"type":"` + profileType + `","section":"email"}]`, `"profile:read"`},
			{"entry-repeated", scope, `[` + cancelEntry("1002") + `,` + cancelEntry("1002") + `]`, "repeats"},
			{"single-type-twice", scope, `[{"type":"` + profileType + `","section":"email"},{"type":"` + profileType + `","section":"address"}]`, "one entry"},
			{"too-many-entries", scope, `[` + strings.Join(many, ",") + `]`, "entries"},
			{"too-large", scope, big, "bytes"},
		}
		for _, tc := range cases {
			r := e.post("rar", "device_authorization", paAuth, rarForm(tc.scope, tc.details))
			t.Run(tc.name, func(t *testing.T) {
				wantOAuthError(t, r, http.StatusBadRequest, "invalid_authorization_details")
				desc, _ := r.json(t)["error_description"].(string)
				if !strings.Contains(desc, tc.says) {
					t.Fatalf("error_description = %q; want it to say %q", desc, tc.says)
				}
			})
		}
		// A Brand that declares no types refuses even well-formed details.
		wantOAuthError(t, e.post("acme", "device_authorization", paAuth,
			url.Values{"client_id": {paIssuer}, "scope": {"orders:read"}, "authorization_details": {`[` + cancelEntry("1002") + `]`}}),
			http.StatusBadRequest, "invalid_authorization_details")
		// invalid_scope comes first (§2.4 order): a bad scope with bad details.
		wantOAuthError(t, e.post("rar", "device_authorization", paAuth, rarForm("nope", `[]`)), http.StatusBadRequest, "invalid_scope")

		// Nothing of the above was stored.
		if n := deviceRows(t, s); n != 0 {
			t.Fatalf("refused requests stored %d device authorizations; want 0", n)
		}
		// Positive controls: each is stored (one row each).
		for _, ok := range []string{
			`[` + cancelEntry("1002") + `]`,
			`[` + cancelEntry("1002") + `,` + cancelEntry("1003") + `,{"type":"` + profileType + `","section":"email","note":"for the invoice"}]`,
			"[\n  " + cancelEntry("9999") + "\n]",
		} {
			if r := e.post("rar", "device_authorization", paAuth, rarForm(scope, ok)); r.status != http.StatusOK {
				t.Fatalf("ok %s: %d %s", ok, r.status, r.body)
			}
		}
		if n := deviceRows(t, s); n != 3 {
			t.Fatalf("positive controls stored %d device authorizations; want 3", n)
		}
	})
}

// PACT §5.7: details are normalized and stored with the authorization,
// consent shows them under their scope in pactd's words, a declined scope
// drops its details from the grant, and the token response, the token and
// every refresh carry exactly the approved ones.
func TestDetailsThroughConsentTokenAndRefresh(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		seedRAR(t, s)
		ctx := t.Context()
		const scope = "orders:read orders:cancel profile:read"
		// Members in another order, with whitespace: stored canonical.
		requested := `[ {"actions":["cancel"], "order_id":"1002", "type":"` + cancelType + `"},` + cancelEntry("1003") +
			`, {"section":"address","type":"` + profileType + `"} ]`
		wantAll := `[{"actions":["cancel"],"order_id":"1002","type":"` + cancelType + `"},` +
			`{"actions":["cancel"],"order_id":"1003","type":"` + cancelType + `"},` +
			`{"section":"address","type":"` + profileType + `"}]`
		wantNoProfile := `[{"actions":["cancel"],"order_id":"1002","type":"` + cancelType + `"},` +
			`{"actions":["cancel"],"order_id":"1003","type":"` + cancelType + `"}]`

		start := func() (dc, uc string) {
			r := e.post("rar", "device_authorization", paAuth, rarForm(scope, requested))
			if r.status != http.StatusOK {
				t.Fatalf("device authorization: %d %s", r.status, r.body)
			}
			m := r.json(t)
			return m["device_code"].(string), m["user_code"].(string)
		}
		dc, uc := start()
		stored, err := s.GetDeviceAuthorizationByDeviceCode(ctx, "rar", deviceHash(dc))
		if err != nil || stored.AuthorizationDetails != wantAll {
			t.Fatalf("stored details = %q, %v\nwant %s", stored.AuthorizationDetails, err, wantAll)
		}

		// Consent: each entry with its scope and the same words for every
		// frontend.
		dsc, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "rar", UserCode: uc})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range dsc.GetAuthorizationDetails() {
			got = append(got, d.GetScope()+" | "+d.GetWords()+" | "+d.GetDetail().GetType())
		}
		want := []string{
			"orders:cancel | Cancel an order: order 1002; actions cancel | " + cancelType,
			"orders:cancel | Cancel an order: order 1003; actions cancel | " + cancelType,
			"profile:read | See part of your profile: section address | " + profileType,
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("consent details =\n%q\nwant\n%q", got, want)
		}
		if j := dsc.GetAuthorizationDetails()[0].GetDetail().GetJson(); j != `{"actions":["cancel"],"order_id":"1002","type":"`+cancelType+`"}` {
			t.Fatalf("consent entry json = %s", j)
		}

		// Approve without profile:read: its entry is dropped with it.
		ap, err := e.approve("rar", uc, "user-42", "orders:read", "orders:cancel")
		if err != nil || ap.GetAuthorizationDetailsJson() != wantNoProfile {
			t.Fatalf("approve = %v, %v\nwant details %s", ap, err, wantNoProfile)
		}
		g, err := s.GetGrant(ctx, ap.GetGrantId())
		if err != nil || g.AuthorizationDetails != wantNoProfile {
			t.Fatalf("grant details = %q, %v", g.AuthorizationDetails, err)
		}

		// Token response (RFC 9396 §6) and the token's claim.
		checkTokens := func(label string, r response, wantDetails string) string {
			t.Helper()
			if r.status != http.StatusOK {
				t.Fatalf("%s: %d %s", label, r.status, r.body)
			}
			var body struct {
				AccessToken          string          `json:"access_token"`
				RefreshToken         string          `json:"refresh_token"`
				Scope                string          `json:"scope"`
				AuthorizationDetails json.RawMessage `json:"authorization_details"`
			}
			if err := json.Unmarshal([]byte(r.body), &body); err != nil {
				t.Fatal(err)
			}
			if string(body.AuthorizationDetails) != wantDetails {
				t.Fatalf("%s: token response authorization_details = %s\nwant %s", label, body.AuthorizationDetails, wantDetails)
			}
			claims, err := e.verifier.Verify(ctx, body.AccessToken, delegtoken.Expect{})
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if string(claims.AuthorizationDetails) != wantDetails {
				t.Fatalf("%s: token claim authorization_details = %s\nwant %s", label, claims.AuthorizationDetails, wantDetails)
			}
			return body.RefreshToken
		}
		rt := checkTokens("device grant", e.post("rar", "token", paAuth, deviceGrant(dc, paIssuer)), wantNoProfile)
		for i := range 2 {
			e.clk.Advance(time.Minute)
			rt = checkTokens(fmt.Sprintf("refresh %d", i+1), e.post("rar", "token", paAuth, refreshGrant(rt, paIssuer)), wantNoProfile)
		}
		// The RPC answer names the same value.
		dc2, uc2 := start()
		if _, err := e.approve("rar", uc2, "user-42", "orders:read", "orders:cancel", "profile:read"); err != nil {
			t.Fatal(err)
		}
		resp, err := e.rpc.IssueDelegation(ctx, &pactv1.IssueDelegationRequest{BrandId: "rar", Authorization: paAuth, ClientId: paIssuer,
			GrantType: "urn:ietf:params:oauth:grant-type:device_code", DeviceCode: dc2})
		if err != nil || resp.GetAuthorizationDetailsJson() != wantAll || !strings.Contains(resp.GetBodyJson(), `"authorization_details":`+wantAll) {
			t.Fatalf("IssueDelegation (all approved) = %v, %v", resp, err)
		}

		// Declining every scope with details: a scope-only grant, and no
		// authorization_details member or claim at all.
		dc3, uc3 := start()
		ap, err = e.approve("rar", uc3, "user-42", "orders:read")
		if err != nil || ap.GetAuthorizationDetailsJson() != "" {
			t.Fatalf("approve orders:read only = %v, %v; want no details", ap, err)
		}
		r := e.post("rar", "token", paAuth, deviceGrant(dc3, paIssuer))
		if r.status != http.StatusOK || strings.Contains(r.body, "authorization_details") {
			t.Fatalf("scope-only token response = %d %s; want no authorization_details", r.status, r.body)
		}
		checkTokens("scope-only", r, "")
	})
}
