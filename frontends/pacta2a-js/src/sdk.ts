/**
 * The glue to an A2A SDK server (@a2a-js/sdk on Express) behind the front
 * door: a turn pactd hands out is POSTed to the SDK's HTTP+JSON handler in
 * this process, the verified caller rides in the SDK's own User (the
 * restHandler's userBuilder), and the SDK's answer goes back to pactd as it
 * was, which reads it. Plus the events an AgentExecutor publishes for PACT:
 * a step-up Task and a Message whose metadata feeds the receipt. It is the
 * entry "@pactd/a2a/sdk": the only one that needs @a2a-js/sdk.
 */
import { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { PassThrough } from "node:stream";
import { randomUUID } from "node:crypto";
import type { Message, Role, Task, TaskState } from "@a2a-js/sdk";
import type { User } from "@a2a-js/sdk/server";
import { create } from "@bufbuild/protobuf";
import { SdkAnswerSchema, type Turn as TurnMessage } from "./gen/pact/v1/frontdoor_pb.js";
import type { Caller, DelegationInfo } from "./gen/pact/v1/verification_pb.js";
import { failure, turnMs, withDeadline, type Action, type TurnRunner } from "./agent.js";
import { hopByHop, maxBodyBytes } from "./frontdoor.js";
import { errorText } from "./recover.js";

export { EphemeralTaskStore } from "./taskstore.js";

/** SdkHandler is the SDK's HTTP handler: an Express app with restHandler mounted at /a2a, never exposed itself. */
export type SdkHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** PactUser is the SDK User of a turn pactd handed out: authenticated, named "{agentId}:{sub}". */
export class PactUser implements User {
  constructor(
    /** turn is the turn as pactd handed it out. */
    readonly turn: TurnMessage,
  ) {}

  /** brandId is the Brand the PA is talking to. */
  get brandId(): string {
    return this.turn.brandId;
  }

  /** caller is the PA and its User, as pactd verified them. */
  get caller(): Caller | undefined {
    return this.turn.caller;
  }

  /** delegation is the grant of a verified delegation token, or undefined for an identity-only turn. */
  get delegation(): DelegationInfo | undefined {
    return this.turn.delegation;
  }

  /** newContext is true on the conversation's first turn. */
  get newContext(): boolean {
    return this.turn.newContext;
  }

  /** isAuthenticated is always true: pactd verified the PA JWT. */
  get isAuthenticated(): boolean {
    return true;
  }

  /** userName is "{agentId}:{sub}". */
  get userName(): string {
    return (this.turn.caller?.agentId ?? "") + ":" + (this.turn.caller?.subject ?? "");
  }
}

/** users are the PactUsers of the requests sdkTurns made, for sdkUser. */
const users = new WeakMap<IncomingMessage, PactUser>();

/**
 * sdkUser is restHandler's userBuilder: the PactUser of a turn's request.
 * Any other request is refused (the SDK answers it with an error; the
 * agent never runs).
 */
export async function sdkUser(req: IncomingMessage): Promise<PactUser> {
  const u = users.get(req);
  if (!u) throw new Error("pact: this request did not come from the front door");
  return u;
}

/** pactUser is the PactUser of an AgentExecutor's RequestContext (or a ServerCallContext), or undefined. */
export function pactUser(ctx: { context?: { user?: User | undefined } | undefined } | { user?: User | undefined }): PactUser | undefined {
  const user = "context" in ctx ? ctx.context?.user : "user" in ctx ? ctx.user : undefined;
  return user instanceof PactUser ? user : undefined;
}

/** sdkDropped are the PA's headers the SDK never sees: its credentials, its cookies and the framing of its own request. */
const sdkDropped = new Set([...hopByHop, "authorization", "x-a2a-user-delegation", "cookie", "content-type", "content-length", "a2a-version"]);

/**
 * sdkTurns is the TurnRunner of an SDK server: each turn is a POST of
 * turn.sdkRequestJson to turn.sdkPath, made to sdk in this process
 * (sdkRequest). Its answer (status, and at most 1 MiB of body) is the
 * turn's result; an SDK that throws, answers more or does not answer in
 * the turn's time fails the turn.
 */
export function sdkTurns(sdk: SdkHandler): TurnRunner {
  return async (turn, pa) => {
    const ctl = new AbortController();
    try {
      const req = await sdkRequest(turn, pa);
      const res = new ServerResponse(req);
      const answer = capture(res, ctl.signal);
      sdk(req, res);
      const a = await withDeadline(answer, turnMs(turn), "the SDK", ctl);
      if (a.body.length > maxBodyBytes) return failure("the SDK's answer is larger than 1 MiB");
      return { case: "sdkAnswer", value: create(SdkAnswerSchema, { status: a.status, body: a.body }) };
    } catch (err) {
      return failure("the SDK failed: " + errorText(err));
    }
  };
}

/**
 * sdkRequest is the SDK's request of a turn: POST turn.sdkPath with the
 * PA's headers less sdkDropped, plus Content-Type, A2A-Version and
 * Content-Length of turn.sdkRequestJson. Its body is already read and
 * parsed into req.body, as an Express body parser leaves a request (the
 * SDK's own parser, bounded at 100 KB, then passes it by): so a message as
 * large as the front door's bound reaches the agent.
 */
async function sdkRequest(turn: TurnMessage, pa: IncomingMessage): Promise<IncomingMessage> {
  const body: unknown = JSON.parse(turn.sdkRequestJson);
  // A stand-in for the PA's socket: its address, no bytes.
  const sock = new PassThrough();
  Object.assign(sock, { remoteAddress: pa.socket?.remoteAddress, encrypted: (pa.socket as { encrypted?: boolean } | undefined)?.encrypted });
  const req = new IncomingMessage(sock as unknown as Socket);
  Object.assign(req, { method: "POST", url: turn.sdkPath, httpVersion: "1.1", httpVersionMajor: 1, httpVersionMinor: 1, body });
  const raw: string[] = [];
  for (let i = 0; i + 1 < pa.rawHeaders.length; i += 2) {
    if (!sdkDropped.has(pa.rawHeaders[i]!.toLowerCase())) raw.push(pa.rawHeaders[i]!, pa.rawHeaders[i + 1]!);
  }
  raw.push("Content-Type", "application/json", "A2A-Version", "1.0", "Content-Length", String(Buffer.byteLength(turn.sdkRequestJson)));
  req.rawHeaders = raw;
  // req.headers as Node's parser builds them: lower-case names, repeats joined.
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (k !== "__proto__") headers[k] = Object.hasOwn(headers, k) ? headers[k] + ", " + raw[i + 1]! : raw[i + 1]!;
  }
  req.headers = headers;
  users.set(req, new PactUser(turn));
  const ended = new Promise((resolve) => req.once("end", resolve));
  req.push(null);
  req.complete = true;
  req.resume();
  await ended;
  return req;
}

