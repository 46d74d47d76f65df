package demo

import (
	"strings"
	"testing"

	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

func cancelDetail(order string, actions ...string) *pactv1.AuthorizationDetail {
	return &pactv1.AuthorizationDetail{Type: OrderCancelType, Members: []*pactv1.AuthorizationDetailMember{
		{Name: "actions", Values: actions, Array: true}, {Name: "order_id", Values: []string{order}},
	}}
}

// PACT §5.7: the agent enforces the grant's authorization_details against
// the actual order: with entries of its type, only the orders named (with
// the cancel action) may be cancelled; anything else is a step-up, never
// the action. A scope-only grant is limited by its scope alone.
func TestCancelEnforcesAuthorizationDetails(t *testing.T) {
	turn := func(details ...*pactv1.AuthorizationDetail) pacta2a.Turn {
		return pacta2a.Turn{BrandID: "acme", Text: "cancel order 1002", Delegation: &pactv1.DelegationInfo{
			GrantId: "g", BrandUser: "alice", Scopes: []string{ScopeOrdersCancel}, AuthorizationDetails: details}}
	}
	cases := []struct {
		name    string
		turn    pacta2a.Turn
		allowed bool
	}{
		{"ok/scope-only", turn(), true},
		{"ok/entry-for-the-order", turn(cancelDetail("1002", "cancel")), true},
		{"ok/union-one-matches", turn(cancelDetail("1001", "cancel"), cancelDetail("1002", "cancel")), true},
		{"ok/other-type-only", turn(&pactv1.AuthorizationDetail{Type: "https://acme.example/other"}), true},
		{"fail/entry-for-another-order", turn(cancelDetail("1003", "cancel")), false},
		{"fail/entry-without-cancel", turn(cancelDetail("1002", "refund")), false},
		{"fail/order-as-array", turn(&pactv1.AuthorizationDetail{Type: OrderCancelType, Members: []*pactv1.AuthorizationDetailMember{
			{Name: "actions", Values: []string{"cancel"}, Array: true}, {Name: "order_id", Values: []string{"1002"}, Array: true}}}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewAgent().Reply(t.Context(), tc.turn)
			if err != nil {
				t.Fatal(err)
			}
			cancelled := len(r.Actions) == 1 && r.Actions[0].Tool == "cancel_order"
			if tc.allowed != cancelled {
				t.Fatalf("reply = %+v; cancelled = %v, want %v", r, cancelled, tc.allowed)
			}
			if !tc.allowed && (len(r.NeedScopes) != 1 || r.NeedScopes[0] != ScopeOrdersCancel || !strings.Contains(r.Text, "#1002")) {
				t.Fatalf("refusal = %+v; want a step-up for %s naming the order", r, ScopeOrdersCancel)
			}
		})
	}
}
