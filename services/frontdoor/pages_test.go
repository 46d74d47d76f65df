package frontdoor_test

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

const (
	alice = "Cookie: user=alice"
	bob   = "Cookie: user=bob"
	form  = "Content-Type: application/x-www-form-urlencoded"
)

// grant is a live grant of agent to alice at shop, made at created.
func grant(id, agent string, created time.Time, scopes []string, details ...*pactv1.ConsentAuthorizationDetail) *pactv1.Grant {
	return &pactv1.Grant{GrantId: id, BrandId: "shop", AgentId: agent, AgentDisplayName: "E2E PA", BrandUser: "alice", Scopes: scopes,
		CreateTime: timestamppb.New(created), ExpireTime: timestamppb.New(created.Add(90 * 24 * time.Hour)), AuthorizationDetails: details}
}

const (
	readID   = `<span class="id">orders:read</span>`
	cancelID = `<span class="id">orders:cancel</span>`
)

// state is the connected page's state of the PA E2E PA.
func state(s string) string { return `<h2>E2E PA</h2><span class="state">` + s + `</span>` }

// TestConnectedPageGroupsGrants: the connected page shows one entry per PA
// and never a permission twice for one PA. A step-up's grant
// {orders:read, orders:cancel} covers the older {orders:read}: one grant
// is listed with both scopes, "Active" (the older grant stays valid, and
// revoking the PA revokes both). Two disjoint live grants are two grants,
// "Active · 2 grants", as the e2e suite expects; the same scope under
// other authorization_details conditions is another permission. The
// revoke confirmation lists each scope once.
func TestConnectedPageGroupsGrants(t *testing.T) {
	e := newEnv(t, withSessions)
	now := e.clock.Now()
	detail := func(words string) *pactv1.ConsentAuthorizationDetail {
		return &pactv1.ConsentAuthorizationDetail{Scope: "orders:read", Words: words}
	}
	cases := []struct {
		name          string
		grants        []*pactv1.Grant // newest first, as ListGrants answers
		state         string
		listed        int // grants listed under the PA
		reads, cancel int // times each scope id is on the page
	}{
		{"step-up-covers-older", []*pactv1.Grant{
			grant("g2", "agt_1", now, []string{"orders:read", "orders:cancel"}),
			grant("g1", "agt_1", now.Add(-time.Hour), []string{"orders:read"}),
		}, "Active", 1, 1, 1},
		{"disjoint", []*pactv1.Grant{
			grant("g2", "agt_1", now, []string{"orders:cancel"}),
			grant("g1", "agt_1", now.Add(-time.Hour), []string{"orders:read"}),
		}, "Active · 2 grants", 2, 1, 1},
		{"same-scope-other-conditions", []*pactv1.Grant{
			grant("g2", "agt_1", now, []string{"orders:read"}, detail("Only order 1002")),
			grant("g1", "agt_1", now.Add(-time.Hour), []string{"orders:read"}, detail("Only order 1001")),
		}, "Active · 2 grants", 2, 2, 0},
		{"same-scope-same-conditions", []*pactv1.Grant{
			grant("g2", "agt_1", now, []string{"orders:read"}, detail("Only order 1001")),
			grant("g1", "agt_1", now.Add(-time.Hour), []string{"orders:read"}, detail("Only order 1001")),
		}, "Active", 1, 1, 0},
		{"partly-covered", []*pactv1.Grant{
			grant("g2", "agt_1", now, []string{"orders:read"}),
			grant("g1", "agt_1", now.Add(-time.Hour), []string{"orders:read", "orders:cancel"}),
		}, "Active · 2 grants", 2, 1, 1},
		{"single", []*pactv1.Grant{grant("g1", "agt_1", now, []string{"orders:read"})}, "Active", 1, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.deleg.setGrants(c.grants...)
			r := e.do(t, "GET", "/a2a/shop/oauth/connected", "", alice)
			wantPage(t, "connected", r, 200, state(c.state))
			if n := strings.Count(r.body, `<li class="pa"`); n != 1 {
				t.Errorf("%d entries for one PA", n)
			}
			if n := strings.Count(r.body, "<li>May:"); n != c.listed {
				t.Errorf("%d grants listed, want %d:\n%s", n, c.listed, r.body)
			}
			if strings.Count(r.body, readID) != c.reads || strings.Count(r.body, cancelID) != c.cancel {
				t.Errorf("orders:read %d times (want %d), orders:cancel %d (want %d):\n%s",
					strings.Count(r.body, readID), c.reads, strings.Count(r.body, cancelID), c.cancel, r.body)
			}
			confirm := e.do(t, "GET", "/a2a/shop/oauth/connected/revoke?agent_id=agt_1", "", alice)
			wantPage(t, "revoke confirmation", confirm, 200, "<h1>Revoke E2E PA?</h1>", "<strong>E2E PA</strong> will no longer be able to act for you")
			if strings.Count(confirm.body, readID) != c.reads || strings.Count(confirm.body, cancelID) != c.cancel {
				t.Errorf("revoke confirmation: orders:read %d times (want %d), orders:cancel %d (want %d):\n%s",
					strings.Count(confirm.body, readID), c.reads, strings.Count(confirm.body, cancelID), c.cancel, confirm.body)
			}
		})
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf is the anti-forgery token of a page's form.
func csrfOf(t *testing.T, r response) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(r.body)
	if r.status != 200 || m == nil {
		t.Fatalf("no CSRF token on the page: %d %s", r.status, r.body)
	}
	return m[1]
}

