package e2e_test

import (
	"bytes"
	"flag"
	"image/png"
	"os"
	"slices"
	"testing"
	"time"

	pactv1 "pactd/gen/pact/v1"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write the consent page's screenshot to docs/consent.png")

// TestBrowserConsent drives the Brand login, the consent page and the
// connected-apps page in headless Chromium, as a User does: approve a
// subset of the scopes, deny another request, revoke the grant.
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
	// signIn follows a verification link to the consent page.
	signIn := func(link string) {
		t.Helper()
		p.open(link, "/demo/shop/login")
		p.typeInto("#username", "alice")
		p.click("button[type=submit]")
		p.waitFor(`location.pathname === "/a2a/shop/oauth/consent" && document.querySelector("#confirm_code")`)
	}

	// 1. Approve a subset: uncheck orders:cancel, type the code, Allow.
	d := w.startDevice(t, "user-1", "orders:read orders:cancel")
	signIn(d.VerificationURIComplete)
	var facts struct {
		Lang, Legend, Code, MaxWidth string
		Labelled, Checked            int
		Buttons                      []string
	}
	if err := p.eval(`({
		lang: document.documentElement.lang,
		legend: document.querySelector("fieldset legend").textContent,
		code: document.querySelector(".usercode").textContent,
		maxWidth: getComputedStyle(document.querySelector("main")).maxWidth,
		labelled: [...document.querySelectorAll("input:not([type=hidden])")].filter(i => i.labels.length === 1).length,
		checked: document.querySelectorAll("input[name=scope]:checked").length,
		buttons: [...document.querySelectorAll("button")].map(b => b.textContent),
	})`, &facts); err != nil {
		t.Fatal(err)
	}
	// Every visible input is labelled; the style sheet ran (its CSP hash
	// is right); both requested scopes start checked.
	if facts.Lang != "en" || facts.Legend != "E2E PA asks to" || facts.Code != d.UserCode || facts.MaxWidth == "none" ||
		facts.Labelled != 3 || facts.Checked != 2 || !slices.Equal(facts.Buttons, []string{"Allow", "Deny"}) {
		t.Fatalf("consent page %+v", facts)
	}
	p.click(`input[value="orders:cancel"]`)
	p.typeInto("#confirm_code", d.UserCode)
	shot := p.screenshot()
	if img, err := png.Decode(bytes.NewReader(shot)); err != nil || img.Bounds().Dx() < 800 {
		t.Fatalf("screenshot: %v", err)
	}
	if *updateScreenshot && frontendFor(t).name == goFrontend.name {
		if err := os.MkdirAll("../docs", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../docs/consent.png", shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
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

	// 2. Deny: the PA's next poll is access_denied.
	d2 := w.startDevice(t, "user-1", "orders:cancel")
	signIn(d2.VerificationURIComplete)
	p.click(`button[value=deny]`)
	p.waitFor(`location.search === "?status=denied"`)
	wantOAuthError(t, "denied in the browser", w.poll(t, "user-1", d2.DeviceCode), 400, "access_denied")

	// 3. Revoke from the connected-apps page.
	p.open(w.feURL+"/a2a/shop/oauth/connected", "/a2a/shop/oauth/connected")
	p.click(`form[action$="/oauth/connected/revoke"] button`)
	p.waitFor(`location.search === "?status=revoked" && document.body.textContent.includes("Revoked")`)
	if g := grants(); len(g) != 1 || g[0].GetRevokeTime() == nil {
		t.Fatalf("grants after revoking: %v", g)
	}
	wantInvalidToken(t, "revoked in the browser", w.delegated(t, "user-1", tok.AccessToken, userMsg("m-1", "", "show my orders")))
	t.Logf("browser flows took %s", time.Since(start).Round(time.Millisecond))
}

// TestBrowserConsentWrongCodeRetry: in BRAND_LOGIN_MODE_TRUSTED_FRONTEND a
// wrongly typed confirmation code shows the consent page again with an
// error; its form still posts to the absolute decision URL, so the retry
// with the right code approves.
func TestBrowserConsentWrongCodeRetry(t *testing.T) {
	eachFrontend(t, testBrowserConsentWrongCodeRetry)
}

func testBrowserConsentWrongCodeRetry(t *testing.T) {
	p := chromium(t)
	w := newWorld(t, "")
	d := w.startDevice(t, "user-1", "orders:read")
	p.open(d.VerificationURIComplete, "/demo/shop/login")
	p.typeInto("#username", "alice")
	p.click("button[type=submit]")
	p.waitFor(`location.pathname === "/a2a/shop/oauth/consent" && document.querySelector("#confirm_code")`)
	wrong := "BCDF-GHJK"
	if d.UserCode == wrong {
		wrong = "ZZZZ-ZZZZ"
	}
	p.typeInto("#confirm_code", wrong)
	p.click(`button[value=allow]`)
	p.waitFor(`location.pathname === "/a2a/shop/oauth/consent/decision" && document.querySelector(".error") && document.querySelector("#confirm_code")`)
	var action string
	if err := p.eval(`document.querySelector("form[method=post]").action`, &action); err != nil || action != w.feURL+"/a2a/shop/oauth/consent/decision" {
		t.Fatalf("the retried form posts to %q (%v)", action, err)
	}
	wantOAuthError(t, "after the wrong code", w.poll(t, "user-1", d.DeviceCode), 400, "authorization_pending")
	p.typeInto("#confirm_code", d.UserCode)
	p.click(`button[value=allow]`)
	p.waitFor(`location.pathname === "/a2a/shop/oauth/connected" && location.search === "?status=approved"`)
	var tok tokenResponse
	wantOAuthJSON(t, "token", w.poll(t, "user-1", d.DeviceCode), &tok)
	if tok.Scope != "orders:read" {
		t.Fatalf("granted %q", tok.Scope)
	}
}

// TestBrowserSignedConsent: in BRAND_LOGIN_MODE_SIGNED_ASSERTION the
// Brand's page (its own origin) posts the assertion to the consent URL;
// the consent page has no typed code, its CSP lets its absolute form
// action through, the Provider sets no cookie, and Allow with one scope
// unchecked lands on the connected page with the outcome.
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
		Cookie         string
	}
	if err := p.eval(`({typed: document.querySelectorAll("#confirm_code").length,
		checked: document.querySelectorAll("input[name=scope]:checked").length, cookie: document.cookie})`, &facts); err != nil {
		t.Fatal(err)
	}
	if facts.Typed != 0 || facts.Checked != 2 || facts.Cookie != "" {
		t.Fatalf("signed consent page %+v", facts)
	}
	p.click(`input[value="orders:cancel"]`)
	p.click(`button[value=allow]`)
	p.waitFor(`location.pathname === "/a2a/mart/oauth/connected" && new URLSearchParams(location.search).get("status") === "approved"`)
	var tok tokenResponse
	wantOAuthJSON(t, "token", w.oauthPost(t, mart, "token", "Bearer "+w.token(t, "user-1"), w.paForm("grant_type", deviceGrant, "device_code", d.DeviceCode)), &tok)
	if tok.Scope != "orders:read" {
		t.Fatalf("granted %q", tok.Scope)
	}
}
