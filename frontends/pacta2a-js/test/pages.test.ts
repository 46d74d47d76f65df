import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Pages, esc, pageCSS } from "../src/pages.js";
import { errorReason, queryEscape, BrandPages, cardScopes, scopeList } from "../src/signed.js";
import { BrandLoginMode } from "../src/gen/pact/v1/brand_pb.js";
import { day } from "../src/oauth.js";
import { newEnv, send } from "./helpers.js";

test("page CSP: only the style sheet's hash, no frames, forms to self and the action's origin", () => {
  const p = new Pages();
  const hash = "'sha256-" + createHash("sha256").update(pageCSS).digest("base64") + "'";
  assert.equal(p.csp("https://provider.example/a2a/acme/oauth/consent/decision"),
    `default-src 'none'; style-src ${hash}; form-action 'self' https://provider.example; frame-ancestors 'none'; base-uri 'none'`);
  assert.equal(p.csp("javascript:alert(1)"), `default-src 'none'; style-src ${hash}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`);
  assert.equal(p.csp(undefined), `default-src 'none'; style-src ${hash}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`);
});

test("HTML escaping as Go's html/template", () => {
  assert.equal(esc(`<a href="x" onclick='y'>&+</a>`), "&lt;a href=&#34;x&#34; onclick=&#39;y&#39;&gt;&amp;&#43;&lt;/a&gt;");
});

test("CSRF tokens bind Brand, User and purpose", () => {
  const p = new Pages();
  const t = p.csrf("acme", "alice", "consent BCDF-GHJK");
  assert.ok(p.checkCSRF(t, "acme", "alice", "consent BCDF-GHJK"));
  for (const [b, u, purpose] of [["beta", "alice", "consent BCDF-GHJK"], ["acme", "bob", "consent BCDF-GHJK"], ["acme", "alice", "connected"]]) {
    assert.equal(p.checkCSRF(t, b!, u!, purpose!), false, `${b} ${u} ${purpose}`);
  }
  assert.equal(p.checkCSRF("", "acme", "alice", "connected"), false);
  assert.equal(new Pages().checkCSRF(t, "acme", "alice", "consent BCDF-GHJK"), false, "another process's key");
});

test("errorReason reads google.rpc.ErrorInfo.reason from the wire", () => {
  // ErrorInfo{reason: "BRAND_ASSERTION_REPLAYED", domain: "pactd"}: field 1 and 2, both length-delimited.
  const enc = new TextEncoder();
  const reason = enc.encode("BRAND_ASSERTION_REPLAYED");
  const domain = enc.encode("pactd");
  const value = new Uint8Array([0x0a, reason.length, ...reason, 0x12, domain.length, ...domain]);
  const ce = new ConnectError("refused", Code.FailedPrecondition);
  ce.details.push({ type: "google.rpc.ErrorInfo", value });
  assert.equal(errorReason(ce), "BRAND_ASSERTION_REPLAYED");
  const other = new ConnectError("x", Code.InvalidArgument);
  other.details.push({ type: "google.rpc.BadRequest", value });
  assert.equal(errorReason(other), "");
});

test("the Brand login link returns to the consent URL with the code; Go's query encoding", () => {
  const b = new BrandPages("mart", "https://p.example/a2a/mart", BrandLoginMode.SIGNED_ASSERTION, "https://mart.example/login?z=1");
  assert.equal(b.loginLink(""), "https://mart.example/login?z=1");
  assert.equal(b.loginLink("BCDF GHJK"),
    "https://mart.example/login?return_to=https%3A%2F%2Fp.example%2Fa2a%2Fmart%2Foauth%2Fconsent%3Fuser_code%3DBCDF%2BGHJK&z=1");
  assert.equal(queryEscape("a b&c=d/é*"), "a+b%26c%3Dd%2F%C3%A9%2A");
  assert.equal(day({ seconds: 4102444800n, nanos: 0 } as never), "1 Jan 2100");
});

