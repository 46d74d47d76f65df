// The verified caller, as @a2a-js/sdk's own User: what the middleware's
// userBuilder hands the SDK, and what an AgentExecutor reads back.
import type { User } from "@a2a-js/sdk/server";
import type { Caller, DelegationInfo } from "../gen/pact/v1/verification_pb.js";

/**
 * PactUser is the SDK User of a turn that came through the PACT middleware:
 * authenticated, named "{agentId}:{sub}" (the User is the pair PA and sub),
 * with the caller and grant pactd verified.
 */
export class PactUser implements User {
  constructor(
    /** brandId is the Brand the PA is talking to (also the SDK's tenant). */
    readonly brandId: string,
    /** caller is the PA and its User, as pactd verified them. */
    readonly caller: Caller,
    /**
     * delegation is the grant of a verified delegation token, or undefined
     * for an identity-only turn; when set, the agent acts as Brand user
     * delegation.brandUser, limited to delegation.scopes (and its
     * authorizationDetails).
     */
    readonly delegation: DelegationInfo | undefined,
    /** newContext is true on the conversation's first turn. */
    readonly newContext: boolean,
  ) {}

  /** isAuthenticated is always true: pactd verified the PA JWT. */
  get isAuthenticated(): boolean {
    return true;
  }

  /** userName is "{agentId}:{sub}". */
  get userName(): string {
    return this.caller.agentId + ":" + this.caller.subject;
  }
}

/**
 * pactUser is the PactUser of an AgentExecutor's RequestContext (or a
 * ServerCallContext), or undefined when the call did not come through the
 * PACT middleware.
 */
export function pactUser(ctx: { context?: { user?: User | undefined } | undefined } | { user?: User | undefined }): PactUser | undefined {
  const user = "context" in ctx ? ctx.context?.user : "user" in ctx ? ctx.user : undefined;
  return user instanceof PactUser ? user : undefined;
}
