/**
 * PACT as Express middleware in front of @a2a-js/sdk's REST transport
 * (docs/frontends.md, "What the middleware owns, and what the SDK keeps"):
 *
 *   const pact = new Pact({ pactdUrl, token, transport });
 *   app.use("/a2a", pact.middleware(), restHandler({ requestHandler, userBuilder: pact.userBuilder }));
 *
 * The middleware answers every route under /a2a/{brandId}/ itself, exactly
 * as the standalone Frontend does (it is one): the Agent Card, the fixed
 * routes, the OAuth endpoints and consent pages, authentication and
 * pactd's conversation rules. Only a message:send turn that pactd says to
 * run goes on to the SDK, normalized (POST …/message:send, JSON, A2A-Version
 * 1.0, the PA's credentials removed, the verified caller in the SDK's User);
 * the SDK's answer is read back and turned into PACT's reply, step-up task
 * or error by the same send flow, byte for byte.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Agent, Reply, Turn } from "./agent.js";
import { Frontend, answerInternal, errorText, requestPath, requestTarget, type Config } from "./handler.js";
import { Capture } from "./sdk/capture.js";
import { decodeAnswer, maxAnswerBytes } from "./sdk/answer.js";
import { PactUser } from "./sdk/user.js";
import { rootPage } from "./root.js";

/** Middleware is an Express (or Connect) middleware function; Express's own types are not needed to mount it. */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** PactConfig configures Pact: a Frontend's Config without an agent (the SDK is the agent). */
export type PactConfig = Omit<Config, "agent">;

/** The request property that carries a turn's PactUser from the middleware to userBuilder. */
const userKey = Symbol("pact user");

/** Pact puts PACT in front of an @a2a-js/sdk server on Express. */
export class Pact {
  /** frontend is the PACT engine the middleware runs (its clients, pages and settings). */
  readonly frontend: Frontend;

  constructor(cfg: PactConfig) {
    this.frontend = new Frontend(cfg);
  }

  /**
   * middleware answers every request under /a2a/ (mount it there, before
   * any body parser: it reads message:send's body itself) and hands the
   * turns pactd says to run to the next handler, the SDK's restHandler
   * mounted at the same path. Requests outside /a2a/ are passed on.
   */
  middleware(): Middleware {
    return (req, res, next) => {
      const url = requestTarget(req);
      if (!url.startsWith("/a2a/")) {
        next();
        return;
      }
      const bridge = new SdkBridge(req, res, next, this.frontend);
      this.frontend.handle(req, res, { url, agent: bridge }).catch((err: unknown) => {
        this.frontend.fail(res, url.split("?", 1)[0] ?? "", "serve", err);
      });
    };
  }

  /**
   * rootPage answers GET / with the page that lists the Brands pactd has and
   * links their Agent Cards (mount it with app.get("/", pact.rootPage()));
   * anything else is passed on.
   */
  rootPage(): Middleware {
    return (req, res, next) => {
      if (req.method !== "GET" || requestPath(req) !== "/") {
        next();
        return;
      }
      rootPage(this.frontend, res).catch(next);
    };
  }

  /**
   * errorHandler is the last Express error handler of the app: a failure
   * anywhere in the chain is logged once and answered 500 (A2A INTERNAL
   * under /a2a/), or the connection is closed if the answer had begun.
   */
  errorHandler(): (err: unknown, req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
    return (err, req, res, _next) => {
      const path = requestPath(req);
      // A turn handed to the SDK is logged by the send flow once it reads this answer back.
      if (!(req as IncomingMessage & { [userKey]?: PactUser })[userKey]) this.frontend.log("request failed", { path, error: errorText(err) });
      answerInternal(res, path.startsWith("/a2a/"));
    };
  }

  /**
   * userBuilder is restHandler's userBuilder: the PactUser of a turn the
   * middleware handed on. A call that did not come through the middleware
   * is refused (the SDK answers it with an error; its agent never runs).
   */
  readonly userBuilder = async (req: IncomingMessage): Promise<PactUser> => {
    const u = (req as IncomingMessage & { [userKey]?: PactUser })[userKey];
    if (u instanceof PactUser) return u;
    throw new Error("pact: this call did not come through the PACT middleware");
  };
}

