import { test } from "node:test";
import assert from "node:assert/strict";
import { Frontend } from "../src/handler.js";
import { pactdTransport } from "../src/transport.js";
import {
  errBody,
  frontendToken,
  invalidParams,
  newEnv,
  otherBrandUser,
  pendingDuplicate,
  replyIdCollision,
  send,
  unknownContext,
  type Env,
  type Res,
} from "./helpers.js";

const good = "Authorization: Bearer good-alice";
const a2aType = "application/a2a+json";

function wantA2A(name: string, r: Res, status: number, body: string): void {
  assert.deepEqual([r.status, r.headers["content-type"], r.body], [status, a2aType, body], name);
}

function wantBare(name: string, r: Res, status: number): void {
  assert.equal(r.status, status, name);
  assert.equal(r.body, "", name + ": body");
  assert.notEqual(r.headers["content-type"], a2aType, name + ": content type");
}

async function withEnv(f: (e: Env) => Promise<void>): Promise<void> {
  const e = await newEnv();
  try {
    await f(e);
  } finally {
    await e.close();
  }
}

test("Agent Card: pactd's card and headers, no authentication; unknown Brand 404, POST 405", () =>
  withEnv(async (e) => {
    const r = await send(e.url + "/a2a/acme/.well-known/agent-card.json", "GET");
    assert.equal(r.status, 200);
    assert.equal(r.headers["content-type"], a2aType);
    assert.equal(r.headers["cache-control"], "public, max-age=300");
    assert.equal(r.headers["access-control-allow-origin"], "*");
    assert.equal(JSON.parse(r.body).name, "ACME");
    wantBare("unknown Brand", await send(e.url + "/a2a/nope/.well-known/agent-card.json", "GET"), 404);
    wantBare("POST", await send(e.url + "/a2a/acme/.well-known/agent-card.json", "POST"), 405);
    assert.equal(e.verifyCalls.length, 0, "the card route needs no VerifyAgentRequest");
  }));

test("unmatched routes are 404/405 before authentication and never reach pactd", () =>
  withEnv(async (e) => {
    const cases: [string, string, number][] = [
      ["GET", "/a2a/acme/unknown", 404],
      ["GET", "/a2a/acme/message:send", 405],
      ["PUT", "/a2a/acme/message:send", 405],
      ["DELETE", "/a2a/acme/message:send", 405],
      ["GET", "/a2a/acme/message%3Asend", 405],
      ["POST", "/a2a/acme/tasks", 405],
      ["GET", "/a2a/acme/tasks/x:cancel", 405],
      ["GET", "/a2a/acme/tasks/x:subscribe", 405],
      ["GET", "/a2a/acme/message:stream", 405],
      ["POST", "/a2a/acme/extendedAgentCard", 405],
      ["DELETE", "/a2a/acme/tasks/x/pushNotificationConfigs", 405],
      ["POST", "/a2a/acme/tasks/x/pushNotificationConfigs/c", 405],
      ["POST", "/a2a/acme/tasks/x", 405],
      ["GET", "/a2a/acme/tasks/", 404],
      ["GET", "/a2a/acme/tasks/x/y", 404],
      ["GET", "/a2a/acme/tasks/x/pushNotificationConfigs/c/d", 404],
      ["POST", "/a2a/acme/tasks/:cancel", 405], // ":cancel" alone is a task id
      ["POST", "/a2a/acme/message:send/", 404],
      ["POST", "/a2a/acme", 404],
      ["POST", "/a2a//message:send", 404],
      ["GET", "/a2a/acme/tasks/%zz", 404], // a bad escape matches nothing
      ["POST", "/", 404], // GET / is the root page (pages.test.ts)
      ["GET", "/a2a", 404],
      ["GET", "/.well-known/agent-card.json", 404],
      ["GET", "/a2a/acme/oauth/token", 405],
      ["GET", "/a2a/acme/oauth/nothing", 404],
    ];
    for (const [method, path, status] of cases) {
      for (const hdrs of [[], [good]]) {
        const r = await send(e.url + path, method, "{}", ...hdrs);
        wantBare(`${method} ${path} ${hdrs.join()}`, r, status);
        if (status === 405) assert.ok(r.headers["allow"], `${method} ${path}: 405 without Allow`);
      }
    }
    assert.equal((await send(e.url + "/a2a/acme/tasks/x/pushNotificationConfigs", "DELETE")).headers["allow"], "GET, POST");
    assert.equal(e.rpcs, 0, "unmatched routes called pactd");
  }));

