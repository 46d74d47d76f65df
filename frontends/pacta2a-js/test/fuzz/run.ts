/**
 * The front door under a small mutation fuzzer of our own (pure JS: nothing
 * to download). What the library still parses is the HTTP request a client
 * sends, so the one target feeds raw request bytes (odd request-targets,
 * headers, framings, bodies past the bound) to a node:http server running
 * FrontDoor.handle, in front of an in-memory fake pactd whose answer
 * depends on the request (a response, a turn, a sign-in question, an RPC
 * error, an answer Node refuses to write). Each input runs on a connection
 * of its own (an in-memory socket pair) and the client then half-closes it.
 * Invariants: nothing throws out of the library (no uncaught exception, no
 * unhandled rejection), the server closes the connection within a bounded
 * wait (never a hang), what reaches Serve is the request as Node parsed it
 * (the raw target, the headers in order less Cookie and hop-by-hop, a body
 * within the bound or body_too_large with none), and pactd's answer is what
 * the client reads.
 *
 *   node dist/test/fuzz/run.js [--runs N] [--seed S]
 *
 * N executions (default 20000). A failure prints the seed and the input (as
 * JSON, ready for the corpus file) and exits 1.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { Duplex } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { FrontDoorService, HttpResponseSchema, TurnSchema, type ServeRequest } from "../../src/gen/pact/v1/frontdoor_pb.js";
import { FrontDoor, hopByHop, maxBodyBytes } from "../../src/frontdoor.js";
import { recover } from "../../src/recover.js";

/** Input is one fuzz input: the raw request bytes (as latin1 text) and how many KiB of "a" follow them. */
export type Input = [string, string];

/** Target is a fuzzed function: check rejects on a broken invariant and resolves the outcome's shape, for novelty. */
export interface Target {
  name: string;
  check(input: Input): Promise<string>;
}

export class Failure extends Error {}

function must(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Failure(what);
}

/** Request is one request the server parsed, what Serve got for it, and the answer the client should read. */
interface Request {
  url: string;
  raw: string[];
  serves: ServeRequest[];
  /** done is set once FrontDoor.handle has returned. */
  done: boolean;
  /** want is the status (and body) the client should read, as the fake pactd's answer implies. */
  want?: { status: number; body: string };
}

/** Seen is what one input made happen on the server side. */
interface Seen {
  requests: Request[];
  faults: unknown[];
}

let seen: Seen = { requests: [], faults: [] };

/** current is the request whose calls to the fake pactd are being made. */
const current = new AsyncLocalStorage<Request>();

/** answer is the fake pactd's Serve: chosen by words in the path, so mutations reach every outcome. */
function answer(req: ServeRequest) {
  const r = current.getStore()!;
  r.serves.push(req);
  const p = req.path;
  // Every answer's body ends in a blank line, so the responses can be told apart in the client's bytes.
  if (p.includes("fail")) {
    r.want = { status: 502, body: "" };
    throw new ConnectError("fuzz: refused", Code.InvalidArgument);
  }
  if (p.includes("turn") && !req.bodyTooLarge) {
    r.want = { status: 200, body: req.method === "HEAD" ? "" : "finished reply\r\n\r\n" };
    return { outcome: { case: "turn" as const, value: create(TurnSchema, { handle: "h", brandId: "b", text: "t", turnTimeoutSeconds: 1 }) } };
  }
  if (p.includes("user") && req.brandUser === "" && req.signInUrl === "") {
    return { outcome: { case: "userNeeded" as const, value: { brandId: "b", returnTo: p } } };
  }
  if (req.signInUrl !== "") {
    r.want = { status: 303, body: "" };
    return { outcome: { case: "response" as const, value: create(HttpResponseSchema, { status: 303, headers: [{ name: "Location", value: req.signInUrl }] }) } };
  }
  if (p.includes("empty")) {
    r.want = { status: 500, body: "" };
    return {};
  }
  const body = "pactd " + req.method.length + " " + req.body.length + " " + (req.bodyTooLarge ? "big" : "ok") + "\r\n\r\n";
  const headers = [{ name: "Content-Type", value: "text/plain" }, { name: "X-Echo", value: String(req.headers.length) }];
  if (p.includes("close")) headers.push({ name: "Connection", value: "close" });
  const status = p.includes("nobody") ? 204 : req.bodyTooLarge ? 413 : 200;
  r.want = { status, body: status === 204 || req.method === "HEAD" ? "" : body };
  if (p.includes("crlf")) {
    headers.push({ name: "X-Bad", value: "a\r\nb" });
    r.want = { status: 500, body: "" };
  }
  return { outcome: { case: "response" as const, value: create(HttpResponseSchema, { status, headers, body: Buffer.from(body) }) } };
}

