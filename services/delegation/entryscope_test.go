package delegation_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/token/authzdetails"
)

// Each authorization_details entry is bound to the scope it was accepted
// under (PACT §5.7: "details are stored with the grant; a declined scope
// drops its details"; RFC 9396 §7: the grant carries exactly what the User
// approved, and the PA must be able to check that no condition was dropped
// and nothing was widened). The expected answers below follow from that
// rule alone, for Brand "rar" whose order-cancel type starts under
// orders:cancel and is then moved to orders:read (UpdateBrand allows it):
//
//   - grant G = orders:cancel restricted to cancel(1002) + orders:read
//     unrestricted. After the move G still restricts orders:cancel and
//     leaves orders:read unrestricted, so consent skipping must NOT cover
//     "orders:cancel" (unrestricted: wider than G) nor "orders:read
//     orders:cancel" with cancel(1002) (the entry is now recorded under
//     orders:read, so orders:cancel is asked unrestricted), and MUST cover
//     "orders:read" with or without cancel(1002) (G holds it unrestricted).
//   - a request made before the move (orders:read orders:cancel,
//     cancel(1003)) keeps its entry under orders:cancel: the consent page
//     lists it there; approving orders:cancel only keeps the restriction;
//     approving orders:read only drops the entry with the declined scope,
//     exactly as the page showed it.
//   - refresh carries G's details unchanged, and the connected page lists
//     G's entry under orders:cancel, before and after the move.
//   - a type removed from the Brand: G's entry still restricts
//     orders:cancel (a skip of orders:cancel unrestricted is refused, of
//     orders:read allowed), refresh is unchanged, ListGrants words the entry
//     by its URI and members under orders:cancel, and a pending request's
//     entry is kept or dropped by its recorded scope.

