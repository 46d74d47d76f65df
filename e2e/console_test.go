package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/frontends/demo"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

// PACT_CONSOLE_SCREENSHOTS names a directory (relative to the repository's
// root, e.g. docs/console) the console's browser test writes its
// screenshots to, at desktop and phone widths. Unset, nothing is written;
// every page is screenshotted and checked either way.
const consoleShotsEnv = "PACT_CONSOLE_SCREENSHOTS"

// consoleWorld is a pactd with its console on, and what the test put in
// it through the RPCs: the PA "E2E PA" with a grant of alice at shop and a
// signed receipt, and a second PA that registered itself, pending.
type consoleWorld struct {
	url                string // the console
	rpc                *endpoint
	agents             pactv1connect.AgentServiceClient
	deleg              pactv1connect.DelegationServiceClient
	agentID, pendingID string
	grantID            string
	tokens             pactv1connect.TokenServiceClient
	issuer             string // the PA's
}

func newConsoleWorld(t *testing.T) *consoleWorld {
	t.Helper()
	const public = "https://provider.example"
	cfg, err := config.Load(nil, []string{"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + frontendToken,
		"PACT_DATA_DIR=" + t.TempDir(), "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off", "PACT_CONSOLE_LISTEN=127.0.0.1:0",
		"PACT_PUBLIC_URL=" + public, "PACT_DEV=true", "PACT_SELF_REGISTRATION=pending"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Served as pactd serves: the API and the console each on its own
	// listener, the replica's heartbeat running.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Build(t.Context(), cfg, server.Deps{Listeners: server.Listeners{API: ln, Console: cln}})
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Run(serveCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	rpc := &endpoint{client: http.DefaultClient, url: "http://" + ln.Addr().String()}
	w := &consoleWorld{url: "http://" + cln.Addr().String(), rpc: rpc,
		agents: pactv1connect.NewAgentServiceClient(rpc.client, rpc.url, bearer(adminToken)),
		deleg:  pactv1connect.NewDelegationServiceClient(rpc.client, rpc.url, bearer(frontendToken))}
	ctx := t.Context()
	brands := pactv1connect.NewBrandServiceClient(rpc.client, rpc.url, bearer(adminToken))
	if _, err := brands.CreateBrand(ctx, demo.BrandRequest(shop, "Shop Inc.", public)); err != nil {
		t.Fatal(err)
	}
	if _, err := brands.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "ACME Inc.", Description: "Support for acme"}); err != nil {
		t.Fatal(err)
	}
	pa := newPA(t)
	reg, err := w.agents.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: pa.jwks.URL, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "E2E PA"})
	if err != nil {
		t.Fatal(err)
	}
	w.agentID = reg.GetAgent().GetId()
	jwt := func() string {
		now := time.Now().Unix()
		return "Bearer " + pa.sign(t, "ES256", pa.kid, map[string]any{"iss": pa.jwks.URL, "sub": "alice", "aud": public + "/a2a", "iat": now, "exp": now + 120})
	}
	approve := func(user string) *pactv1.StartDeviceAuthorizationResponse {
		t.Helper()
		dev, err := w.deleg.StartDeviceAuthorization(ctx, &pactv1.StartDeviceAuthorizationRequest{BrandId: shop, Authorization: jwt(), ClientId: pa.jwks.URL,
			Scope: "orders:read orders:cancel"})
		if err != nil || dev.GetError() != nil {
			t.Fatalf("StartDeviceAuthorization: %v %v", dev, err)
		}
		if _, err := w.deleg.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: shop, UserCode: dev.GetUserCode(), BrandUser: user,
			Scopes: []string{"orders:read", "orders:cancel"}}); err != nil {
			t.Fatal(err)
		}
		return dev
	}
	dev := approve("alice")
	if tok, err := w.deleg.IssueDelegation(ctx, &pactv1.IssueDelegationRequest{BrandId: shop, Authorization: jwt(), ClientId: pa.jwks.URL,
		GrantType: "urn:ietf:params:oauth:grant-type:device_code", DeviceCode: dev.GetDeviceCode()}); err != nil || tok.GetAccessToken() == "" {
		t.Fatalf("IssueDelegation: %v %v", tok, err)
	}
	w.grantID = w.grants(t)[0].GetGrantId()
	w.tokens, w.issuer = pactv1connect.NewTokenServiceClient(rpc.client, rpc.url, bearer(frontendToken)), pa.jwks.URL
	w.receipt(t, "alice", w.grantID)
	// bob's grant and 51 receipts of it: two pages of the trail.
	approve("bob")
	bob, err := w.deleg.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: shop, BrandUser: "bob"})
	if err != nil || len(bob.GetGrants()) != 1 {
		t.Fatalf("bob's grants: %v %v", bob, err)
	}
	for range 51 {
		w.receipt(t, "bob", bob.GetGrants()[0].GetGrantId())
	}
	// A PA registers itself; PACT_SELF_REGISTRATION=pending leaves it disabled.
	self := newPA(t)
	now := time.Now().Unix()
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	endpoint := public + "/api/platforms"
	regJWT := self.sign(t, "ES256", self.kid, map[string]any{"iss": self.jwks.URL, "sub": self.jwks.URL, "aud": endpoint, "iat": now, "exp": now + 120, "jti": hex.EncodeToString(jti)})
	sr, err := pactv1connect.NewAgentServiceClient(rpc.client, rpc.url, bearer(frontendToken)).SelfRegisterAgent(ctx, &pactv1.SelfRegisterAgentRequest{
		Token: regJWT, Name: "helper-pa", JwksUri: self.jwks.URL + "/jwks.json", EndpointUrl: endpoint})
	if err != nil || sr.GetResult() != pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CREATED || sr.GetAgent().GetEnabled() {
		t.Fatalf("SelfRegisterAgent: %v %v", sr, err)
	}
	w.pendingID = sr.GetAgent().GetId()
	return w
}

