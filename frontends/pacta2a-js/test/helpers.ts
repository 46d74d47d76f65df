// Test helpers: a fake pactd made of connect-es service handlers (the same
// generated descriptors the frontend uses), the frontend in front of it,
// and a raw HTTP client that sends headers exactly as given.
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createH2cServer, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { create } from "@bufbuild/protobuf";
import { BrandLoginMode, BrandService } from "../src/gen/pact/v1/brand_pb.js";
import { ConversationService, TurnOutcome } from "../src/gen/pact/v1/conversation_pb.js";
import { DelegationService } from "../src/gen/pact/v1/delegation_pb.js";
import { TokenService } from "../src/gen/pact/v1/token_pb.js";
import { VerificationService, type VerifyAgentRequestRequest } from "../src/gen/pact/v1/verification_pb.js";
import { A2AErrorSchema } from "../src/gen/pact/v1/common_pb.js";
import { Frontend, type Config } from "../src/handler.js";
import { pactdTransport, type TransportKind } from "../src/transport.js";
import type { Agent, Reply, Turn } from "../src/agent.js";
import { EchoAgent } from "../src/agent.js";

export const frontendToken = "frontend-secret";

/** errBody is the AIP-193 envelope of an A2A error (PACT §6), written out independently of src/errors.ts. */
export function errBody(code: number, status: string, reason: string, message: string): string {
  return (
    `{"error":{"code":${code},"status":"${status}","message":${JSON.stringify(message)},` +
    `"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"${reason}","domain":"a2a-protocol.org"}]}}`
  );
}
export const invalidParams = (m: string) => errBody(400, "INVALID_ARGUMENT", "INVALID_PARAMS", m);

/** The fake pactd's own A2A errors for conversations (the frontend relays them verbatim). */
export const unknownContext = invalidParams("fake: unknown contextId");
export const pendingDuplicate = invalidParams("fake: pending duplicate");
export const replyIdCollision = invalidParams("fake: reply id collision");
export const otherBrandUser = invalidParams("fake: other Brand user");

interface Ctx {
  owner: string;
  brandUser: string;
  pending: Set<string>;
  done: Map<string, string>;
  replyIds: Set<string>;
}

/** CountingAgent echoes like EchoAgent, counts its runs, can be held or made to fail; "need SCOPE" asks for SCOPE. */
export class CountingAgent implements Agent {
  runs = 0;
  fail = false;
  hold: Promise<void> | undefined;
  entered: (() => void) | undefined;
  async reply(t: Turn): Promise<Reply> {
    this.runs++;
    this.entered?.();
    if (this.hold) await this.hold;
    if (this.fail) throw new Error("agent down");
    if (t.text.startsWith("need ")) return { needScopes: [t.text.slice(5)], text: "not here" };
    const r = await new EchoAgent().reply(t);
    if (t.delegation) r.text += " (as " + t.delegation.brandUser + ")";
    return r;
  }
}

/** Env is the frontend under test in front of a fake pactd. */
export interface Env {
  url: string;
  pactdUrl: string;
  rpcs: number;
  verifyCalls: VerifyAgentRequestRequest[];
  /** verifyTrace is the traceparent and tracestate each VerifyAgentRequest carried. */
  verifyTrace: [string | null, string | null][];
  abandoned: number;
  oauth: { method: string; path: string; headers: IncomingHttpHeaders; body: string }[];
  agent: CountingAgent;
  /** connectedOpened counts BeginConnected calls with mart's assertion (the second is a replay). */
  connectedOpened: number;
  /** revoked are the RevokeGrant calls' grant ids (and those RevokeConnected revoked). */
  revoked: string[];
  /** approvals are the ApproveConsent calls: [user code, Brand user, scopes, and "skip" when skip_consent]. */
  approvals: ([string, string, string[]] | [string, string, string[], "skip"])[];
  fe: Frontend;
  close(): Promise<void>;
}

function listen(s: Server): Promise<string> {
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve("http://127.0.0.1:" + (s.address() as AddressInfo).port)));
}

