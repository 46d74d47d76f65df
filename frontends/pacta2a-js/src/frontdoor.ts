/**
 * The HTTP adapter: every request the frontend mounts goes to pactd's
 * FrontDoorService.Serve as it was received, and pactd's answer is written
 * back byte for byte (docs/frontends.md). pactd owns every PACT rule, page
 * and error body; the adapter owns only the body bound, the sign-in hook's
 * answer, running a turn (agent.ts, sdk.ts) and what to do when pactd
 * cannot be reached.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { create } from "@bufbuild/protobuf";
import { Code, createClient, ConnectError, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import {
  FinishTurnRequestSchema,
  FrontDoorService,
  ServeRequestSchema,
  type HttpResponse,
  type ServeRequest,
} from "./gen/pact/v1/frontdoor_pb.js";
import { EchoAgent, failure, runAgent, type Agent, type TurnRunner } from "./agent.js";
import type { Sessions } from "./sessions.js";
import { bare, errorText, requestPath, safeLogger, stackText, type Logger } from "./recover.js";

/** maxBodyBytes bounds the request body the adapter reads (1 MiB); past it pactd is told body_too_large. */
export const maxBodyBytes = 1 << 20;

/** hopByHop are the header fields that belong to one connection (RFC 9110 §7.6.1), never passed on. */
export const hopByHop: ReadonlySet<string> = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"]);

/** registrationPath is where self-service PA registration is mounted (PACT 1.0 §3.1). */
export const registrationPath = "/api/platforms";

/** FrontDoorConfig configures the adapter. */
export interface FrontDoorConfig {
  /** transport reaches pactd with the frontend credential (client.ts's pactdTransport). */
  transport: Transport;
  /** agent answers turns, unless turns is set; EchoAgent when neither is. */
  agent?: Agent;
  /** turns runs turns another way: sdk.ts's sdkTurns(app) hands them to an A2A SDK server. */
  turns?: TurnRunner;
  /** sessions is the sign-in hook for trusted-frontend Brands; without it their pages answer 404. */
  sessions?: Sessions;
  /** selfRegistration mounts POST /api/platforms (self-service PA registration). */
  selfRegistration?: boolean;
  /** logger receives one line per fault; silent when unset. */
  logger?: Logger;
}

/** Middleware is an Express (or Connect) middleware function; Express's own types are not needed to mount it. */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** Body is a request body as read: whole, or too large (and then empty). */
interface Body {
  bytes: Buffer;
  tooLarge: boolean;
}

/** FrontDoor serves HTTP requests through pactd's FrontDoorService. */
export class FrontDoor {
  private readonly client: Client<typeof FrontDoorService>;
  private readonly turns: TurnRunner;
  private readonly sessions: Sessions | undefined;
  private readonly selfRegistration: boolean;
  private readonly log: Logger;

  constructor(cfg: FrontDoorConfig) {
    if (!cfg.transport) throw new Error("front door: need a transport to pactd");
    this.client = createClient(FrontDoorService, cfg.transport);
    const agent = cfg.agent ?? new EchoAgent();
    this.turns = cfg.turns ?? ((turn) => runAgent(agent, turn));
    this.sessions = cfg.sessions;
    this.selfRegistration = cfg.selfRegistration === true;
    this.log = safeLogger(cfg.logger);
  }

  /**
   * mounts reports whether the request is the front door's: GET or HEAD /,
   * everything under /a2a/, and POST /api/platforms with self-registration.
   */
  mounts(req: IncomingMessage): boolean {
    const path = requestPath(req);
    if (path === "/") return req.method === "GET" || req.method === "HEAD";
    if (path === registrationPath) return this.selfRegistration && req.method === "POST";
    return path.startsWith("/a2a/");
  }

  /**
   * middleware serves the front door's requests (mounts) in an Express app
   * and passes every other one on. Mount it at the app's root, before any
   * body parser: it reads the body itself.
   */
  middleware(): Middleware {
    return (req, res, next) => {
      if (this.mounts(req)) void this.handle(req, res);
      else next();
    };
  }

