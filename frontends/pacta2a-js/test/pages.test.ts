import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Pages, esc, pageCSS } from "../src/pages.js";
import { errorReason, queryEscape, BrandPages, cardScopes, scopeList } from "../src/signed.js";
import { BrandLoginMode } from "../src/gen/pact/v1/brand_pb.js";
import { normCode } from "../src/oauth.js";
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
  assert.equal(normCode(" bcdf-ghjk "), "BCDFGHJK");
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
    const anonDecision = await send(e.url + "/a2a/acme/oauth/connected/revoke", "POST", "grant_id=g", "Content-Type: application/x-www-form-urlencoded");
    assert.equal(anonDecision.status, 403);
    // A Brand without delegation: a 404 page; an unknown Brand: a bare 404.
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
    assert.doesNotMatch(done.body, /orders<\/code>|&lt;b&gt;/);
  } finally {
    await e.close();
  }
});

test("trusted consent page: each scope with its authorization_details in words; a request a grant covers is approved without the page", async () => {
  const e = await newEnv({ sessions: { brandUser: (req) => (req.headers.cookie === "u=alice" ? "alice" : ""), loginURL: () => "/login" } });
  try {
    const page = await send(e.url + "/a2a/acme/oauth/consent?user_code=BCDF-GHJK", "GET", "", "Cookie: u=alice");
    assert.equal(page.status, 200);
    assert.match(page.body, /<label for="scope-0">See your orders <code>orders:read<\/code><\/label>\n<\/div>\n<div class="scope">/);
    assert.match(page.body, /<label for="scope-1">Cancel your orders <code>orders:cancel<\/code><\/label>\n<\/div>\n<ul class="details" aria-label="Only for"><li>order 1002 &lt;only&gt;<\/li><\/ul>\n/);
    assert.match(page.body, /<input type="hidden" name="user_code" value="BCDF-GHJK">/);
    assert.equal(e.approvals.length, 0, "showing the page approved something");
    const skipped = await send(e.url + "/a2a/acme/oauth/consent?user_code=COVR-COVR", "GET", "", "Cookie: u=alice");
    assert.deepEqual([skipped.status, skipped.headers.location], [303, "https://provider.example/a2a/acme/oauth/connected?status=approved"]);
    // As a skip: pactd checks the cover and grants what was requested.
    assert.deepEqual(e.approvals, [["COVR-COVR", "alice", [], "skip"]]);
    // A wrong confirmation code shows the page again and never skips.
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const wrong = await send(e.url + "/a2a/acme/oauth/consent/decision", "POST",
      `csrf=${encodeURIComponent(csrf)}&user_code=BCDF-GHJK&decision=allow&confirm_code=XXXX-XXXX&scope=orders%3Aread`,
      "Cookie: u=alice", "Content-Type: application/x-www-form-urlencoded");
    assert.equal(wrong.status, 400);
    assert.match(wrong.body, /The code you typed is not the code of this request/);
    assert.equal(e.approvals.length, 1);
    // Positive control: the right code approves the checked scopes and goes to the connected page.
    const ok = await send(e.url + "/a2a/acme/oauth/consent/decision", "POST",
      `csrf=${encodeURIComponent(csrf)}&user_code=BCDF-GHJK&decision=allow&confirm_code=bcdfghjk&scope=orders%3Aread`,
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
