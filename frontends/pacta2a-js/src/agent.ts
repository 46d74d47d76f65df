import type { Caller, DelegationInfo } from "./gen/pact/v1/verification_pb.js";

/**
 * Agent is the Brand's support agent: the only part of the frontend that is
 * Brand logic. Replace EchoAgent with a real one (src/demo/agent.ts has one
 * with scope-mapped actions). With @a2a-js/sdk the agent is the SDK's
 * AgentExecutor instead, reached through Pact's middleware (express.ts).
 */
export interface Agent {
  /**
   * reply answers one User turn. A rejection abandons the turn (the PA may
   * send the same messageId again) and answers INTERNAL, unless it is an
   * A2AError (errors.ts), which is sent as it is.
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
  /** message is the PA's message object as it was sent (JSON), for agents that need more than its text. */
  message?: Record<string, unknown>;
  /** metadata is the request's metadata object (SendMessageRequest.metadata), when it has one. */
  metadata?: Record<string, unknown> | undefined;
}

/** Reply is the agent's answer. */
export interface Reply {
  /** text is the reply message's single text part. */
  text: string;
  /**
   * needScopes, when not empty, are scopes the turn needs and the caller
   * lacks: the turn is answered with the step-up task of PACT §5.5 instead,
   * and text is sent only if the Brand offers no delegation.
   */
  needScopes?: string[];
  /** scopesUsed are the scopes the reply relied on, for the receipt. */
  scopesUsed?: string[];
  /** actions are the tools the reply ran, for the receipt. */
  actions?: Action[];
  /**
   * metadata goes on as the reply message's metadata, less any "pact."
   * key (PACT sets those: "pact.receipt" on a delegated turn).
   */
  metadata?: Record<string, unknown>;
}

/** Action is one tool call of a delegated reply. */
export interface Action {
  /** tool is the tool name. */
  tool: string;
  /** args are the tool's arguments; the receipt carries the base64url SHA-256 of their JSON. */
  args?: unknown;
}

/** EchoAgent repeats the User's text and names the Brand. */
export class EchoAgent implements Agent {
  async reply(t: Turn): Promise<Reply> {
    return { text: "This is the " + t.brandId + " support agent. You said: " + t.text };
  }
}
