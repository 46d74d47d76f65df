import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { DelegationInfoSchema } from "../src/gen/pact/v1/verification_pb.js";
import { DemoAgent, orderNumber } from "../src/demo/agent.js";
import { DemoLogin, cookieName, returnPath } from "../src/demo/login.js";
import { RemoteAgent, parseReply } from "../src/demo/remote.js";
import { parseOptions } from "../src/settings.js";
import { canonicalJSON, isBlank } from "../src/send.js";
import { send } from "./helpers.js";

const turn = (text: string, scopes?: string[]) => ({
  brandId: "shop", contextId: "c", newContext: false, text, caller: undefined,
  delegation: scopes ? create(DelegationInfoSchema, { grantId: "g", brandUser: "alice", scopes }) : undefined,
});

test("demo agent: each action needs its scope; receipts name the tool and arguments", async () => {
  const a = new DemoAgent();
  assert.deepEqual(await a.reply(turn("show my orders")), { needScopes: ["orders:read"], text: "I cannot open customer accounts here, so please ask me about something else." });
  assert.deepEqual((await a.reply(turn("cancel order 1002", ["orders:read"]))).needScopes, ["orders:cancel"]);
  const list = await a.reply(turn("show my orders", ["orders:read"]));
  assert.equal(list.text, "Your orders, alice:\n- #1001 Espresso beans, 1 kg: delivered\n- #1002 Milk frother: processing\n- #1003 Ceramic cups, set of 4: shipped");
  assert.deepEqual([list.scopesUsed, list.actions], [["orders:read"], [{ tool: "list_orders" }]]);
  const c = await a.reply(turn("cancel order 1002", ["orders:cancel"]));
  assert.deepEqual(c, { text: "Done: order #1002 (Milk frother) is cancelled.", scopesUsed: ["orders:cancel"], actions: [{ tool: "cancel_order", args: { orderId: "1002" } }] });
  assert.equal((await a.reply(turn("cancel order 1002", ["orders:cancel"]))).text, "Order #1002 is cancelled, so it can no longer be cancelled.");
  assert.equal((await a.reply(turn("cancel order 1003", ["orders:cancel"]))).text, "Order #1003 is shipped, so it can no longer be cancelled.");
  assert.equal((await a.reply(turn("cancel order 9999", ["orders:cancel"]))).text, "I cannot find order #9999 in your account.");
  assert.equal((await a.reply(turn("cancel it", ["orders:cancel"]))).text, 'Which order should I cancel? Say for example "cancel order 1002".');
  assert.match((await a.reply(turn("hello", ["orders:read", "profile:read"]))).text, / You are signed in as alice; I may use: orders:read, profile:read\.$/);
  assert.deepEqual([orderNumber("order 12 or 1002"), orderNumber("none 12")], ["1002", ""]);
  assert.equal(canonicalJSON({ b: 1, a: [{ d: null, c: "x" }] }), '{"a":[{"c":"x","d":null}],"b":1}');
});

