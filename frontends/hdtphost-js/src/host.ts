import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { HostService, type Dispatch } from "./gen/hdtp/v1/host_pb.js";
import { TrustService } from "./gen/hdtp/v1/trust_pb.js";
import { deliver, type OutboundCall, type Result } from "./outbound.js";
import { Refusal, type Call, type Tool } from "./tools.js";

/**
 * MAX_BODY_BYTES is the largest request or answer body the host reads: a
 * sealed send_media with 5 MiB of data and its framing, pactd's own bound.
 * A larger request is answered 413 without calling pactd.
 */
export const MAX_BODY_BYTES = 11 << 20;

/** HostConfig configures a host. */
export interface HostConfig {
  /** pactdUrl is pactd's base URL, e.g. http://127.0.0.1:7070. */
  pactdUrl: string;
  /** token is the frontend credential pactd knows (PACT_FRONTEND_TOKEN). */
  token: string;
  /** tools are the content tools the host runs (declareTools tells pactd). */
  tools?: Tool[];
  /** name and version are the serverInfo initialize answers with. */
  name?: string;
  version?: string;
  /** ca is the PEM of the authorities trusted for peers' TLS (else Node's). */
  ca?: string;
  /**
   * routes, when set, dial a peer's "name:443" at "host:port" instead of
   * resolving it: a network the operator routes on purpose (a test or a
   * demo on loopback); the address guard then judges the name alone.
   */
  routes?: Record<string, string>;
  /** endpoint is the URL a request came to; "https://" + Host + path by default. */
  endpoint?: (req: IncomingMessage) => string;
  /** sourceAddress is the caller's IP address; the socket's by default. */
  sourceAddress?: (req: IncomingMessage) => string;
  /** transportChain is a client chain a TLS terminator passed on; none by default (sealed-only). */
  transportChain?: (req: IncomingMessage) => Uint8Array[];
  /** log receives one line per failed call to pactd, delivery or tool; never a body or a token. */
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

/**
 * Host is an MCP host whose trust decisions are pactd's: handle() serves
 * the MCP endpoint (the SDK for the session, pactd for tools/list and
 * tools/call), call() and deliver() send calls pactd sealed.
 */
export class Host {
  readonly #cfg: HostConfig;
  readonly #tools: Map<string, Tool>;
  readonly #host: Client<typeof HostService>;
  readonly #trust: Client<typeof TrustService>;

  constructor(cfg: HostConfig) {
    if (!/^https?:\/\/[^/]/.test(cfg.pactdUrl) || !cfg.token) {
      throw new Error("hdtp-host: need pactd's URL and a frontend token");
    }
    this.#cfg = cfg;
    this.#tools = new Map();
    for (const t of cfg.tools ?? []) {
      if (this.#tools.has(t.name)) throw new Error(`hdtp-host: tool ${t.name} twice`);
      this.#tools.set(t.name, t);
    }
    const auth: Interceptor = (next) => async (req) => {
      req.header.set("Authorization", "Bearer " + cfg.token);
      return next(req);
    };
    const transport = createConnectTransport({
      baseUrl: cfg.pactdUrl, httpVersion: "1.1", interceptors: [auth], defaultTimeoutMs: 70_000,
      readMaxBytes: MAX_BODY_BYTES + (1 << 20), writeMaxBytes: MAX_BODY_BYTES + (1 << 20),
    });
    this.#host = createClient(HostService, transport);
    this.#trust = createClient(TrustService, transport);
  }

  /**
   * handle serves the MCP endpoint. tools/list and tools/call bodies go to
   * pactd's HostService.OpenInbound and its answer is written byte for
   * byte (running a content tool and CompleteInbound for a dispatch);
   * every other request goes to the SDK, which has no tool of its own.
   */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") return this.#sdk(req, res, undefined);
    const body = await readBounded(req, MAX_BODY_BYTES);
    if (body === null) {
      res.writeHead(413, { "Content-Type": "text/plain; charset=utf-8", Connection: "close" }).end("request body too large\n");
      return;
    }
    const { tools, parsed } = sortRequest(body);
    if (!tools) return this.#sdk(req, res, parsed);
    await this.#inbound(req, res, body);
  }

