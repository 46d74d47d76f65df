package token_test

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/token/authzdetails"
	"pactd.dev/pactd/token/delegtoken"
)

const cancelType = "https://acme.example/authorization/order-cancel/v1"

// The grant's details in pactd's canonical JSON: members sorted by name.
const grantDetails = `[{"actions":["cancel"],"order_id":"1002","type":"` + cancelType + `"}]`

func mintWithDetails(t *testing.T, e *env, grant string, details string) string {
	t.Helper()
	aud := publicURL + "/a2a/acme"
	c := delegtoken.Claims{Issuer: aud + "/oauth", Audience: aud, Subject: "user-42", ClientID: "https://pa.example",
		GrantID: grant, Scopes: []string{"orders:write"}}
	if details != "" {
		c.AuthorizationDetails = json.RawMessage(details)
	}
	tok, err := e.minter.Mint(t.Context(), c)
	if err != nil {
		t.Fatalf("Mint: %v", err)
	}
	return tok
}

// RFC 9396 §9.1 and PACT §5.7: introspection returns the grant's details
// (from the store), and a token whose claim is not the grant's is inactive.
func TestIntrospectionReturnsTheGrantsDetails(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := start(t, dbURL)
		const pa = "https://pa.example"
		e.grants.live["g-rar"] = [4]string{"acme", pa, "user-42"}
		e.grants.live["g-plain"] = [4]string{"acme", pa, "user-42"}
		e.grants.details = map[string]string{"g-rar": grantDetails}
		c := e.client()
		ctx := t.Context()

		// Positive control: the same details in another member order and
		// with whitespace are the same canonical value.
		reordered := `[ {"type":"` + cancelType + `", "order_id":"1002", "actions":["cancel"]} ]`
		resp, err := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: mintWithDetails(t, e, "g-rar", reordered)})
		if err != nil || !resp.GetActive() {
			t.Fatalf("ok/details-match = %v, %v", resp, err)
		}
		if resp.GetAuthorizationDetailsJson() != grantDetails {
			t.Fatalf("authorization_details_json = %s, want the grant's %s", resp.GetAuthorizationDetailsJson(), grantDetails)
		}
		want := []*pactv1.AuthorizationDetail{{
			Type: cancelType, Json: `{"actions":["cancel"],"order_id":"1002","type":"` + cancelType + `"}`,
			Members: []*pactv1.AuthorizationDetailMember{
				{Name: "actions", Values: []string{"cancel"}, Array: true},
				{Name: "order_id", Values: []string{"1002"}},
			},
		}}
		if len(resp.GetAuthorizationDetails()) != 1 || !proto.Equal(resp.GetAuthorizationDetails()[0], want[0]) {
			t.Fatalf("authorization_details = %v, want %v", resp.GetAuthorizationDetails(), want)
		}
		// Scope-only grant, scope-only token: active, no details.
		resp, err = c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: mintWithDetails(t, e, "g-plain", "")})
		if err != nil || !resp.GetActive() || resp.GetAuthorizationDetailsJson() != "" || len(resp.GetAuthorizationDetails()) != 0 {
			t.Fatalf("ok/scope-only = %v, %v", resp, err)
		}

		other := `[{"actions":["cancel"],"order_id":"1003","type":"` + cancelType + `"}]`
		for name, tok := range map[string]string{
			"fail/claim-dropped":             mintWithDetails(t, e, "g-rar", ""),
			"fail/claim-changed":             mintWithDetails(t, e, "g-rar", other),
			"fail/claim-widened":             mintWithDetails(t, e, "g-rar", `[`+strings.Trim(grantDetails, "[]")+`,`+strings.Trim(other, "[]")+`]`),
			"fail/claim-on-scope-only-grant": mintWithDetails(t, e, "g-plain", grantDetails),
		} {
			resp, err := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: tok})
			if err != nil || !proto.Equal(resp, &pactv1.IntrospectTokenResponse{}) {
				t.Fatalf("%s = %v, %v; want exactly {active:false}", name, resp, err)
			}
		}
	})
}

// RFC 9396 §10, PACT §2.3: authorization_details_types_supported is listed
// only by a Brand that declares types.
func TestMetadataListsDetailsTypesOnlyWhenDeclared(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := start(t, dbURL)
		b := db.Brand{ID: "rar", DisplayName: "Rar", CreateTime: e.clock.Now(), UpdateTime: e.clock.Now(), Delegation: db.Delegation{
			Enabled: true, Scopes: []db.Scope{{ID: "orders:cancel", Description: "Cancel orders"}},
			AuthorizationDetailsTypes: []authzdetails.Type{{Type: cancelType, Description: "Cancel an order", Scope: "orders:cancel",
				Fields: []authzdetails.Field{{Name: "order_id", Kind: authzdetails.KindString, Label: "order", Pattern: `^[0-9]{4}$`}}}},
		}}
		if _, err := e.store.CreateBrand(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		c := e.client()
		resp, err := c.GetAuthorizationServerMetadata(t.Context(), &pactv1.GetAuthorizationServerMetadataRequest{BrandId: "rar"})
		if err != nil {
			t.Fatal(err)
		}
		const tail = `,"authorization_details_types_supported":["` + cancelType + `"]}`
		if !strings.HasSuffix(resp.GetMetadataJson(), tail) {
			t.Fatalf("metadata = %s; want it to end with %s", resp.GetMetadataJson(), tail)
		}
		resp, err = c.GetAuthorizationServerMetadata(t.Context(), &pactv1.GetAuthorizationServerMetadataRequest{BrandId: "acme"})
		if err != nil || strings.Contains(resp.GetMetadataJson(), "authorization_details_types_supported") {
			t.Fatalf("acme (no types) metadata = %s, %v; want no authorization_details_types_supported", resp.GetMetadataJson(), err)
		}
	})
}
