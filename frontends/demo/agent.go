// Package demo is a demonstration Brand for the PACT frontends: a support
// agent whose account actions need scopes (so PACT Delegated's step-up,
// consent and receipts can be seen, and authorization_details bind a
// cancellation to one order), the Brand's settings, a sign-in page that
// vouches for the User the way a Brand in BRAND_LOGIN_MODE_TRUSTED_FRONTEND
// does, and RemoteAgent, the client of Brand logic in another process.
//
// The Brand logic is one pacta2a.Agent (Agent), so the same code answers in
// the standalone frontend (cmd/pact-a2a) and as an a2a-go executor behind
// pacta2a.Wrap (frontends/a2a-go-example, through pacta2a.TurnOf). Nothing
// here checks a password: it is a demo.
package demo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// The demo Brand's scopes.
const (
	// ScopeOrdersRead lets the agent list the User's orders.
	ScopeOrdersRead = "orders:read"
	// ScopeOrdersCancel lets the agent cancel an order that has not shipped.
	ScopeOrdersCancel = "orders:cancel"
	// ScopeProfileRead lets the agent read the User's name and email; no
	// skill needs it yet (it shows a partial approval of three scopes).
	ScopeProfileRead = "profile:read"
)

// OrderCancelType is the demo Brand's authorization_details type (PACT
// §5.7, RFC 9396): {"type": OrderCancelType, "order_id": "1002",
// "actions": ["cancel"]} permits cancelling that one order; several
// entries are a union of exact orders. It needs orders:cancel.
const OrderCancelType = "https://acme.example/authorization/order-cancel/v1"

// OrderCancelWords is the consent template of OrderCancelType: the Brand's
// own words for an entry ("Only order 1002: cancel it") instead of
// pactd's default ("Cancel one order: order 1002; allowed cancel").
// actions allows only "cancel", so the words can say it outright.
const OrderCancelWords = "Only order {order_id}: cancel it"

// orderCancelType declares OrderCancelType for the Brand.
func orderCancelType() *pactv1.AuthorizationDetailsType {
	return &pactv1.AuthorizationDetailsType{
		Type: OrderCancelType, Description: "Cancel one order", Scope: ScopeOrdersCancel,
		Combination:     pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_UNION,
		ConsentTemplate: OrderCancelWords,
		Fields: []*pactv1.AuthorizationDetailsField{
			{Name: "order_id", Kind: pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_STRING, Required: true,
				Label: "order", Pattern: `^[0-9]{4}$`},
			{Name: "actions", Kind: pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_ENUM_ARRAY, Required: true,
				Label: "allowed", Values: []string{"cancel"}},
		},
	}
}

// BrandRequest is the demo Brand: its skills, its three scopes, and the
// sign-in page of a frontend at frontendURL as its login (Login serves it).
func BrandRequest(brandID, displayName, frontendURL string) *pactv1.CreateBrandRequest {
	return &pactv1.CreateBrandRequest{
		BrandId: brandID, DisplayName: displayName,
		Description: displayName + " support: questions, your orders, cancellations.",
		Skills: []*pactv1.Skill{
			{Id: "orders", Name: "Your orders", Description: "Lists your orders and their status (needs orders:read).",
				Tags: []string{"orders"}, Examples: []string{"show my orders"}},
			{Id: "cancel", Name: "Cancel an order", Description: "Cancels an order that has not shipped (needs orders:cancel).",
				Tags: []string{"orders", "cancel"}, Examples: []string{"cancel order 1002"}},
			{Id: "help", Name: "Help", Description: "Says what the agent can do.", Tags: []string{"help"}, Examples: []string{"hello"}},
		},
		Delegation: &pactv1.DelegationSettings{
			Enabled: true,
			Scopes: []*pactv1.Scope{
				{Id: ScopeOrdersRead, Description: "See your orders and their delivery status"},
				{Id: ScopeOrdersCancel, Description: "Cancel your orders that have not shipped yet"},
				{Id: ScopeProfileRead, Description: "See your name and email address"},
			},
			LoginUrl:                  strings.TrimRight(frontendURL, "/") + "/demo/" + brandID,
			LoginMode:                 pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND,
			AuthorizationDetailsTypes: []*pactv1.AuthorizationDetailsType{orderCancelType()},
		},
	}
}

// Agent is the demo support agent. Every User starts with the same three
// orders; cancellations are kept in memory.
type Agent struct {
	mu     sync.Mutex
	orders map[string][]order // by Brand and Brand user
}

type order struct{ id, item, status string }

// NewAgent returns an agent with no state.
func NewAgent() *Agent { return &Agent{orders: map[string][]order{}} }

