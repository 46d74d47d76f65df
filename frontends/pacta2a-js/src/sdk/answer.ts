// Decoding what @a2a-js/sdk's REST handler answered to the normalized
// message:send the middleware handed it (docs/frontends.md, "What the
// middleware owns"): the SDK's JSON back into the Reply the shared send flow
// turns into PACT's bytes.
import type { Action, Reply } from "../agent.js";
import { A2AError, contentTypeNotSupported, invalidParams, unsupportedOperation } from "../errors.js";

/** maxAnswerBytes bounds the SDK's answer the middleware reads back. */
export const maxAnswerBytes = 1 << 20;

/** Answer is a decoded SDK answer: a reply for the PA, an A2A error to relay, or why the turn fails (INTERNAL). */
export type Answer = { reply: Reply } | { error: A2AError } | { fail: string };

/** relayed are the SDK's error reasons PACT sends on with the SDK's message; any other fails the turn. */
const relayed: Record<string, (msg: string) => A2AError> = {
  INVALID_PARAMS: invalidParams,
  CONTENT_TYPE_NOT_SUPPORTED: contentTypeNotSupported,
  UNSUPPORTED_OPERATION: unsupportedOperation,
};

/** defaultWords stand in for an SDK error without a message (the Go middleware says the same). */
const defaultWords: Record<string, string> = {
  INVALID_PARAMS: "Invalid params",
  CONTENT_TYPE_NOT_SUPPORTED: "Only text parts are supported",
  UNSUPPORTED_OPERATION: "This operation is not supported",
};

type JSONObject = Record<string, unknown>;
const isObject = (v: unknown): v is JSONObject => v !== null && typeof v === "object" && !Array.isArray(v);
const own = (o: JSONObject, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");

/**
 * decodeAnswer turns the SDK's HTTP answer (status and body) into an Answer.
 * It never throws. A Message (ROLE_AGENT, text parts only) is a reply: its
 * texts joined by "\n"; metadata "pact.scopesUsed" and "pact.actions" feed
 * the receipt, other "pact." keys are dropped, the rest goes on. A Task in
 * TASK_STATE_AUTH_REQUIRED with a non-empty "pact.missingScopes" is a
 * step-up (its status message's text is the reply when the Brand offers no
 * delegation). An error whose reason is INVALID_PARAMS,
 * CONTENT_TYPE_NOT_SUPPORTED or UNSUPPORTED_OPERATION is relayed. Anything
 * else fails the turn.
 */
export function decodeAnswer(status: number, body: string): Answer {
  if (body.length > maxAnswerBytes) return { fail: "the SDK's answer is too large" };
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return { fail: `the SDK answered ${status} with a body that is not JSON` };
  }
  if (!isObject(v)) return { fail: `the SDK answered ${status} with a body that is not an object` };
  if (status !== 200) return sdkError(status, v);
  const keys = Object.keys(v);
  if (keys.length !== 1) return { fail: "the SDK's answer is not one Message or Task" };
  const m = own(v, "message");
  if (m !== undefined) return message(m);
  const t = own(v, "task");
  if (t !== undefined) return task(t);
  return { fail: "the SDK's answer is neither a Message nor a Task" };
}

function sdkError(status: number, v: JSONObject): Answer {
  const e = own(v, "error");
  if (!isObject(e)) return { fail: `the SDK answered ${status} without an error` };
  const msg = own(e, "message");
  const details = own(e, "details");
  const reason = Array.isArray(details) && isObject(details[0]) ? own(details[0], "reason") : undefined;
  const text = typeof msg === "string" ? msg : "";
  if (typeof reason === "string" && Object.hasOwn(relayed, reason)) {
    return { error: relayed[reason]!(text.trim() === "" ? defaultWords[reason]! : text) };
  }
  return { fail: `the SDK answered ${status} ${typeof reason === "string" ? reason : "(no reason)"}: ${text.slice(0, 200)}` };
}

/** texts joins a message's text parts; undefined when a part is anything but text. */
function texts(parts: unknown): string | undefined {
  if (!Array.isArray(parts)) return undefined;
  const out: string[] = [];
  for (const p of parts) {
    const t = isObject(p) ? own(p, "text") : undefined;
    if (typeof t !== "string" || own(p as JSONObject, "raw") !== undefined || own(p as JSONObject, "url") !== undefined ||
      own(p as JSONObject, "data") !== undefined) return undefined;
    out.push(t);
  }
  return out.join("\n");
}

function message(m: unknown): Answer {
  if (!isObject(m)) return { fail: "the SDK's Message is not an object" };
  if (own(m, "role") !== "ROLE_AGENT") return { fail: "the SDK's Message is not the agent's" };
  const text = texts(own(m, "parts"));
  if (text === undefined) return { fail: "the SDK's Message has a part that is not text" };
  const reply: Reply = { text };
  const meta = own(m, "metadata");
  if (meta === undefined || meta === null) return { reply };
  if (!isObject(meta)) return { fail: "the SDK's Message metadata is not an object" };
  const rest: JSONObject = {};
  for (const [k, val] of Object.entries(meta)) {
    if (k === "pact.scopesUsed") {
      if (!isStrings(val)) return { fail: "pact.scopesUsed is not an array of scope ids" };
      reply.scopesUsed = val;
    } else if (k === "pact.actions") {
      const actions = decodeActions(val);
      if (!actions) return { fail: 'pact.actions is not an array of {"tool", "args"?}' };
      reply.actions = actions;
    } else if (!k.startsWith("pact.")) {
      rest[k] = val;
    }
  }
  if (Object.keys(rest).length > 0) reply.metadata = rest;
  return { reply };
}

function decodeActions(v: unknown): Action[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Action[] = [];
  for (const a of v) {
    if (!isObject(a)) return undefined;
    const tool = own(a, "tool");
    if (typeof tool !== "string" || tool === "") return undefined;
    const args = own(a, "args");
    out.push(args === undefined || args === null ? { tool } : { tool, args });
  }
  return out;
}

function task(t: unknown): Answer {
  if (!isObject(t)) return { fail: "the SDK's Task is not an object" };
  const st = own(t, "status");
  const state = isObject(st) ? own(st, "state") : undefined;
  if (state !== "TASK_STATE_AUTH_REQUIRED") return { fail: `the SDK answered a Task in ${typeof state === "string" ? state : "no state"}` };
  const meta = own(t, "metadata");
  const need = isObject(meta) ? own(meta, "pact.missingScopes") : undefined;
  if (!isStrings(need) || need.length === 0 || need.some((s) => s === "")) {
    return { fail: "the SDK's AUTH_REQUIRED Task has no pact.missingScopes" };
  }
  let text = "";
  const sm = own(st as JSONObject, "message");
  if (sm !== undefined && sm !== null) {
    const t2 = isObject(sm) ? texts(own(sm, "parts")) : undefined;
    if (t2 === undefined) return { fail: "the SDK's AUTH_REQUIRED Task has a status message that is not text" };
    text = t2;
  }
  return { reply: { text, needScopes: need } };
}
