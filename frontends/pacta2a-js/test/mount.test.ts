// What a program mounts: the front door as Express middleware, and panic
// recovery around any handler.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { FrontDoor } from "../src/frontdoor.js";
import { pactdTransport } from "../src/client.js";
import { errorHandler, recover, type RequestHandler } from "../src/recover.js";
import { fakePactd, frontendToken, response, send } from "./helpers.js";
import { RawConn, request } from "./rawhttp.js";

async function serve(h: RequestHandler): Promise<[string, Server]> {
  const srv = createServer(h);
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return ["http://127.0.0.1:" + (srv.address() as AddressInfo).port, srv];
}

async function stop(srv: Server): Promise<void> {
  srv.closeAllConnections();
  await new Promise((r) => srv.close(r));
}

test("middleware: GET /, everything under /a2a/ and (when offered) POST /api/platforms go to pactd; the rest goes on", async () => {
  const pactd = await fakePactd();
  pactd.serve = (req) => response(200, [], "pactd " + req.method + " " + req.path);
  const logs: unknown[] = [];
  for (const selfRegistration of [false, true]) {
    const door = new FrontDoor({ transport: pactdTransport("connect", pactd.url, frontendToken), selfRegistration, logger: (m, f) => logs.push([m, f]) });
    const app = express();
    app.use(door.middleware());
    app.use((req, res) => void res.status(299).send("app " + req.method + " " + req.originalUrl));
    const [url, srv] = await serve(app);
    try {
      const cases: [string, string, string][] = [
        ["GET", "/", "pactd GET /"],
        ["HEAD", "/", ""],
        ["POST", "/", "app POST /"],
        ["GET", "/?x=1", "pactd GET /"],
        ["POST", "/a2a/acme/message:send", "pactd POST /a2a/acme/message:send"],
        ["GET", "/a2a/a%2Fb/x%3A", "pactd GET /a2a/a%2Fb/x%3A"],
        ["GET", "/a2a", "app GET /a2a"],
        ["GET", "/demo/acme/login", "app GET /demo/acme/login"],
        ["POST", "/api/platforms", selfRegistration ? "pactd POST /api/platforms" : "app POST /api/platforms"],
        ["GET", "/api/platforms", "app GET /api/platforms"],
      ];
      for (const [method, path, want] of cases) {
        const r = await send(url + path, method);
        assert.equal(r.body, want, `${method} ${path} (selfRegistration ${selfRegistration})`);
      }
    } finally {
      await stop(srv);
    }
  }
  assert.deepEqual(logs, []);
  await pactd.close();
});

test("middleware: a 1.5 MiB body through Express closes the connection after pactd's answer, as the standalone adapter does", async () => {
  const pactd = await fakePactd();
  pactd.serve = (req) => response(req.bodyTooLarge ? 413 : 200, [], String(req.bodyTooLarge));
  const app = express();
  app.use(new FrontDoor({ transport: pactdTransport("connect", pactd.url, frontendToken) }).middleware());
  const [url, srv] = await serve(app);
  const c = await RawConn.open(url);
  try {
    void c.write(request("POST", "/a2a/acme/oauth/token", [], "a".repeat(3 << 19)) + request("GET", "/a2a/acme/tasks", []));
    assert.deepEqual((await c.response(5000))?.status, 413);
    const second = await c.response(5000);
    assert.ok(second !== undefined || c.closed || (await c.waitClosed(100)), "the next request on the connection hangs");
  } finally {
    c.destroy();
    await stop(srv);
    await pactd.close();
  }
});

test("recover: a handler that throws or rejects gets a bare 500, logged once with its stack; the server goes on", async () => {
  const logs: [string, Record<string, unknown>][] = [];
  const [url, srv] = await serve(recover((req, res) => {
    const path = req.url?.split("?")[0];
    if (path === "/sync") throw new Error("sync failure");
    if (path === "/async") return Promise.reject(new Error("async failure"));
    if (path === "/begun") {
      res.writeHead(200, { "Content-Length": "10" });
      res.write("half");
      throw new Error("after the answer began");
    }
    res.end("fine");
  }, (m, f) => logs.push([m, f])));
  try {
    for (const path of ["/sync", "/async"]) {
      const r = await send(url + path + "?secret=1", "GET");
      assert.deepEqual([r.status, r.body, r.headers["cache-control"]], [500, "", "no-store"], path);
    }
    await assert.rejects(send(url + "/begun", "GET"), "half an answer is cut off, never completed");
    assert.equal((await send(url + "/ok", "GET")).body, "fine");
    assert.deepEqual(logs.map(([m, f]) => [m, f["path"]]), [["request failed", "/sync"], ["request failed", "/async"], ["request failed", "/begun"]]);
    assert.match(String(logs[0]![1]["error"]), /sync failure\n\s+at /);
    assert.doesNotMatch(JSON.stringify(logs), /secret/);
  } finally {
    await stop(srv);
  }
  // A logger that throws does not stop the answer.
  const [url2, srv2] = await serve(recover(() => { throw new Error("x"); }, () => { throw new Error("logger down"); }));
  try {
    assert.equal((await send(url2 + "/", "GET")).status, 500);
  } finally {
    await stop(srv2);
  }
});

test("errorHandler: an Express route's failure is a bare 500 without the stack Express would show, logged once", async () => {
  const logs: unknown[] = [];
  const app = express();
  app.get("/boom", () => {
    throw new Error("a route threw");
  });
  app.use(errorHandler((m, f) => logs.push([m, f["path"]])));
  const [url, srv] = await serve(app);
  try {
    const r = await send(url + "/boom", "GET");
    assert.deepEqual([r.status, r.body], [500, ""]);
    assert.deepEqual(logs, [["request failed", "/boom"]]);
  } finally {
    await stop(srv);
  }
});