test("consent pages: headers, cross-site and forged forms refused, signed mode without a session refused", async () => {
  const e = await newEnv({
    sessions: { brandUser: (req) => (req.headers.cookie === "u=alice" ? "alice" : ""), loginURL: (b, r) => `/login/${b}?r=${encodeURIComponent(r)}` },
  });
  try {
    // Not signed in: to the login, which returns to the exact request URI.
    const anon = await send(e.url + "/a2a/acme/oauth/consent?user_code=BCDF-GHJK", "GET");
    assert.deepEqual([anon.status, anon.headers.location], [303, "/login/acme?r=%2Fa2a%2Facme%2Foauth%2Fconsent%3Fuser_code%3DBCDF-GHJK"]);
    // Signed in, no code: the code page, with every protective header.
    const code = await send(e.url + "/a2a/acme/oauth/consent", "GET", "", "Cookie: u=alice");
    assert.equal(code.status, 200);
    assert.equal(code.headers["x-frame-options"], "DENY");
    assert.equal(code.headers["cache-control"], "no-store");
    assert.equal(code.headers["referrer-policy"], "no-referrer");
    assert.equal(code.headers["x-content-type-options"], "nosniff");
    assert.match(String(code.headers["content-security-policy"]), /frame-ancestors 'none'; base-uri 'none'$/);
    assert.match(code.body, /<form method="get" action="https:\/\/provider\.example\/a2a\/acme\/oauth\/consent">/);
    const before = e.rpcs;
    // A decision another site started, or without a valid CSRF token: 403, nothing decided.
    const cross = await send(e.url + "/a2a/acme/oauth/consent/decision", "POST", "decision=allow&user_code=X", "Cookie: u=alice", "Sec-Fetch-Site: cross-site",
      "Content-Type: application/x-www-form-urlencoded");
    assert.equal(cross.status, 403);
    assert.equal(e.rpcs, before, "a cross-site decision reached pactd");
    const forged = await send(e.url + "/a2a/acme/oauth/consent/decision", "POST", "decision=allow&user_code=X&csrf=nope", "Cookie: u=alice",
      "Content-Type: application/x-www-form-urlencoded");
    assert.equal(forged.status, 403);
    const anonDecision = await send(e.url + "/a2a/acme/oauth/connected/revoke", "POST", "agent_id=agt_1", "Content-Type: application/x-www-form-urlencoded");
    assert.equal(anonDecision.status, 403);
    // A Brand without delegation: a 404 page; an unknown Brand: a bare 404 (a page for a browser, see root.test.ts).
    assert.equal((await send(e.url + "/a2a/beta/oauth/consent", "GET", "", "Cookie: u=alice")).status, 404);
    const unknown = await send(e.url + "/a2a/nope/oauth/consent", "GET");
    assert.deepEqual([unknown.status, unknown.body], [404, ""]);
    // Signed-assertion Brand: GET goes to the Brand's login; a decision without a session is refused.
    const signed = await send(e.url + "/a2a/mart/oauth/consent?user_code=BCDF-GHJK", "GET");
    assert.deepEqual([signed.status, signed.headers.location], [303,
      "https://brand.example/login?return_to=https%3A%2F%2Fprovider.example%2Fa2a%2Fmart%2Foauth%2Fconsent%3Fuser_code%3DBCDF-GHJK"]);
    const noSession = await send(e.url + "/a2a/mart/oauth/consent/decision", "POST", "decision=allow", "Content-Type: application/x-www-form-urlencoded");
    assert.equal(noSession.status, 403);
    const noAssertion = await send(e.url + "/a2a/mart/oauth/consent", "POST", "x=1", "Content-Type: application/x-www-form-urlencoded");
    assert.equal(noAssertion.status, 400);
    // The signed connected page shows the outcome, but a scope list only when
    // it names the Brand's scopes: text put in a link is never shown.
    const done = await send(e.url + "/a2a/mart/oauth/connected?status=approved&scope=%3Cb%3Eorders", "GET");
    assert.equal(done.status, 200);
    assert.match(done.body, /Done: your assistant is connected\./);
    assert.doesNotMatch(done.body, /You shared|&lt;b&gt;/);
    const shared = await send(e.url + "/a2a/mart/oauth/connected?status=approved&scope=orders%3Aread", "GET");
    assert.match(shared.body, /<title>Connected assistants at MART<\/title>/);
    assert.match(shared.body, /<p>You shared:<\/p>\n<ul><li>See your orders <span class="id">orders:read<\/span><\/li>\n<\/ul>/);
  } finally {
    await e.close();
  }
});