// setCancelType declares the order-cancel type under scope (removed when
// scope is ""), keeping the profile type.
func setCancelType(t *testing.T, s db.Store, scope string) {
	t.Helper()
	b, err := s.GetBrand(t.Context(), "rar")
	if err != nil {
		t.Fatal(err)
	}
	var types []authzdetails.Type
	for _, ty := range b.Delegation.AuthorizationDetailsTypes {
		if ty.Type != cancelType {
			types = append(types, ty)
		}
	}
	if scope != "" {
		types = append(types, cancelTypeUnder(scope))
	}
	b.Delegation.AuthorizationDetailsTypes = types
	if _, err := s.UpdateBrand(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

// cancelTypeUnder is seedRAR's order-cancel type with another scope.
func cancelTypeUnder(scope string) authzdetails.Type {
	return authzdetails.Type{Type: cancelType, Description: "Cancel an order", Scope: scope, Combination: authzdetails.CombineUnion,
		Fields: []authzdetails.Field{
			{Name: "order_id", Kind: authzdetails.KindString, Required: true, Label: "order", Pattern: `^[0-9]{4}$`},
			{Name: "actions", Kind: authzdetails.KindEnumArray, Required: true, Label: "actions", Values: []string{"cancel"}},
		}}
}

// canonCancel is cancelEntry's canonical form, as stored.
func canonCancel(order string) string {
	return `{"actions":["cancel"],"order_id":"` + order + `","type":"` + cancelType + `"}`
}

// rarRequest starts a device authorization at rar (details "" for none)
// and returns its device and user codes.
func rarRequest(t *testing.T, e *env, scope, details string) (dc, uc string) {
	t.Helper()
	form := rarForm(scope, details)
	if details == "" {
		form.Del("authorization_details")
	}
	r := e.post("rar", "device_authorization", paAuth, form)
	if r.status != http.StatusOK {
		t.Fatalf("device authorization %q %s: %d %s", scope, details, r.status, r.body)
	}
	m := r.json(t)
	return m["device_code"].(string), m["user_code"].(string)
}

// grantEntries is a stored grant's details and their recorded scopes.
func grantEntries(t *testing.T, s db.Store, id string) (string, []string) {
	t.Helper()
	g, err := s.GetGrant(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return g.AuthorizationDetails, g.AuthorizationDetailsScopes
}

// tokenDetails redeems or refreshes at rar and returns the token response's
// authorization_details (raw JSON, "" when absent) and its refresh token.
func tokenDetails(t *testing.T, e *env, form url.Values) (string, string) {
	t.Helper()
	r := e.post("rar", "token", paAuth, form)
	if r.status != http.StatusOK {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	var body struct {
		RefreshToken         string          `json:"refresh_token"`
		AuthorizationDetails json.RawMessage `json:"authorization_details"`
	}
	if err := json.Unmarshal([]byte(r.body), &body); err != nil {
		t.Fatal(err)
	}
	return string(body.AuthorizationDetails), body.RefreshToken
}

// listedDetails is ListGrants' view of a User's first (oldest) grant's
// entries: "scope | words" each.
func listedDetails(t *testing.T, e *env, user string) []string {
	t.Helper()
	list, err := e.rpc.ListGrants(t.Context(), &pactv1.ListGrantsRequest{BrandId: "rar", BrandUser: user})
	if err != nil || len(list.GetGrants()) == 0 {
		t.Fatalf("ListGrants(%s) = %v, %v", user, list, err)
	}
	var out []string
	for _, d := range list.GetGrants()[len(list.GetGrants())-1].GetAuthorizationDetails() {
		out = append(out, d.GetScope()+" | "+d.GetWords())
	}
	return out
}

// A Brand moving a type to another scope never widens a skip or drops a
// restriction; nor does removing the type. The cases and their answers are
// derived in the comment above.
func TestBrandMovingATypeNeverWidensASkipOrDropsARestriction(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		seedRAR(t, s)
		skipConsent(t, s, "rar", true)
		ctx := t.Context()
		covered := func(scope, details string) bool {
			t.Helper()
			_, uc := rarRequest(t, e, scope, details)
			res, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "rar", UserCode: uc, BrandUser: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			return res.GetCoveredByGrant()
		}
		one := func(order string) string { return "[" + cancelEntry(order) + "]" }

		// G: orders:cancel restricted to order 1002, orders:read unrestricted.
		gdc, guc := rarRequest(t, e, "orders:read orders:cancel", one("1002"))
		g, err := e.approve("rar", guc, "alice", "orders:read", "orders:cancel")
		if err != nil {
			t.Fatal(err)
		}
		wantG := "[" + canonCancel("1002") + "]"
		if det, sc := grantEntries(t, s, g.GetGrantId()); det != wantG || !slices.Equal(sc, []string{"orders:cancel"}) {
			t.Fatalf("G = %s %q; want %s under orders:cancel", det, sc, wantG)
		}
		tok, rt := tokenDetails(t, e, deviceGrant(gdc, paIssuer))
		if tok != wantG {
			t.Fatalf("G's token details = %s; want %s", tok, wantG)
		}
		wantListed := []string{"orders:cancel | Cancel an order: order 1002; actions cancel"}
		if got := listedDetails(t, e, "alice"); fmt.Sprint(got) != fmt.Sprint(wantListed) {
			t.Fatalf("ListGrants before the move = %q; want %q", got, wantListed)
		}
		// Controls before the move: the restriction holds, the rest is covered.
		if covered("orders:cancel", "") || !covered("orders:cancel", one("1002")) || !covered("orders:read", "") {
			t.Fatal("controls before the move: wrong coverage")
		}
		// Requests pending across the move.
		_, p1 := rarRequest(t, e, "orders:read orders:cancel", one("1003"))
		_, p2 := rarRequest(t, e, "orders:read orders:cancel", one("1003"))

		setCancelType(t, s, "orders:read")

		// Skip: never wider than G.
		for name, c := range map[string]bool{
			"fail/cancel-unrestricted":              covered("orders:cancel", ""),
			"fail/cancel-unrestricted-beside-entry": covered("orders:read orders:cancel", one("1002")),
		} {
			if c {
				t.Fatalf("%s: a request wider than the grant is covered", name)
			}
		}
		if !covered("orders:read", "") || !covered("orders:read", one("1002")) || !covered("orders:read", one("1003")) {
			t.Fatal("ok/read: G holds orders:read unrestricted, but a request of it is not covered")
		}
		// An actual skip of the widening request is refused and changes nothing.
		wdc, wuc := rarRequest(t, e, "orders:cancel", "")
		if _, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "rar", UserCode: wuc, BrandUser: "alice",
			SkipConsent: true}); rpcerr.Reason(err) != "ERROR_REASON_FAILED_PRECONDITION" {
			t.Fatalf("fail/skip-cancel-unrestricted: %v; want ERROR_REASON_FAILED_PRECONDITION", err)
		}
		if st := e.status("rar", wdc); st != db.DevicePending {
			t.Fatalf("a refused skip changed the request: %v", st)
		}
		// A covered one is approved with exactly what it asks, its entry
		// recorded under the scope it was requested under (orders:read now).
		_, suc := rarRequest(t, e, "orders:read", one("1002"))
		sk, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "rar", UserCode: suc, BrandUser: "alice", SkipConsent: true})
		if err != nil {
			t.Fatalf("ok/skip-read-with-entry: %v", err)
		}
		if det, sc := grantEntries(t, s, sk.GetGrantId()); det != wantG || !slices.Equal(sc, []string{"orders:read"}) {
			t.Fatalf("the skipped grant = %s %q; want %s under orders:read", det, sc, wantG)
		}

		// A request pending across the move keeps its entry under orders:cancel.
		dsc, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "rar", UserCode: p1})
		if err != nil || len(dsc.GetAuthorizationDetails()) != 1 || dsc.GetAuthorizationDetails()[0].GetScope() != "orders:cancel" {
			t.Fatalf("consent page after the move = %v, %v; want the entry under orders:cancel", dsc.GetAuthorizationDetails(), err)
		}
		// Approving orders:cancel only keeps the PA's restriction.
		a1, err := e.approve("rar", p1, "bob", "orders:cancel")
		want1003 := "[" + canonCancel("1003") + "]"
		if err != nil || a1.GetAuthorizationDetailsJson() != want1003 {
			t.Fatalf("approve orders:cancel only = %v, %v; want the restriction %s kept", a1, err, want1003)
		}
		if det, sc := grantEntries(t, s, a1.GetGrantId()); det != want1003 || !slices.Equal(sc, []string{"orders:cancel"}) {
			t.Fatalf("grant of orders:cancel only = %s %q", det, sc)
		}
		// Approving orders:read only drops the entry with orders:cancel, as
		// the page showed.
		a2, err := e.approve("rar", p2, "bob", "orders:read")
		if err != nil || a2.GetAuthorizationDetailsJson() != "" {
			t.Fatalf("approve orders:read only = %v, %v; want no details", a2, err)
		}
		if det, sc := grantEntries(t, s, a2.GetGrantId()); det != "" || len(sc) != 0 {
			t.Fatalf("grant of orders:read only = %s %q; want none", det, sc)
		}

		// Refresh and the connected page: G as it was.
		tok, rt = tokenDetails(t, e, refreshGrant(rt, paIssuer))
		if tok != wantG {
			t.Fatalf("refresh after the move = %s; want %s", tok, wantG)
		}
		if det, sc := grantEntries(t, s, g.GetGrantId()); det != wantG || !slices.Equal(sc, []string{"orders:cancel"}) {
			t.Fatalf("G after the move = %s %q", det, sc)
		}
		if got := listedDetails(t, e, "alice"); fmt.Sprint(got) != fmt.Sprint(wantListed) {
			t.Fatalf("ListGrants after the move = %q; want %q", got, wantListed)
		}

		// The type removed from the Brand.
		_, p3 := rarRequest(t, e, "orders:read", one("1004")) // under orders:read, the mapping now
		setCancelType(t, s, "")
		if covered("orders:cancel", "") {
			t.Fatal("fail/removed-type: orders:cancel unrestricted is covered by a grant that restricts it")
		}
		if !covered("orders:read", "") {
			t.Fatal("ok/removed-type: orders:read (unrestricted in G) is not covered")
		}
		if tok, _ = tokenDetails(t, e, refreshGrant(rt, paIssuer)); tok != wantG {
			t.Fatalf("refresh after the removal = %s; want %s", tok, wantG)
		}
		wantRemoved := []string{"orders:cancel | " + cancelType + ": actions cancel; order_id 1002"}
		if got := listedDetails(t, e, "alice"); fmt.Sprint(got) != fmt.Sprint(wantRemoved) {
			t.Fatalf("ListGrants after the removal = %q; want %q", got, wantRemoved)
		}
		a3, err := e.approve("rar", p3, "carol", "orders:read")
		if err != nil || a3.GetAuthorizationDetailsJson() != "["+canonCancel("1004")+"]" {
			t.Fatalf("approve a request of the removed type = %v, %v; want its entry kept under orders:read", a3, err)
		}
	})
}

