// Helpers that build the @a2a-js/sdk events the PACT middleware understands
// (docs/frontends.md): a step-up Task and a Message whose metadata feeds the
// signed receipt of a delegated turn.
import { randomUUID } from "node:crypto";
import type { Message, Role, Task, TaskState } from "@a2a-js/sdk";
import type { Action } from "../agent.js";

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
 * "pact.missingScopes". The middleware answers PACT's step-up task (pactd's
 * task id and login link) instead, or, when the Brand offers no delegation,
 * text as an ordinary reply.
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
 * "pact.actions" (the tools it ran; the receipt carries the base64url
 * SHA-256 of each action's args as JSON). The middleware removes them and
 * adds "pact.receipt" itself.
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
