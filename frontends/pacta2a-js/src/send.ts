import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { OwnerSchema, TurnOutcome, type Owner } from "./gen/pact/v1/conversation_pb.js";
import type { Reply, Turn } from "./agent.js";
import { readBody, tooLarge } from "./body.js";
import { A2AError, contentTypeNotSupported, invalidParams, marshal, taskNotFound, writeA2A } from "./errors.js";
import { requestPath, type Call, type Frontend } from "./handler.js";

/** UserMessage is what message:send needs from a valid request. */
export interface UserMessage {
  messageId: string;
  contextId: string;
  text: string;
  /** message is the PA's message object as sent (its JSON). */
  message: Record<string, unknown>;
  /** metadata is the request's metadata object, when it has one. */
  metadata?: Record<string, unknown>;
}

/**
 * send serves POST message:send (PACT §4). The request's Content-Type and
 * A2A-Version are not checked: the body is parsed as JSON whatever they say.
 */
export async function send(fe: Frontend, req: IncomingMessage, res: ServerResponse, c: Call): Promise<void> {
  const path = requestPath(req);
  const body = await readBody(req, res, fe.maxBodyBytes);
  if (body === undefined || body === tooLarge) return invalidParams("The request body is unreadable or too large").write(res);
  const msg = parseSend(body.toString("utf8"));
  if (msg instanceof A2AError) return msg.write(res);
  const owner: Owner = create(OwnerSchema, { brandId: c.brandId, agentId: c.caller?.agentId ?? "", subject: c.caller?.subject ?? "" });
  let begun;
  try {
    begun = await fe.conv.beginTurn({
      owner,
      contextId: msg.contextId,
      messageId: msg.messageId,
      brandUser: c.delegation?.brandUser ?? "",
    });
  } catch (err) {
    return fe.fail(res, path, "begin turn", err);
  }
  switch (begun.outcome) {
    case TurnOutcome.ERROR: {
      const e = begun.error;
      if (!e || e.httpStatus < 400 || e.httpStatus > 599) {
        return fe.fail(res, path, "begin turn", new Error("A2A error without an error status"));
      }
      return writeA2A(res, e.httpStatus, e.bodyJson);
    }
    case TurnOutcome.REPLAY:
      return writeA2A(res, 200, begun.replyJson);
    case TurnOutcome.RUN:
      break;
    default:
      return fe.fail(res, path, "begin turn", new Error("unknown outcome " + String(begun.outcome)));
  }

  // The turn is ours. It runs to the end even if the PA hangs up (nothing
  // here listens for that), so a retry of the messageId finds the stored reply.
  const signal = AbortSignal.timeout(fe.turnTimeoutMs);
  const ctxId = begun.contextId;
  let out: string | undefined;
  let stored = false;
  let failure: unknown;
  try {
    const turn: Turn = {
      brandId: c.brandId, contextId: ctxId, newContext: begun.contextCreated, text: msg.text, caller: c.caller, delegation: c.delegation,
      message: msg.message, metadata: msg.metadata,
    };
    const reply = await c.agent.reply(turn, signal);
    if (reply.needScopes && reply.needScopes.length > 0) out = await stepUp(fe, c, ctxId, reply.needScopes, signal);
    if (out === undefined) {
      out = await complete(fe, c, owner, ctxId, msg.messageId, reply, signal);
      stored = true;
    }
  } catch (err) {
    failure = err;
  }
  if (!stored) {
    // A failed turn, or a step-up (which the spec does not store): release
    // the messageId so the PA may send it again.
    try {
      await fe.conv.abandonTurn({ owner, contextId: ctxId, messageId: msg.messageId }, { signal: AbortSignal.timeout(fe.turnTimeoutMs) });
    } catch (err) {
      fe.log("abandon turn", { error: err instanceof Error ? err.message : String(err) });
    }
  }
  // An agent may refuse a turn with an A2A error of its own (the SDK bridge
  // relays the SDK's INVALID_PARAMS, CONTENT_TYPE_NOT_SUPPORTED and
  // UNSUPPORTED_OPERATION so); anything else is INTERNAL.
  if (failure instanceof A2AError) {
    fe.log("run turn", { path: path, error: failure.reason + ": " + failure.message });
    return failure.write(res);
  }
  if (failure !== undefined || out === undefined) return fe.fail(res, path, "run turn", failure);
  writeA2A(res, 200, out);
}

