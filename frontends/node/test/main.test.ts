import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startProgram } from "./process.js";

const main = fileURLToPath(new URL("../src/main.js", import.meta.url));
const form = { "Content-Type": "application/x-www-form-urlencoded" };

test("the program keeps serving after the inputs that once stopped it (a non-ASCII Brand id in a demo login path)", async () => {
  const p = await startProgram(main);
  try {
    for (const brand of ["%C3%A9", "%E2%82%AC", "%F0%9F%98%80"]) {
      const r = await fetch(p.url + "/demo/" + brand + "/login", { method: "POST", body: "username=alice&return_to=", headers: form, redirect: "manual" });
      assert.equal(r.status, 303, brand);
      assert.equal(r.headers.get("location"), "/a2a/" + brand + "/oauth/connected");
    }
    // pactd is unreachable: INTERNAL, not a stop.
    const card = await fetch(p.url + "/a2a/acme/.well-known/agent-card.json");
    assert.deepEqual([card.status, card.headers.get("content-type")], [500, "application/a2a+json"]);
    assert.equal((await fetch(p.url + "/a2a/acme/unknown")).status, 404);
    assert.equal((await fetch(p.url + "/demo/shop/login")).status, 200);
    assert.equal(p.exited, false, "the process stopped");
  } finally {
    assert.equal(await p.stop(), 0, "SIGTERM ends it cleanly");
  }
});
