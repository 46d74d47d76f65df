/**
 * The TypeScript A2A frontend of a PACT Provider: HTTP routing, the A2A
 * envelope and a replaceable Brand agent. Every PACT decision and all state
 * live in pactd, reached only through clients generated from proto/pact/v1;
 * nothing else of pactd is imported.
 *
 * Each request is handled in the order of PACT 1.0 §4.3: match the route
 * (else 404/405, before any authentication), then VerifyAgentRequest (the PA
 * JWT and, when sent, the delegation token), then the route: its fixed A2A
 * error, the task list, or message:send. Under /a2a/{brandId}/oauth/ pactd's
 * OAuth endpoints are reverse-proxied and the consent and connected-apps
 * pages are served (oauth.ts, signed.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { BrandService } from "./gen/pact/v1/brand_pb.js";
import { ConversationService } from "./gen/pact/v1/conversation_pb.js";
import { DelegationService } from "./gen/pact/v1/delegation_pb.js";
import { TokenService } from "./gen/pact/v1/token_pb.js";
import { VerificationService, type Caller, type DelegationInfo } from "./gen/pact/v1/verification_pb.js";
import { EchoAgent, type Agent } from "./agent.js";
import {
  A2AError,
  bare,
  internalError,
  invalidParams,
  pushNotSupported,
  taskNotFound,
  unsupportedOperation,
  writeA2A,
} from "./errors.js";
import { send } from "./send.js";
import { oauthRoutes, type Sessions } from "./oauth.js";
import { Pages } from "./pages.js";
import { brandName, notFound, rootPage } from "./root.js";
import { withTrace } from "./trace.js";

/** Logger receives one line per failed call to pactd or the agent. */
export type Logger = (msg: string, fields: Record<string, unknown>) => void;

/** Config configures the frontend. */
export interface Config {
  /** pactdUrl is pactd's base URL, e.g. http://127.0.0.1:7070 (the OAuth reverse proxy's target). */
  pactdUrl: string;
  /** token is the frontend credential pactd knows (PACT_FRONTEND_TOKEN). */
  token: string;
  /** transport reaches pactd with the credential (see transport.ts: Connect over HTTP/1.1 or HTTP/2, or gRPC). */
  transport: Transport;
  /** agent answers User turns; EchoAgent when unset. */
  agent?: Agent;
  /** newMessageId mints reply message ids; random when unset. */
  newMessageId?: () => string;
  /** maxBodyBytes bounds a request body; 1 MiB when unset. */
  maxBodyBytes?: number;
  /** turnTimeoutMs bounds the agent run and storing its reply; 60 s when unset. */
  turnTimeoutMs?: number;
  /** logger receives failures; silent when unset. */
  logger?: Logger;
  /**
   * sessions tells the consent and connected-apps pages who the User is at
   * a Brand in BRAND_LOGIN_MODE_TRUSTED_FRONTEND; without it those Brands'
   * pages answer 404 (signed-assertion Brands need none).
   */
  sessions?: Sessions;
}

/** Call is one request, authenticated unless its route is public. */
export interface Call {
  brandId: string;
  /** agent runs this request's turn: the Frontend's, or the one HandleOptions named. */
  agent: Agent;
  caller?: Caller | undefined;
  delegation?: DelegationInfo | undefined;
}

/** HandleOptions adapt one request to the server the Frontend runs in (see express.ts). */
export interface HandleOptions {
  /** url is the request target as the client sent it (Express: req.originalUrl); req.url when unset. */
  url?: string;
  /** agent runs this request's turn instead of the Frontend's own (the SDK bridge of express.ts). */
  agent?: Agent;
}

/** Serve serves one method of one route. */
export type Serve = (req: IncomingMessage, res: ServerResponse, url: URL, c: Call) => Promise<void> | void;

/** Endpoint is one method of a route; public ones are served without a PA JWT. */
export interface Endpoint {
  public?: boolean;
  serve: Serve;
}

