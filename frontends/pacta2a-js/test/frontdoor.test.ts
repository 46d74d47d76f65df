// The HTTP adapter against a fake pactd: what Serve is told, what the
// client gets, the sign-in hook, turns, and pactd's failures.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { TurnSchema } from "../src/gen/pact/v1/frontdoor_pb.js";
import { CallerSchema, DelegationInfoSchema } from "../src/gen/pact/v1/verification_pb.js";
import type { Agent, Reply, Turn } from "../src/agent.js";
import type { Sessions } from "../src/sessions.js";
import { pactdTransport } from "../src/client.js";
import { FrontDoor } from "../src/frontdoor.js";
import { frontendToken, httpResponse, newEnv, response, send, until, type Env } from "./helpers.js";
import { RawConn, request } from "./rawhttp.js";

async function withEnv(cfg: Parameters<typeof newEnv>[0], f: (e: Env) => Promise<void>): Promise<void> {
  const e = await newEnv(cfg);
  try {
    await f(e);
  } finally {
    await e.close();
  }
}

/** The framing Node's server adds by itself; anything else in an answer must be pactd's. */
const framing = /^(date|connection|keep-alive|content-length|transfer-encoding):/i;

test("Serve gets the request as received: raw path and query, headers in order less Cookie and hop-by-hop, the body", () =>
  withEnv({}, async (e) => {
    const c = await RawConn.open(e.url);
    const body = '{"message":"é"}';
    try {
      await c.write(
        "POST /a2a/ac%6De/message%3Asend/%2F%zz//x?b=%20&a&a=1 HTTP/1.1\r\n" +
        "Host: front.example\r\nX-B: 1\r\nCookie: session=secret\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n" +
        "TE: trailers\r\nProxy-Connection: x\r\nTrailer: X-T\r\nUpgrade: h2c\r\nx-b: 2\r\nAuthorization: Bearer pa.jwt.sig\r\n" +
        "cookie: other=1\r\nContent-Type: application/json\r\nContent-Length: " + Buffer.byteLength(body) + "\r\n\r\n" + body);
      const r = await c.response(5000);
      assert.equal(r?.status, 200);
    } finally {
      c.destroy();
    }
    const s = e.pactd.serves[0]!;
    assert.equal(s.method, "POST");
    assert.equal(s.path, "/a2a/ac%6De/message%3Asend/%2F%zz//x");
    assert.equal(s.query, "b=%20&a&a=1");
    assert.deepEqual(s.headers.map((h) => [h.name, h.value]), [
      ["Host", "front.example"], ["X-B", "1"], ["x-b", "2"], ["Authorization", "Bearer pa.jwt.sig"],
      ["Content-Type", "application/json"], ["Content-Length", String(Buffer.byteLength(body))],
    ]);
    assert.equal(Buffer.from(s.body).toString("utf8"), body);
    assert.deepEqual([s.bodyTooLarge, s.signsInUsers, s.brandUser], [false, false, ""]);
    assert.match(s.clientAddress, /^(::ffff:)?127\.0\.0\.1$/);
  }));

