// The body bound (1 MiB): past it pactd is told body_too_large and the
// connection is closed after the answer, so a keep-alive client never waits
// on a connection whose unread body would be parsed as its next request
// (RFC 9112 §9.3).
import { test } from "node:test";
import assert from "node:assert/strict";
import { newEnv, response, until, type Env } from "./helpers.js";
import { RawConn, request } from "./rawhttp.js";
import { maxBodyBytes } from "../src/frontdoor.js";

async function withEnv(f: (e: Env) => Promise<void>): Promise<void> {
  const e = await newEnv();
  try {
    e.pactd.serve = (req) =>
      req.bodyTooLarge
        ? response(413, [["Content-Type", "application/json"]], '{"error":"body_too_large"}')
        : response(200, [["Content-Type", "text/plain"]], "read " + req.body.length);
    await f(e);
  } finally {
    await e.close();
  }
}

test("keep-alive: a 1.5 MiB body on a keep-alive connection, then a second request: an answer or a closed connection, never a hang", () =>
  withEnv(async (e) => {
    const c = await RawConn.open(e.url);
    try {
      // The OAuth token endpoint's form, as a PA would send it, then the next request, without waiting.
      const big = "grant_type=x&pad=" + "a".repeat((3 << 19) - 17);
      void c.write(request("POST", "/a2a/acme/oauth/token", ["Content-Type: application/x-www-form-urlencoded"], big) +
        request("GET", "/a2a/acme/tasks", []));
      const first = await c.response(5000);
      assert.ok(first !== undefined, "the oversized request was never answered");
      assert.deepEqual([first.status, first.body], [413, '{"error":"body_too_large"}']);
      const second = await c.response(5000);
      assert.ok(second !== undefined || c.closed || (await c.waitClosed(100)), "the next request on the connection hangs");
      if (second) assert.equal(second.status, 200, "the next request was answered, and not from the refused body's rest");
      const s = e.pactd.serves[0]!;
      assert.deepEqual([s.bodyTooLarge, s.body.length, s.path], [true, 0, "/a2a/acme/oauth/token"]);
      assert.ok(e.pactd.serves.every((x) => x.method !== "a"), "the body's rest was parsed as a request");
    } finally {
      c.destroy();
    }
  }));

test("keep-alive: past the bound the answer is the connection's last; at the bound the body is read and the connection serves on", () =>
  withEnv(async (e) => {
    const c = await RawConn.open(e.url);
    try {
      // Control: exactly 1 MiB is a body, and the connection serves the next request.
      await c.write(request("POST", "/a2a/acme/message:send", [], "a".repeat(maxBodyBytes)));
      const r1 = await c.response(5000);
      assert.deepEqual([r1?.status, r1?.body], [200, "read " + maxBodyBytes]);
      await c.write(request("GET", "/a2a/acme/tasks", []));
      assert.equal((await c.response(5000))?.status, 200, "the request after a body at the bound was not answered");
      // One byte more: too large, Connection: close, closed.
      await c.write(request("POST", "/a2a/acme/message:send", [], "a".repeat(maxBodyBytes + 1)));
      const r2 = await c.response(5000);
      assert.deepEqual([r2?.status, r2?.headers.get("connection")], [413, "close"]);
      assert.ok(await c.waitClosed(3000), "the server kept open a connection with an unread body");
      assert.deepEqual(e.pactd.serves.map((s) => [s.bodyTooLarge, s.body.length]), [[false, maxBodyBytes], [false, 0], [true, 0]]);
    } finally {
      c.destroy();
    }
  }));

test("a body that declares 64 MiB and sends 2 MiB: answered once the bound is passed, and closed", () =>
  withEnv(async (e) => {
    const c = await RawConn.open(e.url);
    try {
      await c.write(request("POST", "/a2a/acme/message:send", [], "", 64 << 20));
      void c.write(Buffer.alloc(2 << 20, "a"));
      const r = await c.response(5000);
      assert.deepEqual([r?.status, r?.headers.get("connection")], [413, "close"]);
      assert.ok(await c.waitClosed(3000));
    } finally {
      c.destroy();
    }
  }));

test("a body the client never finishes counts as too large (a read error)", () =>
  withEnv(async (e) => {
    const c = await RawConn.open(e.url);
    await c.write(request("POST", "/a2a/acme/message:send", [], "", 100));
    await c.write("only part of it");
    await new Promise((r) => setTimeout(r, 50));
    c.destroy();
    await until(() => e.pactd.serves.length === 1, 5000, "Serve after the client went away");
    assert.deepEqual([e.pactd.serves[0]!.bodyTooLarge, e.pactd.serves[0]!.body.length], [true, 0]);
  }));