/** Methods are a route's endpoints by HTTP method. */
export type Methods = Record<string, Endpoint>;

/** Frontend serves A2A under /a2a/{brandId}/. */
export class Frontend {
  readonly agent: Agent;
  readonly newMessageId: () => string;
  readonly maxBodyBytes: number;
  readonly turnTimeoutMs: number;
  readonly log: Logger;
  readonly sessions: Sessions | undefined;
  readonly pactdUrl: URL;
  readonly brands: Client<typeof BrandService>;
  readonly verify: Client<typeof VerificationService>;
  readonly conv: Client<typeof ConversationService>;
  readonly deleg: Client<typeof DelegationService>;
  readonly tokens: Client<typeof TokenService>;
  readonly pages = new Pages();

  constructor(cfg: Config) {
    let base: URL;
    try {
      base = new URL(cfg.pactdUrl);
    } catch {
      throw new Error("a2a: need pactd's URL and a frontend token");
    }
    if (!cfg.token || !cfg.transport || (base.protocol !== "http:" && base.protocol !== "https:")) {
      throw new Error("a2a: need pactd's URL and a frontend token");
    }
    this.pactdUrl = base;
    this.agent = cfg.agent ?? new EchoAgent();
    this.newMessageId = cfg.newMessageId ?? randomText;
    this.maxBodyBytes = cfg.maxBodyBytes && cfg.maxBodyBytes > 0 ? cfg.maxBodyBytes : 1 << 20;
    this.turnTimeoutMs = cfg.turnTimeoutMs && cfg.turnTimeoutMs > 0 ? cfg.turnTimeoutMs : 60_000;
    const logger = cfg.logger;
    // A logger's own failure must never stop an answer.
    this.log = (msg, fields) => {
      try {
        logger?.(msg, fields);
      } catch {
        // dropped
      }
    };
    this.sessions = cfg.sessions;
    const t = cfg.transport;
    this.brands = createClient(BrandService, t);
    this.verify = createClient(VerificationService, t);
    this.conv = createClient(ConversationService, t);
    this.deleg = createClient(DelegationService, t);
    this.tokens = createClient(TokenService, t);
  }

  /**
   * handle routes, authenticates and serves one request; its calls to pactd
   * carry the caller's trace context. It never rejects: any failure is
   * answered INTERNAL (or the connection is closed once headers went out)
   * and logged once.
   */
  handle(req: IncomingMessage, res: ServerResponse, opts: HandleOptions = {}): Promise<void> {
    return withTrace(req, () => this.serve(req, res, opts));
  }

  private async serve(req: IncomingMessage, res: ServerResponse, opts: HandleOptions): Promise<void> {
    const raw = opts.url ?? requestTarget(req);
    try {
      const rawPath = raw.split("?", 1)[0] ?? "";
      if (rawPath === "/" && req.method === "GET") return await rootPage(this, res);
      const split = splitPath(rawPath);
      if (!split) return notFound(this, req, res);
      // Appended to a fixed origin, so "//host/…" stays a path.
      const url = new URL("http://frontend.invalid" + raw);
      const methods = this.routes(split.rest);
      const method = req.method ?? "GET";
      const ep = methods?.[method];
      if (!ep) {
        if (!methods || Object.keys(methods).length === 0) return notFound(this, req, res);
        return bare(res, 405, { Allow: Object.keys(methods).sort().join(", ") });
      }
      const c: Call = { brandId: split.brandId, agent: opts.agent ?? this.agent };
      if (!ep.public && !(await this.authenticate(req, res, c))) return;
      await ep.serve(req, res, url, c);
    } catch (err) {
      this.fail(res, raw.split("?", 1)[0] ?? "", "serve", err);
    }
  }

