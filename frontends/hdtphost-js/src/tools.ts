/**
 * Tool is a content tool the host runs: its owner's business (a calendar,
 * messages), never a trust decision.
 */
export interface Tool {
  /** name is the tool's name (send_message, check_availability, ...). */
  name: string;
  /** permission is what a contact needs to see and call it (calendar.availability, ...). */
  permission: string;
  /** description and inputSchema are what tools/list shows. */
  description?: string;
  inputSchema?: Record<string, unknown>;
  /**
   * run runs one call pactd dispatched and returns its result object.
   * Throwing a Refusal refuses the call; any other error answers the
   * caller "unavailable", so run throws one only when the call had no
   * effect. pactd never dispatches one call twice: call.handle is the
   * call's idempotency key.
   */
  run(call: Call): Promise<Record<string, unknown>> | Record<string, unknown>;
}

/** Call is one dispatched content tool call, for a caller pactd proved. */
export interface Call {
  /** endpoint is the identity's endpoint: whose calendar, whose messages. */
  endpoint: string;
  /** handle is pactd's call handle, unique per call. */
  handle: string;
  tool: string;
  /** arguments passed the spec's bounds and thread ownership. */
  arguments: Record<string, unknown>;
  /** callerRoot is who calls: the caller's root fingerprint. */
  callerRoot: string;
  callerEndpoint: string;
  callerKid: string;
  /** callerName is the name on its card: an untrusted claim. */
  callerName: string;
  permissions: string[];
  /** msgId is the inner msg_id (send_message, send_media, book_slot), "" otherwise. */
  msgId: string;
  sealed: boolean;
}

/**
 * Refusal is a refused call: thrown by a tool (with a code a tool may
 * give), or the answer to an outbound call (the peer's, or pactd's verdict
 * on it when local).
 */
export class Refusal extends Error {
  constructor(
    readonly code: string,
    readonly retryAfter = 0,
    readonly data?: unknown,
    readonly local = false,
    readonly reason = "",
  ) {
    super("refused: " + code);
    this.name = "Refusal";
  }
}
