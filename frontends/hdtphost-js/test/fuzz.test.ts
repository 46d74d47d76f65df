// The two parsers of untrusted input, under seeded random mutation (pure
// JS, bounded runs, every npm test): an inbound body's sort, and a peer's
// event stream. Their invariants hold on every input: no throw, the same
// answer twice, and only a tools request goes to pactd, only a JSON-RPC
// response comes out of a stream.
import { test } from "node:test";
import assert from "node:assert/strict";
import { firstEventData, sortRequest } from "../src/index.js";

const RUNS = Number(process.env["HDTP_FUZZ_RUNS"] ?? 3000);

/** prng is a seeded xorshift32, so a failure names its seed. */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

const tokens = ['"method"', '"tools/call"', '"tools/list"', '"id"', "null", "{", "}", "[", "]", ",", ":", '"', "\\", "\\u0000", "data:", "\n", "\r\n", "\n\n", " ", "1", '"x"'];

function mutate(seed: string, rnd: () => number): string {
  let s = seed;
  for (let n = 1 + Math.floor(rnd() * 4); n > 0; n--) {
    const at = Math.floor(rnd() * (s.length + 1));
    const op = Math.floor(rnd() * 4);
    if (op === 0) s = s.slice(0, at) + tokens[Math.floor(rnd() * tokens.length)] + s.slice(at);
    else if (op === 1) s = s.slice(0, at) + s.slice(at + 1 + Math.floor(rnd() * 3));
    else if (op === 2) s = s.slice(0, at) + String.fromCharCode(Math.floor(rnd() * 256)) + s.slice(at + 1);
    else s = s + s.slice(at);
  }
  return s;
}

test("sortRequest: only an object naming tools/list or tools/call goes to pactd", () => {
  const seeds = ['{"jsonrpc":"2.0","id":1,"method":"tools/list"}', '{"method":"tools/call","params":{}}', '{"method":"initialize"}',
    '{"method":"ping","method":"tools/call"}', '[{"method":"tools/call"}]', '{"method":"tools\\/list"}', "null", ""];
  for (let i = 0; i < RUNS; i++) {
    const rnd = prng(i + 1);
    const body = Buffer.from(mutate(seeds[i % seeds.length]!, rnd), "latin1");
    const a = sortRequest(body), b = sortRequest(body);
    assert.equal(a.tools, b.tools, `seed ${i + 1}: not deterministic`);
    if (a.tools) {
      const v = JSON.parse(body.toString("utf8")) as { method?: unknown };
      assert.ok(v !== null && typeof v === "object" && !Array.isArray(v) && (v.method === "tools/list" || v.method === "tools/call"), `seed ${i + 1}: ${JSON.stringify(body.toString("latin1"))}`);
    }
  }
});

test("firstEventData: only a JSON-RPC response (an object with an id) comes out", () => {
  const seeds = ['data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n', ': c\n\nevent: message\ndata: {"method":"x"}\n\ndata: {"id":"a",\ndata: "result":1}\n\n', 'data: {"id":null}\n\n', "data:\n\n"];
  for (let i = 0; i < RUNS; i++) {
    const rnd = prng(i + 7);
    const stream = mutate(seeds[i % seeds.length]!, rnd);
    const got = firstEventData(stream);
    assert.deepEqual(firstEventData(stream), got, `seed ${i + 7}: not deterministic`);
    if (got !== undefined) {
      const v = JSON.parse(new TextDecoder().decode(got)) as { id?: unknown };
      assert.ok(v !== null && typeof v === "object" && v.id !== undefined && v.id !== null, `seed ${i + 7}: ${JSON.stringify(stream)}`);
    }
  }
});
