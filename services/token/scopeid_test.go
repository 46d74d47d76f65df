package token_test

import (
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/scopeid"
)

// TestSignReceiptScopeIDRule pins the one scope-id rule on receipts: the
// scopes used are held to the same 1 to 128 bytes as a Brand's declared
// scopes (internal/scopeid), so a receipt never names an id no Brand can
// define. Ids of 129 to 256 bytes were signed before the rule was unified.
func TestSignReceiptScopeIDRule(t *testing.T) {
	e := start(t, "")
	e.grants.live["g1"] = [4]string{"acme", "https://pa.example", "user-42"}
	c := e.client()
	sign := func(scope string) error {
		_, err := c.SignReceipt(t.Context(), &pactv1.SignReceiptRequest{
			BrandId: "acme", GrantId: "g1", PaIssuer: "https://pa.example", BrandUser: "user-42",
			ScopesUsed: []string{"orders:read", scope},
		})
		return err
	}
	if err := sign(strings.Repeat("s", scopeid.MaxLen)); err != nil {
		t.Fatalf("ok/128-byte scope: %v", err)
	}
	for _, n := range []int{scopeid.MaxLen + 1, 256} {
		err := sign(strings.Repeat("s", n))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), []string{"scopes_used[1]"}) {
			t.Fatalf("fail/%d-byte scope: err = %v, violations %v; want InvalidArgument on scopes_used[1]", n, err, rpcerr.FieldViolations(err))
		}
	}
}