/** agentMessage is the JSON of one agent message, in the A2A field order. */
function agentMessage(messageId: string, contextId: string, text: string) {
  return { messageId, contextId, role: "ROLE_AGENT", parts: [{ text }] };
}

/**
 * stepUp builds the AUTH_REQUIRED task of PACT §5.5 for scopes the turn
 * needs. It returns undefined when the Brand offers no delegation, so the
 * agent's text answers instead.
 */
async function stepUp(fe: Frontend, c: Call, contextId: string, need: string[], signal: AbortSignal): Promise<string | undefined> {
  let su;
  try {
    su = await fe.deleg.startStepUp(
      { brandId: c.brandId, agentId: c.caller?.agentId ?? "", contextId, missingScopes: need },
      { signal },
    );
  } catch (err) {
    if (ConnectError.from(err).code === Code.FailedPrecondition) return undefined;
    throw err;
  }
  const wants = su.scopes.map((s) => s.description);
  const text = "I need your permission first: " + wants.join("; ") + ". Please approve it at the link your assistant shows you.";
  return marshal({
    task: {
      id: su.taskId,
      contextId,
      status: { state: "TASK_STATE_AUTH_REQUIRED", message: agentMessage(fe.newMessageId(), contextId, text) },
      metadata: { "pact.missingScopes": su.missingScopes, "pact.verificationUriComplete": su.verificationUriComplete },
    },
  });
}

/**
 * complete builds the reply body, with the signed receipt of PACT §5.6 when
 * the turn is delegated, and stores it in pactd so a retry of the messageId
 * gets it back unchanged.
 */
async function complete(
  fe: Frontend,
  c: Call,
  owner: Owner,
  contextId: string,
  messageId: string,
  reply: Reply,
  signal: AbortSignal,
): Promise<string> {
  const m: Record<string, unknown> = agentMessage(fe.newMessageId(), contextId, reply.text);
  // The agent's own metadata goes on, less any pact.* key: those are PACT's to set.
  const meta: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(reply.metadata ?? {})) if (!k.startsWith("pact.") && v !== undefined) meta[k] = v;
  const hasMeta = Object.keys(meta).length > 0;
  if (hasMeta) m["metadata"] = meta;
  let out = marshal({ message: m });
  const d = c.delegation;
  if (d) {
    const receipt = await fe.tokens.signReceipt(
      {
        brandId: c.brandId,
        grantId: d.grantId,
        scopesUsed: reply.scopesUsed ?? [],
        paIssuer: c.caller?.issuer ?? "",
        brandUser: d.brandUser,
        actions: (reply.actions ?? []).map((a) => ({
          tool: a.tool,
          argsHash: a.args === undefined || a.args === null ? "" : createHash("sha256").update(canonicalJSON(a.args)).digest("base64url"),
        })),
      },
      { signal },
    );
    // pactd's receipt JSON goes in as it is, as message.metadata["pact.receipt"].
    if (hasMeta) out = out.slice(0, -3) + ',"pact.receipt":' + receipt.receiptJson + "}}}";
    else out = out.slice(0, -2) + ',"metadata":{"pact.receipt":' + receipt.receiptJson + "}}}";
  }
  await fe.conv.completeTurn({ owner, contextId, messageId, replyMessageId: m["messageId"] as string, replyJson: out }, { signal });
  return out;
}

/** canonicalJSON is JSON with object keys sorted (as Go marshals maps), for argument hashes. */
export function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map(canonicalJSON).join(",") + "]";
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return "{" + Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => marshal(k) + ":" + canonicalJSON(o[k])).join(",") + "}";
  }
  return marshal(v);
}