const transport = createRouterTransport(({ service }) => {
  service(FrontDoorService, {
    serve: answer,
    finishTurn: (req) => ({ response: create(HttpResponseSchema, { status: 200, body: Buffer.from("finished " + req.result.case + "\r\n\r\n") }) }),
  });
});
const door = new FrontDoor({
  transport, selfRegistration: true,
  sessions: { brandUser: (req) => (/\bu=1\b/.test(req.headers.cookie ?? "") ? "u" : ""), loginUrl: (b, r) => "/login?" + encodeURIComponent(b + r) },
  logger: () => {},
});
const server = createServer({ maxHeaderSize: 64 << 10 }, recover((req: IncomingMessage, res) => {
  const r: Request = { url: req.url ?? "", raw: [...req.rawHeaders], serves: [], done: false };
  seen.requests.push(r);
  return current.run(r, () => door.handle(req, res)).finally(() => (r.done = true));
}, () => {}));

/** pair is two connected in-memory sockets: what one writes the other reads; an end or a destroy reaches the other side. */
function pair(): [Duplex, Duplex] {
  const sides: Duplex[] = [];
  const side = (i: number) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        sides[1 - i]!.push(chunk);
        cb();
      },
      final(cb) {
        sides[1 - i]!.push(null);
        cb();
      },
      destroy(err, cb) {
        const other = sides[1 - i]!;
        if (!other.destroyed) queueMicrotask(() => other.destroy());
        cb(err);
      },
    });
  sides.push(side(0), side(1));
  return [sides[0]!, sides[1]!];
}

/** statuses are the status codes of the responses in bytes (each begins the bytes or follows a blank line), less 100 Continue. */
function statuses(bytes: string): number[] {
  return [...bytes.matchAll(/(?:^|\r\n\r\n)HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])).filter((c) => c !== 100);
}

/** nodeErrors are the answers Node's own parser gives a request it cannot read (then it closes). */
const nodeErrors = new Set([400, 408, 417, 431, 501, 505]);

/**
 * exchange sends one input on a fresh connection, waits until the server
 * has nothing left to do with it (every request handled and no byte moving
 * for a while: a request may be waiting for body bytes that never come),
 * then half-closes it. It resolves what came back once the server closed
 * the connection, or undefined if it did not within ms.
 */
