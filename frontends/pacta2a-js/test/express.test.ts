// The @a2a-js/sdk bridge against the real SDK (1.3.0) on Express, in front
// of the fake pactd: what the SDK is handed, what its answers become, and
// that the bytes equal the standalone Frontend's for the same reply.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { AgentCard, Role, TaskState, type Message } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { restHandler } from "@a2a-js/sdk/server/express";
import { Pact } from "../src/express.js";
import { pactUser } from "../src/sdk/user.js";
import { roleAgent, stateAuthRequired, stepUpTask, withReceipt } from "../src/sdk/events.js";
import { EphemeralTaskStore } from "../src/sdk/store.js";
import { pactdTransport } from "../src/transport.js";
import type { Agent, Reply } from "../src/agent.js";
import type { Sessions } from "../src/oauth.js";
import { errBody, frontendToken, invalidParams, newEnv, send, type Env } from "./helpers.js";

const good = "Authorization: Bearer good-alice";
const internal = errBody(500, "INTERNAL", "INTERNAL", "Internal error");
const body = (text: string, extra = "") => `{"message":{"messageId":"m-${text.replace(/\W/g, "")}","role":"ROLE_USER","parts":[{"text":${JSON.stringify(text)}}]${extra}}}`;

function agentMessage(rc: RequestContext, text: string, metadata?: Record<string, unknown>): Message {
  return {
    messageId: "sdk-msg", contextId: rc.contextId, taskId: "", role: Role.ROLE_AGENT, metadata,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }], extensions: [], referenceTaskIds: [],
  };
}

/** TestExecutor answers by the turn's text; it records what the SDK handed it. */
class TestExecutor implements AgentExecutor {
  runs = 0;
  seen: RequestContext[] = [];
  late: (() => void) | undefined;

  async execute(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    this.runs++;
    this.seen.push(rc);
    const text = rc.userMessage.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("\n");
    const u = pactUser(rc);
    const publish = (m: Message) => bus.publish(AgentEvent.message(m));
    if (text === "hi") publish(agentMessage(rc, "echo " + text + " from " + u?.userName, { x: 1, "pact.secret": "dropped" }));
    else if (text === "two parts") {
      const m = agentMessage(rc, "one");
      m.parts.push({ content: { $case: "text", value: "two" }, metadata: undefined, filename: "", mediaType: "" });
      publish(m);
    } else if (text === "receipt") publish(withReceipt(agentMessage(rc, "done", { y: [1] }), ["orders:read"], [{ tool: "cancel_order", args: { orderId: "1002" } }, { tool: "list" }]));
    else if (text.startsWith("need ")) bus.publish(AgentEvent.task(stepUpTask(rc, [text.slice(5)], "not here")));
    else if (text === "data") {
      const m = agentMessage(rc, "x");
      m.parts = [{ content: { $case: "data", value: { a: 1 } }, metadata: undefined, filename: "", mediaType: "" }];
      publish(m);
    } else if (text === "working") {
      bus.publish(AgentEvent.task({ id: rc.taskId, contextId: rc.contextId, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined }, artifacts: [], history: [], metadata: undefined }));
      bus.publish(AgentEvent.statusUpdate({ taskId: rc.taskId, contextId: rc.contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined }, metadata: undefined }));
    } else if (text === "boom") throw new Error("boom");
    else if (text === "slow") {
      // Answers only after the middleware gave up: that late answer must never reach the PA.
      await new Promise<void>((r) => (this.late = r));
      publish(agentMessage(rc, "too late"));
    } else if (text === "headers") {
      const h = rc.context.state.get("headers") as Record<string, unknown>;
      publish(agentMessage(rc, JSON.stringify([h["authorization"], h["cookie"], h["x-a2a-user-delegation"], h["content-type"], h["a2a-version"],
        rc.context.tenant, rc.userMessage.contextId === rc.contextId, rc.request.metadata])));
    } else publish(agentMessage(rc, "?"));
    bus.finished();
  }

  async cancelTask(): Promise<void> {}
}

interface SdkEnv {
  e: Env;
  url: string;
  exec: TestExecutor;
  logs: string[];
  close(): Promise<void>;
}