  /** routes returns the endpoints of a path under the interface URL; undefined when none matches (PACT §4.3). */
  routes(p: string[]): Methods | undefined {
    const fixed = (e: A2AError): Endpoint => ({ serve: (_q, res) => e.write(res) });
    const [p0, p1] = p;
    if (p.length === 2 && p0 === ".well-known" && p1 === "agent-card.json") {
      return { GET: { public: true, serve: (q, res, u, c) => this.card(q, res, c) } };
    }
    if (p.length === 1 && p0 === "message:send") return { POST: { serve: (q, res, u, c) => send(this, q, res, c) } };
    if (p.length === 1 && p0 === "message:stream") return { POST: fixed(unsupportedOperation("Streaming is not supported")) };
    if (p.length === 1 && p0 === "extendedAgentCard") {
      return { GET: fixed(unsupportedOperation("The extended Agent Card is not supported")) };
    }
    if (p.length === 1 && p0 === "tasks") return { GET: { serve: (q, res, u) => listTasks(res, u.search) } };
    if (p0 === "oauth") return oauthRoutes(this, p.slice(1).join("/"));
    if (p.length < 2 || p0 !== "tasks" || !p1) return undefined;
    const task = p1;
    if (p.length === 2 && task.endsWith(":cancel") && task !== ":cancel") {
      return { POST: fixed(taskNotFound("Task not found: " + task.slice(0, -":cancel".length))) };
    }
    if (p.length === 2 && task.endsWith(":subscribe") && task !== ":subscribe") {
      return { POST: fixed(unsupportedOperation("Subscribing to tasks is not supported")) };
    }
    if (p.length === 2) return { GET: fixed(taskNotFound("Task not found: " + task)) };
    if (p.length === 3 && p[2] === "pushNotificationConfigs") {
      return { GET: fixed(pushNotSupported()), POST: fixed(pushNotSupported()) };
    }
    if (p.length === 4 && p[2] === "pushNotificationConfigs" && p[3] !== "") {
      return { GET: fixed(pushNotSupported()), DELETE: fixed(pushNotSupported()) };
    }
    return undefined;
  }

  /**
   * authenticate asks pactd about the request's PA JWT (and delegation
   * token) and the Brand. On a refusal it sends pactd's status and headers
   * with no body and returns false.
   */
  async authenticate(req: IncomingMessage, res: ServerResponse, c: Call): Promise<boolean> {
    let v;
    try {
      v = await this.verify.verifyAgentRequest({
        brandId: c.brandId,
        // Raw values; repeated headers are joined, so pactd sees (and refuses) them.
        authorization: headerValues(req, "authorization"),
        userDelegation: headerValues(req, "x-a2a-user-delegation"),
      });
    } catch (err) {
      this.fail(res, requestPath(req), "verify agent request", err);
      return false;
    }
    if (!v.allowed) {
      const h: Record<string, string> = {};
      if (v.wwwAuthenticate) h["WWW-Authenticate"] = v.wwwAuthenticate;
      if (v.retryAfterSeconds > 0) h["Retry-After"] = String(v.retryAfterSeconds);
      let status = v.httpStatus;
      if (status < 400 || status > 599) status = 401; // a refusal is never a success
      bare(res, status, h);
      return false;
    }
    c.caller = v.caller;
    c.delegation = v.delegation;
    return true;
  }

  /** card serves the Brand's Agent Card, built by pactd (PACT §2.1). */
  async card(req: IncomingMessage, res: ServerResponse, c: Call): Promise<void> {
    let card;
    try {
      card = await this.brands.getAgentCard({ brandId: c.brandId });
    } catch (err) {
      // Never application/a2a+json (PACT 1.0 §1.2); a page for browsers.
      if (ConnectError.from(err).code === Code.NotFound) return notFound(this, req, res, c.brandId);
      return this.fail(res, "", "get agent card", err);
    }
    res.writeHead(200, {
      "Content-Type": card.contentType,
      "Cache-Control": card.cacheControl,
      "Access-Control-Allow-Origin": "*",
      "Content-Length": Buffer.byteLength(card.cardJson),
    });
    res.end(card.cardJson);
  }

  /** brandName is the Brand's display name (its Agent Card's name), or "": for pages outside the frontend, such as a Brand's sign-in. */
  brandName(brandId: string): Promise<string> {
    return brandName(this, brandId);
  }

