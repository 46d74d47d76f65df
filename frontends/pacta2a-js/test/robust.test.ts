// No input stops the process, and an oversized body never leaves a
// keep-alive connection hanging (docs/frontends.md, "Limits and failures").
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { guard } from "../src/guard.js";
import { DemoLogin } from "../src/demo/login.js";
import type { Agent } from "../src/agent.js";
import type { Sessions } from "../src/oauth.js";
import { errBody, invalidParams, newEnv, send } from "./helpers.js";
import { RawConn, request } from "./rawhttp.js";

const good = "Authorization: Bearer good-alice";
const internal = errBody(500, "INTERNAL", "INTERNAL", "Internal error");
const tasks50 = '{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}';
const tooLargeBody = invalidParams("The request body is unreadable or too large");

function sendBody(textBytes: number): string {
  return '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"' + "a".repeat(textBytes) + '"}]}}';
}

test("keep-alive: after an oversized message:send is refused, the next request on the connection is answered", async () => {
  const e = await newEnv();
  const c = await RawConn.open(e.url);
  try {
    // Positive control: two requests on one connection.
    await c.write(request("POST", "/a2a/acme/message:send", [good], sendBody(10)));
    assert.equal((await c.response(3000))?.status, 200);
    await c.write(request("GET", "/a2a/acme/tasks", [good]));
    assert.equal((await c.response(3000))?.body, tasks50);
    // 1 MiB + 100 KiB: refused, the rest read through, the connection usable.
    await c.write(request("POST", "/a2a/acme/message:send", [good], sendBody((1 << 20) + (100 << 10))));
    const r1 = await c.response(5000);
    assert.deepEqual([r1?.status, r1?.body], [400, tooLargeBody]);
    await c.write(request("GET", "/a2a/acme/tasks", [good]));
    const r2 = await c.response(3000);
    assert.ok(r2, "the request after the refused body was never answered");
    assert.deepEqual([r2.status, r2.body], [200, tasks50]);
    assert.equal(e.agent.runs, 1, "only the positive control ran the agent");
  } finally {
    c.destroy();
    await e.close();
  }
});

test("keep-alive: a body too large to read through is answered with Connection: close, and the connection closes", async () => {
  const e = await newEnv();
  const c = await RawConn.open(e.url);
  try {
    // Declares 64 MiB, sends 2 MiB of it.
    await c.write(request("POST", "/a2a/acme/message:send", [good], "", 64 << 20));
    void c.write(Buffer.alloc(2 << 20, "a"));
    const r = await c.response(5000);
    assert.deepEqual([r?.status, r?.body], [400, tooLargeBody]);
    // The next request on the connection: answered, or the connection is
    // closed (here: closed, as the answer said); never left waiting.
    await c.write(request("GET", "/a2a/acme/tasks", [good]));
    const next = await c.response(3000);
    assert.ok(next !== undefined || c.closed, "the next request on the connection hangs: it is read as the refused body's rest");
    assert.equal(r?.headers.get("connection"), "close");
    assert.ok(await c.waitClosed(3000), "the server kept a connection open whose unread body would be parsed as requests");
  } finally {
    c.destroy();
    await e.close();
  }
});

test("page forms over 16 KiB get 413 and the connection stays usable; a smaller form is read", async () => {
  const sessions: Sessions = { brandUser: (req) => (req.headers.cookie === "u=alice" ? "alice" : ""), loginURL: () => "/login" };
  const e = await newEnv({ sessions });
  const c = await RawConn.open(e.url);
  const form = ["Cookie: u=alice", "Content-Type: application/x-www-form-urlencoded"];
  try {
    // Control: a small forged form is read and refused for its CSRF token (403).
    await c.write(request("POST", "/a2a/acme/oauth/consent/decision", form, "decision=allow&csrf=x&user_code=BCDF-GHJK"));
    assert.equal((await c.response(3000))?.status, 403);
    await c.write(request("POST", "/a2a/acme/oauth/consent/decision", form, "decision=allow&pad=" + "x".repeat(17 << 10)));
    const big = await c.response(3000);
    assert.equal(big?.status, 413);
    assert.match(big!.body, /The form is too large\./);
    await c.write(request("GET", "/a2a/acme/oauth/consent", ["Cookie: u=alice"]));
    assert.equal((await c.response(3000))?.status, 200, "the request after the refused form was never answered");
  } finally {
    c.destroy();
    await e.close();
  }
});

/** serveLikeMain composes a server as frontends/node's start() does: the demo sign-in, then the Frontend, under guard. */
async function serveLikeMain(fe: import("../src/handler.js").Frontend, login: DemoLogin, log: () => void): Promise<[Server, string]> {
  const srv = createServer(guard(async (req, res) => {
    if (req.url?.startsWith("/demo/") && (await login.handle(req, res))) return;
    await fe.handle(req, res);
  }, log));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return [srv, "http://127.0.0.1:" + (srv.address() as AddressInfo).port];
}

