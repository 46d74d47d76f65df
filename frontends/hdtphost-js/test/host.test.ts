// @pactd/hdtp-host against a fake pactd made of connect-es service
// handlers (the generated descriptors the host uses): what goes to the SDK,
// what goes to pactd, and that pactd's bodies are written byte for byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { HostService, type CompleteInboundRequest, type OpenInboundRequest } from "../src/gen/hdtp/v1/host_pb.js";
import { Host, MAX_BODY_BYTES, Refusal, firstEventData, type Tool } from "../src/index.js";

const token = "frontend-secret";

interface Fake {
  opened: OpenInboundRequest[];
  completed: CompleteInboundRequest[];
  authorization: string[];
  answer: (req: OpenInboundRequest) => Promise<unknown> | unknown;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** start runs a fake pactd and a host in front of it; both close when the test ends. */
async function start(t: { after: (f: () => void) => void }, answer: Fake["answer"], tools: Tool[] = []) {
  const fake: Fake = { opened: [], completed: [], authorization: [], answer };
  const routes = (router: ConnectRouter) =>
    router.service(HostService, {
      async openInbound(req, ctx) {
        fake.opened.push(req);
        fake.authorization.push(ctx.requestHeader.get("Authorization") ?? "");
        return (await fake.answer(req)) as never;
      },
      async completeInbound(req) {
        fake.completed.push(req);
        return { body: new TextEncoder().encode(`{"completed":${JSON.stringify(req.outcome)}}`) };
      },
    });
  const pactd = createServer(connectNodeAdapter({ routes }));
  const host = new Host({ pactdUrl: await listen(pactd), token, tools });
  const front = createServer((req, res) => void host.handle(req, res));
  const url = await listen(front);
  t.after(() => {
    front.close();
    pactd.close();
  });
  return { fake, url };
}

/** post sends body to the host as an MCP client would, with the Host the identity is served at. */
function post(url: string, body: string | Buffer): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url + "/mcp", {
      method: "POST",
      headers: { Host: "agent.maya.example", "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const encode = (s: string) => new TextEncoder().encode(s);

test("initialize goes to the MCP SDK (stateless: no session id), never to pactd", async (t) => {
  const { fake, url } = await start(t, () => assert.fail("pactd was asked"));
  const res = await post(url, '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}');
  assert.equal(res.status, 200);
  const msg = JSON.parse(res.body) as { id: number; result: { protocolVersion: string; capabilities: { tools?: object }; serverInfo: { name: string } } };
  assert.equal(msg.id, 1);
  assert.equal(msg.result.protocolVersion, "2025-11-25");
  assert.deepEqual(msg.result.capabilities.tools, {});
  assert.equal(msg.result.serverInfo.name, "hdtp-host");
  assert.equal(res.headers["mcp-session-id"], undefined);
  assert.equal(fake.opened.length, 0);
});

test("tools/list and tools/call go to pactd, whose body is written byte for byte", async (t) => {
  // A body no JSON encoder writes: odd spacing and member order, kept as is.
  const answer = '{"result": {"tools":[]} ,"id":7,  "jsonrpc":"2.0"}';
  const { fake, url } = await start(t, () => ({ outcome: { case: "respond", value: { body: encode(answer) } } }));
  for (const body of ['{"jsonrpc":"2.0","id":7,"method":"tools/list"}', '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{}}}']) {
    const res = await post(url, body);
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "application/json");
    assert.equal(res.body, answer);
    const got = fake.opened.at(-1)!;
    assert.equal(new TextDecoder().decode(got.body), body);
    assert.equal(got.endpoint, "https://agent.maya.example/mcp");
    assert.equal(got.sourceAddress, "127.0.0.1");
    assert.deepEqual(got.transportChain, []);
  }
  assert.deepEqual(fake.authorization, ["Bearer " + token, "Bearer " + token]);
});

test("a dispatch runs the content tool and writes CompleteInbound's body", async (t) => {
  const seen: unknown[] = [];
  const tools: Tool[] = [
    { name: "ok_tool", permission: "calendar.availability", run: (c) => (seen.push(c), { slots: [] }) },
    { name: "refusing", permission: "calendar.availability", run: () => { throw new Refusal("rate_limited", 3); } },
    { name: "failing", permission: "calendar.availability", run: () => { throw new Error("disk full"); } },
    { name: "not_object", permission: "calendar.availability", run: () => [] as unknown as Record<string, unknown> },
  ];
  const { fake, url } = await start(t, (req) => {
    const tool = (JSON.parse(new TextDecoder().decode(req.body)) as { params: { name: string } }).params.name;
    return { outcome: { case: "dispatch", value: { callHandle: "h-" + tool, tool, argumentsJson: '{"a":1}', callerRoot: "sha256:r", sealed: true } } };
  }, tools);
  const call = (name: string) => post(url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}"}}`);

  assert.equal((await call("ok_tool")).body, '{"completed":{"case":"resultJson","value":"{\\"slots\\":[]}"}}');
  const c = seen[0] as { endpoint: string; handle: string; arguments: unknown; callerRoot: string; sealed: boolean };
  assert.deepEqual([c.endpoint, c.handle, c.arguments, c.callerRoot, c.sealed], ["https://agent.maya.example/mcp", "h-ok_tool", { a: 1 }, "sha256:r", true]);

  await call("refusing");
  assert.equal(fake.completed.at(-1)!.outcome.case, "refusal");
  assert.deepEqual([fake.completed.at(-1)!.outcome.value], [{ $typeName: "hdtp.v1.ToolRefusal", code: "rate_limited", retryAfterSeconds: 3, dataJson: "" }]);
  for (const name of ["failing", "not_object", "no_such_tool"]) {
    await call(name);
    const done = fake.completed.at(-1)!;
    assert.equal(done.callHandle, "h-" + name);
    assert.equal(done.outcome.case === "refusal" && done.outcome.value.code, "unavailable", name);
  }
});

test("a body past MAX_BODY_BYTES is 413 and pactd is never asked", async (t) => {
  const { fake, url } = await start(t, () => assert.fail("pactd was asked"));
  const big = Buffer.alloc(MAX_BODY_BYTES + 1, 0x20);
  // The host answers 413 and closes; a client still writing may see the
  // connection end instead of the answer.
  const res = await post(url, big).catch(() => undefined);
  if (res !== undefined) assert.equal(res.status, 413);
  assert.equal(fake.opened.length, 0);
  // Positive control: at the bound exactly, pactd is asked.
  const { fake: fake2, url: url2 } = await start(t, () => ({ outcome: { case: "respond", value: { body: encode("{}") } } }));
  const body = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
  const atBound = Buffer.concat([Buffer.from(body), Buffer.alloc(MAX_BODY_BYTES - body.length, 0x20)]);
  assert.equal((await post(url2, atBound)).status, 200);
  assert.equal(fake2.opened.length, 1);
});

test("an identity pactd does not hold is 404; a transport reject closes the connection with no body", async (t) => {
  const { url } = await start(t, (req) => {
    if (req.endpoint.endsWith("/mcp")) throw new ConnectError("no identity", Code.NotFound);
    return { outcome: { case: "reject", value: { reason: "chain" } } };
  });
  assert.equal((await post(url, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')).status, 404);
  const rejected = await new Promise<string>((resolve) => {
    const req = request(url + "/other", { method: "POST", headers: { Host: "agent.maya.example" } }, () => resolve("answered"));
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    req.end('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
  });
  assert.equal(rejected, "ECONNRESET");
});

test("firstEventData takes the JSON-RPC response out of an event stream", () => {
  const dec = (s: string) => {
    const b = firstEventData(s);
    return b === undefined ? undefined : new TextDecoder().decode(b);
  };
  const stream = ': keepalive\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\nid: 1\ndata: {"jsonrpc":"2.0",\ndata: "id":3,"result":{}}\n\n';
  assert.equal(dec(stream), '{"jsonrpc":"2.0",\n"id":3,"result":{}}');
  assert.equal(dec("data: {\"id\":1}\r\n\r\n"), '{"id":1}');
  assert.equal(dec('data: {"jsonrpc":"2.0","id":null,"error":{}}\n\n'), undefined);
  assert.equal(dec("data: not json\n\n"), undefined);
  assert.equal(dec(""), undefined);
});
