package e2e_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// PACT_E2E_SCREENSHOTS names a directory (relative to the repository's
// root, e.g. docs/pages) the browser tests write their screenshots to, at
// desktop and phone widths: the Go frontend's there, the TypeScript
// frontend's in its ts/ subdirectory. Unset, nothing is written (CI keeps
// the tree clean); every frontend's pages are screenshotted and checked
// either way.
const screenshotsEnv = "PACT_E2E_SCREENSHOTS"

// shoot screenshots the page at a desktop width and at a phone's, checks
// at the phone's that nothing overflows sideways and that no name or date
// wraps, and writes both when PACT_E2E_SCREENSHOTS is set.
func shoot(t *testing.T, p *page, name string) {
	t.Helper()
	for _, size := range []struct {
		suffix        string
		width, height int
		mobile        bool
	}{{"desktop", 1024, 768, false}, {"phone", 390, 844, true}} {
		p.viewport(size.width, size.height, size.mobile)
		var fit struct {
			Overflow bool
			Wrapped  []string
		}
		// A <time> or a PA's name on more than one line, or the page wider
		// than the screen, is what a phone User saw before.
		if err := p.eval(`({overflow: document.documentElement.scrollWidth > innerWidth,
			wrapped: [...document.querySelectorAll("time, .pa h2, .brand h2, .usercode")].filter(e => {
				const lh = parseFloat(getComputedStyle(e).lineHeight) || parseFloat(getComputedStyle(e).fontSize) * 1.5;
				return e.getClientRects().length > 1 || e.getBoundingClientRect().height > lh * 1.5;
			}).map(e => e.textContent)})`, &fit); err != nil {
			t.Fatal(err)
		}
		if fit.Overflow || len(fit.Wrapped) > 0 {
			t.Errorf("%s at %dpx: overflows %v, wrapped %q", name, size.width, fit.Overflow, fit.Wrapped)
		}
		shot := p.screenshot()
		if img, err := png.Decode(bytes.NewReader(shot)); err != nil || img.Bounds().Dx() < size.width {
			t.Fatalf("%s screenshot at %dpx: %v", name, size.width, err)
		}
		dir := os.Getenv(screenshotsEnv)
		fe := frontendFor(t).name
		if dir == "" || (fe != goFrontend.name && fe != tsFrontend.name) {
			continue
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join("..", dir) // the test runs in e2e/
		}
		if fe == tsFrontend.name {
			dir = filepath.Join(dir, "ts")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+size.suffix+".png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.viewport(820, 720, false)
}

// TestBrowserConsent drives the Brand login, the consent page and the
// connected-apps page in headless Chromium, as a User does: approve a
// subset of the scopes after comparing the code, deny another request,
// connect the same PA again, see one entry for it with both grants in the
// Brand's words and their expiry, revoke it after a confirmation that
// names what it loses.
func TestBrowserConsent(t *testing.T) { eachFrontend(t, testBrowserConsent) }

func testBrowserConsent(t *testing.T) {
	start := time.Now()
	p := chromium(t)
	w := newWorld(t, "")
	grants := func() []*pactv1.Grant {
		res, err := w.deleg.ListGrants(t.Context(), &pactv1.ListGrantsRequest{BrandId: shop, BrandUser: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetGrants()
	}
	// signIn follows a verification link to the consent page (signed in
	// already after the first time).
	signIn := func(link string) {
		t.Helper()
		p.open(link, "/")
		p.waitFor(`location.pathname === "/demo/shop/login" || (location.pathname === "/a2a/shop/oauth/consent" && document.querySelector(".compare"))`)
		var path string
		if err := p.eval(`location.pathname`, &path); err != nil {
			t.Fatal(err)
		}
		if path == "/demo/shop/login" {
			p.typeInto("#username", "alice")
			p.click("button[type=submit]")
		}
		p.waitFor(`location.pathname === "/a2a/shop/oauth/consent" && document.querySelector(".compare")`)
	}

	// 1. Approve a subset: compare the code, uncheck orders:cancel, Allow.
	d := w.startDevice(t, "user-1", "orders:read orders:cancel")
	signIn(d.VerificationURIComplete)
	var facts struct {
		Lang, Legend, Code, MaxWidth string
		Labelled, Checked, Typed     int
		Buttons                      []string
	}
	if err := p.eval(`({
		lang: document.documentElement.lang,
		legend: document.querySelector("fieldset legend").textContent,
		code: document.querySelector(".compare .usercode").textContent,
		maxWidth: getComputedStyle(document.querySelector("main")).maxWidth,
		labelled: [...document.querySelectorAll("input:not([type=hidden])")].filter(i => i.labels.length === 1).length,
		checked: document.querySelectorAll("input[name=scope]:checked").length,
		typed: document.querySelectorAll("input[type=text], input:not([type])").length,
		buttons: [...document.querySelectorAll("button")].map(b => b.textContent),
	})`, &facts); err != nil {
		t.Fatal(err)
	}
	// Every visible input is labelled; the style sheet ran (its CSP hash
	// is right); both requested scopes start checked; the code is shown to
	// compare and nothing asks to type it (RFC 8628 §5.4).
	if facts.Lang != "en" || facts.Legend != "E2E PA asks to" || facts.Code != d.UserCode || facts.MaxWidth == "none" ||
		facts.Labelled != 2 || facts.Checked != 2 || facts.Typed != 0 || !slices.Equal(facts.Buttons, []string{"Allow", "Deny"}) {
		t.Fatalf("consent page %+v", facts)
	}
	p.click(`input[value="orders:cancel"]`)
	shoot(t, p, "consent")
	p.click(`button[value=allow]`)
	p.waitFor(`location.pathname === "/a2a/shop/oauth/connected" && location.search === "?status=approved"`)
	g := grants()
	if len(g) != 1 || !slices.Equal(g[0].GetScopes(), []string{"orders:read"}) || g[0].GetRevokeTime() != nil {
		t.Fatalf("grants after approval: %v", g)
	}
	var tok tokenResponse
	wantOAuthJSON(t, "token", w.poll(t, "user-1", d.DeviceCode), &tok)
	if tok.Scope != "orders:read" {
		t.Fatalf("granted %q", tok.Scope)
	}

	// 2. Deny: the PA's next poll is access_denied, and the page says
	// nothing new was shared while it lists the live grant.
	d2 := w.startDevice(t, "user-1", "orders:cancel")
	signIn(d2.VerificationURIComplete)
	p.click(`button[value=deny]`)
	p.waitFor(`location.search === "?status=denied"`)
	wantOAuthError(t, "denied in the browser", w.poll(t, "user-1", d2.DeviceCode), 400, "access_denied")

	// 3. Connect the same PA again, for another scope.
	d3 := w.startDevice(t, "user-1", "orders:cancel")
	signIn(d3.VerificationURIComplete)
	p.click(`button[value=allow]`)
	p.waitFor(`location.search === "?status=approved"`)
	if g = grants(); len(g) != 2 {
		t.Fatalf("grants after the second approval: %v", g)
	}

	// 4. The connected page: one entry for the PA, both grants, the
	// Brand's words (ids secondary), each grant's expiry.
	p.open(w.feURL+"/a2a/shop/oauth/connected?status=denied", "/a2a/shop/oauth/connected")
	var apps struct {
		Title, Status, Name, State string
		Entries, Grants            int
		Scopes, IDs, Expiries      []string
		IDSmaller                  bool
	}
	if err := p.eval(`(() => {
		const pa = document.querySelectorAll(".pa");
		const li = [...document.querySelectorAll(".pa .grants > li")];
		const id = document.querySelector(".pa .id");
		return {title: document.title, status: document.querySelector(".status")?.textContent ?? "",
			entries: pa.length, name: pa[0]?.querySelector("h2").textContent, state: pa[0]?.querySelector(".state").textContent,
			grants: li.length,
			scopes: li.flatMap(l => [...l.querySelectorAll(":scope > ul > li")].map(s => s.firstChild.textContent.trim())),
			ids: [...document.querySelectorAll(".pa .id")].map(e => e.textContent),
			expiries: li.map(l => l.querySelectorAll(".when time")[1]?.textContent ?? ""),
			idSmaller: parseFloat(getComputedStyle(id).fontSize) < parseFloat(getComputedStyle(id.parentElement).fontSize)};
	})()`, &apps); err != nil {
		t.Fatal(err)
	}
	day := func(g *pactv1.Grant) string { return g.GetExpireTime().AsTime().UTC().Format("2 Jan 2006") }
	if apps.Title != "Connected assistants at Shop Inc." || apps.Status != "You denied the request: nothing new was shared." ||
		apps.Entries != 1 || apps.Name != "E2E PA" || apps.State != "Active · 2 grants" || apps.Grants != 2 ||
		!slices.Equal(apps.Scopes, []string{"Cancel your orders that have not shipped yet", "See your orders and their delivery status"}) ||
		!slices.Equal(apps.IDs, []string{"orders:cancel", "orders:read"}) || !slices.Equal(apps.Expiries, []string{day(g[0]), day(g[1])}) || !apps.IDSmaller {
		t.Fatalf("connected page %+v", apps)
	}
	shoot(t, p, "connected")

	// 5. Revoke: the confirmation names the PA and what it loses; after,
	// the page says what was revoked.
	p.click(`form[action$="/oauth/connected/revoke"] button`)
	p.waitFor(`location.pathname === "/a2a/shop/oauth/connected/revoke" && document.querySelector("button.danger")`)
	var confirm struct {
		Heading, Button string
		IDs             []string
	}
	if err := p.eval(`({heading: document.querySelector("h1").textContent, button: document.querySelector("button.danger").textContent,
		ids: [...document.querySelectorAll("main .id")].map(e => e.textContent)})`, &confirm); err != nil {
		t.Fatal(err)
	}
	if confirm.Heading != "Revoke E2E PA?" || confirm.Button != "Revoke E2E PA" || !slices.Equal(confirm.IDs, []string{"orders:cancel", "orders:read"}) {
		t.Fatalf("revoke confirmation %+v", confirm)
	}
	for _, g := range grants() {
		if g.GetRevokeTime() != nil {
			t.Fatalf("the confirmation page revoked")
		}
	}
	shoot(t, p, "revoke")
	p.click(`button.danger`)
	p.waitFor(`location.pathname === "/a2a/shop/oauth/connected" && new URLSearchParams(location.search).get("status") === "revoked"`)
	var after struct{ Status, State string }
	if err := p.eval(`({status: document.querySelector(".status").textContent, state: document.querySelector(".pa .state").textContent})`, &after); err != nil {
		t.Fatal(err)
	}
	if after.Status != "Revoked: E2E PA can no longer act for you here." || after.State != "Revoked" {
		t.Fatalf("after revoking %+v", after)
	}
	for _, g := range grants() {
		if g.GetRevokeTime() == nil {
			t.Fatalf("grant %s was not revoked", g.GetGrantId())
		}
	}
	wantInvalidToken(t, "revoked in the browser", w.delegated(t, "user-1", tok.AccessToken, userMsg("m-1", "", "show my orders")))
	t.Logf("browser flows took %s", time.Since(start).Round(time.Millisecond))
}

// TestBrowserRootAndNotFound: the frontend's root page lists the Brands by
// display name with their Agent Cards' links, and a browser that opens an
// unknown Brand's page gets a 404 page that says so.
func TestBrowserRootAndNotFound(t *testing.T) { eachFrontend(t, testBrowserRootAndNotFound) }

func testBrowserRootAndNotFound(t *testing.T) {
	p := chromium(t)
	w := newWorld(t, "")
	p.open(w.feURL+"/", "/")
	p.waitFor(`document.querySelector(".brands")`)
	var root struct {
		Names, Cards []string
	}
	if err := p.eval(`({names: [...document.querySelectorAll(".brand h2")].map(h => h.firstChild.textContent.trim()),
		cards: [...document.querySelectorAll(".brand a")].filter(a => a.textContent === "Agent Card").map(a => new URL(a.href).pathname)})`, &root); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(root.Names, "Shop Inc.") || !slices.Contains(root.Names, "Mart Inc.") || len(root.Cards) != len(root.Names) ||
		!slices.Contains(root.Cards, "/a2a/shop/.well-known/agent-card.json") {
		t.Fatalf("root page %+v", root)
	}
	shoot(t, p, "root")
	p.open(w.feURL+"/a2a/no-such-brand/oauth/connected", "/a2a/no-such-brand")
	p.waitFor(`document.querySelector("h1")`)
	var nf struct{ Heading, Error string }
	if err := p.eval(`({heading: document.querySelector("h1").textContent, error: document.querySelector(".error").textContent})`, &nf); err != nil {
		t.Fatal(err)
	}
	if nf.Heading != "Brand not found" || !strings.Contains(nf.Error, "no-such-brand") {
		t.Fatalf("404 page %+v", nf)
	}
	shoot(t, p, "notfound")
}

// TestBrowserSignedConsent: in BRAND_LOGIN_MODE_SIGNED_ASSERTION the
// Brand's page (its own origin) posts the assertion to the consent URL;
// the consent page has no typed code, its CSP lets its absolute form
// action through, the Provider sets no cookie, and Allow with one scope
// unchecked lands on the connected page with the outcome in the Brand's
// words.
func TestBrowserSignedConsent(t *testing.T) { eachFrontend(t, testBrowserSignedConsent) }

func testBrowserSignedConsent(t *testing.T) {
	p := chromium(t)
	w := newWorld(t, "")
	d := w.martDevice(t, "user-1", "orders:read orders:cancel")
	p.open(d.VerificationURIComplete, "/login")
	p.click("button[type=submit]")
	p.waitFor(`location.pathname === "/a2a/mart/oauth/consent" && document.querySelector("input[name=session]")`)
	var facts struct {
		Typed, Checked int
		Cookie, Code   string
	}
	if err := p.eval(`({typed: document.querySelectorAll("input[type=text], input:not([type])").length,
		checked: document.querySelectorAll("input[name=scope]:checked").length, cookie: document.cookie,
		code: document.querySelector(".compare .usercode").textContent})`, &facts); err != nil {
		t.Fatal(err)
	}
	if facts.Typed != 0 || facts.Checked != 2 || facts.Cookie != "" || facts.Code != d.UserCode {
		t.Fatalf("signed consent page %+v", facts)
	}
	p.click(`input[value="orders:cancel"]`)
	p.click(`button[value=allow]`)
	p.waitFor(`location.pathname === "/a2a/mart/oauth/connected" && new URLSearchParams(location.search).get("status") === "approved"`)
	var shared []string
	if err := p.eval(`[...document.querySelectorAll("main li")].map(l => l.textContent)`, &shared); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(shared, []string{"See your orders and their delivery status orders:read"}) {
		t.Fatalf("signed connected page shares %q", shared)
	}
	shoot(t, p, "connected-signed")
	var tok tokenResponse
	wantOAuthJSON(t, "token", w.oauthPost(t, mart, "token", "Bearer "+w.token(t, "user-1"), w.paForm("grant_type", deviceGrant, "device_code", d.DeviceCode)), &tok)
	if tok.Scope != "orders:read" {
		t.Fatalf("granted %q", tok.Scope)
	}
}