test("demo login: return_to only to this Brand's pages; forged or expired cookies sign nobody in", async () => {
  assert.equal(returnPath("", "shop"), "/a2a/shop/oauth/connected");
  assert.equal(returnPath("http://evil.example/a2a/shop/oauth/consent?user_code=X", "shop"), "/a2a/shop/oauth/consent?user_code=X");
  for (const bad of ["/a2a/other/oauth/consent", "/a2a/shop/oauth/token", "https://evil.example/", "/a2a/shop/oauth/consent/../token"]) {
    assert.equal(returnPath(bad, "shop"), undefined, bad);
  }
  let now = 1_000_000_000_000;
  const login = new DemoLogin(() => now);
  const srv = createServer((req, res) => void login.handle(req, res).then((ok) => { if (!ok) { res.statusCode = 404; res.end(); } }));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const url = "http://127.0.0.1:" + (srv.address() as AddressInfo).port;
  try {
    const form = "Content-Type: application/x-www-form-urlencoded";
    const bad = await send(url + "/demo/shop/login", "POST", "username=alice&return_to=https%3A%2F%2Fevil.example%2F", form);
    assert.equal(bad.status, 400);
    assert.equal(bad.headers["set-cookie"], undefined);
    assert.equal((await send(url + "/demo/shop/login", "POST", "username=Alice%21&return_to=", form)).status, 400);
    const ok = await send(url + "/demo/shop/login", "POST", "username=alice&return_to=%2Fa2a%2Fshop%2Foauth%2Fconsent%3Fuser_code%3DX", form);
    assert.deepEqual([ok.status, ok.headers.location], [303, "/a2a/shop/oauth/consent?user_code=X"]);
    const cookie = String(ok.headers["set-cookie"]).split(";")[0]!;
    assert.match(String(ok.headers["set-cookie"]), /; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/);
    const req = (c: string) => ({ headers: { cookie: c } }) as never;
    assert.equal(login.brandUser(req(cookie), "shop"), "alice");
    assert.equal(login.brandUser(req(cookie), "other"), "", "another Brand's cookie name");
    assert.equal(login.brandUser(req(cookie.replace("alice|", "mallory|")), "shop"), "", "forged user");
    assert.equal(login.brandUser(req(cookie.replace(cookieName("shop"), cookieName("other"))), "other"), "", "replayed at another Brand");
    now += 3600_000;
    assert.equal(login.brandUser(req(cookie), "shop"), "", "expired");
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
});

test("remote agent answers are checked", () => {
  assert.deepEqual(parseReply({ text: "hi", needScopes: ["a"], actions: [{ tool: "t", args: { x: 1 } }] }), { text: "hi", needScopes: ["a"], actions: [{ tool: "t", args: { x: 1 } }] });
  for (const bad of [null, [], { text: 1 }, { text: "x", needScopes: [1] }, { text: "x", actions: {} }, { text: "x", actions: [{}] }]) {
    assert.throws(() => parseReply(bad), /remote agent/, JSON.stringify(bad));
  }
});

test("settings: flags win over the environment, as cmd/pact-a2a's", () => {
  const env = { A2A_LISTEN: "127.0.0.1:1", PACTD_URL: "http://p:1", A2A_DEMO: "true", A2A_TRANSPORT: "grpc", PACT_FRONTEND_TOKEN: "t" };
  assert.deepEqual(parseOptions([], env), { listen: "127.0.0.1:1", pactd: "http://p:1", demo: true, transport: "grpc", token: "t", agentUrl: "", publicUrl: "" });
  assert.deepEqual(parseOptions(["-listen", "0.0.0.0:2", "--pactd=http://q:2", "-demo=false", "-transport", "connect-h2"], env),
    { listen: "0.0.0.0:2", pactd: "http://q:2", demo: false, transport: "connect-h2", token: "t", agentUrl: "", publicUrl: "" });
  assert.deepEqual(parseOptions([], {}), { listen: "127.0.0.1:3000", pactd: "http://127.0.0.1:7070", demo: false, transport: "connect", token: "", agentUrl: "", publicUrl: "" });
  assert.throws(() => parseOptions(["-nope", "x"], {}), /flag provided but not defined: -nope/);
  assert.throws(() => parseOptions(["-transport", "grpc-web"], {}), /-transport must be one of connect, connect-h2, grpc/);
  assert.throws(() => parseOptions(["-listen"], {}), /flag needs a value: -listen/);
});

test("blank text is Unicode White_Space, as Go's strings.TrimSpace", () => {
  assert.ok(isBlank(" \t\n\r\v\f\u0085\u00a0\u2000\u3000"));
  assert.equal(isBlank("\ufeff"), false);
  assert.equal(isBlank(" a "), false);
});

test("remote agent: the answer is read up to 1 MiB, and only a 200 counts", async () => {
  let answer: (res: import("node:http").ServerResponse) => void = (res) => res.end('{"text":"hi","scopesUsed":["a"]}');
  const srv = createServer((req, res) => { req.resume(); answer(res); });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const agent = new RemoteAgent("http://127.0.0.1:" + (srv.address() as AddressInfo).port);
  const t = turn("hello");
  try {
    assert.deepEqual(await agent.reply(t, AbortSignal.timeout(5000)), { text: "hi", scopesUsed: ["a"] });
    answer = (res) => { res.write('{"text":"'); res.end("a".repeat(2 << 20) + '"}'); };
    await assert.rejects(agent.reply(t, AbortSignal.timeout(5000)), /remote agent answer too large/);
    answer = (res) => { res.statusCode = 500; res.end('{"text":"x"}'); };
    await assert.rejects(agent.reply(t, AbortSignal.timeout(5000)), /remote agent answered 500/);
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
});