// A Brand update racing a pending request (PACT §5.7 with UpdateBrand
// moving the order-cancel type from orders:cancel to orders:read). Decided
// and documented: a request is judged by the mapping it was validated
// under, when the PA asked. So, whatever the interleaving:
//
//   - device authorization vs the move: the request (orders:cancel with a
//     cancel entry) is either accepted with its entry recorded under
//     orders:cancel (validated before the move) or refused
//     invalid_authorization_details naming orders:read (after it) and
//     stores nothing; never accepted with the entry under orders:read.
//   - approval of orders:cancel vs the move, with DescribeConsent reading
//     meanwhile: the page always lists the entry under orders:cancel, and
//     the grant, its token and refresh always carry the entry under
//     orders:cancel; never a grant of orders:cancel without it.
func TestBrandUpdateRacesAPendingRequest(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		s := newStore(t)
		e := newEnv(t, s)
		seedRAR(t, s)
		ctx := t.Context()
		const rounds = 15
		details := "[" + cancelEntry("1002") + "]"
		accepted, refused := 0, 0
		for i := range rounds {
			setCancelType(t, s, "orders:cancel")
			var wg sync.WaitGroup
			var res *pactv1.StartDeviceAuthorizationResponse
			var startErr, moveErr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				res, startErr = e.rpc.StartDeviceAuthorization(ctx, &pactv1.StartDeviceAuthorizationRequest{BrandId: "rar",
					Authorization: paAuth, ClientId: paIssuer, Scope: "orders:cancel", AuthorizationDetails: &details})
			}()
			go func() { defer wg.Done(); moveErr = moveCancelType(t, s, "orders:read") }()
			wg.Wait()
			if startErr != nil || moveErr != nil {
				t.Fatalf("round %d: start %v, move %v", i, startErr, moveErr)
			}
			if oe := res.GetError(); oe != nil {
				if oe.GetError() != "invalid_authorization_details" || !strings.Contains(oe.GetErrorDescription(), `"orders:read"`) {
					t.Fatalf("round %d: refused with %v; want invalid_authorization_details naming orders:read", i, oe)
				}
				refused++
			} else {
				d, err := s.GetDeviceAuthorizationByDeviceCode(ctx, "rar", deviceHash(res.GetDeviceCode()))
				if err != nil || !slices.Equal(d.AuthorizationDetailsScopes, []string{"orders:cancel"}) {
					t.Fatalf("round %d: accepted with recorded scopes %q, %v; want orders:cancel", i, d.AuthorizationDetailsScopes, err)
				}
				accepted++
			}
			// Accepted requests stay pending; a refused one stored nothing.
			if _, atBrand, err := s.CountPendingDeviceAuthorizations(ctx, "agt_1", "rar", e.clk.Now()); err != nil || atBrand != int64(accepted) {
				t.Fatalf("round %d: %d pending, %v; want %d (a refusal stored a request)", i, atBrand, err, accepted)
			}
		}
		t.Logf("device authorization vs the move: %d accepted under the old mapping, %d refused under the new", accepted, refused)

		want := "[" + canonCancel("1002") + "]"
		for i := range rounds {
			setCancelType(t, s, "orders:cancel")
			dc, uc := rarRequest(t, e, "orders:read orders:cancel", details)
			var wg sync.WaitGroup
			var ap *pactv1.ApproveConsentResponse
			var apErr, moveErr error
			pages := make([]*pactv1.DescribeConsentResponse, 3)
			pageErrs := make([]error, 3)
			wg.Add(2 + len(pages))
			go func() {
				defer wg.Done()
				ap, apErr = e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "rar", UserCode: uc,
					BrandUser: fmt.Sprintf("racer-%d", i), Scopes: []string{"orders:cancel"}})
			}()
			go func() { defer wg.Done(); moveErr = moveCancelType(t, s, "orders:read") }()
			for j := range pages {
				go func() {
					defer wg.Done()
					pages[j], pageErrs[j] = e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "rar", UserCode: uc})
				}()
			}
			wg.Wait()
			if apErr != nil || moveErr != nil {
				t.Fatalf("round %d: approve %v, move %v", i, apErr, moveErr)
			}
			for j, p := range pages {
				if pageErrs[j] != nil { // decided before this read: FailedPrecondition, nothing shown
					if rpcerr.Reason(pageErrs[j]) != "ERROR_REASON_FAILED_PRECONDITION" {
						t.Fatalf("round %d: consent page: %v", i, pageErrs[j])
					}
					continue
				}
				if ds := p.GetAuthorizationDetails(); len(ds) != 1 || ds[0].GetScope() != "orders:cancel" {
					t.Fatalf("round %d: the consent page lists %v; want the entry under orders:cancel", i, ds)
				}
			}
			if ap.GetAuthorizationDetailsJson() != want {
				t.Fatalf("round %d: approval details %q; want %s (a grant of orders:cancel without its restriction is the mix)", i, ap.GetAuthorizationDetailsJson(), want)
			}
			if det, sc := grantEntries(t, s, ap.GetGrantId()); det != want || !slices.Equal(sc, []string{"orders:cancel"}) {
				t.Fatalf("round %d: grant %s %q; want %s under orders:cancel", i, det, sc, want)
			}
			tok, rt := tokenDetails(t, e, deviceGrant(dc, paIssuer))
			if tok != want {
				t.Fatalf("round %d: token details %s; want %s", i, tok, want)
			}
			if tok, _ = tokenDetails(t, e, refreshGrant(rt, paIssuer)); tok != want {
				t.Fatalf("round %d: refreshed details %s; want %s", i, tok, want)
			}
		}
	})
}

// moveCancelType is setCancelType for a goroutine: the error instead of
// t.Fatal.
func moveCancelType(t *testing.T, s db.Store, scope string) error {
	b, err := s.GetBrand(t.Context(), "rar")
	if err != nil {
		return err
	}
	var types []authzdetails.Type
	for _, ty := range b.Delegation.AuthorizationDetailsTypes {
		if ty.Type != cancelType {
			types = append(types, ty)
		}
	}
	b.Delegation.AuthorizationDetailsTypes = append(types, cancelTypeUnder(scope))
	_, err = s.UpdateBrand(t.Context(), b)
	return err
}