// receipt has pactd sign a receipt of a User's grant (an audit event).
func (w *consoleWorld) receipt(t *testing.T, user, grantID string) {
	t.Helper()
	if _, err := w.tokens.SignReceipt(t.Context(), &pactv1.SignReceiptRequest{BrandId: shop, GrantId: grantID, ScopesUsed: []string{"orders:read"},
		Actions: []*pactv1.ReceiptAction{{Tool: "orders.list"}}, Ts: timestamppb.Now(), PaIssuer: w.issuer, BrandUser: user}); err != nil {
		t.Fatalf("SignReceipt: %v", err)
	}
}

// endpoint is pactd's API port.
type endpoint struct {
	client *http.Client
	url    string
}

// grants are alice's grants at shop, as the RPC says.
func (w *consoleWorld) grants(t *testing.T) []*pactv1.Grant {
	t.Helper()
	res, err := w.deleg.ListGrants(t.Context(), &pactv1.ListGrantsRequest{BrandId: shop, BrandUser: "alice"})
	if err != nil || len(res.GetGrants()) == 0 {
		t.Fatalf("ListGrants: %v %v", res, err)
	}
	return res.GetGrants()
}

// agent is one PA as the RPC says.
func (w *consoleWorld) agent(t *testing.T, id string) *pactv1.Agent {
	t.Helper()
	res, err := w.agents.GetAgent(t.Context(), &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: id}})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetAgent()
}

// text is the trimmed text of the first element a selector finds ("" for
// none).
func (p *page) text(selector string) string {
	p.t.Helper()
	var s string
	if err := p.eval(`(document.querySelector(`+jsString(selector)+`)?.textContent ?? "").trim()`, &s); err != nil {
		p.t.Fatal(err)
	}
	return s
}

// key presses one key (Tab, Enter) as a keyboard does; text is what the
// key types ("\r" for Enter, none for Tab).
func (p *page) key(name string, code int, text string) {
	p.t.Helper()
	down := map[string]any{"type": "rawKeyDown", "key": name, "code": name, "windowsVirtualKeyCode": code}
	if text != "" {
		down["type"], down["text"] = "keyDown", text
	}
	p.do("Input.dispatchKeyEvent", down)
	p.do("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": name, "code": name, "windowsVirtualKeyCode": code})
}