test("Serve: a chunked body arrives whole; a query-less target has an empty query; absolute-form keeps only the path", () =>
  withEnv({}, async (e) => {
    const c = await RawConn.open(e.url);
    try {
      await c.write("POST /a2a/acme/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
      assert.equal((await c.response(5000))?.status, 200);
      await c.write("GET http://h.example/a2a/acme/y?q=1 HTTP/1.1\r\nHost: h.example\r\n\r\n");
      assert.equal((await c.response(5000))?.status, 200);
    } finally {
      c.destroy();
    }
    const [chunked, abs] = e.pactd.serves;
    assert.deepEqual([chunked!.path, chunked!.query, Buffer.from(chunked!.body).toString()], ["/a2a/acme/x", "", "abcde"]);
    assert.deepEqual(chunked!.headers.map((h) => h.name), ["Host"]);
    assert.deepEqual([abs!.path, abs!.query], ["/a2a/acme/y", "q=1"]);
  }));

test("pactd's answer is written as given: status, headers in order (repeats too), body bytes; nothing added but framing", () =>
  withEnv({}, async (e) => {
    const body = Buffer.from([0x7b, 0xff, 0x00, 0x0a, 0xe2, 0x80, 0xa8]);
    e.pactd.serve = () =>
      response(418, [["X-A", "1"], ["Set-Cookie", "a=1; Path=/"], ["x-a", "2"], ["Set-Cookie", "b=2"], ["Cache-Control", "no-store"]], body);
    const c = await RawConn.open(e.url);
    try {
      await c.write(request("GET", "/a2a/acme/tasks", []));
      const r = (await c.response(5000))!;
      assert.equal(r.status, 418);
      assert.deepEqual(r.lines.filter((l) => !framing.test(l)), ["X-A: 1", "Set-Cookie: a=1; Path=/", "x-a: 2", "Set-Cookie: b=2", "Cache-Control: no-store"]);
      assert.ok(r.lines.some((l) => l === "Content-Length: 7"), r.lines.join("|"));
      assert.deepEqual(r.bytes, body);
      // Control: without "Connection: close" the connection serves the next request.
      e.pactd.serve = () => response(200, [["Connection", "close"]], "bye");
      await c.write(request("GET", "/", []));
      const last = (await c.response(5000))!;
      assert.deepEqual([last.status, last.body, last.headers.get("connection")], [200, "bye", "close"]);
      assert.ok(await c.waitClosed(3000), "a Connection: close answer left the connection open");
    } finally {
      c.destroy();
    }
    // No Content-Type of the frontend's own on an answer without one.
    e.pactd.serve = () => response(204);
    const r = await send(e.url + "/", "GET");
    assert.deepEqual([r.status, r.headers["content-type"], r.body], [204, undefined, ""]);
  }));

test("sign-in: pactd asks who is signed in; Serve again with the User, or with the hook's sign-in URL when nobody is", async () => {
  const asked: string[] = [];
  const sessions: Sessions = {
    brandUser: async (req, brandId) => {
      asked.push(brandId);
      return /(^|; )u=alice($|;)/.test(req.headers.cookie ?? "") ? "alice" : "";
    },
    loginUrl: (brandId, returnTo) => "/demo/" + encodeURIComponent(brandId) + "/login?return_to=" + encodeURIComponent(returnTo),
  };
  await withEnv({ sessions }, async (e) => {
    e.pactd.serve = (req) =>
      req.brandUser === "" && req.signInUrl === ""
        ? { outcome: { case: "userNeeded", value: { brandId: "shop", returnTo: "/a2a/shop/oauth/connected?x=1" } } }
        : req.brandUser !== ""
          ? response(200, [["Content-Type", "text/html; charset=utf-8"]], "hello " + req.brandUser)
          : response(303, [["Location", req.signInUrl]]);
    const signedIn = await send(e.url + "/a2a/shop/oauth/connected?x=1", "POST", "a=1", "Cookie: u=alice");
    assert.deepEqual([signedIn.status, signedIn.body], [200, "hello alice"]);
    const [first, second] = e.pactd.serves;
    assert.deepEqual([first!.signsInUsers, first!.brandUser, second!.brandUser, second!.signInUrl], [true, "", "alice", ""]);
    assert.deepEqual({ ...second!, brandUser: "" }, first, "the second Serve is the same request (body too) with brand_user");
    const out = await send(e.url + "/a2a/shop/oauth/connected?x=1", "GET", "", "Cookie: u=bob");
    assert.deepEqual([out.status, out.headers.location, out.body], [303, "/demo/shop/login?return_to=%2Fa2a%2Fshop%2Foauth%2Fconnected%3Fx%3D1", ""]);
    const [third, fourth] = e.pactd.serves.slice(2);
    assert.deepEqual([fourth!.brandUser, fourth!.signInUrl], ["", "/demo/shop/login?return_to=%2Fa2a%2Fshop%2Foauth%2Fconnected%3Fx%3D1"]);
    assert.deepEqual({ ...fourth!, signInUrl: "" }, third, "the second Serve is the same request with sign_in_url");
    assert.equal(e.pactd.serves.length, 4);
    assert.deepEqual(asked, ["shop", "shop"]);
  });
  // Without a hook, pactd is told so; if it asks all the same, that is a fault (500, logged), not a guess.
  await withEnv({}, async (e) => {
    e.pactd.serve = () => ({ outcome: { case: "userNeeded", value: { brandId: "shop", returnTo: "/" } } });
    const r = await send(e.url + "/a2a/shop/oauth/connected", "GET");
    assert.deepEqual([r.status, r.body, e.pactd.serves[0]!.signsInUsers], [500, "", false]);
    assert.equal(e.logs.length, 1);
    assert.match(String(e.logs[0]!.fields["error"]), /no sign-in hook[\s\S]*frontdoor/);
  });
});

/** RecordingAgent records its turns and answers with reply (or throws it). */
class RecordingAgent implements Agent {
  turns: Turn[] = [];
  signals: AbortSignal[] = [];
  constructor(public answer: (t: Turn, signal: AbortSignal) => Promise<Reply>) {}
  reply(t: Turn, signal: AbortSignal): Promise<Reply> {
    this.turns.push(t);
    this.signals.push(signal);
    return this.answer(t, signal);
  }
}

const turn = (timeout = 5) =>
  create(TurnSchema, {
    handle: "h-1", brandId: "shop", contextId: "ctx-1", newContext: true, text: "cancel order 1002",
    caller: create(CallerSchema, { agentId: "agt_1", issuer: "https://pa.example", subject: "alice" }),
    delegation: create(DelegationInfoSchema, { grantId: "g_1", brandUser: "alice@shop", scopes: ["orders:cancel"] }),
    sdkRequestJson: "{}", sdkPath: "/a2a/shop/message:send", turnTimeoutSeconds: timeout,
  });

test("a turn: the agent gets pactd's turn, FinishTurn gets its reply (args as JSON), the PA gets FinishTurn's answer", async () => {
  const agent = new RecordingAgent(async () => ({
    text: "Done.", scopesUsed: ["orders:cancel"], needScopes: [],
    actions: [{ tool: "cancel_order", args: { orderId: "1002", note: "é\u2028", n: 1.5 } }, { tool: "list_orders" }, { tool: "zero", args: 0 }],
    metadata: { ticket: 7 },
  }));
  await withEnv({ agent }, async (e) => {
    e.pactd.serve = () => ({ outcome: { case: "turn", value: turn() } });
    e.pactd.finishTurn = () => ({ response: httpResponse(200, [["Content-Type", "application/a2a+json"]], '{"message":{}}') });
    const r = await send(e.url + "/a2a/shop/message:send", "POST", "{}", "Authorization: Bearer pa");
    assert.deepEqual([r.status, r.headers["content-type"], r.body], [200, "application/a2a+json", '{"message":{}}']);
    const t = agent.turns[0]!;
    assert.deepEqual([t.brandId, t.contextId, t.newContext, t.text, t.caller?.subject, t.delegation?.grantId],
      ["shop", "ctx-1", true, "cancel order 1002", "alice", "g_1"]);
    const fin = e.pactd.finishes[0]!;
    assert.equal(fin.handle, "h-1");
    assert.equal(fin.result.case, "reply");
    const reply = fin.result.value as import("../src/gen/pact/v1/frontdoor_pb.js").AgentReply;
    assert.deepEqual([reply.text, reply.scopesUsed, reply.needScopes, reply.metadataJson], ["Done.", ["orders:cancel"], [], '{"ticket":7}']);
    assert.deepEqual(reply.actions.map((a) => [a.tool, a.argsJson, a.argsHash]), [
      ["cancel_order", '{"orderId":"1002","note":"é\u2028","n":1.5}', ""], ["list_orders", "", ""], ["zero", "0", ""],
    ]);
  });
});

test("a failed turn is FinishTurn's failure, one line: the agent throws, answers nothing in time, or answers no text", async () => {
  const cases: [string, Agent["reply"], RegExp][] = [
    ["throws", async () => { throw new Error("database\ndown"); }, /^the agent failed: database down$/],
    ["too slow", (_t, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
      /^the agent failed: the agent did not answer within 1 s$/],
    ["no text", async () => ({ text: 5 }) as unknown as Reply, /^the agent failed: /],
    ["throws at once", () => { throw new TypeError("sync"); }, /^the agent failed: sync$/],
  ];
  for (const [name, reply, want] of cases) {
    const agent = new RecordingAgent(reply);
    await withEnv({ agent }, async (e) => {
      e.pactd.serve = () => ({ outcome: { case: "turn", value: turn(1) } });
      e.pactd.finishTurn = () => ({ response: httpResponse(500, [], "internal") });
      const r = await send(e.url + "/a2a/shop/message:send", "POST", "{}");
      assert.deepEqual([r.status, r.body], [500, "internal"], name);
      const fin = e.pactd.finishes[0]!;
      assert.equal(fin.result.case, "failure", name);
      assert.match(String(fin.result.value), want, name);
      if (name === "too slow") assert.equal(agent.signals[0]!.aborted, true, "the agent's signal aborts at the deadline");
      assert.deepEqual(e.logs.map((l) => [l.msg, l.fields["brand"], l.fields["error"]]), [["turn failed", "shop", fin.result.value]], name + ": logged once");
    });
  }
});

test("a turn runs to its end and FinishTurn is called even when the PA hangs up", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const agent = new RecordingAgent(async () => {
    await held;
    return { text: "late but stored" };
  });
  await withEnv({ agent }, async (e) => {
    e.pactd.serve = () => ({ outcome: { case: "turn", value: turn() } });
    const c = await RawConn.open(e.url);
    await c.write(request("POST", "/a2a/shop/message:send", [], "{}"));
    await until(() => agent.turns.length === 1, 5000, "the turn reaching the agent");
    c.destroy();
    await new Promise((r) => setTimeout(r, 50));
    release();
    await until(() => e.pactd.finishes.length === 1, 5000, "FinishTurn after the hang-up");
    const fin = e.pactd.finishes[0]!;
    assert.deepEqual([fin.result.case, (fin.result.value as { text: string }).text], ["reply", "late but stored"]);
  });
});

test("pactd fails: a bare 502 (no-store), one log line naming the RPC and never the request's secrets", async () => {
  const secret = "Bearer pa-secret-token";
  // Unreachable.
  const door = new FrontDoor({ transport: pactdTransport("connect", "http://127.0.0.1:9", frontendToken, 2000), logger: (m, f) => logs.push([m, f]) });
  const logs: [string, Record<string, unknown>][] = [];
  const { createServer } = await import("node:http");
  const srv = createServer((req, res) => void door.handle(req, res));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  try {
    const url = "http://127.0.0.1:" + (srv.address() as import("node:net").AddressInfo).port;
    const r = await send(url + "/a2a/shop/message:send?code=XYZ", "POST", "body-text", "Authorization: " + secret);
    assert.deepEqual([r.status, r.headers["cache-control"], r.body, r.headers["content-type"]], [502, "no-store", "", undefined]);
    assert.equal(logs.length, 1);
    assert.deepEqual([logs[0]![0], logs[0]![1]["rpc"], logs[0]![1]["code"]], ["pactd call failed", "Serve", "Unavailable"]);
    assert.doesNotMatch(JSON.stringify(logs), /pa-secret-token|body-text|XYZ/);
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
  // FinishTurn refused, Serve refused, and a wrong credential.
  await withEnv({}, async (e) => {
    e.pactd.serve = () => ({ outcome: { case: "turn", value: turn() } });
    e.pactd.finishTurn = () => { throw new ConnectError("handle expired", Code.FailedPrecondition); };
    const r = await send(e.url + "/a2a/shop/message:send", "POST", "{}", "Authorization: " + secret);
    assert.deepEqual([r.status, r.headers["cache-control"], r.body], [502, "no-store", ""]);
    assert.deepEqual(e.logs.map((l) => [l.fields["rpc"], l.fields["code"]]), [["FinishTurn", "FailedPrecondition"]]);
    e.pactd.serve = () => { throw new ConnectError("bad path", Code.InvalidArgument); };
    assert.equal((await send(e.url + "/x", "GET")).status, 502);
    assert.deepEqual(e.logs.at(-1)!.fields["rpc"], "Serve");
    assert.doesNotMatch(JSON.stringify(e.logs), /pa-secret-token/);
  });
  const wrong = await newEnv();
  try {
    const d = new FrontDoor({ transport: pactdTransport("connect", wrong.pactd.url, "not-the-credential"), logger: (m, f) => logs.push([m, f]) });
    const srv2 = createServer((req, res) => void d.handle(req, res));
    await new Promise<void>((r) => srv2.listen(0, "127.0.0.1", r));
    const r = await send("http://127.0.0.1:" + (srv2.address() as import("node:net").AddressInfo).port + "/", "GET");
    assert.equal(r.status, 502);
    assert.deepEqual(logs.at(-1)![1]["code"], "Unauthenticated");
    srv2.closeAllConnections();
    await new Promise((r) => srv2.close(r));
  } finally {
    await wrong.close();
  }
});

test("a fault in the library or pactd's answer: a bare 500, logged once with its stack, and the server goes on", () =>
  withEnv({}, async (e) => {
    const faults: [string, () => unknown][] = [
      ["empty answer", () => ({})],
      ["a header Node refuses", () => response(200, [["X-Bad", "a\r\nSet-Cookie: x=1"]])],
      ["a status Node refuses", () => response(42)],
      ["a turn without an answer", () => ({ outcome: { case: "turn", value: turn() } })],
    ];
    e.pactd.finishTurn = () => ({});
    for (const [name, serve] of faults) {
      e.pactd.serve = serve as never;
      const r = await send(e.url + "/a2a/shop/x", "GET");
      assert.deepEqual([r.status, r.body, r.headers["set-cookie"]], [500, "", undefined], name);
      assert.equal(e.logs.length, 1, name);
      assert.match(String(e.logs[0]!.fields["error"]), /\n\s+at /, name + ": the stack is logged");
      e.logs.length = 0;
    }
    e.pactd.serve = () => response(200, [], "still here");
    assert.equal((await send(e.url + "/", "GET")).body, "still here");
  }));

test("trace context: a valid traceparent (normalised) and its tracestate go on with the calls; an invalid one does not", () =>
  withEnv({}, async (e) => {
    const tid = "4bf92f3577b34da6a3ce929d0e0e4736";
    const sid = "00f067aa0ba902b7";
    await send(e.url + "/", "GET", "", `traceparent: 00-${tid}-${sid}-01`, "tracestate: vendor=x");
    await send(e.url + "/", "GET", "", `traceparent: 01-${tid}-${sid}-03`);
    for (const bad of [`00-${"0".repeat(32)}-${sid}-01`, `ff-${tid}-${sid}-01`, `00-${tid.toUpperCase()}-${sid}-01`, "garbage"]) {
      await send(e.url + "/", "GET", "", "traceparent: " + bad);
    }
    assert.deepEqual(e.pactd.headers.map((h) => [h.get("traceparent"), h.get("tracestate")]), [
      [`00-${tid}-${sid}-01`, "vendor=x"], [`00-${tid}-${sid}-01`, null], [null, null], [null, null], [null, null], [null, null],
    ]);
    // The PA's own header still reaches pactd in the request, as sent.
    assert.deepEqual(e.pactd.serves[1]!.headers.find((h) => h.name === "traceparent")?.value, `01-${tid}-${sid}-03`);
  }));

test("POST /api/platforms goes to pactd only where self-registration is offered", async () => {
  await withEnv({}, async (e) => {
    const r = await send(e.url + "/api/platforms", "POST", '{"name":"x"}');
    assert.deepEqual([r.status, r.body, e.pactd.serves.length], [404, "", 0]);
    // Control: every other path goes to pactd (its 404 page included).
    assert.equal((await send(e.url + "/api/other", "POST", "{}")).status, 200);
    assert.equal(e.pactd.serves.at(-1)!.path, "/api/other");
  });
  await withEnv({ selfRegistration: true }, async (e) => {
    assert.equal((await send(e.url + "/api/platforms", "POST", '{"name":"x"}')).status, 200);
    assert.equal(e.pactd.serves[0]!.path, "/api/platforms");
  });
});

test("every transport reaches pactd with the credential: Connect (HTTP/1.1, HTTP/2), gRPC, gRPC-Web", async () => {
  for (const kind of ["connect", "connect-h2", "grpc", "grpc-web"] as const) {
    const e = await newEnv({}, kind);
    try {
      e.pactd.serve = (req) => response(200, [], kind + " " + req.path);
      const r = await send(e.url + "/a2a/acme/tasks", "GET");
      assert.deepEqual([r.status, r.body], [200, kind + " /a2a/acme/tasks"]);
      assert.equal(e.pactd.headers[0]!.get("authorization"), "Bearer " + frontendToken);
    } finally {
      await e.close();
    }
  }
  assert.throws(() => pactdTransport("connect", "http://127.0.0.1:1", ""), /credential is empty/);
  assert.throws(() => pactdTransport("h3" as never, "http://127.0.0.1:1", "t"), /unknown kind "h3"/);
});