async function sdkEnv(turnTimeoutMs?: number, sessions?: Sessions): Promise<SdkEnv> {
  const e = await newEnv();
  const exec = new TestExecutor();
  const logs: string[] = [];
  let ids = 0;
  const pact = new Pact({
    pactdUrl: e.pactdUrl, token: frontendToken, transport: pactdTransport("connect", e.pactdUrl, frontendToken),
    newMessageId: () => "reply-" + ++ids, logger: (msg, f) => logs.push(msg + ": " + String(f["error"])), ...(turnTimeoutMs ? { turnTimeoutMs } : {}),
    ...(sessions ? { sessions } : {}),
  });
  const card = AgentCard.fromJSON({
    name: "t", description: "t", version: "1", capabilities: {}, skills: [], defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
    supportedInterfaces: [{ url: "http://x/a2a", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }],
  });
  // A Provider's own request handler may refuse a call with an SDK error.
  class Handler extends DefaultRequestHandler {
    override async sendMessage(...args: Parameters<DefaultRequestHandler["sendMessage"]>) {
      const p = args[0].message?.parts[0]?.content;
      if (p?.$case === "text" && p.value === "unsupported") throw new UnsupportedOperationError("the SDK says no");
      return super.sendMessage(...args);
    }
  }
  const requestHandler = new Handler(card, new EphemeralTaskStore(), exec, undefined, undefined, undefined, undefined, undefined,
    { keepBusAliveStates: [], validateInputModes: true });
  const app = express();
  app.use("/a2a", pact.middleware(), restHandler({ requestHandler, userBuilder: pact.userBuilder }));
  app.use("/direct", restHandler({ requestHandler, userBuilder: pact.userBuilder }));
  app.get("/boom", () => {
    throw new Error("a route of the app threw");
  });
  app.use(pact.errorHandler());
  const srv: Server = createServer(app);
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return {
    e, exec, logs, url: "http://127.0.0.1:" + (srv.address() as AddressInfo).port,
    close: async () => {
      exec.late?.();
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
      await e.close();
    },
  };
}

test("the SDK's enum values the helpers use are the SDK's own", () => {
  assert.equal(roleAgent, Role.ROLE_AGENT);
  assert.equal(stateAuthRequired, TaskState.TASK_STATE_AUTH_REQUIRED);
});

test("SDK bridge: a Message becomes PACT's reply (texts joined, metadata passed on less pact.*), replays byte for byte", async () => {
  const s = await sdkEnv();
  try {
    const r = await send(s.url + "/a2a/acme/message:send", "POST", body("hi"), good);
    assert.equal(r.status, 200, r.body);
    assert.equal(r.headers["content-type"], "application/a2a+json");
    const ctx = JSON.parse(r.body).message.contextId as string;
    assert.equal(r.body, `{"message":{"messageId":"reply-1","contextId":"${ctx}","role":"ROLE_AGENT","parts":[{"text":"echo hi from agt_1:alice"}],"metadata":{"x":1}}}`);
    const again = await send(s.url + "/a2a/acme/message:send", "POST", body("hi", `,"contextId":"${ctx}"`), good);
    assert.equal(again.body, r.body, "a retry of the messageId gets the stored bytes");
    const two = await send(s.url + "/a2a/acme/message:send", "POST", body("two parts", `,"contextId":"${ctx}"`), good);
    assert.equal(JSON.parse(two.body).message.parts[0].text, "one\ntwo");
    assert.equal(s.exec.runs, 2, "the retry ran the SDK again");
  } finally {
    await s.close();
  }
});

