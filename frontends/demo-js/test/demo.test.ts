import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { request } from "node:http";
import { DelegationInfoSchema } from "@pactd/a2a/gen/pact/v1/verification_pb";
import { DemoAgent, orderNumber } from "../src/agent.js";
import { DemoLogin, cookieName, returnPath } from "../src/login.js";
import { RemoteAgent, parseReply } from "../src/remote.js";

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** send makes one HTTP/1.1 request with headers given as "Name: value" strings. */
function send(url: string, method: string, body = "", ...headers: string[]): Promise<Res> {
  const u = new URL(url);
  const h: Record<string, string> = { "Content-Length": String(Buffer.byteLength(body)) };
  for (const x of headers) h[x.slice(0, x.indexOf(": "))] = x.slice(x.indexOf(": ") + 2);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

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

test("demo login: the page names the Brand by its Agent Card (pactd's GetAgentCard); loginUrl returns to the page asked for", async () => {
  const { createServer: createHttpServer } = await import("node:http");
  const { connectNodeAdapter } = await import("@connectrpc/connect-node");
  const { Code, ConnectError } = await import("@connectrpc/connect");
  const { BrandService } = await import("@pactd/a2a/gen/pact/v1/brand_pb");
  const { pactdTransport } = await import("@pactd/a2a");
  const { cardNames } = await import("../src/web.js");
  const pactd = createHttpServer(connectNodeAdapter({
    routes: (r) => r.service(BrandService, {
      getAgentCard(req) {
        if (req.brandId !== "shop") throw new ConnectError("no such Brand", Code.NotFound);
        return { cardJson: '{"name":"not this"}', displayName: "Shop <Inc.>" };
      },
    }),
  }));
  await new Promise<void>((r) => pactd.listen(0, "127.0.0.1", r));
  const login = new DemoLogin();
  login.brandName = cardNames(pactdTransport("connect", "http://127.0.0.1:" + (pactd.address() as AddressInfo).port, "t"));
  const srv = createServer((req, res) => void login.handle(req, res).then((ok) => { if (!ok) { res.statusCode = 404; res.end(); } }));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const url = "http://127.0.0.1:" + (srv.address() as AddressInfo).port;
  try {
    assert.equal(login.loginUrl("a b", "/a2a/a b/oauth/consent?user_code=X Y"), "/demo/a%20b/login?return_to=%2Fa2a%2Fa+b%2Foauth%2Fconsent%3Fuser_code%3DX+Y");
    const page = await send(url + "/demo/shop/login?return_to=%2Fa2a%2Fshop%2Foauth%2Fconsent", "GET");
    assert.equal(page.status, 200);
    assert.match(page.body, /<title>Sign in to Shop &lt;Inc\.&gt;<\/title>/);
    assert.match(page.body, /name="return_to" value="\/a2a\/shop\/oauth\/consent"/);
    assert.match((await send(url + "/demo/other/login", "GET")).body, /<title>Sign in to other<\/title>/, "an unknown Brand is named by its id");
    const big = await send(url + "/demo/shop/login", "POST", "username=alice&pad=" + "x".repeat(9 << 10), "Content-Type: application/x-www-form-urlencoded");
    assert.deepEqual([big.status, big.headers.connection], [413, "close"]);
    assert.equal((await send(url + "/demo/shop/nope", "GET")).status, 404, "other paths are left alone");
  } finally {
    srv.closeAllConnections();
    pactd.closeAllConnections();
    await Promise.all([new Promise((r) => srv.close(r)), new Promise((r) => pactd.close(r))]);
  }
});
