/**
 * The TypeScript request parsing under a small mutation fuzzer of our own
 * (pure JS: nothing to download), as the Go frontend's parsing is under Go's
 * fuzzer. Each target starts from its corpus (test/fuzz/corpus/NAME.json),
 * mutates inputs with a seeded PRNG (byte flips, inserts of JSON and
 * percent-escape tokens, deletions, duplications, splices), keeps an input
 * that produces an outcome not seen before, and checks the target's
 * invariants on every input: it never throws, is deterministic, and its
 * result is a valid value or a named A2A error.
 *
 *   node dist/test/fuzz/run.js [--runs N] [--seed S] [--target NAME]
 *
 * N executions per target (default 20000). A failure prints the target, the
 * seed and the input (as JSON, ready for the corpus file) and exits 1.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { A2AError } from "../../src/errors.js";
import { isBlank, parseSend } from "../../src/send.js";
import { Frontend, parsePageSize, splitPath, unescapeSegment } from "../../src/handler.js";
import { parseForm } from "../../src/oauth.js";
import { cookieValue } from "../../src/demo/login.js";
import { decodeAnswer } from "../../src/sdk/answer.js";
import { parseRegistration } from "../../src/registration.js";
import { pactdTransport } from "../../src/transport.js";

/** Input is one fuzz input: a list of strings (most targets take one). */
export type Input = string[];

/** Target is one fuzzed function: check throws on a broken invariant and returns the outcome's shape, for novelty. */
export interface Target {
  name: string;
  check(input: Input): string;
}

export class Failure extends Error {}

function must(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Failure(what);
}

const sendReasons: Record<string, [number, string]> = {
  INVALID_PARAMS: [400, "INVALID_ARGUMENT"],
  TASK_NOT_FOUND: [404, "NOT_FOUND"],
  CONTENT_TYPE_NOT_SUPPORTED: [400, "INVALID_ARGUMENT"],
};