test("the Brand login link of the connected page returns to exactly the connected URL", () => {
  const b = new BrandPages("mart", "https://p.example/a2a/mart", BrandLoginMode.SIGNED_ASSERTION, "https://mart.example/login?z=1");
  assert.equal(b.connectedLoginLink(), "https://mart.example/login?return_to=https%3A%2F%2Fp.example%2Fa2a%2Fmart%2Foauth%2Fconnected&z=1");
  assert.equal(new BrandPages("mart", "x", BrandLoginMode.SIGNED_ASSERTION, "not a URL").connectedLoginLink(), "not a URL");
});

test("signed connected page: login, the list with the session, confirm, revoke; replayed, forged and half forms refused", async () => {
  const e = await newEnv();
  const form = "Content-Type: application/x-www-form-urlencoded";
  const connected = "https://provider.example/a2a/mart/oauth/connected";
  try {
    // No status: to the Brand's login, returning to the connected URL.
    const go = await send(e.url + "/a2a/mart/oauth/connected", "GET");
    assert.deepEqual([go.status, go.headers.location], [303, "https://brand.example/login?return_to=" + encodeURIComponent(connected)]);
    // The outcome page links to the list.
    const outcome = await send(e.url + "/a2a/mart/oauth/connected?status=denied", "GET");
    assert.match(outcome.body, /<p>You can close this page and go back to your assistant.<\/p>\n<p><a href="https:\/\/provider\.example\/a2a\/mart\/oauth\/connected">See all your connected assistants<\/a><\/p>\n\n<\/main>/);
    // Half forms: neither or both of assertion and session; nothing asked of pactd.
    const before = e.connectedOpened;
    for (const body of ["x=1", "assertion=assert-alice&session=sess-alice", "assertion=%zz"]) {
      const r = await send(e.url + "/a2a/mart/oauth/connected", "POST", body, form);
      assert.deepEqual([r.status, /The sign-in could not be read\./.test(r.body)], [400, true], body);
    }
    assert.equal(e.connectedOpened, before);
    // A Brand whose login does not post assertions.
    const trusted = await send(e.url + "/a2a/acme/oauth/connected", "POST", "assertion=assert-alice", form);
    assert.deepEqual([trusted.status, /does not post here/.test(trusted.body)], [400, true]);
    // Positive control: the assertion opens alice's list, the revoke form carrying the session.
    const page = await send(e.url + "/a2a/mart/oauth/connected", "POST", "assertion=assert-alice", form);
    assert.equal(page.status, 200);
    assert.equal(page.headers["cache-control"], "no-store");
    assert.match(String(page.headers["content-security-policy"]), /form-action 'self' https:\/\/provider\.example;/);
    assert.match(page.body, /<title>Connected assistants at MART<\/title>/);
    assert.match(page.body, /<span class="who">Signed in as <strong>alice<\/strong><\/span>/);
    assert.ok(page.body.includes(`<form method="post" action="${connected}/revoke"><input type="hidden" name="session" value="sess-alice">` +
      `<input type="hidden" name="agent_id" value="agt_1"><button type="submit" class="secondary" aria-label="Revoke access of Example PA">Revoke…</button></form>\n`), page.body);
    assert.match(page.body, /<h2>Old PA<\/h2><span class="state off">Revoked<\/span>/);
    // The same assertion again: used up, and the page shows no session.
    const again = await send(e.url + "/a2a/mart/oauth/connected", "POST", "assertion=assert-alice", form);
    assert.deepEqual([again.status, /used already/.test(again.body), /name="session"/.test(again.body)], [400, true, false]);
    const bad = await send(e.url + "/a2a/mart/oauth/connected", "POST", "assertion=assert-mallory", form);
    assert.deepEqual([bad.status, /could not be verified/.test(bad.body)], [403, true]);
    // The GET confirmation is the trusted Brands' only: back to the list.
    const get = await send(e.url + "/a2a/mart/oauth/connected/revoke?agent_id=agt_1", "GET");
    assert.equal(get.status, 405, "no sessions: connected/revoke takes POST only");
    // Revoke forms without a session or agent, or with a forged session: refused, nothing revoked.
    for (const [body, status] of [["agent_id=agt_1", 403], ["session=sess-alice", 403], ["session=forged&agent_id=agt_1&confirm=1", 403],
      ["session=forged&agent_id=agt_1", 403]] as const) {
      const r = await send(e.url + "/a2a/mart/oauth/connected/revoke", "POST", body, form);
      assert.equal(r.status, status, body);
    }
    // An agent with nothing live to revoke.
    const none = await send(e.url + "/a2a/mart/oauth/connected/revoke", "POST", "session=sess-alice&agent_id=agt_2", form);
    assert.deepEqual([none.status, /no access to revoke/.test(none.body)], [404, true]);
    assert.deepEqual(e.revoked, []);
    // The confirmation names what goes and revokes nothing.
    const confirm = await send(e.url + "/a2a/mart/oauth/connected/revoke", "POST", "session=sess-alice&agent_id=agt_1", form);
    assert.equal(confirm.status, 200);
    assert.match(confirm.body, /<h1>Revoke Example PA\?<\/h1>/);
    assert.ok(confirm.body.includes(`<form method="post" action="${connected}/revoke">
<input type="hidden" name="session" value="sess-alice">
<input type="hidden" name="confirm" value="1">
<input type="hidden" name="agent_id" value="agt_1">
<div class="buttons"><button type="submit" class="danger">Revoke Example PA</button>
<button type="submit" class="secondary" formaction="${connected}">Keep it</button></div>
</form>`), confirm.body);
    assert.deepEqual(e.revoked, []);
    // "Keep it" posts the session back to the list.
    const keep = await send(e.url + "/a2a/mart/oauth/connected", "POST", "session=sess-alice&confirm=1&agent_id=agt_1", form);
    assert.deepEqual([keep.status, keep.body.includes('name="session" value="sess-alice"')], [200, true]);
    // Confirmed: RevokeConnected, and the page names what was revoked from pactd's list.
    const done = await send(e.url + "/a2a/mart/oauth/connected/revoke", "POST", "session=sess-alice&agent_id=agt_1&confirm=1", form);
    assert.equal(done.status, 200);
    assert.match(done.body, /<p class="status" role="status">Revoked: Example PA can no longer act for you here\.<\/p>/);
    assert.deepEqual(e.revoked.sort(), ["g_1", "g_3"]);
    assert.doesNotMatch(done.body, /Revoke access of/);
  } finally {
    await e.close();
  }
});