test("a non-ASCII Brand id in a demo login path signs in (its cookie name is a token) and the server keeps serving", async () => {
  const e = await newEnv();
  const [srv, url] = await serveLikeMain(e.fe, new DemoLogin(), () => {});
  try {
    const form = "Content-Type: application/x-www-form-urlencoded";
    const page = await send(url + "/demo/%C3%A9%E2%80%A8/login?return_to=x", "GET");
    assert.equal(page.status, 200);
    const r = await send(url + "/demo/%C3%A9/login", "POST", "username=alice&return_to=", form);
    assert.deepEqual([r.status, r.headers.location], [303, "/a2a/%C3%A9/oauth/connected"]);
    const euro = await send(url + "/demo/%E2%82%AC/login", "POST", "username=alice&return_to=", form);
    assert.deepEqual([euro.status, euro.headers.location], [303, "/a2a/%E2%82%AC/oauth/connected"]);
    assert.match(String(r.headers["set-cookie"]), /^demo_session_[A-Za-z0-9_-]{22}=alice\|/);
    const big = await send(url + "/demo/shop/login", "POST", "username=alice&pad=" + "x".repeat(17 << 10), form);
    assert.equal(big.status, 413);
    // Still serving every Brand.
    assert.equal((await send(url + "/a2a/acme/.well-known/agent-card.json", "GET")).status, 200);
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
    await e.close();
  }
});

test("a throwing agent, Sessions or logger is answered INTERNAL, logged once, and the server keeps serving", async () => {
  const throws: Agent = {
    reply() {
      throw new Error("agent threw synchronously");
    },
  };
  const garbage = { reply: async () => undefined } as unknown as Agent;
  const sessions: Sessions = {
    brandUser() {
      throw new Error("sessions threw");
    },
    loginURL: () => "/login",
  };
  const logs: string[] = [];
  for (const agent of [throws, garbage]) {
    const e = await newEnv({ agent, sessions, logger: (msg) => logs.push(msg) });
    try {
      logs.length = 0;
      const r = await send(e.url + "/a2a/acme/message:send", "POST", sendBody(2), good);
      assert.deepEqual([r.status, r.headers["content-type"], r.body], [500, "application/a2a+json", internal]);
      assert.deepEqual(logs, ["run turn"], "one log line for the failed turn");
      assert.equal(e.abandoned, 1, "the failed turn's messageId was not released");
      logs.length = 0;
      const p = await send(e.url + "/a2a/acme/oauth/consent", "GET", "", "Cookie: u=alice");
      assert.deepEqual([p.status, p.body], [500, internal]);
      assert.deepEqual(logs, ["serve"]);
      // Still serving.
      assert.equal((await send(e.url + "/a2a/acme/tasks", "GET", "", good)).body, tasks50);
    } finally {
      await e.close();
    }
  }
  // A logger that throws changes nothing about the answer.
  const e = await newEnv({ agent: throws, logger: () => { throw new Error("logger threw"); } });
  try {
    assert.equal((await send(e.url + "/a2a/acme/message:send", "POST", sendBody(2), good)).body, internal);
  } finally {
    await e.close();
  }
});

test("guard: a handler's throw or rejection is a 500 (INTERNAL under /a2a/), logged once; a begun answer closes the connection", async () => {
  const logs: string[] = [];
  const srv = createServer(guard((req, res) => {
    if (req.url === "/sync") throw new Error("sync");
    if (req.url === "/begun") {
      res.writeHead(200, { "Content-Length": 10 });
      res.write("12345");
      return Promise.reject(new Error("after headers"));
    }
    if (req.url === "/ok") return void res.end("ok");
    return Promise.reject(new Error("async"));
  }, (msg, f) => logs.push(msg + " " + String(f["path"]))));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const url = "http://127.0.0.1:" + (srv.address() as AddressInfo).port;
  try {
    const sync = await send(url + "/sync", "GET");
    assert.deepEqual([sync.status, sync.body], [500, ""]);
    const a2a = await send(url + "/a2a/x/message:send?q=1", "POST");
    assert.deepEqual([a2a.status, a2a.body], [500, internal]);
    const c = await RawConn.open(url);
    await c.write(request("GET", "/begun", []));
    assert.equal(await c.response(3000), undefined, "a half-sent answer must not look whole");
    assert.ok(c.closed, "the connection of a half-sent answer stays open");
    c.destroy();
    assert.deepEqual(logs, ["request failed /sync", "request failed /a2a/x/message:send", "request failed /begun"]);
    assert.equal((await send(url + "/ok", "GET")).body, "ok");
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
});