// TestRevokeRevokesEveryLiveGrantOfThePA: revoking a PA revokes each of
// its live grants, the one a newer grant hides on the page included, and
// no other PA's or User's; the connected page then names what was
// revoked.
func TestRevokeRevokesEveryLiveGrantOfThePA(t *testing.T) {
	e := newEnv(t, withSessions)
	now := e.clock.Now()
	other := grant("g9", "agt_1", now, []string{"orders:read"})
	other.BrandUser = "bob"
	e.deleg.setGrants(
		grant("g3", "agt_2", now, []string{"orders:read"}),
		grant("g2", "agt_1", now.Add(-time.Minute), []string{"orders:read", "orders:cancel"}),
		grant("g1", "agt_1", now.Add(-time.Hour), []string{"orders:read"}),
		other,
	)
	token := csrfOf(t, e.do(t, "GET", "/a2a/shop/oauth/connected/revoke?agent_id=agt_1", "", alice))
	r := e.do(t, "POST", "/a2a/shop/oauth/connected/revoke", "csrf="+token+"&agent_id=agt_1", alice, form)
	if r.status != 303 || r.header.Get("Location") != "/a2a/shop/oauth/connected?status=revoked&agent_id=agt_1" {
		t.Fatalf("revoke: %d %v %s", r.status, r.header, r.body)
	}
	if got := e.deleg.revokedIDs(); !slices.Equal(got, []string{"g2", "g1"}) {
		t.Fatalf("revoked %v, want [g2 g1]", got)
	}
	after := e.do(t, "GET", r.header.Get("Location"), "", alice)
	wantPage(t, "after revoking", after, 200, "Revoked: E2E PA can no longer act for you here.",
		"<li class=\"pa\" data-agent=\"agt_1\">\n"+`<div class="pa-head"><h2>E2E PA</h2><span class="state off">Revoked</span></div>`)
	// Nothing live is left to revoke: the confirmation says so.
	wantPage(t, "confirm again", e.do(t, "GET", "/a2a/shop/oauth/connected/revoke?agent_id=agt_1", "", alice), 404,
		"This assistant has no access to revoke.")
}