test("trusted consent page: each scope with its authorization_details in words; a request a grant covers is approved without the page", async () => {
  const e = await newEnv({ sessions: { brandUser: (req) => (req.headers.cookie === "u=alice" ? "alice" : ""), loginURL: () => "/login" } });
  try {
    const page = await send(e.url + "/a2a/acme/oauth/consent?user_code=BCDF-GHJK", "GET", "", "Cookie: u=alice");
    assert.equal(page.status, 200);
    assert.match(page.body, /<label for="scope-0">See your orders <span class="id">orders:read<\/span><\/label>\n<\/div>\n<div class="scope">/);
    assert.match(page.body, /<label for="scope-1">Cancel your orders <span class="id">orders:cancel<\/span><\/label>\n<\/div>\n<ul class="details" aria-label="Only for"><li>order 1002 &lt;only&gt;<\/li><\/ul>\n/);
    // The code to compare, and nothing to type it into (RFC 8628 §5.4).
    assert.match(page.body, /<p class="compare"><strong class="usercode">BCDF-GHJK<\/strong><\/p>/);
    assert.doesNotMatch(page.body, /confirm_code|<input id=/);
    assert.match(page.body, /<input type="hidden" name="user_code" value="BCDF-GHJK">/);
    assert.equal(e.approvals.length, 0, "showing the page approved something");
    const skipped = await send(e.url + "/a2a/acme/oauth/consent?user_code=COVR-COVR", "GET", "", "Cookie: u=alice");
    assert.deepEqual([skipped.status, skipped.headers.location], [303, "https://provider.example/a2a/acme/oauth/connected?status=approved"]);
    // As a skip: pactd checks the cover and grants what was requested.
    assert.deepEqual(e.approvals, [["COVR-COVR", "alice", [], "skip"]]);
    // Neither allow nor deny decides nothing.
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const neither = await send(e.url + "/a2a/acme/oauth/consent/decision", "POST",
      `csrf=${encodeURIComponent(csrf)}&user_code=BCDF-GHJK&decision=maybe&scope=orders%3Aread`,
      "Cookie: u=alice", "Content-Type: application/x-www-form-urlencoded");
    assert.equal(neither.status, 400);
    assert.equal(e.approvals.length, 1);
    // Positive control: Allow approves the checked scopes and goes to the connected page.
    const ok = await send(e.url + "/a2a/acme/oauth/consent/decision", "POST",
      `csrf=${encodeURIComponent(csrf)}&user_code=BCDF-GHJK&decision=allow&scope=orders%3Aread`,
      "Cookie: u=alice", "Content-Type: application/x-www-form-urlencoded");
    assert.deepEqual([ok.status, ok.headers.location], [303, "/a2a/acme/oauth/connected?status=approved"]);
    assert.deepEqual(e.approvals.at(-1), ["BCDF-GHJK", "alice", ["orders:read"]]);
  } finally {
    await e.close();
  }
});