  // The MCP SDK, stateless (each request stands alone, as every HDTP call
  // does: trust is per call, never per session): a server and a transport
  // per request, answering JSON rather than an event stream.
  async #sdk(req: IncomingMessage, res: ServerResponse, parsed: unknown): Promise<void> {
    const server = new Server({ name: this.#cfg.name ?? "hdtp-host", version: this.#cfg.version ?? "0.1.0" }, { capabilities: { tools: {} } });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
  }

  async #inbound(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const endpoint = (this.#cfg.endpoint ?? requestEndpoint)(req);
    try {
      const out = await this.#host.openInbound({
        endpoint, body, sourceAddress: (this.#cfg.sourceAddress ?? remoteIP)(req),
        transportChain: this.#cfg.transportChain?.(req) ?? [],
      });
      switch (out.outcome.case) {
        case "respond":
          return writeJSON(res, out.outcome.value.body);
        case "dispatch": {
          const done = await this.#host.completeInbound(await this.#run(endpoint, out.outcome.value));
          return writeJSON(res, done.body);
        }
        case "reject":
          // As a refused TLS handshake: no answer at all.
          this.#log("hdtp request rejected at the transport", { reason: out.outcome.value.reason });
          req.socket.destroy();
          return;
        default:
          throw new Error("pactd's answer has no outcome");
      }
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.NotFound) {
        res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("404 page not found\n");
        return;
      }
      this.#log("hdtp call to pactd failed", { error: String(err) });
      if (!res.headersSent) res.writeHead(502).end();
    }
  }

  // run runs a dispatched call and returns its completion. A tool's
  // Refusal refuses the call; any other failure is answered "unavailable".
  async #run(endpoint: string, d: Dispatch) {
    const unavailable = { case: "refusal" as const, value: { code: "unavailable" } };
    const tool = this.#tools.get(d.tool);
    if (!tool) {
      this.#log("pactd dispatched a tool this host does not run", { tool: d.tool });
      return { callHandle: d.callHandle, outcome: unavailable };
    }
    const call: Call = {
      endpoint, handle: d.callHandle, tool: d.tool, arguments: JSON.parse(d.argumentsJson || "{}") as Record<string, unknown>,
      callerRoot: d.callerRoot, callerEndpoint: d.callerEndpoint, callerKid: d.callerKid, callerName: d.callerDisplayName,
      permissions: d.permissions, msgId: d.msgId, sealed: d.sealed,
    };
    try {
      const result = JSON.stringify(await tool.run(call));
      if (!result?.startsWith("{")) throw new Error("the result is not a JSON object");
      return { callHandle: d.callHandle, outcome: { case: "resultJson" as const, value: result } };
    } catch (err) {
      if (err instanceof Refusal) {
        return {
          callHandle: d.callHandle,
          outcome: { case: "refusal" as const, value: { code: err.code, retryAfterSeconds: err.retryAfter, dataJson: err.data === undefined ? "" : JSON.stringify(err.data) } },
        };
      }
      this.#log("content tool failed", { tool: d.tool, error: String(err) });
      return { callHandle: d.callHandle, outcome: unavailable };
    }
  }

  /** serveInvite serves /i/<token> (HDTP/PACT §4) with pactd's ServeInvite answer. */
  async serveInvite(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? "/", "http://x");
    try {
      const out = await this.#host.serveInvite({
        host: (req.headers.host ?? "").toLowerCase(), path: u.pathname, query: u.search.slice(1),
        accept: req.headers.accept ?? "", method: req.method ?? "",
      });
      for (const f of out.headers) res.appendHeader(f.name, f.value);
      res.writeHead(out.status).end(out.body);
    } catch (err) {
      this.#log("hdtp call to pactd failed", { error: String(err) });
      if (!res.headersSent) res.writeHead(502).end();
    }
  }

  /** declareTools tells pactd which content tools the host runs for an identity. */
  async declareTools(identityId: string): Promise<void> {
    await this.#host.setContentTools({
      identityId,
      tools: [...this.#tools.values()].map((t) => ({
        name: t.name, permission: t.permission, description: t.description ?? "",
        inputSchemaJson: t.inputSchema === undefined ? "" : JSON.stringify(t.inputSchema),
      })),
    });
  }

  /** call seals a call from an identity to a contact (by root) and delivers it. */
  async call(identityId: string, contactRoot: string, tool: string, args?: unknown): Promise<Result> {
    const sealed = await this.#host.sealOutbound({
      identityId, target: { case: "contactRoot", value: contactRoot }, tool, argumentsJson: args === undefined ? "" : JSON.stringify(args),
    });
    if (!sealed.call) throw new Error("pactd sealed no call");
    return this.deliver(sealed.call);
  }

  /**
   * deliver POSTs a call pactd made (SealOutbound, or an owner action's
   * call) to the peer's endpoint and has pactd open the answer, resending
   * when pactd says so (at most twice).
   */
  deliver(call: OutboundCall): Promise<Result> {
    return deliver({ host: this.#host, trust: this.#trust, ca: this.#cfg.ca, routes: this.#cfg.routes }, call);
  }

  #log(msg: string, fields: Record<string, unknown>): void {
    this.#cfg.log?.(msg, fields);
  }
}

/**
 * sortRequest says whether body is one JSON object whose method is
 * tools/list or tools/call (pactd's to answer), and gives the SDK its
 * parsed form otherwise (the text itself when it is not JSON, which the
 * SDK refuses). Whatever else the body says, the SDK's reading of it can
 * reach no tool: its server has none.
 */
export function sortRequest(body: Buffer): { tools: boolean; parsed: unknown } {
  let parsed: unknown = body.toString("utf8");
  try {
    parsed = JSON.parse(parsed as string);
  } catch {
    // the SDK answers it: not a JSON-RPC message
  }
  const method = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as { method?: unknown }).method : undefined;
  return { tools: method === "tools/list" || method === "tools/call", parsed };
}

/** requestEndpoint is "https://" + the Host header + the path as received. */
function requestEndpoint(req: IncomingMessage): string {
  return "https://" + (req.headers.host ?? "") + (req.url ?? "/").replace(/\?.*$/s, "");
}

/** remoteIP is the socket's remote address. */
function remoteIP(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? "").replace(/^::ffff:(?=\d+\.)/, "");
}

/** readBounded reads the whole body, or answers null past max bytes. */
export async function readBounded(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > max) return null;
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of req) {
    n += (c as Buffer).length;
    if (n > max) return null;
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

function writeJSON(res: ServerResponse, body: Uint8Array): void {
  res.writeHead(200, { "Content-Type": "application/json" }).end(body);
}
