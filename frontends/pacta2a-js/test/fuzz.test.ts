import { test } from "node:test";
import assert from "node:assert/strict";
import { Failure, fuzz, targets, type Target } from "./fuzz/run.js";

test("the fuzzer finds a planted bug that no seed shows", async () => {
  // Breaks only on a request-target with a percent sign, which the seed lacks: the mutations must make one.
  const planted: Target = {
    name: "planted",
    check: async ([raw]) => {
      if (/^[A-Z]+ [^ ]*%/.test(raw)) throw new Failure("escape reached");
      return "ok";
    },
  };
  const bad = await fuzz(planted, 20000, 7, [["GET /a2a/acme/tasks HTTP/1.1\r\n\r\n", "0"]]);
  assert.ok(bad, "the planted bug was not found");
  assert.match(bad.input[0], /%/);
});

test("the request target holds its invariants over its corpus and 300 mutations", async () => {
  assert.deepEqual(targets.map((t) => t.name), ["request"]);
  for (const t of targets) assert.equal(await fuzz(t, 300, 11), undefined, t.name);
});