test("authentication is pactd's answer: status, WWW-Authenticate, Retry-After, no body; raw headers passed", () =>
  withEnv(async (e) => {
    const msg = '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}';
    const refused: string[][] = [[], ["Authorization: Basic Zm9vOmJhcg=="], ["Authorization: Bearer bad"], [good, "Authorization: Bearer good-bob"]];
    for (const hdrs of refused) {
      for (const [m, p] of [["POST", "/a2a/acme/message:send"], ["GET", "/a2a/acme/tasks"], ["GET", "/a2a/acme/tasks/t1"], ["POST", "/a2a/acme/message:stream"]] as const) {
        const r = await send(e.url + p, m, msg, ...hdrs);
        wantBare(`${m} ${p} ${hdrs.join()}`, r, 401);
        assert.equal(r.headers["www-authenticate"], 'Bearer realm="a2a"');
      }
    }
    // Two Authorization headers reach pactd joined, so it refuses them.
    assert.ok(e.verifyCalls.some((c) => c.authorization === "Bearer good-alice, Bearer good-bob"));
    const busy = await send(e.url + "/a2a/acme/message:send", "POST", msg, "Authorization: Bearer busy");
    wantBare("rate limited", busy, 429);
    assert.equal(busy.headers["retry-after"], "7");
    wantBare("unknown Brand", await send(e.url + "/a2a/nope/message:send", "POST", msg, good), 404);
    wantBare("unknown Brand tasks", await send(e.url + "/a2a/nope/tasks", "GET", "", good), 404);
    assert.equal(e.agent.runs, 0, "the agent ran for a refused request");
    // Positive control: pactd got the Brand from the path and the raw header values.
    const ok = await send(e.url + "/a2a/beta/tasks", "GET", "", good, "X-A2A-User-Delegation: Bearer deleg-u1");
    assert.equal(ok.status, 200);
    const last = e.verifyCalls.at(-1)!;
    assert.deepEqual([last.brandId, last.authorization, last.userDelegation], ["beta", "Bearer good-alice", "Bearer deleg-u1"]);
  }));