// TestStepUpPage: after a step-up the PA shows its User the consent page
// with step_up=… and no code yet; signed in at a trusted-frontend Brand,
// the User gets the "stepup" page (no code form, nothing waiting yet, a
// link to the connected page). Without step_up the page still asks for
// the code (RFC 8628's verification_uri); with a code it describes it.
func TestStepUpPage(t *testing.T) {
	e := newEnv(t, withSessions)
	r := e.do(t, "GET", "/a2a/shop/oauth/consent?step_up=t-1", "", alice)
	wantPage(t, "step-up", r, 200, "Nothing is waiting for your approval yet.",
		`<a href="https://provider.example/a2a/shop/oauth/connected">See your connected assistants</a>`, "Signed in as <strong>alice</strong>")
	if strings.Contains(r.body, "<form") || strings.Contains(r.body, "user_code") {
		t.Errorf("the step-up page has a code form:\n%s", r.body)
	}
	code := e.do(t, "GET", "/a2a/shop/oauth/consent", "", alice)
	wantPage(t, "code", code, 200, `<form method="get" action="https://provider.example/a2a/shop/oauth/consent">`, `name="user_code"`)
	if strings.Contains(code.body, "Nothing is waiting") {
		t.Errorf("the code page says nothing is waiting")
	}
	wantPage(t, "consent after a step-up", e.do(t, "GET", "/a2a/shop/oauth/consent?step_up=t-1&user_code="+pendingCode, "", alice), 200,
		"<h1>Allow <span class=\"agent\">E2E PA</span> to act for you at Shop?</h1>", `<strong class="usercode">`+pendingCode+`</strong>`)
	wantPage(t, "unknown code", e.do(t, "GET", "/a2a/shop/oauth/consent?user_code=XXXX-XXXX", "", alice), 404, "This code is unknown.")
}

// TestCSRFTokens: a page form's token is valid in the 12-hour window it
// was made in and the next one, and refused two windows later; it is
// refused for another Brand, another User, another purpose (another PA,
// or a consent token at the revoke form and back), without a token, and
// from another site. Each refusal is the 403 page and changes nothing;
// the controls pass with the right token.
func TestCSRFTokens(t *testing.T) {
	e := newEnv(t, withSessions)
	const window = 12 * time.Hour
	start := time.Unix(e.clock.Now().Unix()/int64(window.Seconds())*int64(window.Seconds())+60, 0)
	e.clock.Set(start)
	e.deleg.setGrants(grant("g1", "agt_1", start, []string{"orders:read"}), grant("g2", "agt_2", start, []string{"orders:read"}))
	revokeToken := csrfOf(t, e.do(t, "GET", "/a2a/shop/oauth/connected/revoke?agent_id=agt_1", "", alice))
	consentToken := csrfOf(t, e.do(t, "GET", "/a2a/shop/oauth/consent?user_code="+pendingCode, "", alice))
	revoke := func(brand, token, agent string, headers ...string) response {
		return e.do(t, "POST", "/a2a/"+brand+"/oauth/connected/revoke", "csrf="+token+"&agent_id="+agent, append([]string{form}, headers...)...)
	}
	decide := func(token string, headers ...string) response {
		return e.do(t, "POST", "/a2a/shop/oauth/consent/decision", "csrf="+token+"&user_code="+pendingCode+"&decision=allow&scope=orders:read",
			append([]string{form}, headers...)...)
	}
	refused := func(name string, r response) {
		t.Helper()
		wantPage(t, name, r, 403, "This form has expired or was not sent from this site.")
	}

	refused("fail/another-brand", revoke("mall", revokeToken, "agt_1", alice))
	refused("fail/another-user", revoke("shop", revokeToken, "agt_1", bob))
	refused("fail/another-agent", revoke("shop", revokeToken, "agt_2", alice))
	refused("fail/consent-token-at-revoke", revoke("shop", consentToken, "agt_1", alice))
	refused("fail/revoke-token-at-decision", decide(revokeToken, alice))
	refused("fail/no-token", revoke("shop", "", "agt_1", alice))
	refused("fail/truncated-token", revoke("shop", revokeToken[:len(revokeToken)-1], "agt_1", alice))
	refused("fail/cross-site", revoke("shop", revokeToken, "agt_1", alice, "Sec-Fetch-Site: cross-site"))
	refused("fail/cross-site-decision", decide(consentToken, alice, "Sec-Fetch-Site: cross-site"))
	e.clock.Set(start.Add(2 * window))
	refused("fail/two-windows-later", revoke("shop", revokeToken, "agt_1", alice))
	refused("fail/two-windows-later-decision", decide(consentToken, alice))
	if got, approved := e.deleg.revokedIDs(), e.deleg.approvals(); len(got) != 0 || len(approved) != 0 {
		t.Fatalf("a refused form changed something: revoked %v, approved %v", got, approved)
	}

	// The controls: in its window and the next, from this site.
	e.clock.Set(start.Add(window - time.Minute))
	if r := revoke("shop", revokeToken, "agt_1", alice, "Sec-Fetch-Site: same-origin"); r.status != 303 {
		t.Errorf("ok/same-window: %d %s", r.status, r.body)
	}
	e.clock.Set(start.Add(window))
	if r := revoke("shop", revokeToken, "agt_1", alice); r.status != 303 {
		t.Errorf("ok/next-window: %d %s", r.status, r.body)
	}
	if r := decide(consentToken, alice); r.status != 303 || r.header.Get("Location") != "/a2a/shop/oauth/connected?status=approved" {
		t.Errorf("ok/decision: %d %v %s", r.status, r.header, r.body)
	}
	approved := e.deleg.approvals()
	if len(approved) != 1 || approved[0].GetBrandUser() != "alice" || approved[0].GetUserCode() != pendingCode ||
		!slices.Equal(approved[0].GetScopes(), []string{"orders:read"}) || approved[0].GetBrandId() != "shop" {
		t.Errorf("ApproveConsent got %v", approved)
	}
	bobs := grant("g3", "agt_1", start, []string{"orders:read"})
	bobs.BrandUser = "bob"
	e.deleg.setGrants(bobs)
	bobToken := csrfOf(t, e.do(t, "GET", "/a2a/shop/oauth/connected/revoke?agent_id=agt_1", "", bob))
	if bobToken == revokeToken {
		t.Fatalf("alice and bob got the same token")
	}
	if r := revoke("shop", bobToken, "agt_1", bob); r.status != 303 || !slices.Contains(e.deleg.revokedIDs(), "g3") {
		t.Errorf("ok/bob's own token: %d %s", r.status, r.body)
	}
}