/**
 * SdkBridge is the Agent of one Express request: it runs the turn by
 * handing the normalized request to the rest of the Express chain and
 * decoding what the SDK answers.
 */
class SdkBridge implements Agent {
  private used = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly next: (err?: unknown) => void,
    private readonly fe: Frontend,
  ) {}

  reply(turn: Turn, signal: AbortSignal): Promise<Reply> {
    if (this.used) return Promise.reject(new Error("pact: one turn per request"));
    this.used = true;
    normalize(this.req, turn);
    const cap = new Capture(this.res, maxAnswerBytes);
    return new Promise<Reply>((resolve, reject) => {
      const onAbort = () => {
        cap.stop();
        reject(new Error("the SDK did not answer within " + this.fe.turnTimeoutMs + " ms"));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      void cap.answered.then((c) => {
        signal.removeEventListener("abort", onAbort);
        cap.stop();
        if (c.overflow) return reject(new Error("the SDK's answer is larger than " + maxAnswerBytes + " bytes"));
        const a = decodeAnswer(c.status, c.body);
        if ("reply" in a) resolve(a.reply);
        else if ("error" in a) reject(a.error);
        else reject(new Error(a.fail));
      });
      try {
        cap.run(() => this.next());
      } catch (err) {
        cap.stop();
        reject(new Error("the SDK failed: " + errorText(err)));
      }
    });
  }
}

/** dropped are the PA's headers the SDK never sees: its credentials (the verified caller is the SDK's User) and the consumed body's framing. */
const dropped = new Set(["authorization", "x-a2a-user-delegation", "cookie", "content-length", "transfer-encoding", "content-encoding",
  "content-type", "a2a-version"]);

/**
 * normalize turns req into the message:send the SDK is handed: POST
 * {interface path}/message:send, Content-Type application/json,
 * A2A-Version 1.0, body {"message": the PA's message with pactd's
 * contextId and no taskId, "metadata"?}, already parsed (req.body; the
 * stream is consumed, so a body parser skips it), without the PA's
 * Authorization, X-A2A-User-Delegation and Cookie headers.
 */
function normalize(req: IncomingMessage, turn: Turn): void {
  const r = req as IncomingMessage & { originalUrl?: string; baseUrl?: string; body?: unknown; [userKey]?: PactUser };
  const message: Record<string, unknown> = { ...(turn.message ?? {}), contextId: turn.contextId };
  delete message["taskId"];
  r.body = turn.metadata ? { message, metadata: turn.metadata } : { message };
  // The interface path as the PA wrote its Brand segment (the SDK's router
  // matches raw paths), relative to where Express mounted this middleware.
  const rawBrand = (r.originalUrl ?? r.url ?? "").split("?", 1)[0]!.split("/")[2] ?? encodeURIComponent(turn.brandId);
  const full = "/a2a/" + rawBrand + "/message:send";
  const base = r.baseUrl ?? "";
  r.url = base !== "" && full.toLowerCase().startsWith(base.toLowerCase()) ? full.slice(base.length) || "/" : full;
  r.method = "POST";
  const raw: string[] = [];
  for (let i = 0; i + 1 < r.rawHeaders.length; i += 2) {
    if (!dropped.has(r.rawHeaders[i]!.toLowerCase())) raw.push(r.rawHeaders[i]!, r.rawHeaders[i + 1]!);
  }
  raw.push("Content-Type", "application/json", "A2A-Version", "1.0");
  r.rawHeaders.splice(0, r.rawHeaders.length, ...raw);
  for (const h of dropped) delete r.headers[h];
  r.headers["content-type"] = "application/json";
  r.headers["a2a-version"] = "1.0";
  r[userKey] = new PactUser(turn.brandId, turn.caller!, turn.delegation, turn.newContext);
}