test("SDK bridge: the SDK is handed the normalized request, with the verified caller as its User", async () => {
  const s = await sdkEnv();
  try {
    // Content-Type text/plain and A2A-Version 2.0 are not PACT's business: the SDK still gets JSON and 1.0.
    const r = await send(s.url + "/a2a/acme/message:send", "POST", body("headers").slice(0, -1) + ',"metadata":{"m":2}}', good,
      "X-A2A-User-Delegation: Bearer deleg-bob", "Cookie: s=1", "Content-Type: text/plain", "A2A-Version: 2.0");
    assert.equal(r.status, 200, r.body);
    const seen = JSON.parse(JSON.parse(r.body).message.parts[0].text) as unknown[];
    assert.deepEqual(seen, [null, null, null, "application/json", "1.0", "acme", true, { m: 2 }]);
    const rc = s.exec.seen[0]!;
    const u = pactUser(rc)!;
    assert.deepEqual([u.isAuthenticated, u.userName, u.brandId, u.caller.issuer, u.delegation?.brandUser, u.delegation?.grantId, u.newContext],
      [true, "agt_1:alice", "acme", "https://pa.example", "bob", "g_1", true]);
  } finally {
    await s.close();
  }
});

test("SDK bridge: a delegated reply carries pactd's receipt, built from pact.scopesUsed and pact.actions; bytes equal the standalone path", async () => {
  const s = await sdkEnv();
  // The standalone Frontend with an Agent giving the same Reply.
  const reply: Reply = { text: "done", metadata: { y: [1] }, scopesUsed: ["orders:read"], actions: [{ tool: "cancel_order", args: { orderId: "1002" } }, { tool: "list" }] };
  const agent: Agent = { reply: async () => reply };
  const alone = await newEnv({ agent });
  try {
    const a = await send(s.url + "/a2a/acme/message:send", "POST", body("receipt"), good, "X-A2A-User-Delegation: Bearer deleg-bob");
    const b = await send(alone.url + "/a2a/acme/message:send", "POST", body("receipt"), good, "X-A2A-User-Delegation: Bearer deleg-bob");
    assert.equal(a.status, 200, a.body);
    const norm = (x: string) => x.replace(JSON.parse(x).message.contextId, "CTX");
    assert.equal(norm(a.body), norm(b.body));
    const m = JSON.parse(a.body).message;
    assert.deepEqual(Object.keys(m.metadata), ["y", "pact.receipt"]);
    // The fake pactd echoes what SignReceipt was asked: argsHash = base64url SHA-256 of {"orderId":"1002"}
    // (computed apart: python3 hashlib.sha256(b'{"orderId":"1002"}'), base64url without padding).
    assert.deepEqual(m.metadata["pact.receipt"].claims, { grantId: "g_1", user: "bob", pa: "https://pa.example", scopesUsed: ["orders:read"],
      actions: [["cancel_order", "_rjrPQ1xDeZW7jX81lABaETgD3jn0tXW-ayuxPmjKTg"], ["list", ""]] });
  } finally {
    await alone.close();
    await s.close();
  }
});

test("SDK bridge: an AUTH_REQUIRED task with pact.missingScopes is PACT's step-up, or its text where the Brand has no delegation", async () => {
  const s = await sdkEnv();
  try {
    const r = await send(s.url + "/a2a/acme/message:send", "POST", body("need orders:read"), good);
    assert.equal(r.status, 200, r.body);
    const t = JSON.parse(r.body).task;
    assert.deepEqual([t.id, t.status.state, t.metadata], ["t-1", "TASK_STATE_AUTH_REQUIRED",
      { "pact.missingScopes": ["orders:read"], "pact.verificationUriComplete": "https://brand.example/login?return_to=x" }]);
    assert.equal(s.e.abandoned, 1, "a step-up is not stored: its messageId is released");
    const beta = await send(s.url + "/a2a/beta/message:send", "POST", body("need orders:read"), good);
    assert.equal(JSON.parse(beta.body).message.parts[0].text, "not here");
  } finally {
    await s.close();
  }
});

