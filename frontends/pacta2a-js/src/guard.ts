import type { Client } from "@connectrpc/connect";
import { DelegationService, GrantCheckReason } from "./gen/pact/v1/delegation_pb.js";
import type { Turn } from "./agent.js";

/** Need is what one tool call needs of the turn's grant. */
export interface Need {
  /** scopes are the scope ids the tool needs. */
  scopes?: string[];
  /**
   * detail is one RFC 9396 authorization_details entry (a JSON object)
   * describing the action, for a scope the grant may restrict, e.g.
   * `{"type":"https://acme.example/order","order_id":"1002","actions":["cancel"]}`.
   */
  detail?: string;
}

/** NotDelegatedError is checkGrant's answer for a turn without a grant. */
export class NotDelegatedError extends Error {
  constructor() {
    super("the turn carries no delegation grant");
    this.name = "NotDelegatedError";
  }
}

/** GrantInactiveError is checkGrant's answer when pactd says the grant is not active for the need. */
export class GrantInactiveError extends Error {
  constructor(
    /** reason is pactd's answer (revoked, expired, unknown, scope not granted, details not covered, scope restricted). */
    readonly reason: GrantCheckReason,
    /** missingScopes are the scopes lacking (SCOPE_NOT_GRANTED) or restricted without a covering entry (SCOPE_RESTRICTED). */
    readonly missingScopes: string[],
  ) {
    const r = (GrantCheckReason[reason] ?? String(reason)).toLowerCase();
    super(`grant not active: ${r}${missingScopes.length ? ` (${missingScopes.join(" ")})` : ""}`);
    this.name = "GrantInactiveError";
  }
}

/**
 * checkGrant is the action guard: call it right before a tool runs and again
 * after a slow policy decision. It asks pactd's CheckGrant (answered from the
 * replica's grant cache, within the same revocation bound as
 * VerifyAgentRequest) whether the turn's grant is still active for the need,
 * and resolves only when it is; it rejects with NotDelegatedError,
 * GrantInactiveError or pactd's ConnectError otherwise (fail closed). deleg
 * is a DelegationService client: createClient(DelegationService, transport)
 * with the transport of client.ts.
 */
export async function checkGrant(
  deleg: Client<typeof DelegationService>,
  turn: Pick<Turn, "brandId" | "caller" | "delegation">,
  need: Need = {},
): Promise<void> {
  const d = turn.delegation;
  if (!d || !d.grantId) throw new NotDelegatedError();
  const r = await deleg.checkGrant({
    brandId: turn.brandId,
    grantId: d.grantId,
    brandUser: d.brandUser,
    agentId: turn.caller?.agentId ?? "",
    scopes: need.scopes ?? [],
    authorizationDetailsJson: need.detail ?? "",
  });
  if (!r.active) throw new GrantInactiveError(r.reason, r.missingScopes);
}
