package verification_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/internal/testkit/testsigner"
	"pactd.dev/pactd/services/verification"
	"pactd.dev/pactd/token/delegtoken"
	"pactd.dev/pactd/token/pajwt"
)

const (
	publicURL  = "https://provider.example"
	paIssuer   = "https://pa.example"
	cancelType = "https://acme.example/authorization/order-cancel/v1"
	// The grant's details as pactd stores them (canonical JSON).
	grantDetails = `[{"actions":["cancel"],"order_id":"1002","type":"` + cancelType + `"}]`
)

type fakePA struct{}

func (fakePA) VerifyPA(context.Context, string) (pajwt.Result, error) {
	return pajwt.Result{Agent: pajwt.Agent{ID: "agt_1", Issuer: paIssuer}, Subject: "pa-user"}, nil
}

type brands struct{}

func (brands) GetBrand(_ context.Context, id string) (db.Brand, error) {
	if id != "acme" {
		return db.Brand{}, db.ErrNotFound
	}
	return db.Brand{ID: "acme", Delegation: db.Delegation{Enabled: true}}, nil
}

// grants holds live grants and their details.
type grants map[string]string

func (g grants) LiveGrantDetails(_ context.Context, grantID, brandID, clientID, brandUser string, _ time.Time) (string, bool, error) {
	d, ok := g[grantID]
	return d, ok && brandID == "acme" && clientID == paIssuer && brandUser == "user-42", nil
}

// PACT §5.7: VerifyAgentRequest returns the grant's details from the store,
// and refuses (401 invalid_token) a token whose claim differs from them.
func TestVerifyReturnsTheGrantsDetails(t *testing.T) {
	ks := testsigner.New(t, "k")
	svc := verification.New(verification.Deps{PA: fakePA{}, Brands: brands{}, Delegation: verification.DelegationTokens{
		Tokens: delegtoken.NewVerifier(ks, nil), Grants: grants{"g-rar": grantDetails, "g-plain": ""}, PublicURL: publicURL, Now: time.Now,
	}})
	signer := delegtoken.NewSigner(ks, nil)
	mint := func(grant, details string) string {
		c := delegtoken.Claims{Issuer: publicURL + "/a2a/acme/oauth", Audience: publicURL + "/a2a/acme", Subject: "user-42",
			ClientID: paIssuer, GrantID: grant, Scopes: []string{"orders:cancel"}}
		if details != "" {
			c.AuthorizationDetails = json.RawMessage(details)
		}
		tok, err := signer.Mint(t.Context(), c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	verify := func(tok string) *pactv1.VerifyAgentRequestResponse {
		t.Helper()
		r, err := svc.VerifyAgentRequest(t.Context(), &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer pa", UserDelegation: "Bearer " + tok})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	// Positive control: the claim in another member order is the same value.
	r := verify(mint("g-rar", `[{"type":"`+cancelType+`","order_id":"1002","actions":["cancel"]}]`))
	if !r.GetAllowed() || r.GetDelegation().GetAuthorizationDetailsJson() != grantDetails {
		t.Fatalf("ok/details = %v", r)
	}
	want := &pactv1.AuthorizationDetail{Type: cancelType, Json: `{"actions":["cancel"],"order_id":"1002","type":"` + cancelType + `"}`,
		Members: []*pactv1.AuthorizationDetailMember{{Name: "actions", Values: []string{"cancel"}, Array: true}, {Name: "order_id", Values: []string{"1002"}}}}
	if ds := r.GetDelegation().GetAuthorizationDetails(); len(ds) != 1 || !proto.Equal(ds[0], want) {
		t.Fatalf("structured details = %v, want %v", ds, want)
	}
	if r := verify(mint("g-plain", "")); !r.GetAllowed() || r.GetDelegation().GetAuthorizationDetailsJson() != "" || len(r.GetDelegation().GetAuthorizationDetails()) != 0 {
		t.Fatalf("ok/scope-only = %v", r)
	}

	for name, tok := range map[string]string{
		"fail/claim-dropped":             mint("g-rar", ""),
		"fail/claim-other-order":         mint("g-rar", `[{"actions":["cancel"],"order_id":"1003","type":"`+cancelType+`"}]`),
		"fail/claim-on-scope-only-grant": mint("g-plain", grantDetails),
	} {
		r := verify(tok)
		if r.GetAllowed() || r.GetHttpStatus() != 401 || r.GetWwwAuthenticate() != oauthwire.ChallengeInvalidToken ||
			r.GetReason() != pactv1.DenyReason_DENY_REASON_DELEGATION_INVALID || r.GetDelegation() != nil {
			t.Fatalf("%s = %v; want 401 invalid_token, DELEGATION_INVALID", name, r)
		}
	}
}