/** checkError: an A2A error of one of the reasons, with PACT's status pair and a parseable AIP-193 body. */
function checkError(e: A2AError, reasons: Record<string, [number, string]>): void {
  const want = reasons[e.reason];
  must(want, "unexpected reason " + e.reason);
  must(e.httpStatus === want[0] && e.status === want[1], `${e.reason} with ${e.httpStatus} ${e.status}`);
  must(e.message !== "", "an error without a message");
  const b = JSON.parse(e.body()) as { error: { code: number; details: { reason: string }[] } };
  must(b.error.code === e.httpStatus && b.error.details[0]?.reason === e.reason, "the body does not say the error");
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const fe = new Frontend({ pactdUrl: "http://127.0.0.1:1", token: "t", transport: pactdTransport("connect", "http://127.0.0.1:1", "t"),
  sessions: { brandUser: () => "", loginURL: () => "/login" } });
const oauthPaths = new Set(["device_authorization", "token", "revoke", ".well-known/oauth-authorization-server", "jwks.json", "consent",
  "consent/decision", "connected", "connected/revoke"]);

export const targets: Target[] = [
  {
    // parseSend: accepts only what message:send may run; every refusal is a §4 A2A error.
    name: "send",
    check([body = ""]) {
      const m = parseSend(body);
      must(same(m, parseSend(body)), "not deterministic");
      if (m instanceof A2AError) {
        checkError(m, sendReasons);
        return "refused " + m.reason + " " + m.message;
      }
      const obj = JSON.parse(body) as Record<string, unknown>;
      must(obj !== null && typeof obj === "object" && !Array.isArray(obj), "accepted a body that is not an object");
      must(m.messageId !== "" && !isBlank(m.text), "accepted an empty messageId or blank text");
      must(same(m.message, obj["message"]), "message is not the body's message");
      must(!Object.hasOwn(m.message, "taskId") && m.message["role"] === "ROLE_USER", "accepted a taskId or another role");
      return "accepted " + (m.contextId === "" ? "new" : "context") + (m.metadata ? " metadata" : "");
    },
  },
  {
    // splitPath / unescapeSegment / routes: consistent splitting and decoding; only the card and the OAuth subtree are public.
    name: "path",
    check([path = "", method = "GET"]) {
      for (const seg of path.split("/")) {
        const d = unescapeSegment(seg);
        must(same(d, unescapeSegment(seg)), "unescapeSegment is not deterministic");
        const badEscape = /%(?![0-9A-Fa-f]{2})/.test(seg);
        must((d === undefined) === badEscape, `unescapeSegment(${JSON.stringify(seg)}) = ${String(d)}`);
        if (!seg.includes("%")) must(d === seg, "a segment without escapes changed");
        let oracle: string | undefined;
        try {
          oracle = decodeURIComponent(seg);
        } catch {
          oracle = undefined;
        }
        if (oracle !== undefined && !/[\uD800-\uDFFF]/.test(seg)) must(d === oracle, `unescapeSegment(${JSON.stringify(seg)}) = ${JSON.stringify(d)}, decodeURIComponent says ${JSON.stringify(oracle)}`);
        if (d !== undefined && !/[\uD800-\uDFFF]/.test(d)) must(unescapeSegment(encodeURIComponent(d)) === d, "escaping and unescaping is not a round trip");
      }
      const s = splitPath(path);
      must(same(s, splitPath(path)), "splitPath is not deterministic");
      if (!s) return "no route";
      must(s.brandId !== "" && s.rest.length > 0, "a split with no Brand or no rest");
      const raw = path.slice("/a2a/".length).split("/");
      must(same([s.brandId, ...s.rest], raw.map((r) => unescapeSegment(r))), "the segments are not the raw segments decoded");
      const methods = fe.routes(s.rest);
      const ep = methods?.[method];
      const card = method === "GET" && s.rest.length === 2 && s.rest[1] === "agent-card.json";
      if (ep?.public) must(card || (s.rest[0] === "oauth" && oauthPaths.has(s.rest.slice(1).join("/"))), `${method} ${path} is public`);
      return ep ? (ep.public ? "public " : "route ") + s.rest.length : methods ? "405" : "404";
    },
  },
  {
    // parseForm: strict, deterministic, and what it parses re-encodes to the same form.
    name: "form",
    check([body = "", ct = "application/x-www-form-urlencoded"]) {
      const f = parseForm(body, ct);
      must(same(f && [...f], (parseForm(body, ct) && [...parseForm(body, ct)!]) ?? undefined), "not deterministic");
      if (!f) {
        must(body.includes(";") || /%(?![0-9A-Fa-f]{2})/.test(body), "refused a form without ';' or a bad escape");
        return "refused";
      }
      if (ct.split(";", 1)[0]!.trim().toLowerCase() !== "application/x-www-form-urlencoded") must(f.size === 0, "read a form that is not urlencoded");
      for (const [k, vs] of f) for (const v of vs) must(typeof k === "string" && typeof v === "string", "a non-string field");
      const clean = [...f].every(([k, vs]) => ![k, ...vs].some((x) => /[\uD800-\uDFFF]/.test(x)));
      if (clean) {
        const again = [...f].flatMap(([k, vs]) => vs.map((v) => encodeURIComponent(k) + "=" + encodeURIComponent(v))).join("&");
        must(same([...parseForm(again, "application/x-www-form-urlencoded")!], [...f]), "re-encoding the form changes it");
      }
      return "fields " + Math.min(f.size, 5);
    },
  },
  {
    // cookieValue: the first cookie of the name, trimmed; never throws.
    name: "cookie",
    check([header = "", name = "demo_session_x"]) {
      const v = cookieValue(header, name);
      must(v === cookieValue(header, name), "not deterministic");
      if (v !== "") must(header.includes(v) && header.includes(name), "a value not in the header");
      const plain = v.replace(/;/g, "");
      if (name !== "" && !name.includes("=") && !name.includes(";") && name === name.trim()) {
        must(cookieValue(name + "=" + plain + "; " + header, name) === plain.trim(), "a cookie set first is not the one read");
      }
      return v === "" ? "none" : "found";
    },
  },
  {
    // parsePageSize: an integer 1 to 100 (default 50), or INVALID_PARAMS.
    name: "query",
    check([search = ""]) {
      const n = parsePageSize(search);
      must(same(n, parsePageSize(search)), "not deterministic");
      const vals = new URLSearchParams(search).getAll("pageSize");
      if (n instanceof A2AError) {
        checkError(n, { INVALID_PARAMS: [400, "INVALID_ARGUMENT"] });
        must(vals.length > 0, "refused without a pageSize");
        return "refused";
      }
      must(Number.isInteger(n) && n >= 1 && n <= 100, "page size " + n);
      must(vals.length === 0 ? n === 50 : vals.length === 1 && /^[0-9]+$/.test(vals[0]!) && Number(vals[0]) === n, "not the given pageSize");
      return vals.length === 0 ? "default" : "given";
    },
  },
  {
    // decodeAnswer: a valid Reply, a relayed A2A error, or a named failure.
    name: "answer",
    check([status = "200", body = ""]) {
      const code = /^[0-9]{1,3}$/.test(status) ? Number(status) : 200;
      const a = decodeAnswer(code, body);
      must(same(a, decodeAnswer(code, body)), "not deterministic");
      if ("fail" in a) {
        must(typeof a.fail === "string" && a.fail !== "", "a failure without a cause");
        return "fail " + a.fail.split(" ").slice(0, 6).join(" ");
      }
      if ("error" in a) {
        must(code !== 200, "an error from a 200");
        checkError(a.error, { INVALID_PARAMS: [400, "INVALID_ARGUMENT"], CONTENT_TYPE_NOT_SUPPORTED: [400, "INVALID_ARGUMENT"],
          UNSUPPORTED_OPERATION: [400, "FAILED_PRECONDITION"] });
        return "error " + a.error.reason;
      }
      const r = a.reply;
      must(code === 200 && typeof r.text === "string", "a reply without text, or not from a 200");
      if (r.needScopes) must(r.needScopes.length > 0 && r.needScopes.every((s) => typeof s === "string" && s !== ""), "bad needScopes");
      if (r.scopesUsed) must(r.scopesUsed.every((s) => typeof s === "string"), "bad scopesUsed");
      if (r.actions) must(r.actions.every((x) => typeof x.tool === "string" && x.tool !== "" && x.args !== null), "bad actions");
      if (r.metadata) must(Object.keys(r.metadata).every((k) => !k.startsWith("pact.")) && Object.keys(r.metadata).length > 0, "bad metadata");
      return (r.needScopes ? "step-up" : "reply") + (r.metadata ? " meta" : "") + (r.actions ? " actions" : "");
    },
  },
  {
    // parseRegistration: a POST /api/platforms body read as Go's encoding/json reads it.
    name: "registration",
    check([body = ""]) {
      const r = parseRegistration(Buffer.from(body));
      must(same(r, parseRegistration(Buffer.from(body))), "not deterministic");
      let v: unknown;
      try {
        v = JSON.parse(Buffer.from(body).toString("utf8"));
      } catch {
        must(r === undefined, "accepted a body that is not JSON");
        return "not JSON";
      }
      if (v === null) {
        must(same(r, { name: "", jwksUri: "" }), "null is not the empty registration");
        return "null";
      }
      if (typeof v !== "object" || Array.isArray(v)) {
        must(r === undefined, "accepted JSON that is not an object");
        return "not an object";
      }
      // The reading of an object as JSON.parse left it (repeats collapsed), key by key.
      const fold = (k: string) => k.replace(/\u017f/g, "s").replace(/\u212a/g, "k").toLowerCase();
      const keyByKey = (o: Record<string, unknown>) => {
        const naive = { name: "", jwksUri: "" };
        const seen = new Map<string, number>();
        let ok = true;
        for (const [k, val] of Object.entries(o)) {
          const f = fold(k) === "name" ? "name" : fold(k) === "jwksuri" ? "jwksUri" : undefined;
          if (!f) continue;
          seen.set(f, (seen.get(f) ?? 0) + 1);
          if (val === null) continue;
          if (typeof val !== "string") ok = false;
          else naive[f] = val;
        }
        return { naive, ok, once: [...seen.values()].every((n) => n === 1) };
      };
      if (r !== undefined) must(keyByKey(v as Record<string, unknown>).ok, "accepted a non-string field");
      // Re-serialised, the object has no repeated keys; without two spellings of one field,
      // order cannot matter either, so its reading is the key-by-key one. (The raw body may
      // repeat a key, which JSON.parse collapsed: there the key-by-key reading is not Go's.)
      // The oracle reads what was re-serialised, not v: JSON.stringify writes a number too
      // large for a double (1e9995, parsed as Infinity) as null.
      const reserialised = JSON.stringify(v);
      const want = keyByKey(JSON.parse(reserialised) as Record<string, unknown>);
      if (want.once) {
        const again = parseRegistration(Buffer.from(reserialised));
        must(same(again, want.ok ? want.naive : undefined), "differs from the key-by-key reading");
      }
      return r === undefined ? "refused" : "accepted";
    },
  },
];

/** rng is a small seeded PRNG (mulberry32), so a run is reproducible from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const tokens = ['{', '}', '[', ']', '"', ':', ',', 'null', 'true', '0', '-1', '1e999', '""', '{}', '[]', '\\u0000', '\\ud800', '\\"',
  '"text"', '"raw"', '"url"', '"data"', '"metadata"', '"messageId"', '"role"', '"ROLE_USER"', '"ROLE_AGENT"', '"parts"', '"contextId"',
  '"taskId"', '"message"', '"task"', '"status"', '"state"', '"TASK_STATE_AUTH_REQUIRED"', '"pact.missingScopes"', '"pact.actions"',
  '"pact.scopesUsed"', '"tool"', '"args"', '"error"', '"details"', '"reason"', '"INVALID_PARAMS"', '"UNSUPPORTED_OPERATION"',
  '"__proto__"', '"constructor"', '%', '%3A', '%3a', '%2F', '%2e', '%zz', '%E2%80%A8', '%C3', '%ED%A0%80', '%00', '/', '//', '..', '?',
  '&', '=', ';', '+', ' ', '\t', '\u2028', '\u00e9', '\u{1F600}', '\uD800', '\uDFFF', 'pageSize', 'a2a', 'oauth', 'tasks', ':cancel',
  'pushNotificationConfigs', 'demo_session_x'];
const chars = ["\u0000", "\n", "\r", "\u007f", "\u0080", "\u00ff", "\u0100", "\u2029", "\ufeff", "\uffff", "\uD83D", "\uDE00"];

function mutate(s: string, r: () => number, corpus: string[]): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const at = () => Math.floor(r() * (s.length + 1));
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const p = at();
    switch (Math.floor(r() * 7)) {
      case 0:
        s = s.slice(0, p) + pick(tokens) + s.slice(p);
        break;
      case 1:
        s = s.slice(0, p) + s.slice(Math.min(s.length, p + 1 + Math.floor(r() * 8)));
        break;
      case 2:
        s = s.slice(0, p) + (r() < 0.5 ? pick(chars) : String.fromCharCode(Math.floor(r() * 128))) + s.slice(p + 1);
        break;
      case 3: {
        const q = Math.min(s.length, p + Math.floor(r() * 16));
        s = s.slice(0, q) + s.slice(p, q) + s.slice(q);
        break;
      }
      case 4: {
        const o = pick(corpus);
        const a = Math.floor(r() * (o.length + 1));
        s = s.slice(0, p) + o.slice(a, a + Math.floor(r() * 32)) + s.slice(p);
        break;
      }
      case 5:
        if (s.length > 0) {
          const c = s.charCodeAt(Math.min(p, s.length - 1)) ^ (1 << Math.floor(r() * 8));
          s = s.slice(0, p) + String.fromCharCode(c) + s.slice(p + 1);
        }
        break;
      default:
        s = s.slice(0, p) + pick(tokens) + pick(tokens) + s.slice(p);
    }
    if (s.length > 4096) s = s.slice(0, 4096);
  }
  return s;
}

function corpusOf(name: string): Input[] {
  const file = fileURLToPath(new URL(`../../../test/fuzz/corpus/${name}.json`, import.meta.url));
  const raw = JSON.parse(readFileSync(file, "utf8")) as (string | string[])[];
  return raw.map((x) => (Array.isArray(x) ? x : [x]));
}

/** fuzz runs one target for runs executions; it returns the failing input, or undefined. */
export function fuzz(t: Target, runs: number, seed: number, seeds?: Input[]): { input: Input; error: unknown } | undefined {
  const r = rng(seed);
  const pool = seeds ? [...seeds] : corpusOf(t.name);
  const seen = new Set<string>();
  const flat = pool.flat();
  const exec = (input: Input): string | { input: Input; error: unknown } => {
    try {
      return t.check(input);
    } catch (error) {
      return { input, error };
    }
  };
  for (const input of pool) {
    const o = exec(input);
    if (typeof o !== "string") return o;
    seen.add(o);
  }
  for (let i = 0; i < runs; i++) {
    const base = pool[Math.floor(r() * pool.length)]!;
    const k = Math.floor(r() * base.length);
    const input = base.map((s, j) => (j === k || r() < 0.1 ? mutate(s, r, flat) : s));
    const o = exec(input);
    if (typeof o !== "string") return o;
    if (!seen.has(o)) {
      seen.add(o);
      pool.push(input); // a new outcome: keep the input to mutate further
    }
  }
  return undefined;
}

function main(): void {
  const args = process.argv.slice(2);
  const opt = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const runs = Number(opt("--runs") ?? "20000");
  const seed = Number(opt("--seed") ?? String(Date.now() % 2 ** 31));
  const only = opt("--target");
  if (!Number.isInteger(runs) || runs < 0 || !Number.isInteger(seed)) throw new Error("usage: run.js [--runs N] [--seed S] [--target NAME]");
  let failed = 0;
  for (const t of targets) {
    if (only && t.name !== only) continue;
    const t0 = Date.now();
    const bad = fuzz(t, runs, seed);
    const took = ((Date.now() - t0) / 1000).toFixed(1) + "s";
    if (!bad) {
      process.stdout.write(`ok    TS fuzz ${t.name} (frontends/pacta2a-js) ${runs} runs, seed ${seed}, ${took}\n`);
      continue;
    }
    failed++;
    const why = bad.error instanceof Failure ? "invariant: " + bad.error.message : "threw: " + String((bad.error as Error)?.stack ?? bad.error);
    process.stdout.write(`FAIL  TS fuzz ${t.name} (frontends/pacta2a-js) seed ${seed}, ${took}\n  ${why}\n  input (add to test/fuzz/corpus/${t.name}.json): ${JSON.stringify(bad.input.length === 1 ? bad.input[0] : bad.input)}\n`);
  }
  process.exitCode = failed > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
