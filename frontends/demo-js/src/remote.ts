import type { Agent, Reply, Turn } from "@pactd/a2a";

/** maxReplyBytes bounds a remote agent's answer. */
const maxReplyBytes = 1 << 20;

/**
 * RemoteAgent is an Agent in another process: each turn is POSTed as JSON
 * to url and the answer is the Reply as JSON. It lets a Brand's agent be
 * written in any language, and lets the shared end-to-end suite drive this
 * frontend with the same instrumented agent as the Go one.
 *
 * Request:  {"brandId","contextId","newContext","text",
 *            "caller":{"agentId","issuer","subject","agentDisplayName"},
 *            "delegation":{"grantId","brandUser","scopes","authorizationDetailsJson",
 *              "authorizationDetails":[{"type","json","members":[{"name","values","array"}]}]} or null}
 * Answer:   200 {"text","needScopes"?,"scopesUsed"?,"actions"?:[{"tool","args"?}]}
 * Anything else fails the turn (INTERNAL; the PA may retry the messageId).
 */
export class RemoteAgent implements Agent {
  constructor(private readonly url: string) {}

  async reply(t: Turn, signal: AbortSignal): Promise<Reply> {
    const body = JSON.stringify({
      brandId: t.brandId,
      contextId: t.contextId,
      newContext: t.newContext,
      text: t.text,
      caller: t.caller
        ? { agentId: t.caller.agentId, issuer: t.caller.issuer, subject: t.caller.subject, agentDisplayName: t.caller.agentDisplayName }
        : null,
      delegation: t.delegation
        ? {
            grantId: t.delegation.grantId, brandUser: t.delegation.brandUser, scopes: t.delegation.scopes,
            authorizationDetailsJson: t.delegation.authorizationDetailsJson,
            authorizationDetails: t.delegation.authorizationDetails.map((d) => ({
              type: d.type, json: d.json, members: d.members.map((m) => ({ name: m.name, values: m.values, array: m.array })),
            })),
          }
        : null,
    });
    const res = await fetch(this.url, { method: "POST", headers: { "Content-Type": "application/json" }, body, signal });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`remote agent answered ${res.status}`);
    }
    // Read at most maxReplyBytes: the answer is not trusted to be small.
    const chunks: Uint8Array[] = [];
    let n = 0;
    for await (const chunk of res.body ?? []) {
      n += (chunk as Uint8Array).length;
      // Leaving the loop cancels the rest of the stream.
      if (n > maxReplyBytes) throw new Error("remote agent answer too large");
      chunks.push(chunk as Uint8Array);
    }
    return parseReply(JSON.parse(Buffer.concat(chunks).toString("utf8")));
  }
}

const strings = (v: unknown, name: string): string[] | undefined => {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) throw new Error(`remote agent: ${name} must be an array of strings`);
  return v;
};

/** parseReply checks a remote agent's answer. */
export function parseReply(v: unknown): Reply {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("remote agent: the answer must be an object");
  const o = v as Record<string, unknown>;
  if (typeof o["text"] !== "string") throw new Error("remote agent: text must be a string");
  const r: Reply = { text: o["text"] };
  const need = strings(o["needScopes"], "needScopes");
  const used = strings(o["scopesUsed"], "scopesUsed");
  if (need) r.needScopes = need;
  if (used) r.scopesUsed = used;
  if (o["actions"] !== undefined && o["actions"] !== null) {
    const a = o["actions"];
    if (!Array.isArray(a)) throw new Error("remote agent: actions must be an array");
    r.actions = a.map((x: unknown) => {
      if (x === null || typeof x !== "object" || typeof (x as Record<string, unknown>)["tool"] !== "string") {
        throw new Error("remote agent: each action needs a tool");
      }
      const act = x as Record<string, unknown>;
      return act["args"] === undefined || act["args"] === null ? { tool: act["tool"] as string } : { tool: act["tool"] as string, args: act["args"] };
    });
  }
  return r;
}
