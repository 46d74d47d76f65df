import type { IncomingMessage } from "node:http";
import { create, toBinary } from "@bufbuild/protobuf";
import type { Caller, DelegationInfo } from "./gen/pact/v1/verification_pb.js";
import { AgentReplySchema, type FinishTurnRequest, type Turn as TurnMessage } from "./gen/pact/v1/frontdoor_pb.js";
import { errorText } from "./recover.js";

/**
 * Agent is the Brand's support agent: the only part of the frontend that is
 * Brand logic. Replace EchoAgent with a real one (@pactd/demo has one with
 * scope-mapped actions). With @a2a-js/sdk the agent is the SDK's
 * AgentExecutor instead (sdk.ts).
 */
export interface Agent {
  /**
   * reply answers one User turn. A rejection, or no answer within the
   * turn's time, abandons the turn: the PA gets INTERNAL and may send the
   * same messageId again. signal aborts when the turn's time is up.
   */
  reply(turn: Turn, signal: AbortSignal): Promise<Reply>;
}

/** Turn is what the agent knows about one User message. */
export interface Turn {
  /** brandId is the Brand the PA is talking to. */
  brandId: string;
  /** contextId is the conversation. */
  contextId: string;
  /** newContext is true on the conversation's first turn. */
  newContext: boolean;
  /** text is the User's message: its text parts joined by newlines. */
  text: string;
  /** caller is the PA and its User, as pactd verified them. */
  caller: Caller | undefined;
  /**
   * delegation is the grant of a verified delegation token, or undefined for
   * an identity-only turn. When set, the agent acts as Brand user
   * delegation.brandUser, limited to delegation.scopes.
   */
  delegation: DelegationInfo | undefined;
}

/** Reply is the agent's answer. */
export interface Reply {
  /** text is the reply message's single text part. */
  text: string;
  /**
   * needScopes, when not empty, are scopes the turn needs and the caller
   * lacks: pactd answers the step-up task of PACT §5.5 instead, and sends
   * text only if the Brand offers no delegation.
   */
  needScopes?: string[];
  /** scopesUsed are the scopes the reply relied on, for the receipt. */
  scopesUsed?: string[];
  /** actions are the tools the reply ran, for the receipt. */
  actions?: Action[];
  /** metadata goes on as the reply message's metadata, less any "pact." key (pactd's). */
  metadata?: Record<string, unknown>;
}

/** Action is one tool call of a delegated reply. */
export interface Action {
  /** tool is the tool name. */
  tool: string;
  /** args are the tool's arguments; pactd hashes their JSON (RFC 8785 canonical form) into the receipt's argsHash. */
  args?: unknown;
}

/** EchoAgent repeats the User's text and names the Brand. */
export class EchoAgent implements Agent {
  async reply(t: Turn): Promise<Reply> {
    return { text: "This is the " + t.brandId + " support agent. You said: " + t.text };
  }
}

/** TurnResult is what FinishTurn is told about a turn. */
export type TurnResult = FinishTurnRequest["result"];

/**
 * TurnRunner runs a turn pactd handed out for the request req (the PA's)
 * and never rejects: runAgent below for an Agent, sdk.ts's sdkTurns for an
 * A2A SDK server.
 */
export type TurnRunner = (turn: TurnMessage, req: IncomingMessage) => Promise<TurnResult>;

/** turnMs is how long a turn may run: pactd's turn_timeout_seconds, 60 s when it names none. */
export function turnMs(turn: TurnMessage): number {
  return turn.turnTimeoutSeconds > 0 ? turn.turnTimeoutSeconds * 1000 : 60_000;
}

/** failure is the one-line cause FinishTurn is given when a turn fails. */
export function failure(cause: string): TurnResult {
  return { case: "failure", value: cause.replace(/\s+/g, " ").slice(0, 500) };
}

/**
 * withDeadline settles as p does, or rejects with "NAME did not answer
 * within N s" once ms have passed, aborting ctl.
 */
export function withDeadline<T>(p: Promise<T>, ms: number, name: string, ctl: AbortController): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctl.abort();
      reject(new Error(`${name} did not answer within ${ms / 1000} s`));
    }, ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * runAgent runs the Brand's agent on a turn pactd handed out, to the end
 * or its deadline, and returns what FinishTurn is told: the reply, with
 * each action's arguments as JSON (JSON.stringify; pactd canonicalizes and
 * hashes them), or the failure.
 */
export async function runAgent(agent: Agent, t: TurnMessage): Promise<TurnResult> {
  const turn: Turn = {
    brandId: t.brandId, contextId: t.contextId, newContext: t.newContext, text: t.text, caller: t.caller, delegation: t.delegation,
  };
  const ctl = new AbortController();
  try {
    const r = await withDeadline(Promise.resolve().then(() => agent.reply(turn, ctl.signal)), turnMs(t), "the agent", ctl);
    if (typeof r?.text !== "string") throw new Error("the reply has no text");
    const reply = create(AgentReplySchema, {
      text: r.text,
      needScopes: r.needScopes ?? [],
      scopesUsed: r.scopesUsed ?? [],
      actions: (r.actions ?? []).map((a) => ({ tool: a.tool, argsJson: a.args === undefined ? "" : JSON.stringify(a.args) ?? "" })),
      metadataJson: r.metadata === undefined ? "" : JSON.stringify(r.metadata),
    });
    toBinary(AgentReplySchema, reply); // a reply of the wrong shape fails here, as the agent's failure
    return { case: "reply", value: reply };
  } catch (err) {
    return failure("the agent failed: " + errorText(err));
  }
}