// Reply answers "show my orders" (orders:read), "cancel order N"
// (orders:cancel) and anything else with help. A turn whose scope the
// caller lacks asks for it (the frontend turns that into a step-up).
func (a *Agent) Reply(_ context.Context, t pacta2a.Turn) (pacta2a.Reply, error) {
	text := strings.ToLower(t.Text)
	switch {
	case strings.Contains(text, "cancel"):
		return a.cancel(t, orderNumber(text)), nil
	case strings.Contains(text, "order"):
		return a.list(t), nil
	}
	msg := "Hi! This is the " + t.BrandID + " support agent. I can show your orders (say \"show my orders\") or cancel one (\"cancel order 1002\")."
	if d := t.Delegation; d != nil {
		msg += fmt.Sprintf(" You are signed in as %s; I may use: %s.", d.GetBrandUser(), strings.Join(d.GetScopes(), ", "))
	}
	return pacta2a.Reply{Text: msg}, nil
}

// lacks is the step-up reply when the turn may not use scope.
func lacks(t pacta2a.Turn, scope string) (pacta2a.Reply, bool) {
	if t.Delegation != nil && slices.Contains(t.Delegation.GetScopes(), scope) {
		return pacta2a.Reply{}, false
	}
	return pacta2a.Reply{NeedScopes: []string{scope},
		Text: "I cannot open customer accounts here, so please ask me about something else."}, true
}

func (a *Agent) list(t pacta2a.Turn) pacta2a.Reply {
	if r, ok := lacks(t, ScopeOrdersRead); ok {
		return r
	}
	user := t.Delegation.GetBrandUser()
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Your orders, %s:", user)
	for _, o := range a.of(t.BrandID, user) {
		fmt.Fprintf(&b, "\n- #%s %s: %s", o.id, o.item, o.status)
	}
	return pacta2a.Reply{Text: b.String(), ScopesUsed: []string{ScopeOrdersRead}, Actions: []pacta2a.Action{{Tool: "list_orders"}}}
}

func (a *Agent) cancel(t pacta2a.Turn, id string) pacta2a.Reply {
	if id == "" {
		return pacta2a.Reply{Text: "Which order should I cancel? Say for example \"cancel order 1002\"."}
	}
	if r, ok := lacks(t, ScopeOrdersCancel); ok {
		return r
	}
	if !mayCancel(t.Delegation, id) {
		// Resource-bound grant without this order: never the action; the
		// PA has to ask for it (a step-up names the scope, the PA sends
		// authorization_details for this order).
		return pacta2a.Reply{NeedScopes: []string{ScopeOrdersCancel},
			Text: "You allowed me to cancel only certain orders, and order #" + id + " is not one of them. " +
				"Please connect again and allow cancelling order #" + id + "."}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	used := []string{ScopeOrdersCancel}
	orders := a.of(t.BrandID, t.Delegation.GetBrandUser())
	i := slices.IndexFunc(orders, func(o order) bool { return o.id == id })
	switch {
	case i < 0:
		return pacta2a.Reply{Text: "I cannot find order #" + id + " in your account.", ScopesUsed: used}
	case orders[i].status != "processing":
		return pacta2a.Reply{Text: fmt.Sprintf("Order #%s is %s, so it can no longer be cancelled.", id, orders[i].status), ScopesUsed: used}
	}
	orders[i].status = "cancelled"
	return pacta2a.Reply{Text: fmt.Sprintf("Done: order #%s (%s) is cancelled.", id, orders[i].item), ScopesUsed: used,
		Actions: []pacta2a.Action{{Tool: "cancel_order", Args: map[string]string{"orderId": id}}}}
}

// mayCancel enforces the grant's authorization_details of OrderCancelType
// against the actual order: without any such entry the scope alone
// decides (a scope-only grant); with some, an entry for exactly this order
// with the action "cancel" must exist (union of exact orders).
func mayCancel(d *pactv1.DelegationInfo, orderID string) bool {
	bound := false
	for _, e := range d.GetAuthorizationDetails() {
		if e.GetType() != OrderCancelType {
			continue
		}
		bound = true
		var order, action bool
		for _, m := range e.GetMembers() {
			switch m.GetName() {
			case "order_id":
				order = !m.GetArray() && len(m.GetValues()) == 1 && m.GetValues()[0] == orderID
			case "actions":
				action = m.GetArray() && slices.Contains(m.GetValues(), "cancel")
			}
		}
		if order && action {
			return true
		}
	}
	return !bound
}

// orderNumber is the first run of three or more digits in s, or "".
func orderNumber(s string) string {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		if len(f) >= 3 {
			return f
		}
	}
	return ""
}

// of returns a User's orders, creating them on first use; a.mu is held.
func (a *Agent) of(brandID, user string) []order {
	key := brandID + "\x00" + user
	if _, ok := a.orders[key]; !ok {
		a.orders[key] = []order{
			{"1001", "Espresso beans, 1 kg", "delivered"},
			{"1002", "Milk frother", "processing"},
			{"1003", "Ceramic cups, set of 4", "shipped"},
		}
	}
	return a.orders[key]
}