/**
 * capture takes what is written to res (a response of our own, no socket
 * under it) and resolves with its status and body when it ends. Past
 * maxBodyBytes the body is cut (one byte over tells the caller). Once
 * signal aborts, writes are dropped.
 */
function capture(res: ServerResponse, signal: AbortSignal): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let n = 0;
    const take = (chunk: unknown, enc: unknown) => {
      if (signal.aborted || n > maxBodyBytes || chunk === undefined || chunk === null || typeof chunk === "function") return;
      const b = typeof chunk === "string" ? Buffer.from(chunk, typeof enc === "string" ? (enc as BufferEncoding) : "utf8") : Buffer.from(chunk as Uint8Array);
      chunks.push(b.subarray(0, maxBodyBytes + 1 - n));
      n += b.length;
    };
    const callback = (args: unknown[]) => {
      const f = args.findLast((a) => typeof a === "function") as (() => void) | undefined;
      if (f) queueMicrotask(f);
    };
    // Own properties: Express replaces res's prototype, never these.
    Object.assign(res, {
      writeHead(status: number) {
        res.statusCode = status;
        return res;
      },
      flushHeaders() {},
      write(...args: unknown[]) {
        take(args[0], args[1]);
        callback(args);
        return true;
      },
      end(...args: unknown[]) {
        if (res.writableEnded) return res;
        take(args[0], args[1]);
        callback(args);
        Object.assign(res, { finished: true });
        if (!signal.aborted) resolve({ status: res.statusCode, body: Buffer.concat(chunks) });
        queueMicrotask(() => res.emit("finish"));
        return res;
      },
    });
  });
}

/** The SDK's enum values used here (type-only imports keep @a2a-js/sdk an optional peer; a test pins them). */
export const roleAgent = 2 as Role.ROLE_AGENT;
export const stateAuthRequired = 8 as TaskState.TASK_STATE_AUTH_REQUIRED;

/** TurnIds are the ids a step-up task is bound to: an AgentExecutor's RequestContext has them. */
export interface TurnIds {
  taskId: string;
  contextId: string;
}

/**
 * stepUpTask is the Task an AgentExecutor publishes when the turn needs
 * scopes the caller lacks: TASK_STATE_AUTH_REQUIRED with
 * "pact.missingScopes". pactd answers PACT's step-up task instead, or, when
 * the Brand offers no delegation, text as an ordinary reply.
 */
export function stepUpTask(ids: TurnIds, missingScopes: readonly string[], text = ""): Task {
  const message: Message = {
    messageId: randomUUID(), contextId: ids.contextId, taskId: ids.taskId, role: roleAgent,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined, extensions: [], referenceTaskIds: [],
  };
  return {
    id: ids.taskId, contextId: ids.contextId,
    status: { state: stateAuthRequired, message, timestamp: new Date().toISOString() },
    artifacts: [], history: [],
    metadata: { "pact.missingScopes": [...missingScopes] },
  };
}

/**
 * withReceipt returns msg with the metadata the receipt of a delegated turn
 * is signed from: "pact.scopesUsed" (the scopes the reply relied on) and
 * "pact.actions" (the tools it ran, each {tool, args?}; pactd hashes the
 * args). pactd removes them and adds "pact.receipt" itself.
 */
export function withReceipt(msg: Message, scopesUsed: readonly string[], actions: readonly Action[] = []): Message {
  return {
    ...msg,
    metadata: {
      ...(msg.metadata ?? {}),
      "pact.scopesUsed": [...scopesUsed],
      "pact.actions": actions.map((a) => (a.args === undefined || a.args === null ? { tool: a.tool } : { tool: a.tool, args: a.args })),
    },
  };
}
