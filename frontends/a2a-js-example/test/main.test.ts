import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { fakePactd, startProgram } from "./process.js";

const main = fileURLToPath(new URL("../src/main.js", import.meta.url));
const form = { "Content-Type": "application/x-www-form-urlencoded" };

/** ordersTurn is the turn pactd hands out for "show my orders" by alice, delegated with orders:read. */
const ordersTurn = {
  handle: "h-1", brandId: "shop", contextId: "ctx-1", newContext: true, text: "show my orders", turnTimeoutSeconds: 10,
  caller: { agentId: "agt_1", issuer: "https://pa.example", subject: "alice-at-pa" },
  delegation: { grantId: "g_1", brandUser: "alice", scopes: ["orders:read"] },
  sdkRequestJson: JSON.stringify({ message: { messageId: "m-1", contextId: "ctx-1", role: "ROLE_USER", parts: [{ text: "show my orders" }] } }),
  sdkPath: "/a2a/shop/message:send",
};

test("the example keeps serving after the inputs that once stopped it (a non-ASCII Brand id in a demo login path)", async () => {
  const p = await startProgram(main);
  try {
    for (const brand of ["%C3%A9", "%E2%82%AC", "%F0%9F%98%80"]) {
      const r = await fetch(p.url + "/demo/" + brand + "/login", { method: "POST", body: "username=alice&return_to=", headers: form, redirect: "manual" });
      assert.equal(r.status, 303, brand);
      assert.equal(r.headers.get("location"), "/a2a/" + brand + "/oauth/connected");
    }
    // pactd is unreachable: a bare 502, not a stop.
    const card = await fetch(p.url + "/a2a/acme/.well-known/agent-card.json");
    assert.deepEqual([card.status, card.headers.get("cache-control"), await card.text()], [502, "no-store", ""]);
    assert.equal((await fetch(p.url + "/a2a/acme/unknown")).status, 502);
    assert.equal((await fetch(p.url + "/demo/shop/login")).status, 200);
    assert.equal(p.exited, false, "the process stopped");
  } finally {
    assert.equal(await p.stop(), 0, "SIGTERM ends it cleanly");
  }
});

test("the example serves through pactd: a turn goes to the SDK, whose executor runs the demo Brand; no self-registration", async () => {
  const pactd = await fakePactd();
  pactd.serve = (req) =>
    req.path === "/a2a/shop/message:send"
      ? { outcome: { case: "turn", value: ordersTurn } }
      : { outcome: { case: "response", value: { status: 200, body: Buffer.from("pactd " + req.path) } } };
  const p = await startProgram(main, pactd.url, { A2A_PUBLIC_URL: "http://front.example" });
  try {
    const r = await fetch(p.url + "/a2a/shop/message:send", { method: "POST", body: "{}", headers: { Authorization: "Bearer pa" } });
    assert.equal(r.status, 200);
    const answer = (await r.json()) as { message: { role: string; contextId: string; parts: { text: string }[]; metadata: Record<string, unknown> } };
    assert.equal(pactd.finishes[0]!.result.case, "sdkAnswer");
    assert.deepEqual([answer.message.role, answer.message.contextId], ["ROLE_AGENT", "ctx-1"]);
    assert.match(answer.message.parts[0]!.text, /^Your orders, alice:\n- #1001 /);
    assert.deepEqual([answer.message.metadata["pact.scopesUsed"], answer.message.metadata["pact.actions"]], [["orders:read"], [{ tool: "list_orders" }]]);
    assert.equal(await (await fetch(p.url + "/")).text(), "pactd /");
    assert.equal((await fetch(p.url + "/api/platforms", { method: "POST", body: "{}" })).status, 404, "the example offers no self-registration");
    assert.equal(pactd.serves.length, 2);
  } finally {
    assert.equal(await p.stop(), 0);
    await pactd.close();
  }
});
