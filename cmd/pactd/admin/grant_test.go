package admin_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/testkit/testsigner"
)

// testPA is a personal agent on loopback: an ES256 key whose JWKS it
// serves (testsigner's PA).
type testPA struct {
	*testsigner.PA
	issuer string
}

func newTestPA(t *testing.T) *testPA {
	t.Helper()
	pa := testsigner.NewPA(t, "k1")
	return &testPA{PA: pa, issuer: pa.URL}
}

// jwt is a PA JWT for pactd's audience (PACT_PUBLIC_URL + "/a2a").
func (pa *testPA) jwt(t *testing.T) string {
	t.Helper()
	now := time.Now()
	return pa.JWT(t, map[string]any{"alg": "ES256", "kid": "k1", "typ": "JWT"},
		map[string]any{"iss": pa.issuer, "sub": "pa-user-1", "aud": "https://provider.example/a2a", "iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix()})
}

// TestGrantCommands: grants made by real device grants (one restricted to
// an order by authorization_details) are listed as ListGrants returns them,
// with their restrictions in the consent page's words, and revoked.
func TestGrantCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		ctx := t.Context()
		pa := newTestPA(t)
		p.must(t, "agent", "register", "-issuer", pa.issuer, "-jwks-uri", pa.issuer+"/jwks.json", "-name", "Test PA")
		settings := t.TempDir() + "/delegation.json"
		writeJSON(t, settings, `{"enabled":true,"login_url":"https://login.acme.example","login_mode":"BRAND_LOGIN_MODE_TRUSTED_FRONTEND",
			"scopes":[{"id":"orders:read","description":"See your orders"},{"id":"orders:cancel","description":"Cancel your orders"}],
			"authorization_details_types":[{"type":"https://acme.example/order-cancel/v1","description":"Cancel one order","scope":"orders:cancel",
			  "combination":"AUTHORIZATION_DETAILS_COMBINATION_UNION","consent_template":"Only order {order_id}: cancel it",
			  "fields":[{"name":"order_id","kind":"AUTHORIZATION_DETAILS_FIELD_KIND_STRING","required":true,"label":"order","pattern":"^[0-9]{4}$"}]}]}`)
		p.must(t, "brand", "create", "acme", "-name", "Acme", "-delegation-file", settings)

		fe := p.delegation(frontendToken)
		grant := func(scope string, details *string, user string) {
			t.Helper()
			dev, err := fe.StartDeviceAuthorization(ctx, &pactv1.StartDeviceAuthorizationRequest{BrandId: "acme", Authorization: "Bearer " + pa.jwt(t),
				ClientId: pa.issuer, Scope: scope, AuthorizationDetails: details})
			if err != nil || dev.GetError() != nil {
				t.Fatalf("StartDeviceAuthorization: %v, %v", dev.GetError(), err)
			}
			if _, err := fe.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: dev.GetUserCode(), BrandUser: user,
				Scopes: strings.Fields(scope)}); err != nil {
				t.Fatalf("ApproveConsent: %v", err)
			}
		}
		grant("orders:read", nil, "alice")
		grant("orders:cancel", proto.String(`[{"type":"https://acme.example/order-cancel/v1","order_id":"1002"}]`), "alice")
		grant("orders:read", nil, "bob")

		want, err := fe.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "alice"})
		if err != nil || len(want.GetGrants()) != 2 {
			t.Fatalf("ListGrants = %v, %v", want, err)
		}
		rows := table(t, p.must(t, "grant", "list", "-brand", "acme", "-user", "alice").stdout)
		if len(rows) != 2 {
			t.Fatalf("grant list: %d rows, want alice's 2", len(rows))
		}
		for i, g := range want.GetGrants() {
			words := "-"
			if len(g.GetAuthorizationDetails()) > 0 {
				words = g.GetAuthorizationDetails()[0].GetWords()
			}
			if rows[i]["GRANT"] != g.GetGrantId() || rows[i]["AGENT"] != "Test PA ("+g.GetAgentId()+")" || rows[i]["SCOPES"] != strings.Join(g.GetScopes(), " ") ||
				rows[i]["REVOKED"] != "-" || rows[i]["RESTRICTED TO"] != words {
				t.Errorf("grant list row %d = %v, want %v", i, rows[i], g)
			}
		}
		if rows[0]["RESTRICTED TO"] != "Only order 1002: cancel it" { // newest first: the restricted grant
			t.Errorf("the restricted grant's words = %q", rows[0]["RESTRICTED TO"])
		}
		sameMessage(t, "grant list -o json", decode(t, p.must(t, "grant", "list", "-o", "json", "-brand", "acme", "-user", "alice"), &pactv1.ListGrantsResponse{}), want)

		// find: across Users and by PA, as FindGrants answers; a search
		// without a Brand or a PA is refused, naming the field.
		found, err := p.delegation(adminToken).FindGrants(ctx, &pactv1.FindGrantsRequest{BrandId: "acme"})
		if err != nil || len(found.GetGrants()) != 3 {
			t.Fatalf("FindGrants = %v, %v", found, err)
		}
		if rows := table(t, p.must(t, "grant", "find", "-brand", "acme").stdout); len(rows) != 3 || rows[0]["USER"] != "bob" || rows[0]["BRAND"] != "acme" ||
			rows[0]["GRANT"] != found.GetGrants()[0].GetGrantId() {
			t.Errorf("grant find -brand acme: %v", rows)
		}
		if rows := table(t, p.must(t, "grant", "find", "-agent", found.GetGrants()[0].GetAgentId()).stdout); len(rows) != 3 {
			t.Errorf("grant find -agent: %v", rows)
		}
		sameMessage(t, "grant find -o json", decode(t, p.must(t, "grant", "find", "-o", "json", "-brand", "acme"), &pactv1.FindGrantsResponse{}), found)
		refused(t, p.cli(t, "grant", "find"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "brand_id")
		refused(t, p.cli(t, "grant", "find", "-user", "alice", "-agent", found.GetGrants()[0].GetAgentId()), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "brand_user")

		// Refusals: another user's grant is not found for -user; a bad user
		// is named. Nothing is revoked by them.
		bob, err := fe.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "bob"})
		if err != nil || len(bob.GetGrants()) != 1 {
			t.Fatal(bob, err)
		}
		refused(t, p.cli(t, "grant", "revoke", "-brand", "acme", "-user", "alice", bob.GetGrants()[0].GetGrantId()), "not_found", "ERROR_REASON_NOT_FOUND")
		refused(t, p.cli(t, "grant", "list", "-brand", "acme", "-user", "a\x01b"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "brand_user")
		refused(t, p.cli(t, "grant", "list", "-brand", "nobody", "-user", "alice"), "not_found", "ERROR_REASON_NOT_FOUND")
		if again, err := fe.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "bob"}); err != nil || again.GetGrants()[0].GetRevokeTime() != nil {
			t.Fatalf("bob's grant after the refusal: %v, %v", again, err)
		}

		// revoke: ListGrants shows it revoked; the table says so.
		id := want.GetGrants()[0].GetGrantId()
		if r := p.must(t, "grant", "revoke", "-brand", "acme", id); r.stdout != "revoked grant "+id+" of Brand acme\n" {
			t.Errorf("grant revoke printed %q", r.stdout)
		}
		after, err := fe.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "acme", BrandUser: "alice"})
		if err != nil || after.GetGrants()[0].GetRevokeTime() == nil || after.GetGrants()[1].GetRevokeTime() != nil {
			t.Fatalf("grants after revoke: %v, %v", after, err)
		}
		if rows := table(t, p.must(t, "grant", "list", "-brand", "acme", "-user", "alice").stdout); rows[0]["REVOKED"] == "-" || rows[1]["REVOKED"] != "-" {
			t.Errorf("grant list after revoke: %v", rows)
		}
		if r := p.cli(t, "grant", "list", "-brand", "acme"); r.code != 2 || !strings.Contains(r.stderr, "-user is required") {
			t.Errorf("grant list without -user: exit %d\n%s", r.code, r.stderr)
		}
	})
}
