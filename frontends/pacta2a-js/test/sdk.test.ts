// The SDK glue against the real @a2a-js/sdk (1.3.0) on Express, behind the
// front door and a fake pactd: what the SDK is handed, and that its answer
// goes to FinishTurn as it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import express from "express";
import { create } from "@bufbuild/protobuf";
import { AgentCard, Role, TaskState, type Message } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import { restHandler } from "@a2a-js/sdk/server/express";
import { TurnSchema, type SdkAnswer } from "../src/gen/pact/v1/frontdoor_pb.js";
import { CallerSchema, DelegationInfoSchema } from "../src/gen/pact/v1/verification_pb.js";
import { pactUser, roleAgent, sdkTurns, sdkUser, stateAuthRequired, stepUpTask, withReceipt, type SdkHandler } from "../src/sdk.js";
import { EphemeralTaskStore } from "../src/taskstore.js";
import { newEnv, send, type Env } from "./helpers.js";

function agentMessage(rc: RequestContext, text: string): Message {
  return {
    messageId: "sdk-msg", contextId: rc.contextId, taskId: "", role: Role.ROLE_AGENT, metadata: { kept: true },
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }], extensions: [], referenceTaskIds: [],
  };
}

/** TestExecutor answers by the turn's text and records what the SDK handed it. */
class TestExecutor implements AgentExecutor {
  seen: RequestContext[] = [];
  async execute(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    this.seen.push(rc);
    const text = rc.userMessage.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("\n");
    if (text.startsWith("need ")) bus.publish(AgentEvent.task(stepUpTask(rc, [text.slice(5)], "not here")));
    else if (text === "receipt") {
      bus.publish(AgentEvent.message(withReceipt(agentMessage(rc, "done"), ["orders:cancel"], [{ tool: "cancel_order", args: { orderId: "1002" } }, { tool: "list" }])));
    } else if (text === "boom") throw new Error("boom");
    else if (text === "big") bus.publish(AgentEvent.message(agentMessage(rc, "x".repeat(1 << 20))));
    else bus.publish(AgentEvent.message(agentMessage(rc, "echo " + text.slice(0, 20) + " (" + text.length + ") from " + pactUser(rc)?.userName)));
    bus.finished();
  }
  async cancelTask(): Promise<void> {}
}

function sdkApp(exec: AgentExecutor): SdkHandler {
  const card = AgentCard.fromJSON({
    name: "t", description: "t", version: "1", capabilities: {}, skills: [], defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
    supportedInterfaces: [{ url: "http://x/a2a", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }],
  });
  const requestHandler = new DefaultRequestHandler(card, new EphemeralTaskStore(), exec, undefined, undefined, undefined, undefined, undefined,
    { keepBusAliveStates: [] });
  return express().use("/a2a", restHandler({ requestHandler, userBuilder: sdkUser }));
}

const sdkTurn = (text: string, timeout = 5, metadata?: Record<string, unknown>) =>
  create(TurnSchema, {
    handle: "h-1", brandId: "acme", contextId: "ctx-7", newContext: false, text,
    caller: create(CallerSchema, { agentId: "agt_1", subject: "alice" }),
    delegation: create(DelegationInfoSchema, { grantId: "g_1", brandUser: "alice@acme", scopes: ["orders:cancel"] }),
    sdkRequestJson: JSON.stringify({
      message: { messageId: "m-1", contextId: "ctx-7", role: "ROLE_USER", parts: [{ text }] }, ...(metadata ? { metadata } : {}),
    }),
    sdkPath: "/a2a/acme/message:send", turnTimeoutSeconds: timeout,
  });

async function withSdk(sdk: SdkHandler, f: (e: Env) => Promise<void>): Promise<void> {
  const e = await newEnv({ turns: sdkTurns(sdk) });
  try {
    await f(e);
  } finally {
    await e.close();
  }
}

/** answerOf is the SDK answer FinishTurn got (or its failure). */
function answerOf(e: Env): { status: number; json: Record<string, unknown> } | string {
  const r = e.pactd.finishes.at(-1)!.result;
  if (r.case === "failure") return r.value;
  assert.equal(r.case, "sdkAnswer");
  const a = r.value as SdkAnswer;
  return { status: a.status, json: JSON.parse(Buffer.from(a.body).toString("utf8")) as Record<string, unknown> };
}

test("the SDK's enum values the helpers use are the SDK's own", () => {
  assert.equal(roleAgent, Role.ROLE_AGENT);
  assert.equal(stateAuthRequired, TaskState.TASK_STATE_AUTH_REQUIRED);
});

test("a turn goes to the SDK as its message:send, with the verified caller as its User and the PA's credentials removed", async () => {
  const exec = new TestExecutor();
  await withSdk(sdkApp(exec), async (e) => {
    e.pactd.serve = () => ({ outcome: { case: "turn", value: sdkTurn("hi", 5, { trace: "t-1" }) } });
    const r = await send(e.url + "/a2a/acme/message:send", "POST", "{}", "Authorization: Bearer pa", "X-A2A-User-Delegation: deleg",
      "Cookie: s=1", "A2A-Version: 0.3", "Content-Type: text/plain", "X-Custom: kept", "Connection: keep-alive");
    assert.equal(r.status, 200, "FinishTurn's answer is the PA's");
    const a = answerOf(e);
    assert.ok(typeof a !== "string", String(a));
    assert.equal(a.status, 200, JSON.stringify(a.json));
    assert.deepEqual(a.json, {
      message: { messageId: "sdk-msg", contextId: "ctx-7", role: "ROLE_AGENT", parts: [{ text: "echo hi (2) from agt_1:alice" }], metadata: { kept: true } },
    });
    const rc = exec.seen[0]!;
    const u = pactUser(rc)!;
    assert.deepEqual([u.brandId, u.caller?.agentId, u.delegation?.grantId, u.newContext, u.turn.handle, u.isAuthenticated],
      ["acme", "agt_1", "g_1", false, "h-1", true]);
    const h = rc.context.state.get("headers") as Record<string, unknown> | undefined;
    const seen = h ?? {};
    assert.deepEqual([seen["authorization"], seen["x-a2a-user-delegation"], seen["cookie"], seen["connection"]], [undefined, undefined, undefined, undefined]);
    assert.deepEqual([seen["content-type"], seen["a2a-version"], seen["x-custom"]], ["application/json", "1.0", "kept"]);
    assert.deepEqual([rc.context.tenant, rc.contextId, rc.request.metadata], ["acme", "ctx-7", { trace: "t-1" }]);
  });
});

