package server_test

import (
	"testing"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/rpcerr"
)

// FindGrants through the wire: an operator finds a grant by Brand, by
// Brand and User, or by PA; each refusal names its field; a frontend
// credential may not search.
func TestFindGrants(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir()))
		d := newDelegatedPA(t, inst) // acme, user-42
		ctx := t.Context()
		dc := pactv1connect.NewDelegationServiceClient(h2c(), inst.url, withToken(adminToken))
		// Positive controls: each filter finds the one grant.
		for name, req := range map[string]*pactv1.FindGrantsRequest{
			"brand":      {BrandId: "acme"},
			"brand+user": {BrandId: "acme", BrandUser: "user-42"},
			"agent":      {AgentId: d.agentID},
			"all three":  {BrandId: "acme", BrandUser: "user-42", AgentId: d.agentID},
		} {
			res, err := dc.FindGrants(ctx, req)
			if err != nil || len(res.GetGrants()) != 1 || res.GetGrants()[0].GetGrantId() != d.grantID ||
				res.GetGrants()[0].GetAgentDisplayName() != "PA" || res.GetNextPageToken() != "" {
				t.Fatalf("ok/%s: %v, %v", name, res, err)
			}
		}
		// Nothing matches: an empty page, not an error.
		for name, req := range map[string]*pactv1.FindGrantsRequest{
			"other user":    {BrandId: "acme", BrandUser: "user-43"},
			"unknown brand": {BrandId: "nope"},
			"unknown agent": {AgentId: "agt_nope"},
		} {
			if res, err := dc.FindGrants(ctx, req); err != nil || len(res.GetGrants()) != 0 {
				t.Fatalf("%s: %v, %v; want an empty page", name, res, err)
			}
		}
		for _, c := range []struct {
			name, field string
			req         *pactv1.FindGrantsRequest
		}{
			{"no filter", "brand_id", &pactv1.FindGrantsRequest{}},
			{"user without brand", "brand_user", &pactv1.FindGrantsRequest{AgentId: d.agentID, BrandUser: "user-42"}},
			{"user with a control character", "brand_user", &pactv1.FindGrantsRequest{BrandId: "acme", BrandUser: "user\x00"}},
			{"bad page token", "page.page_token", &pactv1.FindGrantsRequest{BrandId: "acme", Page: &pactv1.PageRequest{PageToken: "!"}}},
		} {
			_, err := dc.FindGrants(ctx, c.req)
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !sliceIs(rpcerr.FieldViolations(err), c.field) {
				t.Errorf("%s: %v (%v); want InvalidArgument on %s", c.name, err, rpcerr.FieldViolations(err), c.field)
			}
		}
		fe := pactv1connect.NewDelegationServiceClient(h2c(), inst.url, withToken(frontendToken))
		if _, err := fe.FindGrants(ctx, &pactv1.FindGrantsRequest{BrandId: "acme"}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Fatalf("frontend FindGrants: %v, want PermissionDenied", err)
		}
	})
}