  /**
   * handle serves one request through pactd, whatever its path (a
   * standalone server mounts it at "/"; POST /api/platforms is answered 404
   * here without self-registration). It never rejects: a failed call to
   * pactd is answered 502, any other failure 500, each logged once.
   */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (!this.selfRegistration && requestPath(req) === registrationPath) {
        await readBody(req, res);
        return bare(res, 404);
      }
      const body = await readBody(req, res);
      const sreq = serveRequest(req, body, this.sessions !== undefined);
      const opts = callOptions(req);
      let out = await this.call("Serve", res, () => this.client.serve(sreq, opts));
      if (out?.outcome.case === "userNeeded") {
        const need = out.outcome.value;
        if (!this.sessions) throw new Error("pactd asked who is signed in, and this frontend has no sign-in hook");
        // Who is signed in, or (nobody) where the sign-in is: pactd answers the page, the redirect or the refusal.
        sreq.brandUser = await this.sessions.brandUser(req, need.brandId);
        if (!sreq.brandUser) sreq.signInUrl = this.sessions.loginUrl(need.brandId, need.returnTo);
        out = await this.call("Serve", res, () => this.client.serve(sreq, opts));
      }
      if (!out) return;
      let answer: HttpResponse;
      switch (out.outcome.case) {
        case "response":
          answer = out.outcome.value;
          break;
        case "turn": {
          const turn = out.outcome.value;
          const result = await this.turns(turn, req).catch((err: unknown) => failure("the turn failed: " + errorText(err)));
          if (result.case === "failure") this.log("turn failed", { brand: turn.brandId, error: result.value });
          const fin = create(FinishTurnRequestSchema, { handle: turn.handle, result });
          // No signal from the PA's connection: a turn runs to its end, so a retry finds the stored reply.
          const done = await this.call("FinishTurn", res, () => this.client.finishTurn(fin, opts));
          if (!done) return;
          if (!done.response) throw new Error("pactd answered FinishTurn without a response");
          answer = done.response;
          break;
        }
        default:
          // Nothing, or asking who is signed in a second time: pactd broke the contract.
          throw new Error("pactd answered Serve with " + (out.outcome.case ?? "nothing"));
      }
      write(res, answer);
    } catch (err) {
      this.log("front door failed", { method: req.method, path: requestPath(req), error: stackText(err) });
      bare(res, 500);
    }
  }

  /**
   * call makes one call to pactd. A failure (network, deadline, any RPC
   * error, an answer with nothing in it) is logged as one line naming the
   * RPC and answered with a bare 502 (Cache-Control: no-store); call then
   * resolves undefined.
   */
  private async call<T extends object>(rpc: string, res: ServerResponse, f: () => Promise<T>): Promise<T | undefined> {
    try {
      return await f();
    } catch (err) {
      const e = ConnectError.from(err);
      this.log("pactd call failed", { rpc, code: Code[e.code], error: e.rawMessage });
      bare(res, 502);
      return undefined;
    }
  }
}

/**
 * readBody reads the request body, at most maxBodyBytes. Past that (or when
 * the body cannot be read) it stops reading, returns tooLarge with an empty
 * body, and makes the answer the connection's last: the unread rest is never
 * parsed as a next request (RFC 9112 §9.3).
 */
export function readBody(req: IncomingMessage, res: ServerResponse): Promise<Body> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let n = 0;
    const done = (tooLarge: boolean) => {
      req.off("data", onData).off("end", onEnd).off("error", onFail).off("close", onFail);
      if (tooLarge) {
        req.pause();
        res.shouldKeepAlive = false;
      }
      resolve({ bytes: tooLarge ? Buffer.alloc(0) : Buffer.concat(chunks), tooLarge });
    };
    const onData = (c: Buffer) => {
      n += c.length;
      if (n > maxBodyBytes) return done(true);
      chunks.push(c);
    };
    const onEnd = () => done(false);
    const onFail = () => done(true);
    // A body read by something mounted before the adapter (a body parser) is lost to it.
    if (req.readableEnded) return done(true);
    req.on("data", onData).on("end", onEnd).on("error", onFail).on("close", onFail);
  });
}

/** serveRequest is the request as pactd's Serve takes it (the contract's step 2). */
export function serveRequest(req: IncomingMessage, body: Body, signsInUsers: boolean): ServeRequest {
  const target = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? "";
  const q = target.indexOf("?");
  let path = q < 0 ? target : target.slice(0, q);
  // absolute-form (RFC 9112 §3.2.2): the path is what follows the authority.
  const abs = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/]*/.exec(path);
  if (abs) path = path.slice(abs[0].length) || "/";
  const headers: { name: string; value: string }[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name !== "cookie" && !hopByHop.has(name)) headers.push({ name: raw[i]!, value: raw[i + 1]! });
  }
  return create(ServeRequestSchema, {
    method: req.method ?? "",
    path,
    query: q < 0 ? "" : target.slice(q + 1),
    headers,
    body: body.bytes,
    bodyTooLarge: body.tooLarge,
    signsInUsers,
    clientAddress: req.socket?.remoteAddress ?? "",
  });
}

/**
 * callOptions carries the request's W3C trace context on the calls made for
 * it, so pactd's spans join the caller's trace: a valid traceparent (its
 * version as 00, only the sampled flag kept) and its tracestate.
 */
function callOptions(req: IncomingMessage): CallOptions {
  const tp = req.headers["traceparent"];
  const m = typeof tp === "string" ? /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(tp.trim()) : null;
  if (!m || m[1] === "ff" || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return {};
  const headers: [string, string][] = [["traceparent", `00-${m[2]}-${m[3]}-${parseInt(m[4]!, 16) & 1 ? "01" : "00"}`]];
  const ts = req.headers["tracestate"];
  if (typeof ts === "string" && ts !== "" && ts.length <= 512) headers.push(["tracestate", ts]);
  return { headers };
}

/**
 * write sends pactd's answer as it is: the status, the headers in their
 * order (a repeated name repeatedly), the body. Only framing is added, as
 * an HTTP server adds it by itself: Date, and Content-Length when pactd gave
 * no framing for a status that has a body. A "Connection: close" among
 * pactd's headers makes the answer the connection's last.
 */
export function write(res: ServerResponse, r: HttpResponse): void {
  if (res.writableEnded || res.destroyed) return;
  const flat: string[] = [];
  let framed = r.status < 200 || r.status === 204 || r.status === 304;
  for (const h of r.headers) {
    flat.push(h.name, h.value);
    const name = h.name.toLowerCase();
    if (name === "content-length" || name === "transfer-encoding") framed = true;
  }
  if (!framed) flat.push("Content-Length", String(r.body.length));
  res.writeHead(r.status, flat);
  res.end(r.body);
}
