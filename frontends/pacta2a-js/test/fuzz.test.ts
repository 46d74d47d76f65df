import { test } from "node:test";
import assert from "node:assert/strict";
import { Failure, fuzz, targets, type Target } from "./fuzz/run.js";
import { unescapeSegment } from "../src/handler.js";

test("the fuzzer finds a planted bug that no seed shows", () => {
  // Breaks only on a bad escape, which the seed lacks: the mutations must make one.
  const planted: Target = {
    name: "planted",
    check([s = ""]) {
      if (unescapeSegment(s) === undefined) throw new Failure("bad escape reached");
      return "ok";
    },
  };
  const bad = fuzz(planted, 20000, 7, [["/a2a/acme/tasks"]]);
  assert.ok(bad, "the planted bug was not found");
  assert.match(bad.input[0]!, /%/);
  // A target that throws on its own (not an invariant) is a failure too.
  const throws: Target = { name: "throws", check: ([s = ""]) => (s.length > 20 ? JSON.parse("{") : "short") };
  assert.ok(fuzz(throws, 20000, 7, [["0123456789"]]));
});

test("every parsing target holds its invariants over its corpus and 2000 mutations", () => {
  assert.deepEqual(targets.map((t) => t.name), ["send", "path", "form", "cookie", "query", "answer", "registration"]);
  for (const t of targets) assert.equal(fuzz(t, 2000, 11), undefined, t.name);
});

test("a leading U+FEFF in a path segment is content, not a byte order mark (found by the fuzzer)", () => {
  assert.equal(unescapeSegment("%EF%BB%BFacme"), "\ufeffacme");
  assert.equal(unescapeSegment("%EF%BB%BF"), decodeURIComponent("%EF%BB%BF"));
});