async function exchange(input: Input, ms: number): Promise<string | undefined> {
  const [client, srv] = pair();
  Object.assign(srv, { remoteAddress: "127.0.0.1", remotePort: 40000 });
  server.emit("connection", srv);
  const chunks: Buffer[] = [];
  let closed = false;
  client.on("data", (c: Buffer) => chunks.push(c));
  client.on("end", () => (closed = true));
  client.on("close", () => (closed = true));
  client.on("error", () => {});
  const kib = Math.min(2048, Math.max(0, Number.parseInt(input[1], 10) || 0));
  client.write(Buffer.from(input[0], "latin1"));
  if (kib > 0) client.write(Buffer.alloc(kib << 10, "a"));
  let last = "";
  for (let stable = 0, turns = 0; stable < 6 && !closed && turns < 100_000; turns++) {
    await new Promise((r) => setImmediate(r));
    const state = `${seen.requests.length} ${seen.requests.filter((r) => r.done).length} ${chunks.length} ${srv.readableLength}`;
    stable = state === last ? stable + 1 : 0;
    last = state;
  }
  client.end();
  const deadline = Date.now() + ms;
  while (!closed && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  if (!closed) {
    client.destroy();
    return undefined;
  }
  return Buffer.concat(chunks).toString("latin1");
}

export const targets: Target[] = [
  {
    name: "request",
    async check(input) {
      seen = { requests: [], faults: [] };
      const got = await exchange(input, 5000);
      must(got !== undefined, "the connection was still open 5 s after the client finished: a hang");
      // Let the server finish what it was doing (a turn, a last log line).
      await new Promise((r) => setImmediate(r));
      must(seen.faults.length === 0, "uncaught: " + String(seen.faults[0]));
      for (const r of seen.requests) {
        must(r.serves.length <= 2, "more than two Serve calls for one request");
        for (const s of r.serves) {
          must(s.body.length <= maxBodyBytes, "a body past the bound reached Serve");
          must(!s.bodyTooLarge || s.body.length === 0, "body_too_large with a body");
          const target = s.path + (s.query === "" && !r.url.includes("?") ? "" : "?" + s.query);
          if (r.url.startsWith("/")) must(target === r.url, `Serve got ${JSON.stringify(target)} for the target ${JSON.stringify(r.url)}`);
          const want: string[] = [];
          for (let j = 0; j + 1 < r.raw.length; j += 2) {
            const n = r.raw[j]!.toLowerCase();
            if (n !== "cookie" && !hopByHop.has(n)) want.push(r.raw[j]! + ": " + r.raw[j + 1]!);
          }
          must(JSON.stringify(s.headers.map((h) => h.name + ": " + h.value)) === JSON.stringify(want), "the headers are not the request's, in order");
        }
      }
      // The client reads pactd's answers, in order, until the connection closes (or Node's parser refuses the bytes that follow).
      const codes = statuses(got);
      for (const [i, code] of codes.entries()) {
        const r = seen.requests[i];
        if (!r || nodeErrors.has(code)) break;
        must(r.want, `the client read ${code} for a request pactd never answered`);
        must(code === r.want.status, `the client read ${code}, pactd's answer means ${r.want.status}`);
        if (r.want.body !== "") must(got.includes(r.want.body), "pactd's body is not what the client read");
      }
      return `${seen.requests.length}req ${seen.requests.map((r) => r.serves.length).join("")}serve [${codes.join(",")}]`;
    },
  },
];

process.on("uncaughtException", (err) => seen.faults.push(err));
process.on("unhandledRejection", (err) => seen.faults.push(err));

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

const tokens = ["\r\n", "\r\n\r\n", "\n", "\r", " ", "\t", ":", "?", "#", "/", "//", "%", "%2F", "%3A", "%zz", "%00", "%E2%80%A8", "..",
  "GET ", "POST ", "HEAD ", "OPTIONS * ", "CONNECT ", "http://h.example", " HTTP/1.1", " HTTP/1.0", " HTTP/2.0", "/a2a/", "/api/platforms",
  "turn", "user", "fail", "close", "crlf", "empty", "nobody", "Host: h", "Content-Length: ", "Content-Length: 0", "Content-Length: 5",
  "Content-Length: 99999999", "Content-Length: -1", "Transfer-Encoding: chunked", "Transfer-Encoding: gzip, chunked", "0\r\n\r\n",
  "5\r\nhello\r\n", "ffffffff\r\n", "Connection: close", "Connection: keep-alive", "Connection: upgrade", "Upgrade: websocket",
  "Expect: 100-continue", "Cookie: u=1", "cookie: a=b", "TE: trailers", "Trailer: X", "Keep-Alive: 5", "Proxy-Connection: x",
  "Authorization: Bearer x", "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate: a=b",
  "\u00e9", "\u00ff", "\u0000", "\u007f", "{}", "a=1&b", "__proto__", "constructor", "1100", "2048", "0", "-1"];

function mutate(s: string, r: () => number, corpus: string[]): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const p = Math.floor(r() * (s.length + 1));
    switch (Math.floor(r() * 6)) {
      case 0:
        s = s.slice(0, p) + pick(tokens) + s.slice(p);
        break;
      case 1:
        s = s.slice(0, p) + s.slice(Math.min(s.length, p + 1 + Math.floor(r() * 8)));
        break;
      case 2:
        s = s.slice(0, p) + String.fromCharCode(Math.floor(r() * 256)) + s.slice(p + 1);
        break;
      case 3: {
        const q = Math.min(s.length, p + Math.floor(r() * 32));
        s = s.slice(0, q) + s.slice(p, q) + s.slice(q);
        break;
      }
      case 4: {
        const o = pick(corpus);
        const a = Math.floor(r() * (o.length + 1));
        s = s.slice(0, p) + o.slice(a, a + Math.floor(r() * 48)) + s.slice(p);
        break;
      }
      default:
        s = s.slice(0, p) + pick(tokens) + pick(tokens) + s.slice(p);
    }
    if (s.length > 8192) s = s.slice(0, 8192);
  }
  return s;
}