// tabReachesEverything presses Tab through the page and fails unless
// focus reached every control (links, buttons, inputs, selects, text
// areas; a radio group is one stop, its choices moved between with the
// arrow keys), each showing a visible focus outline. A date input takes
// one Tab per part, so the walk allows several per control.
func (p *page) tabReachesEverything(name string) {
	p.t.Helper()
	var n int
	if err := p.eval(`(window.__controls = [...document.querySelectorAll("a[href], button, input:not([type=hidden]), select, textarea")]
		.filter(e => !e.disabled && !(e.type === "radio" && !e.checked && document.querySelector("input[type=radio][name='" + e.name + "']:checked")))).length`, &n); err != nil {
		p.t.Fatal(err)
	}
	p.run(`document.activeElement?.blur(); window.scrollTo(0, 0)`)
	seen := map[int]bool{}
	var unstyled []string
	for i := 0; i < 4*n+5 && len(seen) < n; i++ {
		p.key("Tab", 9, "")
		var at struct {
			Index   int
			Outline string
			Tag     string
		}
		if err := p.eval(`({index: window.__controls.indexOf(document.activeElement),
			outline: getComputedStyle(document.activeElement).outlineStyle, tag: document.activeElement.outerHTML.slice(0, 80)})`, &at); err != nil {
			p.t.Fatal(err)
		}
		if at.Index >= 0 {
			seen[at.Index] = true
			if at.Outline == "none" {
				unstyled = append(unstyled, at.Tag)
			}
		}
	}
	if len(seen) != n || len(unstyled) > 0 {
		p.t.Errorf("%s: Tab reached %d of %d controls; focused without an outline: %q", name, len(seen), n, unstyled)
	}
}

