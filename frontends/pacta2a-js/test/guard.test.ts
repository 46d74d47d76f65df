import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createClient, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { DelegationService, GrantCheckReason, type CheckGrantRequest } from "../src/gen/pact/v1/delegation_pb.js";
import { checkGrant, GrantInactiveError, NotDelegatedError } from "../src/guard.js";

// A fake pactd CheckGrant: grant "live" is active, "gone" revoked, "narrow"
// lacks every scope asked, anything else is Unavailable.
test("checkGrant resolves only on an active answer and passes the turn's grant, user and PA", async () => {
  let last: CheckGrantRequest | undefined;
  const routes = (r: ConnectRouter) => {
    r.service(DelegationService, {
      checkGrant(req) {
        last = req;
        if (req.grantId === "live") return { active: true };
        if (req.grantId === "gone") return { reason: GrantCheckReason.REVOKED };
        if (req.grantId === "narrow") return { reason: GrantCheckReason.SCOPE_NOT_GRANTED, missingScopes: req.scopes };
        throw new ConnectError("database down", Code.Unavailable);
      },
    });
  };
  const srv = createServer(connectNodeAdapter({ routes }));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const deleg = createClient(DelegationService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    const turn = (grantId: string) => ({
      brandId: "acme",
      caller: { agentId: "agt_1", issuer: "", subject: "pa-user", agentDisplayName: "" } as never,
      delegation: { grantId, brandUser: "user-42", scopes: ["orders:read"] } as never,
    });
    const need = { scopes: ["orders:write"], detail: '{"type":"https://acme.example/order","order_id":"1002"}' };
    await checkGrant(deleg, turn("live"), need);
    assert.equal(last?.brandId, "acme");
    assert.equal(last?.grantId, "live");
    assert.equal(last?.brandUser, "user-42");
    assert.equal(last?.agentId, "agt_1");
    assert.deepEqual(last?.scopes, ["orders:write"]);
    assert.equal(last?.authorizationDetailsJson, need.detail);
    await assert.rejects(checkGrant(deleg, turn("gone"), need), (e: unknown) =>
      e instanceof GrantInactiveError && e.reason === GrantCheckReason.REVOKED && e.message === "grant not active: revoked");
    await assert.rejects(checkGrant(deleg, turn("narrow"), need), (e: unknown) =>
      e instanceof GrantInactiveError && e.message === "grant not active: scope_not_granted (orders:write)");
    await assert.rejects(checkGrant(deleg, turn("fault"), need), (e: unknown) => ConnectError.from(e).code === Code.Unavailable);
    await assert.rejects(checkGrant(deleg, { ...turn("live"), delegation: undefined }, need), NotDelegatedError);
  } finally {
    srv.close();
  }
});