test("the SDK's step-up Task and receipt metadata reach pactd as the SDK wrote them", async () => {
  await withSdk(sdkApp(new TestExecutor()), async (e) => {
    e.pactd.serve = () => ({ outcome: { case: "turn", value: sdkTurn("need orders:read") } });
    await send(e.url + "/a2a/acme/message:send", "POST", "{}");
    const up = answerOf(e);
    assert.ok(typeof up !== "string");
    const task = up.json["task"] as { status: { state: string; message: { parts: unknown[] } }; metadata: unknown };
    assert.deepEqual([task.status.state, task.metadata, task.status.message.parts], ["TASK_STATE_AUTH_REQUIRED", { "pact.missingScopes": ["orders:read"] }, [{ text: "not here" }]]);
    e.pactd.serve = () => ({ outcome: { case: "turn", value: sdkTurn("receipt") } });
    await send(e.url + "/a2a/acme/message:send", "POST", "{}");
    const rec = answerOf(e);
    assert.ok(typeof rec !== "string");
    assert.deepEqual((rec.json["message"] as { metadata: unknown }).metadata, {
      kept: true, "pact.scopesUsed": ["orders:cancel"], "pact.actions": [{ tool: "cancel_order", args: { orderId: "1002" } }, { tool: "list" }],
    });
  });
});

test("a message up to the front door's bound reaches the agent (the SDK's own 100 KB body limit is not in the way)", async () => {
  const exec = new TestExecutor();
  await withSdk(sdkApp(exec), async (e) => {
    const text = "a".repeat(900 << 10);
    e.pactd.serve = () => ({ outcome: { case: "turn", value: sdkTurn(text) } });
    await send(e.url + "/a2a/acme/message:send", "POST", "{}");
    const a = answerOf(e);
    assert.ok(typeof a !== "string", String(a));
    assert.equal(a.status, 200);
    assert.match(JSON.stringify(a.json), /\(921600\) from agt_1:alice/);
  });
});

test("the SDK's errors go to pactd as answered; a thrown handler, an answer over 1 MiB or none in time fail the turn", async () => {
  await withSdk(sdkApp(new TestExecutor()), async (e) => {
    e.pactd.serve = () => ({ outcome: { case: "turn", value: sdkTurn("boom") } });
    await send(e.url + "/a2a/acme/message:send", "POST", "{}");
    const a = answerOf(e);
    assert.ok(typeof a !== "string", String(a));
    assert.equal(a.status, 500);
    assert.equal((a.json["error"] as { code: number }).code, 500, "the SDK's own error body");
    e.pactd.serve = () => ({ outcome: { case: "turn", value: sdkTurn("big") } });
    await send(e.url + "/a2a/acme/message:send", "POST", "{}");
    assert.equal(answerOf(e), "the SDK's answer is larger than 1 MiB");
  });
  const cases: [string, SdkHandler, string][] = [
    ["throws", () => { throw new Error("handler\nthrew"); }, "the SDK failed: handler threw"],
    ["never answers", () => {}, "the SDK failed: the SDK did not answer within 1 s"],
  ];
  for (const [name, sdk, want] of cases) {
    await withSdk(sdk, async (e) => {
      e.pactd.serve = () => ({ outcome: { case: "turn", value: sdkTurn("hi", 1) } });
      await send(e.url + "/a2a/acme/message:send", "POST", "{}");
      assert.equal(answerOf(e), want, name);
    });
  }
  // Bytes the SDK writes after the deadline are dropped (and never reach the PA).
  let late: (() => void) | undefined;
  await withSdk((_req, res) => (late = () => res.end('{"message":{}}')), async (e) => {
    e.pactd.serve = () => ({ outcome: { case: "turn", value: sdkTurn("hi", 1) } });
    const r = await send(e.url + "/a2a/acme/message:send", "POST", "{}");
    late?.();
    assert.equal(answerOf(e), "the SDK failed: the SDK did not answer within 1 s");
    assert.equal(r.body, JSON.stringify({ case: "failure", value: "the SDK failed: the SDK did not answer within 1 s" }));
  });
});

test("sdkUser refuses a request that did not come from the front door: the SDK answers an error, its agent never runs", async () => {
  const exec = new TestExecutor();
  const srv = createServer(sdkApp(exec));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  try {
    const url = "http://127.0.0.1:" + (srv.address() as import("node:net").AddressInfo).port;
    const r = await send(url + "/a2a/acme/message:send", "POST", JSON.stringify({ message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] } }),
      "Content-Type: application/json", "A2A-Version: 1.0");
    assert.ok(r.status >= 400, String(r.status));
    assert.equal(exec.seen.length, 0);
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
});

test("EphemeralTaskStore keeps nothing", async () => {
  const s = new EphemeralTaskStore();
  await s.save({ id: "t" } as never);
  assert.equal(await s.load("t"), undefined);
  assert.deepEqual(await s.list(), { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 });
});