  /**
   * fail answers INTERNAL after an unexpected failure, or closes the
   * connection when the answer had begun; the cause goes to the log only.
   */
  fail(res: ServerResponse, path: string, op: string, err: unknown): void {
    this.log(op, { path, error: errorText(err) });
    answerInternal(res, true);
  }
}

/**
 * requestTarget is the request target as the client sent it: under
 * Express, where req.url is relative to the mount point, req.originalUrl.
 */
export function requestTarget(req: IncomingMessage): string {
  return (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? "/";
}

/** requestPath is requestTarget without its query (which may hold codes: never logged). */
export function requestPath(req: IncomingMessage): string {
  return requestTarget(req).split("?", 1)[0] ?? "";
}

/** errorText is an error's message for a log line. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * answerInternal answers 500 after a failure: A2A INTERNAL when a2a is set
 * (the request was under /a2a/), else a bare 500. Once the answer had
 * begun, or if writing fails, the connection is closed instead, so a client
 * never reads half an answer as a whole one.
 */
export function answerInternal(res: ServerResponse, a2a: boolean): void {
  if (res.writableEnded) return;
  try {
    if (res.headersSent) throw new Error("answer begun");
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    if (a2a) internalError().write(res);
    else bare(res, 500);
  } catch {
    res.destroy();
  }
}

/** headerValues joins a header's repeated values with ", ", as the Go frontend does. */
function headerValues(req: IncomingMessage, name: string): string {
  const out: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  }
  return out.join(", ");
}

/**
 * splitPath takes /a2a/{brandId}/{rest...} apart. Segments are split on the
 * raw path, then percent-decoded one by one (so %3A is ':' and %2F stays
 * inside its segment).
 */
export function splitPath(escaped: string): { brandId: string; rest: string[] } | undefined {
  if (!escaped.startsWith("/a2a/")) return undefined;
  const segs: string[] = [];
  for (const s of escaped.slice("/a2a/".length).split("/")) {
    const d = unescapeSegment(s);
    if (d === undefined) return undefined;
    segs.push(d);
  }
  const [brandId, ...rest] = segs;
  if (segs.length < 2 || !brandId) return undefined;
  return { brandId, rest };
}

/** unescapeSegment percent-decodes one path segment; undefined for a bad escape. */
export function unescapeSegment(s: string): string | undefined {
  if (!s.includes("%")) return s;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < s.length; ) {
    if (s[i] === "%") {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 3;
      continue;
    }
    const cp = s.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    bytes.push(...enc.encode(ch));
    i += ch.length;
  }
  // ignoreBOM: a leading U+FEFF is content (as in Go's url.PathUnescape), not a byte order mark to drop.
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array(bytes));
}

/**
 * listTasks answers GET tasks: ordinary turns create no tasks, so the list
 * is always empty.
 */
function listTasks(res: ServerResponse, search: string): void {
  const size = parsePageSize(search);
  if (size instanceof A2AError) return size.write(res);
  writeA2A(res, 200, `{"tasks":[],"nextPageToken":"","pageSize":${size},"totalSize":0}`);
}

/**
 * parsePageSize reads the one query parameter GET tasks honours: pageSize,
 * a decimal integer from 1 to 100, given at most once (default 50).
 */
export function parsePageSize(search: string): number | A2AError {
  const q = new URLSearchParams(search);
  if (!q.has("pageSize")) return 50;
  const vals = q.getAll("pageSize");
  const v = vals[0] ?? "";
  const n = /^[0-9]+$/.test(v) ? Number(v) : NaN;
  if (vals.length !== 1 || !(n >= 1 && n <= 100)) return invalidParams("pageSize must be an integer from 1 to 100");
  return n;
}

/** randomText is 26 characters of base32 (128 bits), like Go's crypto/rand.Text. */
export function randomText(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const b = randomBytes(26);
  let s = "";
  for (const x of b) s += alphabet[x % 32];
  return s;
}