test("the connected page shows a claimed outcome only when it lists the Brand's scopes", () => {
  const scopes = cardScopes(JSON.stringify({ securitySchemes: { userDelegation: { oauth2SecurityScheme: { flows: { deviceCode: {
    scopes: { "orders:read": "See", "orders:cancel": "Cancel" } } } } } } }));
  assert.ok(scopeList("orders:read", scopes));
  assert.ok(scopeList("orders:read orders:cancel", scopes));
  for (const bad of ["", "Your account is now connected, call 555", "orders:read  orders:cancel", " orders:read", "orders:write"]) {
    assert.equal(scopeList(bad, scopes), false, bad);
  }
  assert.equal(cardScopes("{").size, 0);
});

test("connected page: one entry per PA with its grants grouped, the Brand's words, expiry; revoke after a confirmation naming what it loses", async () => {
  const e = await newEnv({ sessions: { brandUser: (req) => (req.headers.cookie === "u=alice" ? "alice" : ""), loginURL: () => "/login" } });
  try {
    const page = await send(e.url + "/a2a/acme/oauth/connected?status=denied", "GET", "", "Cookie: u=alice");
    assert.equal(page.status, 200);
    assert.match(page.body, /<title>Connected assistants at ACME<\/title>/);
    assert.match(page.body, /<p class="status" role="status">You denied the request: nothing new was shared\.<\/p>/);
    assert.equal(page.body.split('<li class="pa"').length - 1, 2, "one entry per PA");
    assert.match(page.body, /<h2>Example PA<\/h2><span class="state">Active · 2 grants<\/span>/);
    assert.match(page.body, /<li>Cancel your orders <span class="id">orders:cancel<\/span><ul class="hint"><li>order 1002 &lt;only&gt;<\/li><\/ul><\/li>/);
    // A scope the card no longer lists shows its id.
    assert.match(page.body, /<li>gone:scope <span class="id">gone:scope<\/span><\/li>/);
    assert.match(page.body, /Since <time>1 Dec 2025<\/time> · expires <time>1 Jan 2099<\/time>/);
    assert.match(page.body, /<h2>Old PA<\/h2><span class="state off">Revoked<\/span><\/div>\n<p class="when">Revoked <time>1 Dec 2025<\/time><\/p>/);
    assert.match(page.body, /<form method="get" action="https:\/\/provider\.example\/a2a\/acme\/oauth\/connected\/revoke"><input type="hidden" name="agent_id" value="agt_1">/);
    // The confirmation names the PA and what it loses; it revokes nothing.
    const confirm = await send(e.url + "/a2a/acme/oauth/connected/revoke?agent_id=agt_1", "GET", "", "Cookie: u=alice");
    assert.equal(confirm.status, 200);
    assert.match(confirm.body, /<h1>Revoke Example PA\?<\/h1>/);
    assert.match(confirm.body, /<p>At ACME, <strong>Example PA<\/strong> will no longer be able to act for you\. It loses:<\/p>/);
    assert.match(confirm.body, />Revoke Example PA<\/button>/);
    assert.deepEqual(e.revoked, []);
    assert.equal((await send(e.url + "/a2a/acme/oauth/connected/revoke?agent_id=agt_2", "GET", "", "Cookie: u=alice")).status, 404, "nothing live to revoke");
    const csrf = /name="csrf" value="([^"]+)"/.exec(confirm.body)![1]!;
    // A token for another PA, or none: 403, nothing revoked.
    for (const body of [`csrf=${encodeURIComponent(csrf)}&agent_id=agt_2`, "agent_id=agt_1"]) {
      const r = await send(e.url + "/a2a/acme/oauth/connected/revoke", "POST", body, "Cookie: u=alice", "Content-Type: application/x-www-form-urlencoded");
      assert.equal(r.status, 403, body);
    }
    assert.deepEqual(e.revoked, []);
    const done = await send(e.url + "/a2a/acme/oauth/connected/revoke", "POST", `csrf=${encodeURIComponent(csrf)}&agent_id=agt_1`,
      "Cookie: u=alice", "Content-Type: application/x-www-form-urlencoded");
    assert.deepEqual([done.status, done.headers.location], [303, "/a2a/acme/oauth/connected?status=revoked&agent_id=agt_1"]);
    assert.deepEqual(e.revoked, ["g_3", "g_1"], "every live grant of the PA, and only those");
    const after = await send(e.url + "/a2a/acme/oauth/connected?status=revoked&agent_id=agt_1", "GET", "", "Cookie: u=alice");
    assert.match(after.body, /Revoked: Example PA can no longer act for you here\./);
    assert.doesNotMatch(after.body, /Revoke…/);
  } finally {
    await e.close();
  }
});