test("SDK bridge: other answers fail the turn (INTERNAL, logged once, messageId released); INVALID_PARAMS-like SDK errors are relayed", async () => {
  const s = await sdkEnv(1500);
  try {
    for (const [text, cause] of [["data", /part that is not text/], ["working", /TASK_STATE_WORKING|finished without a result/], ["boom", /INTERNAL|boom|500/], ["slow", /did not answer within 1500 ms/]] as const) {
      s.logs.length = 0;
      const before = s.e.abandoned;
      const r = await send(s.url + "/a2a/acme/message:send", "POST", body(text), good);
      assert.deepEqual([r.status, r.body], [500, internal], text);
      assert.equal(s.logs.length, 1, text + ": " + s.logs.join("; "));
      assert.match(s.logs[0]!, cause, text);
      assert.equal(s.e.abandoned, before + 1, text + ": messageId not released");
    }
    // The late answer of "slow" comes now; the server keeps serving, and it reached nobody.
    s.exec.late?.();
    s.exec.late = undefined;
    const un = await send(s.url + "/a2a/acme/message:send", "POST", body("unsupported"), good);
    assert.deepEqual([un.status, un.body], [400, errBody(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", "the SDK says no")]);
    // The SDK's own input-mode check (validateInputModes): CONTENT_TYPE_NOT_SUPPORTED with its message.
    const html = await send(s.url + "/a2a/acme/message:send", "POST",
      '{"message":{"messageId":"m-html","role":"ROLE_USER","parts":[{"text":"hi","mediaType":"text/html"}]}}', good);
    assert.deepEqual([html.status, html.body], [400, errBody(400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED",
      "Media type 'text/html' is not supported. Supported media types: text/plain.")]);
    // Positive control.
    assert.equal((await send(s.url + "/a2a/acme/message:send", "POST", body("hi"), good)).status, 200);
  } finally {
    await s.close();
  }
});

test("SDK bridge: PACT's routes never reach the SDK; a call that bypasses the middleware is refused by userBuilder", async () => {
  const s = await sdkEnv();
  try {
    assert.deepEqual([(await send(s.url + "/a2a/acme/unknown", "GET")).status, (await send(s.url + "/a2a/acme/message:send", "GET")).status], [404, 405]);
    assert.equal((await send(s.url + "/a2a/acme/message:send", "POST", body("hi"))).status, 401);
    assert.equal((await send(s.url + "/a2a/acme/tasks", "GET", "", good)).body, '{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}');
    assert.equal((await send(s.url + "/a2a/acme/message:send", "POST", "{", good)).body, invalidParams('The body must be JSON: {"message": Message}'));
    assert.equal(s.exec.runs, 0);
    const direct = await send(s.url + "/direct/message:send", "POST", body("hi"), "Content-Type: application/json", "A2A-Version: 1.0");
    assert.equal(direct.status, 500);
    assert.equal(s.exec.runs, 0, "the SDK ran a call that did not come through the middleware");
  } finally {
    await s.close();
  }
});

test("SDK bridge: the pages see the request target the client sent, not Express's mount-relative url", async () => {
  const sessions: Sessions = { brandUser: (req) => (req.headers.cookie === "u=alice" ? "alice" : ""), loginURL: (b, r) => "/login?r=" + encodeURIComponent(r) };
  const s = await sdkEnv(undefined, sessions);
  try {
    const anon = await send(s.url + "/a2a/acme/oauth/consent?user_code=BCDF-GHJK", "GET");
    assert.deepEqual([anon.status, anon.headers.location], [303, "/login?r=%2Fa2a%2Facme%2Foauth%2Fconsent%3Fuser_code%3DBCDF-GHJK"]);
    const page = await send(s.url + "/a2a/acme/oauth/consent?user_code=BCDF-GHJK", "GET", "", "Cookie: u=alice");
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const allow = await send(s.url + "/a2a/acme/oauth/consent/decision", "POST", `csrf=${encodeURIComponent(csrf)}&user_code=BCDF-GHJK&decision=allow&scope=orders%3Aread`,
      "Cookie: u=alice", "Content-Type: application/x-www-form-urlencoded");
    // "../connected?…" resolved against /a2a/acme/oauth/consent/decision.
    assert.deepEqual([allow.status, allow.headers.location], [303, "/a2a/acme/oauth/connected?status=approved"]);
  } finally {
    await s.close();
  }
});

test("errorHandler: a failure elsewhere in the app is a bare 500, logged once", async () => {
  const s = await sdkEnv();
  try {
    const r = await send(s.url + "/boom", "GET");
    assert.deepEqual([r.status, r.body], [500, ""]);
    assert.deepEqual(s.logs, ["request failed: a route of the app threw"]);
  } finally {
    await s.close();
  }
});