/**
 * newEnv starts the fake pactd and the frontend. The fake verifier allows
 * "Bearer good-<sub>" as agent agt_1, answers 429 for "Bearer busy", 404
 * for Brand "nope", and refuses anything else (a joined repeated header
 * included); "Bearer deleg-<user>" delegation is grant g_1. Brand acme
 * offers delegation (trusted frontend), beta none, mart signed assertions.
 */
export async function newEnv(cfg: Partial<Config> = {}, kind: TransportKind = "connect"): Promise<Env> {
  const agent = new CountingAgent();
  const ctxs = new Map<string, Ctx>();
  const e = { rpcs: 0, connectedOpened: 0, approvals: [], revoked: [], verifyCalls: [], verifyTrace: [], abandoned: 0, oauth: [], agent } as unknown as Env;
  const auth = (hc: HandlerContext) => {
    if (hc.requestHeader.get("Authorization") !== "Bearer " + frontendToken) throw new ConnectError("no frontend token", Code.Unauthenticated);
  };
  // aliceGrants: two live grants of agt_1 (until revoked) and a revoked one of agt_2.
  const aliceGrants = () => {
    const ts = (s: number) => ({ seconds: BigInt(s), nanos: 0 });
    const live = (id: string) => (e.revoked.includes(id) ? { revokeTime: ts(1767225600) } : {});
    return [
      { grantId: "g_3", agentId: "agt_1", agentDisplayName: "Example PA", brandUser: "alice", scopes: ["orders:cancel"],
        createTime: ts(1764633600), expireTime: ts(4102444800), authorizationDetails: [{ scope: "orders:cancel", words: "order 1002 <only>" }], ...live("g_3") },
      { grantId: "g_2", agentId: "agt_2", agentDisplayName: "Old PA", brandUser: "alice", scopes: ["orders:read"],
        createTime: ts(1764547200), expireTime: ts(4102444800), revokeTime: ts(1764590400) },
      { grantId: "g_1", agentId: "agt_1", agentDisplayName: "Example PA", brandUser: "alice", scopes: ["orders:read", "gone:scope"],
        createTime: ts(1764547200), expireTime: ts(4070908800), ...live("g_1") },
    ];
  };
  const replayed = () => {
    // ErrorInfo{reason: "BRAND_ASSERTION_REPLAYED"} on the wire.
    const reason = new TextEncoder().encode("BRAND_ASSERTION_REPLAYED");
    const ce = new ConnectError("replayed", Code.FailedPrecondition);
    ce.details.push({ type: "google.rpc.ErrorInfo", value: new Uint8Array([0x0a, reason.length, ...reason]) });
    return ce;
  };
  const routes = (r: ConnectRouter) => {
    r.service(VerificationService, {
      verifyAgentRequest(req, hc) {
        auth(hc);
        e.verifyCalls.push(req);
        e.verifyTrace.push([hc.requestHeader.get("traceparent"), hc.requestHeader.get("tracestate")]);
        const a = req.authorization;
        if (a === "Bearer busy") return { httpStatus: 429, retryAfterSeconds: 7 };
        const sub = a.startsWith("Bearer good-") ? a.slice("Bearer good-".length) : "";
        if (!sub || /[ ,]/.test(sub)) return { httpStatus: 401, wwwAuthenticate: 'Bearer realm="a2a"' };
        if (req.brandId === "nope") return { httpStatus: 404 };
        const d = req.userDelegation.startsWith("Bearer deleg-") ? req.userDelegation.slice("Bearer deleg-".length) : "";
        return {
          allowed: true, httpStatus: 200,
          caller: { agentId: "agt_1", issuer: "https://pa.example", subject: sub },
          ...(d ? { delegation: { grantId: "g_1", brandUser: d, scopes: ["orders:read"] } } : {}),
        };
      },
    });
    r.service(BrandService, {
      listBrands(req, hc) {
        auth(hc);
        return { brands: [
          { brandId: "acme", displayName: "ACME <Shop>", description: "Orders", delegation: { enabled: true, loginMode: BrandLoginMode.TRUSTED_FRONTEND } },
          { brandId: "mart", displayName: "Mart", description: "", delegation: { enabled: true, loginMode: BrandLoginMode.SIGNED_ASSERTION } },
          { brandId: "beta", displayName: "Beta", description: "" },
        ] };
      },
      getAgentCard(req, hc) {
        auth(hc);
        const modes: Record<string, BrandLoginMode> = { acme: BrandLoginMode.TRUSTED_FRONTEND, beta: BrandLoginMode.UNSPECIFIED, mart: BrandLoginMode.SIGNED_ASSERTION };
        if (!(req.brandId in modes)) throw new ConnectError("no such Brand", Code.NotFound);
        return {
          cardJson: JSON.stringify({ name: req.brandId.toUpperCase(), securitySchemes: { userDelegation: { oauth2SecurityScheme: { flows: { deviceCode: {
            scopes: { "orders:read": "See your orders", "orders:cancel": "Cancel your orders" } } } } } } }), contentType: "application/a2a+json", cacheControl: "public, max-age=300",
          interfaceUrl: "https://provider.example/a2a/" + req.brandId, loginMode: modes[req.brandId]!,
          verificationUri: "https://brand.example/login",
        };
      },
    });
    r.service(ConversationService, {
      beginTurn(req, hc) {
        auth(hc);
        const owner = JSON.stringify([req.owner?.brandId, req.owner?.agentId, req.owner?.subject]);
        const err = (body: string) => ({ outcome: TurnOutcome.ERROR, error: create(A2AErrorSchema, { httpStatus: 400, bodyJson: body }) });
        let id = req.contextId;
        let created = false;
        if (id === "") {
          id = randomUUID();
          created = true;
          ctxs.set(id, { owner, brandUser: req.brandUser, pending: new Set(), done: new Map(), replyIds: new Set() });
        }
        const c = ctxs.get(id);
        if (!c || c.owner !== owner) return err(unknownContext);
        if (c.brandUser !== req.brandUser) return err(otherBrandUser);
        if (c.replyIds.has(req.messageId)) return err(replyIdCollision);
        const done = c.done.get(req.messageId);
        if (done !== undefined) return { outcome: TurnOutcome.REPLAY, contextId: id, replyJson: done };
        if (c.pending.has(req.messageId)) return err(pendingDuplicate);
        c.pending.add(req.messageId);
        return { outcome: TurnOutcome.RUN, contextId: id, contextCreated: created };
      },
      completeTurn(req, hc) {
        auth(hc);
        const c = ctxs.get(req.contextId)!;
        c.pending.delete(req.messageId);
        c.done.set(req.messageId, req.replyJson);
        c.replyIds.add(req.replyMessageId);
        return {};
      },
      abandonTurn(req, hc) {
        auth(hc);
        e.abandoned++;
        ctxs.get(req.contextId)?.pending.delete(req.messageId);
        return {};
      },
    });
    r.service(DelegationService, {
      // Code BCDF-GHJK asks for orders:read and orders:cancel, the latter for
      // one order only; alice's grant covers code COVR-COVR.
      describeConsent(req, hc) {
        auth(hc);
        if (req.userCode !== "BCDF-GHJK" && req.userCode !== "COVR-COVR") throw new ConnectError("unknown code", Code.NotFound);
        return {
          agentDisplayName: "Example PA", agentOrigin: "https://pa.example", brandDisplayName: "ACME", userCode: req.userCode,
          scopes: [{ id: "orders:read", description: "See your orders" }, { id: "orders:cancel", description: "Cancel your orders" }],
          authorizationDetails: [{ scope: "orders:cancel", words: "order 1002 <only>" }],
          coveredByGrant: req.userCode === "COVR-COVR" && req.brandUser === "alice",
        };
      },
      // alice has two live grants of agt_1 (one not yet revoked) and a revoked one of agt_2.
      listGrants(req, hc) {
        auth(hc);
        if (req.brandUser !== "alice") return { grants: [] };
        return { grants: aliceGrants() };
      },
      revokeGrant(req, hc) {
        auth(hc);
        e.revoked.push(req.grantId);
        return {};
      },
      // Mart's login assertion "assert-alice" opens alice's grants once, with
      // connected session "sess-alice"; any other session is refused.
      beginConnected(req, hc) {
        auth(hc);
        if (req.brandId !== "mart") throw new ConnectError("not signed", Code.FailedPrecondition);
        if (req.brandAssertion !== "") {
          if (req.brandAssertion !== "assert-alice") throw new ConnectError("bad assertion", Code.FailedPrecondition);
          if (e.connectedOpened++ > 0) throw replayed();
        } else if (req.connectedSession !== "sess-alice") throw new ConnectError("bad session", Code.FailedPrecondition);
        return { brandUser: "alice", connectedSession: "sess-alice", grants: aliceGrants() };
      },
      revokeConnected(req, hc) {
        auth(hc);
        if (req.brandId !== "mart" || req.connectedSession !== "sess-alice") throw new ConnectError("bad session", Code.FailedPrecondition);
        const ids = aliceGrants().filter((g) => g.agentId === req.agentId && !g.revokeTime).map((g) => g.grantId);
        e.revoked.push(...ids);
        return { brandUser: "alice", revokedGrantIds: ids, grants: aliceGrants() };
      },
      approveConsent(req, hc) {
        auth(hc);
        e.approvals.push(req.skipConsent ? [req.userCode, req.brandUser, req.scopes, "skip"] : [req.userCode, req.brandUser, req.scopes]);
        return { grantId: "g_2", scopes: req.scopes, clientId: "https://pa.example" };
      },
      startStepUp(req, hc) {
        auth(hc);
        if (req.brandId !== "acme") throw new ConnectError("no delegation", Code.FailedPrecondition);
        return {
          taskId: "t-1", missingScopes: req.missingScopes, verificationUriComplete: "https://brand.example/login?return_to=x",
          scopes: [{ id: req.missingScopes[0] ?? "", description: "See your orders" }],
        };
      },
    });
    r.service(TokenService, {
      signReceipt(req, hc) {
        auth(hc);
        return {
          receiptJson: JSON.stringify({ jws: "h.p.s", claims: { grantId: req.grantId, user: req.brandUser, pa: req.paIssuer, scopesUsed: req.scopesUsed, actions: req.actions.map((a) => [a.tool, a.argsHash]) } }),
        };
      },
    });
  };
  const adapter = connectNodeAdapter({ routes });
  // Connect over HTTP/2 and gRPC need h2c (prior knowledge), as pactd serves it.
  const handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    e.rpcs++;
    if (req.url?.startsWith("/a2a/")) {
      // pactd's OAuth endpoints: record what the proxy sent, answer OAuth JSON.
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        e.oauth.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers as IncomingHttpHeaders, body: Buffer.concat(chunks).toString() });
        (res as ServerResponse).writeHead(400, { "Content-Type": "application/json", "Cache-Control": "no-store", "Set-Cookie": "x=1" });
        res.end('{"error":"invalid_client"}');
      });
      return;
    }
    adapter(req as IncomingMessage, res as ServerResponse);
  };
  const pactd = (kind === "connect" ? createServer(handler) : createH2cServer(handler)) as unknown as Server;
  const sessions = new Set<{ destroy(): void }>();
  pactd.on("session", (s: { destroy(): void }) => sessions.add(s));
  e.pactdUrl = await listen(pactd);
  let ids = 0;
  e.fe = new Frontend({
    pactdUrl: e.pactdUrl, token: frontendToken, transport: pactdTransport(kind, e.pactdUrl, frontendToken),
    agent, newMessageId: () => "reply-" + ++ids, ...cfg,
  });
  const fe = createServer((req, res) => void e.fe.handle(req, res));
  e.url = await listen(fe);
  e.close = async () => {
    fe.closeAllConnections();
    if ("closeAllConnections" in pactd) pactd.closeAllConnections();
    for (const s of sessions) s.destroy();
    await Promise.all([new Promise((r) => fe.close(r)), new Promise((r) => pactd.close(r))]);
  };
  return e;
}

export interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** send makes one HTTP/1.1 request with headers given as "Name: value" strings (repeats kept). */
export function send(url: string, method: string, body = "", ...headers: string[]): Promise<Res> {
  const u0 = new URL(url);
  const raw: string[] = ["Host", u0.host, "Content-Length", String(Buffer.byteLength(body))];
  for (const h of headers) {
    const i = h.indexOf(": ");
    raw.push(h.slice(0, i), h.slice(i + 2));
  }
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: raw, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}