test("root page lists the Brands by display name with their cards; a browser gets a 404 page, an API client a bare 404", async () => {
  const e = await newEnv();
  try {
    const root = await send(e.url + "/", "GET");
    assert.equal(root.status, 200);
    assert.equal(root.headers["content-type"], "text/html; charset=utf-8");
    assert.equal(root.headers["x-frame-options"], "DENY");
    assert.match(root.body, /<h2>ACME &lt;Shop&gt; <span class="id">acme<\/span><\/h2>\n<p class="hint">Orders<\/p>\n<a href="\/a2a\/acme\/.well-known\/agent-card.json">Agent Card<\/a> · <a href="\/a2a\/acme\/oauth\/connected">Connected assistants<\/a><\/li>/);
    assert.match(root.body, /<h2>Beta <span class="id">beta<\/span><\/h2>\n\n<a href="\/a2a\/beta\/.well-known\/agent-card.json">Agent Card<\/a><\/li>/);
    assert.match(root.body, /<h2>Mart <span class="id">mart<\/span><\/h2>\n\n<a href="\/a2a\/mart\/.well-known\/agent-card.json">Agent Card<\/a><\/li>/);
    assert.deepEqual([(await send(e.url + "/", "POST")).status, (await send(e.url + "/", "POST")).body], [404, ""]);
    const browser = "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    for (const [path, words, post] of [
      ["/a2a/nope/.well-known/agent-card.json", "This Provider serves no Brand named “nope”.", 405],
      // connected takes POST too (a signed-assertion Brand's login posts
      // there), so an unknown Brand's POST is 404, as consent's.
      ["/a2a/nope/oauth/connected", "This Provider serves no Brand named “nope”.", 404],
      ["/a2a/nope%3Cb%3E/oauth/consent", "This Provider serves no such Brand.", 404],
      ["/a2a/acme/unknown", "There is no page at this address.", 404],
      ["/elsewhere", "There is no page at this address.", 404],
    ] as const) {
      const r = await send(e.url + path, "GET", "", browser);
      assert.equal(r.status, 404, path);
      assert.equal(r.headers["content-type"], "text/html; charset=utf-8", path);
      assert.ok(r.body.includes(words) && r.body.includes('<a href="/">'), path);
      for (const h of [[], ["Accept: application/json"], ["Accept: text/html;q=0, application/json"]]) {
        const bareR = await send(e.url + path, "GET", "", ...h);
        assert.deepEqual([bareR.status, bareR.body], [404, ""], path + " " + h.join());
        assert.notEqual(bareR.headers["content-type"], "application/a2a+json");
      }
      assert.deepEqual([(await send(e.url + path, "POST", "", browser)).status], [post], "POST " + path);
    }
  } finally {
    await e.close();
  }
});