type JSONObject = Record<string, unknown>;

const isObject = (v: unknown): v is JSONObject => v !== null && typeof v === "object" && !Array.isArray(v);

/** str returns o[key] when it is a JSON string. */
function str(o: JSONObject, key: string): string | undefined {
  const v = Object.hasOwn(o, key) ? o[key] : undefined;
  return typeof v === "string" ? v : undefined;
}

/**
 * parseSend validates a SendMessageRequest in the order of PACT §4: JSON and
 * schema, taskId, role, content types, blank text.
 */
export function parseSend(body: string): UserMessage | A2AError {
  let req: unknown;
  try {
    req = JSON.parse(body);
  } catch {
    req = undefined;
  }
  const m = isObject(req) && Object.hasOwn(req, "message") ? req["message"] : undefined;
  if (!isObject(m)) return invalidParams('The body must be JSON: {"message": Message}');
  const id = str(m, "messageId");
  const role = str(m, "role");
  const contextId = str(m, "contextId");
  const has = (k: string) => Object.hasOwn(m, k);
  const parts = m["parts"];
  if (!id) return invalidParams("message.messageId must be a non-empty string");
  if (role !== "ROLE_USER" && role !== "ROLE_AGENT" && role !== "ROLE_UNSPECIFIED") {
    return invalidParams("message.role must be ROLE_USER");
  }
  // A null element is a part with no kind (refused below), as in the Go frontend.
  if (!Array.isArray(parts) || parts.length === 0 || !parts.every((p) => p === null || isObject(p))) {
    return invalidParams("message.parts must be a non-empty array of parts");
  }
  if ((has("contextId") && contextId === undefined) || (has("taskId") && str(m, "taskId") === undefined)) {
    return invalidParams("message.contextId and message.taskId must be strings");
  }
  if (has("metadata") && !isObject(m["metadata"])) return invalidParams("message.metadata must be an object");
  const texts: string[] = [];
  let nonText = false;
  for (const p of parts as (JSONObject | null)[]) {
    const kind = p === null ? undefined : partKind(p);
    if (!kind) return invalidParams("Each part must be an object with exactly one of text, raw, url or data");
    if (kind === "text") texts.push(str(p!, "text")!);
    else nonText = true;
  }
  const text = texts.join("\n");
  if (has("taskId")) return taskNotFound("Task not found");
  if (role !== "ROLE_USER") return invalidParams("message.role must be ROLE_USER");
  if (nonText) return contentTypeNotSupported("Only text parts are supported");
  if (isBlank(text)) return invalidParams("The message text is empty");
  const out: UserMessage = { messageId: id, contextId: contextId ?? "", text, message: m };
  const meta = isObject(req) && Object.hasOwn(req, "metadata") ? req["metadata"] : undefined;
  if (isObject(meta)) out.metadata = meta;
  return out;
}

/**
 * partKind checks a part as the strict A2A schema does: exactly one of text,
 * raw (base64), url or data, plus optional metadata, filename and mediaType,
 * and nothing else.
 */
function partKind(p: JSONObject): string | undefined {
  let kind: string | undefined;
  for (const [k, v] of Object.entries(p)) {
    switch (k) {
      case "text":
      case "raw":
      case "url":
      case "filename":
      case "mediaType":
        if (typeof v !== "string") return undefined;
        break;
      case "data":
        if (v === null) return undefined;
        break;
      case "metadata":
        if (!isObject(v)) return undefined;
        break;
      default:
        return undefined;
    }
    if (k === "text" || k === "raw" || k === "url" || k === "data") {
      if (kind) return undefined;
      kind = k;
    }
  }
  return kind;
}

/** isBlank is true for text of Unicode White_Space only (Go's strings.TrimSpace, not String.prototype.trim). */
export function isBlank(s: string): boolean {
  return /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/.test(s);
}