function corpusOf(name: string): Input[] {
  const file = fileURLToPath(new URL(`../../../test/fuzz/corpus/${name}.json`, import.meta.url));
  return (JSON.parse(readFileSync(file, "utf8")) as [string, string][]).map(([a, b]) => [a, b]);
}

/** fuzz runs one target for runs executions; it resolves the failing input, or undefined. */
export async function fuzz(t: Target, runs: number, seed: number, seeds?: Input[]): Promise<{ input: Input; error: unknown } | undefined> {
  const r = rng(seed);
  const pool = seeds ? [...seeds] : corpusOf(t.name);
  const novel = new Set<string>();
  const flat = pool.flat();
  const exec = async (input: Input): Promise<string | { input: Input; error: unknown }> => {
    try {
      return await t.check(input);
    } catch (error) {
      return { input, error };
    }
  };
  for (const input of pool) {
    const o = await exec(input);
    if (typeof o !== "string") return o;
    novel.add(o);
  }
  for (let i = 0; i < runs; i++) {
    const base = pool[Math.floor(r() * pool.length)]!;
    const input: Input = r() < 0.9 ? [mutate(base[0], r, flat), base[1]] : [base[0], mutate(base[1], r, flat)];
    const o = await exec(input);
    if (typeof o !== "string") return o;
    if (!novel.has(o)) {
      novel.add(o);
      pool.push(input); // a new outcome: keep the input to mutate further
    }
  }
  return undefined;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const runs = Number(opt("--runs") ?? "20000");
  const seed = Number(opt("--seed") ?? String(Date.now() % 2 ** 31));
  if (!Number.isInteger(runs) || runs < 0 || !Number.isInteger(seed)) throw new Error("usage: run.js [--runs N] [--seed S]");
  let failed = 0;
  for (const t of targets) {
    const t0 = Date.now();
    const bad = await fuzz(t, runs, seed);
    const took = ((Date.now() - t0) / 1000).toFixed(1) + "s";
    if (!bad) {
      process.stdout.write(`ok    TS fuzz ${t.name} (frontends/pacta2a-js) ${runs} runs, seed ${seed}, ${took}\n`);
      continue;
    }
    failed++;
    const why = bad.error instanceof Failure ? "invariant: " + bad.error.message : "threw: " + String((bad.error as Error)?.stack ?? bad.error);
    process.stdout.write(`FAIL  TS fuzz ${t.name} (frontends/pacta2a-js) seed ${seed}, ${took}\n  ${why}\n  input (add to test/fuzz/corpus/${t.name}.json): ${JSON.stringify(bad.input)}\n`);
  }
  server.close();
  process.exitCode = failed > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