// pageShot is a PNG of the whole page at the viewport's width (a table
// that scrolls in its own box would widen Page.captureScreenshot's own
// beyond-the-viewport size).
func (p *page) pageShot(width int) []byte {
	p.t.Helper()
	var height float64
	if err := p.eval(`document.documentElement.scrollHeight`, &height); err != nil {
		p.t.Fatal(err)
	}
	var shot struct{ Data []byte }
	if err := json.Unmarshal(p.do("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}), &shot); err != nil {
		p.t.Fatal(err)
	}
	return shot.Data
}

// shootConsole screenshots a console page at 1024 px and at a phone's
// 390 px, checks that the page body never scrolls sideways (tables scroll
// in their own box), and writes both when PACT_CONSOLE_SCREENSHOTS is set.
func shootConsole(t *testing.T, p *page, name string) {
	t.Helper()
	p.run(`document.activeElement?.blur()`)
	for _, size := range []struct {
		suffix        string
		width, height int
		mobile        bool
	}{{"desktop", 1024, 768, false}, {"phone", 390, 844, true}} {
		p.viewport(size.width, size.height, size.mobile)
		var wide bool
		if err := p.eval(`document.documentElement.scrollWidth > innerWidth || document.body.scrollWidth > innerWidth`, &wide); err != nil {
			t.Fatal(err)
		}
		if wide {
			t.Errorf("console %s at %dpx: the page scrolls sideways", name, size.width)
		}
		shot := p.pageShot(size.width)
		if img, err := png.Decode(bytes.NewReader(shot)); err != nil || img.Bounds().Dx() < size.width {
			t.Fatalf("%s screenshot at %dpx: %v", name, size.width, err)
		}
		if dir := os.Getenv(consoleShotsEnv); dir != "" {
			if !filepath.IsAbs(dir) {
				dir = filepath.Join("..", dir) // the test runs in e2e/
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+"-"+size.suffix+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.viewport(1024, 768, false)
}

// TestBrowserConsole drives the operator console in headless Chromium as
// an operator does, by keyboard where it matters: sign in with the admin
// credential, read the overview, change a Brand's PA policy and list,
// approve a pending self-registered PA, find alice's grant and revoke it
// after a confirmation that names what is lost, follow the audit trail to
// a receipt, create a credential (shown once) and revoke it; a form sent
// without its anti-forgery token is refused and changes nothing, and after
// signing out the old session cookie opens nothing. Each page is
// screenshotted at 1024 and 390 px.
func TestBrowserConsole(t *testing.T) {
	started := time.Now()
	p := chromium(t)
	w := newConsoleWorld(t)
	p.viewport(1024, 768, false)

	// Sign in, by keyboard: the token field, then Enter.
	p.open(w.url+"/", "/login")
	p.tabReachesEverything("sign-in")
	shootConsole(t, p, "login")
	p.typeInto("#token", adminToken)
	p.key("Enter", 13, "\r")
	p.waitFor(`location.pathname === "/" && document.querySelector("h1")?.textContent === "Overview"`)
	// The replica's first heartbeat is written as Serve starts; reload
	// until it shows.
	for range 50 {
		if strings.Contains(p.text("[aria-labelledby=replicas] tbody"), "(this one)") {
			break
		}
		time.Sleep(100 * time.Millisecond)
		p.open(w.url+"/", "/")
	}
	var facts struct {
		Keys, Replicas int
		Counts         []string
	}
	if err := p.eval(`({keys: [...document.querySelectorAll("[aria-labelledby=keys] tbody tr .state")].filter(s => s.textContent === "active").length,
		replicas: [...document.querySelectorAll("[aria-labelledby=replicas] tbody td")].filter(td => td.textContent.includes("(this one)")).length,
		counts: [...document.querySelectorAll("[aria-labelledby=counts] dt, [aria-labelledby=counts] dd")].map(e => e.textContent)})`, &facts); err != nil {
		t.Fatal(err)
	}
	if facts.Keys != 1 || facts.Replicas != 1 || strings.Join(facts.Counts, "|") != "PAs|2 (1 disabled; 1 waiting for approval)|Brands|2|Live grants|2|Live credentials|2" {
		t.Fatalf("overview %+v", facts)
	}
	p.tabReachesEverything("overview")
	shootConsole(t, p, "overview")

	// Brands: the wording, then the PA policy and list.
	p.open(w.url+"/brands", "/brands")
	shootConsole(t, p, "brands")
	p.click(`a[href="/brands/shop"]`)
	p.waitFor(`location.pathname === "/brands/shop"`)
	if got := p.text(`[aria-labelledby=scopes] tbody tr td:nth-child(2)`); got != "See your orders and their delivery status" {
		t.Fatalf("the first scope's wording: %q", got)
	}
	p.click(`#policy-listed`)
	p.click(`form[action="/brands/shop/policy"] button`)
	p.waitFor(`location.search === "?done=policy"`)
	p.run(`document.querySelector("#agent_id").value = ` + jsString(w.agentID))
	p.click(`form[action="/brands/shop/agents"] button`)
	p.waitFor(`location.search === "?done=listed"`)
	if got := p.text(`[aria-labelledby=pas] table tbody tr td .name`); got != "E2E PA" || p.text(".status") != "The PA is on the Brand's list." {
		t.Fatalf("the Brand's list after adding: %q, status %q", got, p.text(".status"))
	}
	// The consent wording: a refused edit shows the Brand service's
	// reason and keeps what was typed; a good one is saved.
	p.run(`document.querySelector("#b-scopes").value = "orders:read = See your orders\nbad scope = x"`)
	p.click(`form[action="/brands/shop"] button`)
	p.waitFor(`document.querySelector(".error")`)
	if got := p.text(".error"); !strings.HasPrefix(got, "Refused (invalid_argument): invalid request: brand.delegation.scopes") ||
		!strings.Contains(p.text("#b-scopes"), "bad scope = x") {
		t.Fatalf("a refused edit: %q", got)
	}
	p.run(`document.querySelector("#b-scopes").value = "orders:read = See your orders and where they are\norders:cancel = Cancel your orders that have not shipped yet"`)
	p.click(`form[action="/brands/shop"] button`)
	p.waitFor(`location.search === "?done=updated"`)
	if got := p.text(`[aria-labelledby=scopes] tbody tr td:nth-child(2)`); got != "See your orders and where they are" {
		t.Fatalf("the wording after the edit: %q", got)
	}
	p.tabReachesEverything("brand")
	shootConsole(t, p, "brand")

	// PAs: approve the pending self-registration.
	p.open(w.url+"/agents", "/agents")
	if got := p.text(`[aria-labelledby=pending] tbody td .name`); got != "helper-pa" {
		t.Fatalf("pending: %q", got)
	}
	shootConsole(t, p, "agents")
	p.click(`form[action="/agents/` + w.pendingID + `/approve"] button`)
	p.waitFor(`location.search === "?done=approved"`)
	if !w.agent(t, w.pendingID).GetEnabled() || p.text(`[aria-labelledby=pending] tbody td`) != "None." {
		t.Fatalf("approving did not enable the PA, or it is still listed as pending")
	}

	// Refused without the anti-forgery token: nothing changes.
	p.run(`document.querySelector('form[action="/agents/` + w.agentID + `/disable"] input[name=csrf]').remove()`)
	p.click(`form[action="/agents/` + w.agentID + `/disable"] button`)
	p.waitFor(`document.querySelector("h1")?.textContent === "Refused"`)
	if got := p.text(".error"); got != "Refused: the form's anti-forgery token is missing or wrong. Reload the page and try again." {
		t.Fatalf("refusal without the token: %q", got)
	}
	if !w.agent(t, w.agentID).GetEnabled() {
		t.Fatalf("a form without its token disabled the PA")
	}
	shootConsole(t, p, "refused")

	// Grants: find alice's, revoke after the confirmation.
	p.open(w.url+"/grants", "/grants")
	p.typeInto("#g-brand", shop)
	p.typeInto("#g-user", "alice")
	p.click(`form[action="/grants"] button`)
	p.waitFor(`location.search.includes("user=alice") && document.querySelector("tbody tr td code")`)
	if got := p.text(`tbody tr td code`); got != w.grantID {
		t.Fatalf("found grant %q, want %q", got, w.grantID)
	}
	p.tabReachesEverything("grants")
	shootConsole(t, p, "grants")
	p.click(`a.button[href^="/grants/revoke"]`)
	p.waitFor(`location.pathname === "/grants/revoke" && document.querySelector("button.danger")`)
	var confirm struct{ Who, Lost string }
	if err := p.eval(`({who: document.querySelector(".card p").textContent.replace(/\s+/g, " ").trim(),
		lost: [...document.querySelectorAll(".lost li")].map(l => l.textContent.trim()).join(" | ")})`, &confirm); err != nil {
		t.Fatal(err)
	}
	if confirm.Who != "E2E PA loses what alice allowed it to do at Shop Inc.:" ||
		confirm.Lost != "See your orders and where they are orders:read | Cancel your orders that have not shipped yet orders:cancel" {
		t.Fatalf("revoke confirmation %+v", confirm)
	}
	if w.grants(t)[0].GetRevokeTime() != nil {
		t.Fatalf("the confirmation page revoked")
	}
	p.tabReachesEverything("revoke")
	shootConsole(t, p, "revoke")
	p.click(`button.danger`)
	p.waitFor(`location.pathname === "/grants" && location.search.includes("done=revoked")`)
	if w.grants(t)[0].GetRevokeTime() == nil || p.text(`tbody .state`) != "revoked" || p.text(`tbody a.button`) != "" {
		t.Fatalf("the grant was not revoked, or the page does not say so")
	}

	// The audit trail, to the receipt.
	p.open(w.url+"/audit?brand=shop&user=alice", "/audit")
	var kinds []string
	if err := p.eval(`[...document.querySelectorAll("tbody tr td:nth-child(3)")].map(td => td.textContent)`, &kinds); err != nil {
		t.Fatal(err)
	}
	if strings.Join(kinds, ",") != "grant created,grant redeemed,receipt signed,grant revoked" {
		t.Fatalf("the trail: %v", kinds)
	}
	p.tabReachesEverything("audit")
	shootConsole(t, p, "audit")
	p.click(`tbody tr:nth-child(3) a`)
	p.waitFor(`location.pathname.startsWith("/audit/") && document.querySelector("#receipt")`)
	if got := p.text(`[aria-labelledby=receipt] tbody td code`); got != "orders.list" {
		t.Fatalf("the receipt's action: %q", got)
	}
	shootConsole(t, p, "audit-event")

	// Filters and paging: bob's 51 receipts are two pages.
	p.open(w.url+"/audit?brand=shop&user=bob&kind=AUDIT_EVENT_KIND_RECEIPT_SIGNED", "/audit")
	var rows int
	if err := p.eval(`document.querySelectorAll("tbody tr").length`, &rows); err != nil || rows != 50 {
		t.Fatalf("the first page of receipts: %d rows, %v", rows, err)
	}
	if got := p.text(`#a-kind option:checked`); got != "receipt signed" {
		t.Fatalf("the kind filter shows %q", got)
	}
	p.click(`a[href^="/audit?"][href*="page="]`)
	p.waitFor(`location.search.includes("page=")`)
	if err := p.eval(`document.querySelectorAll("tbody tr").length`, &rows); err != nil || rows != 1 || p.text("tbody td:nth-child(3)") != "receipt signed" {
		t.Fatalf("the second page of receipts: %d rows, %v", rows, err)
	}

	// Credentials: create one (its token shown once), then revoke it.
	p.open(w.url+"/credentials", "/credentials")
	p.typeInto("#c-name", "checkout frontend")
	p.click(`form[action="/credentials"] button`)
	p.waitFor(`document.querySelector("#new-token")`)
	var token string
	if err := p.eval(`document.querySelector("#new-token").value`, &token); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, "pact_fro_") {
		t.Fatalf("new token %q", token)
	}
	card := func() error {
		_, err := pactv1connect.NewBrandServiceClient(w.rpc.client, w.rpc.url, bearer(token)).GetAgentCard(t.Context(), &pactv1.GetAgentCardRequest{BrandId: shop})
		return err
	}
	if err := card(); err != nil {
		t.Fatalf("ok/the new credential works: %v", err)
	}
	p.open(w.url+"/credentials", "/credentials")
	p.tabReachesEverything("credentials")
	p.run(`[...document.querySelectorAll("button.danger")].find(b => b.textContent === "Revoke checkout frontend").click()`)
	p.waitFor(`location.search === "?done=credential"`)
	if err := card(); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("the revoked credential: %v, want Unauthenticated", err)
	}
	shootConsole(t, p, "credentials")

	p.open(w.url+"/webhooks", "/webhooks")
	shootConsole(t, p, "webhooks")

	// Sign out; the old cookie, sent again, opens nothing.
	var jar struct{ Cookies []map[string]any }
	if err := json.Unmarshal(p.do("Network.getCookies", map[string]any{"urls": []string{w.url}}), &jar); err != nil || len(jar.Cookies) != 1 {
		t.Fatalf("cookies: %v %v", jar, err)
	}
	old := jar.Cookies[0]
	var tok string
	if err := p.eval(`document.querySelector("input[name=csrf]").value`, &tok); err != nil {
		t.Fatal(err)
	}
	p.click(`form.logout button`)
	p.waitFor(`document.querySelector("h1")?.textContent === "Sign in"`)
	p.do("Network.setCookie", map[string]any{"name": old["name"], "value": old["value"], "url": w.url, "httpOnly": true, "sameSite": "Strict"})
	p.open(w.url+"/agents", "/login")
	p.run(`(() => { const f = document.createElement("form"); f.method = "post"; f.action = "/agents/` + w.agentID + `/disable";
		const i = document.createElement("input"); i.type = "hidden"; i.name = "csrf"; i.value = ` + jsString(tok) + `; f.append(i);
		document.body.append(f); f.submit(); })()`)
	p.waitFor(`document.querySelector("h1")?.textContent === "Refused"`)
	if got := p.text(".error"); got != "Refused: you are not signed in (your session ended or you signed out). Sign in again." {
		t.Fatalf("after sign-out: %q", got)
	}
	if !w.agent(t, w.agentID).GetEnabled() {
		t.Fatalf("the ended session disabled the PA")
	}
	t.Logf("console browser flows took %s", time.Since(started).Round(time.Millisecond))
}