test("fixed error routes and the task list, with their exact bodies", () =>
  withEnv(async (e) => {
    const unsupported = (m: string) => errBody(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", m);
    const notFound = (m: string) => errBody(404, "NOT_FOUND", "TASK_NOT_FOUND", m);
    const push = errBody(400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notifications are not supported");
    const cases: [string, string, number, string][] = [
      ["GET", "/a2a/acme/tasks/t-123", 404, notFound("Task not found: t-123")],
      ["POST", "/a2a/acme/tasks/t-123:cancel", 404, notFound("Task not found: t-123")],
      ["POST", "/a2a/acme/tasks/t-123%3Acancel", 404, notFound("Task not found: t-123")],
      ["POST", "/a2a/acme/tasks/t-123%3acancel", 404, notFound("Task not found: t-123")],
      ["GET", "/a2a/acme/tasks/%3Cb%3E&x", 404, notFound("Task not found: <b>&x")],
      ["GET", "/a2a/acme/tasks/%E2%80%A8", 404, '{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found: \\u2028","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}'],
      ["POST", "/a2a/acme/message:stream", 400, unsupported("Streaming is not supported")],
      ["POST", "/a2a/acme/message%3Astream", 400, unsupported("Streaming is not supported")],
      ["POST", "/a2a/acme/tasks/t1:subscribe", 400, unsupported("Subscribing to tasks is not supported")],
      ["GET", "/a2a/acme/extendedAgentCard", 400, unsupported("The extended Agent Card is not supported")],
      ["GET", "/a2a/acme/tasks/t1/pushNotificationConfigs", 400, push],
      ["POST", "/a2a/acme/tasks/t1/pushNotificationConfigs", 400, push],
      ["GET", "/a2a/acme/tasks/t1/pushNotificationConfigs/c1", 400, push],
      ["DELETE", "/a2a/acme/tasks/t1/pushNotificationConfigs/c1", 400, push],
      ["GET", "/a2a/acme/tasks", 200, '{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}'],
      ["GET", "/a2a/acme/tasks?pageSize=1", 200, '{"tasks":[],"nextPageToken":"","pageSize":1,"totalSize":0}'],
      ["GET", "/a2a/acme/tasks?pageSize=100&status=x&pageToken=y", 200, '{"tasks":[],"nextPageToken":"","pageSize":100,"totalSize":0}'],
    ];
    for (const bad of ["0", "101", "-1", "1.5", "abc", "", "+5", "%205", "5&pageSize=5", "99999999999999999999"]) {
      cases.push(["GET", "/a2a/acme/tasks?pageSize=" + bad, 400, invalidParams("pageSize must be an integer from 1 to 100")]);
    }
    for (const [m, p, status, body] of cases) wantA2A(`${m} ${p}`, await send(e.url + p, m, "", good), status, body);
  }));

test("message:send validation in the order of PACT §4, nothing run for a refusal", () =>
  withEnv(async (e) => {
    const msg = (fields: string) => `{"message":{${fields}}}`;
    const id = '"messageId":"m1"';
    const user = '"role":"ROLE_USER"';
    const text = '"parts":[{"text":"hi"}]';
    const badBody = invalidParams('The body must be JSON: {"message": Message}');
    const badPart = invalidParams("Each part must be an object with exactly one of text, raw, url or data");
    const badParts = invalidParams("message.parts must be a non-empty array of parts");
    const noText = errBody(400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", "Only text parts are supported");
    const cases: [string, string, number, string][] = [
      ["not-json", "{", 400, badBody],
      ["empty", "", 400, badBody],
      ["array", "[]", 400, badBody],
      ["null", "null", 400, badBody],
      ["no-message", "{}", 400, badBody],
      ["message-null", '{"message":null}', 400, badBody],
      ["message-case", `{"MESSAGE":{${id},${user},${text}}}`, 400, badBody],
      ["trailing", msg(`${id},${user},${text}`) + "x", 400, badBody],
      ["no-message-id", msg(`${user},${text}`), 400, invalidParams("message.messageId must be a non-empty string")],
      ["empty-message-id", msg(`"messageId":"",${user},${text}`), 400, invalidParams("message.messageId must be a non-empty string")],
      ["numeric-message-id", msg(`"messageId":1,${user},${text}`), 400, invalidParams("message.messageId must be a non-empty string")],
      ["bad-role", msg(`${id},"role":"user",${text}`), 400, invalidParams("message.role must be ROLE_USER")],
      ["no-parts", msg(`${id},${user}`), 400, badParts],
      ["empty-parts", msg(`${id},${user},"parts":[]`), 400, badParts],
      ["parts-null", msg(`${id},${user},"parts":null`), 400, badParts],
      ["part-kind", msg(`${id},${user},"parts":[{"kind":"text","text":"hi"}]`), 400, badPart],
      ["part-two-kinds", msg(`${id},${user},"parts":[{"text":"hi","url":"https://x"}]`), 400, badPart],
      ["part-none", msg(`${id},${user},"parts":[{"metadata":{}}]`), 400, badPart],
      ["part-null", msg(`${id},${user},"parts":[null]`), 400, badPart],
      ["part-text-number", msg(`${id},${user},"parts":[{"text":5}]`), 400, badPart],
      ["part-data-null", msg(`${id},${user},"parts":[{"data":null}]`), 400, badPart],
      ["part-not-object", msg(`${id},${user},"parts":["hi"]`), 400, badParts],
      ["context-number", msg(`${id},${user},${text},"contextId":5`), 400, invalidParams("message.contextId and message.taskId must be strings")],
      ["context-null", msg(`${id},${user},${text},"contextId":null`), 400, invalidParams("message.contextId and message.taskId must be strings")],
      ["metadata-array", msg(`${id},${user},${text},"metadata":[]`), 400, invalidParams("message.metadata must be an object")],
      ["task-id", msg(`${id},"role":"ROLE_AGENT","parts":[{"raw":"aGVsbG8="}],"taskId":"t1"`), 404, errBody(404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found")],
      ["role-agent", msg(`${id},"role":"ROLE_AGENT","parts":[{"raw":"aGVsbG8="}]`), 400, invalidParams("message.role must be ROLE_USER")],
      ["role-unspecified", msg(`${id},"role":"ROLE_UNSPECIFIED",${text}`), 400, invalidParams("message.role must be ROLE_USER")],
      ["raw-with-empty-text", msg(`${id},${user},"parts":[{"text":""},{"raw":"aGVsbG8="}]`), 400, noText],
      ["url", msg(`${id},${user},"parts":[{"url":"https://x.example/a.png","mediaType":"image/png","filename":"a.png"}]`), 400, noText],
      ["data", msg(`${id},${user},"parts":[{"data":{"a":1}}]`), 400, noText],
      ["blank", msg(`${id},${user},"parts":[{"text":" \\n\\t"},{"text":""}]`), 400, invalidParams("The message text is empty")],
      ["blank-unicode", msg(`${id},${user},"parts":[{"text":"\\u00a0\\u3000\\u0085"}]`), 400, invalidParams("The message text is empty")],
      ["unknown-context", msg(`${id},${user},${text},"contextId":"nope"`), 400, unknownContext],
    ];
    for (const [name, body, status, want] of cases) wantA2A(name, await send(e.url + "/a2a/acme/message:send", "POST", body, good), status, want);
    assert.equal(e.agent.runs, 0, "the agent ran for refused messages");
    // U+FEFF is not White_Space (JavaScript's trim() would call it blank): it is text.
    const bom = await send(e.url + "/a2a/acme/message:send", "POST", msg(`${id},${user},"parts":[{"text":"\\ufeff"}]`), good);
    assert.equal(bom.status, 200, bom.body);
    // Positive control: metadata, configuration and unknown message fields pass.
    const ok = `{"message":{"messageId":"m2",${user},"parts":[{"text":"hi","metadata":{"k":1}}],"metadata":{},"extensions":[]},"configuration":{"blocking":true},"metadata":{}}`;
    const r = await send(e.url + "/a2a/acme/message:send", "POST", ok, good);
    assert.equal(r.status, 200, r.body);
  }));

test("message:send replies, continues, replays byte for byte, and signs delegated replies", () =>
  withEnv(async (e) => {
    const post = (messageId: string, contextId: string, text: string, ...hdrs: string[]) => {
      const m: Record<string, unknown> = { messageId, role: "ROLE_USER", parts: [{ text }] };
      if (contextId) m["contextId"] = contextId;
      return send(e.url + "/a2a/acme/message:send", "POST", JSON.stringify({ message: m }), good, ...hdrs);
    };
    const first = await post("m1", "", "hello");
    assert.equal(first.status, 200);
    const r = JSON.parse(first.body);
    const ctx: string = r.message.contextId;
    assert.equal(first.body, `{"message":{"messageId":"reply-1","contextId":"${ctx}","role":"ROLE_AGENT","parts":[{"text":"This is the acme support agent. You said: hello"}]}}`);
    // Content-Type and A2A-Version are not enforced.
    const second = await post("m2", ctx, "again", "Content-Type: text/plain", "A2A-Version: 2.0");
    assert.equal(JSON.parse(second.body).message.contextId, ctx);
    const runs = e.agent.runs;
    const again = await post("m1", ctx, "hello");
    assert.deepEqual([again.status, again.body], [200, first.body]);
    assert.equal(e.agent.runs, runs, "the agent ran for a replayed messageId");
    wantA2A("reply id as messageId", await post("reply-1", ctx, "x"), 400, replyIdCollision);
    // Delegated: the verified Brand user reaches the agent and pactd's lock,
    // and the reply carries pactd's receipt verbatim.
    const d = await post("d1", "", "mine", "X-A2A-User-Delegation: Bearer deleg-u1");
    const dctx = JSON.parse(d.body).message.contextId;
    assert.equal(
      d.body,
      `{"message":{"messageId":"reply-3","contextId":"${dctx}","role":"ROLE_AGENT","parts":[{"text":"This is the acme support agent. You said: mine (as u1)"}],` +
        `"metadata":{"pact.receipt":{"jws":"h.p.s","claims":{"grantId":"g_1","user":"u1","pa":"https://pa.example","scopesUsed":[],"actions":[]}}}}}`,
    );
    assert.equal((await post("d1", dctx, "mine", "X-A2A-User-Delegation: Bearer deleg-u1")).body, d.body);
    wantA2A("other Brand user", await post("d2", dctx, "x", "X-A2A-User-Delegation: Bearer deleg-u2"), 400, otherBrandUser);
  }));

test("a duplicate while running is pactd's error; a failing agent answers INTERNAL and releases the messageId", () =>
  withEnv(async (e) => {
    const body = '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"start"}]}}';
    const r1 = await send(e.url + "/a2a/acme/message:send", "POST", body, good);
    assert.equal(r1.status, 200);
    const ctx = JSON.parse(r1.body).message.contextId;
    let release!: () => void;
    e.agent.hold = new Promise((r) => (release = r));
    const enteredAgain = new Promise<void>((r) => (e.agent.entered = r));
    const m2 = `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"slow"}],"contextId":"${ctx}"}}`;
    const running = send(e.url + "/a2a/acme/message:send", "POST", m2, good);
    await enteredAgain;
    wantA2A("duplicate while running", await send(e.url + "/a2a/acme/message:send", "POST", m2, good), 400, pendingDuplicate);
    release();
    e.agent.hold = undefined;
    e.agent.entered = undefined;
    assert.equal((await running).status, 200);

    e.agent.fail = true;
    const m3 = `{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":"${ctx}"}}`;
    wantA2A("agent failure", await send(e.url + "/a2a/acme/message:send", "POST", m3, good), 500, errBody(500, "INTERNAL", "INTERNAL", "Internal error"));
    assert.equal(e.abandoned, 1, "the failed turn was not abandoned");
    e.agent.fail = false;
    assert.equal((await send(e.url + "/a2a/acme/message:send", "POST", m3, good)).status, 200, "the released messageId runs again");
  }));

test("step-up: the AUTH_REQUIRED task, not stored; the agent's text where the Brand has no delegation", () =>
  withEnv(async (e) => {
    const body = '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"need orders:read"}]}}';
    const want = (ctx: string, n: number) =>
      `{"task":{"id":"t-1","contextId":"${ctx}","status":{"state":"TASK_STATE_AUTH_REQUIRED","message":{"messageId":"reply-${n}","contextId":"${ctx}","role":"ROLE_AGENT",` +
      `"parts":[{"text":"I need your permission first: See your orders. Please approve it at the link your assistant shows you."}]}},` +
      `"metadata":{"pact.missingScopes":["orders:read"],"pact.verificationUriComplete":"https://brand.example/login?return_to=x"}}}`;
    const r = await send(e.url + "/a2a/acme/message:send", "POST", body, good);
    const ctx = JSON.parse(r.body).task.contextId;
    wantA2A("step-up", r, 200, want(ctx, 1));
    const again = body.replace('"parts"', `"contextId":"${ctx}","parts"`);
    wantA2A("step-up again", await send(e.url + "/a2a/acme/message:send", "POST", again, good), 200, want(ctx, 2));
    assert.equal(e.agent.runs, 2);
    const fallback = await send(e.url + "/a2a/beta/message:send", "POST", body, good);
    assert.equal(JSON.parse(fallback.body).message.parts[0].text, "not here");
  }));

test("a body over 1 MiB is refused", () =>
  withEnv(async (e) => {
    const big = '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"' + "a".repeat(1 << 20) + '"}]}}';
    wantA2A("over 1 MiB", await send(e.url + "/a2a/acme/message:send", "POST", big, good), 400, invalidParams("The request body is unreadable or too large"));
    assert.equal(e.agent.runs, 0);
  }));

test("the OAuth endpoints are proxied to pactd on the matched path, without cookies", () =>
  withEnv(async (e) => {
    const r = await send(e.url + "/a2a/acme/oauth/token?x=1", "POST", "grant_type=x", "Content-Type: application/x-www-form-urlencoded",
      "Cookie: demo_session_acme=secret", "Authorization: Bearer pa-jwt", "Connection: close");
    assert.deepEqual([r.status, r.headers["content-type"], r.headers["cache-control"], r.body], [400, "application/json", "no-store", '{"error":"invalid_client"}']);
    const got = e.oauth.at(-1)!;
    assert.deepEqual([got.method, got.path, got.body, got.headers["authorization"], got.headers["cookie"]],
      ["POST", "/a2a/acme/oauth/token?x=1", "grant_type=x", "Bearer pa-jwt", undefined]);
    await send(e.url + "/a2a/acme/oauth/.well-known/oauth-authorization-server", "GET");
    assert.equal(e.oauth.at(-1)!.path, "/a2a/acme/oauth/.well-known/oauth-authorization-server");
    await send(e.url + "/a2a/a%20b/oauth/jwks.json", "GET");
    assert.equal(e.oauth.at(-1)!.path, "/a2a/a%20b/oauth/jwks.json");
  }));

test("every transport reaches pactd: Connect over HTTP/1.1 and HTTP/2, gRPC", async () => {
  for (const kind of ["connect", "connect-h2", "grpc"] as const) {
    const e = await newEnv({}, kind);
    try {
      const r = await send(e.url + "/a2a/acme/message:send", "POST", '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}', good);
      assert.equal(r.status, 200, kind + ": " + r.body);
    } finally {
      await e.close();
    }
  }
});

test("the frontend needs pactd's URL and a token", () => {
  const t = pactdTransport("connect", "http://127.0.0.1:1", frontendToken);
  for (const bad of [{ pactdUrl: "", token: "t" }, { pactdUrl: "http://127.0.0.1:1", token: "" }, { pactdUrl: "::", token: "t" }, { pactdUrl: "ftp://x", token: "t" }]) {
    assert.throws(() => new Frontend({ ...bad, transport: t }), /need pactd's URL and a frontend token/, JSON.stringify(bad));
  }
  assert.ok(new Frontend({ pactdUrl: "http://127.0.0.1:1", token: "t", transport: t }));
});

test("the caller's W3C trace context goes on to pactd, normalised; an invalid one does not", () =>
  withEnv(async (e) => {
    const tid = "4bf92f3577b34da6a3ce929d0e0e4736";
    const sid = "00f067aa0ba902b7";
    await send(e.url + "/a2a/acme/tasks", "GET", "", good, `traceparent: 00-${tid}-${sid}-01`, "tracestate: vendor=x");
    await send(e.url + "/a2a/acme/tasks", "GET", "", good, `traceparent: 01-${tid}-${sid}-03`);
    for (const bad of [`00-${"0".repeat(32)}-${sid}-01`, `ff-${tid}-${sid}-01`, `00-${tid.toUpperCase()}-${sid}-01`, "garbage"]) {
      await send(e.url + "/a2a/acme/tasks", "GET", "", good, "traceparent: " + bad);
    }
    await send(e.url + "/a2a/acme/tasks", "GET", "", good);
    assert.deepEqual(e.verifyTrace, [
      [`00-${tid}-${sid}-01`, "vendor=x"],
      [`00-${tid}-${sid}-01`, null],
      [null, null], [null, null], [null, null], [null, null],
      [null, null],
    ]);
  }));