// TestSignedOutcomeScopeList: after a signed-assertion Brand's decision,
// the connected page names what was shared only when the link's scope is
// the Brand's own scope ids, each once, separated by single spaces: never
// free text someone put in a link, and never for another status.
func TestSignedOutcomeScopeList(t *testing.T) {
	e := newEnv(t)
	page := func(status, scope string) response {
		return e.do(t, "GET", "/a2a/mart/oauth/connected?status="+status+"&scope="+url.QueryEscape(scope), "")
	}
	for _, ok := range []string{"orders:read", "orders:read orders:cancel", "a orders:cancel orders:read"} {
		r := page("approved", ok)
		wantPage(t, "ok/"+ok, r, 200, "Done: your assistant is connected.", "<p>You shared:</p>",
			`<a href="https://provider.example/a2a/mart/oauth/connected">See all your connected assistants</a>`)
		for _, id := range strings.Split(ok, " ") {
			if strings.Count(r.body, `<span class="id">`+id+`</span>`) != 1 {
				t.Errorf("ok/%s: %s is not listed once:\n%s", ok, id, r.body)
			}
		}
	}
	for _, bad := range []string{"", "Your account is now connected, call 555", "orders:read  orders:cancel", " orders:read", "orders:read ",
		"orders:write", "orders:read\torders:cancel", "orders:read orders:read", "a a", strings.TrimSpace(strings.Repeat("a ", 50))} {
		r := page("approved", bad)
		wantPage(t, "fail/"+bad, r, 200, "Done: your assistant is connected.")
		if strings.Contains(r.body, "You shared") || strings.Contains(r.body, "call 555") {
			t.Errorf("fail/%q: listed:\n%s", bad, r.body)
		}
	}
	r := page("denied", "orders:read")
	wantPage(t, "fail/denied-with-scope", r, 200, "You denied the request: nothing new was shared.")
	if strings.Contains(r.body, "You shared") {
		t.Errorf("a denial lists scopes:\n%s", r.body)
	}
	// Without an outcome, the page sends the User to the Brand's login,
	// which returns to the connected page.
	r = e.do(t, "GET", "/a2a/mart/oauth/connected", "")
	if r.status != 303 || r.header.Get("Location") != "https://mart.example/login?return_to="+url.QueryEscape("https://provider.example/a2a/mart/oauth/connected") {
		t.Errorf("no outcome: %d %v", r.status, r.header)
	}
}
