/**
 * pact-a2a-node is the TypeScript A2A frontend of a PACT Provider: it serves
 * /a2a/{brandId}/… to personal agents and asks pactd about everything else.
 *
 * Settings (flags win over the environment), as cmd/pact-a2a:
 *
 *   -listen     A2A_LISTEN           host:port to serve on (default 127.0.0.1:3000)
 *   -pactd      PACTD_URL            pactd's base URL (default http://127.0.0.1:7070)
 *   -demo       A2A_DEMO=true        serve the demo Brand: its agent (src/demo) and its
 *                                    sign-in page at /demo/{brandId}/login, which also
 *                                    signs Users in for the consent pages
 *   -transport  A2A_TRANSPORT        how pactd is called: connect (HTTP/1.1, default),
 *                                    connect-h2 (HTTP/2) or grpc
 *   -agent-url  A2A_AGENT_URL        run each turn by an agent in another process over HTTP
 *                                    (src/remote.ts); wins over -demo's agent
 *               PACT_FRONTEND_TOKEN  the frontend credential pactd knows (required)
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { Frontend, type Config } from "./handler.js";
import { DemoAgent } from "./demo/agent.js";
import { DemoLogin } from "./demo/login.js";
import { pactdTransport, transportKinds, type TransportKind } from "./transport.js";
import type { Agent } from "./agent.js";
import { RemoteAgent } from "./remote.js";

/** Options are the parsed settings. */
export interface Options {
  listen: string;
  pactd: string;
  demo: boolean;
  transport: TransportKind;
  token: string;
  agentUrl: string;
}

/** parseOptions reads flags (-name value, -name=value, --name …) over the environment. */
export function parseOptions(args: string[], env: Record<string, string | undefined>): Options {
  const o: Options = {
    listen: env["A2A_LISTEN"] || "127.0.0.1:3000",
    pactd: env["PACTD_URL"] || "http://127.0.0.1:7070",
    demo: env["A2A_DEMO"] === "true",
    transport: (env["A2A_TRANSPORT"] || "connect") as TransportKind,
    token: env["PACT_FRONTEND_TOKEN"] ?? "",
    agentUrl: env["A2A_AGENT_URL"] ?? "",
  };
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([a-z-]+)(?:=(.*))?$/.exec(args[i]!);
    if (!m) throw new Error("unexpected argument " + JSON.stringify(args[i]));
    const name = m[1]!;
    if (name === "demo") {
      o.demo = m[2] === undefined ? true : m[2] === "true";
      continue;
    }
    const value = m[2] ?? args[++i];
    if (value === undefined) throw new Error("flag needs a value: -" + name);
    if (name === "listen") o.listen = value;
    else if (name === "pactd") o.pactd = value;
    else if (name === "transport") o.transport = value as TransportKind;
    else if (name === "agent-url") o.agentUrl = value;
    else throw new Error("flag provided but not defined: -" + name);
  }
  if (!transportKinds.includes(o.transport)) throw new Error("-transport must be one of " + transportKinds.join(", "));
  return o;
}

/** logLine writes one JSON log line to stderr, like the Go frontend's slog. */
function logLine(level: string, msg: string, fields: Record<string, unknown>): void {
  process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + "\n");
}

/** start serves the frontend with the options; the agent is the demo's, or EchoAgent without -demo, unless given. */
export async function start(o: Options, agent?: Agent): Promise<Server> {
  const cfg: Config = {
    pactdUrl: o.pactd,
    token: o.token,
    transport: pactdTransport(o.transport, o.pactd, o.token),
    logger: (msg, fields) => logLine("ERROR", msg, fields),
  };
  let login: DemoLogin | undefined;
  if (o.demo) {
    login = new DemoLogin();
    cfg.agent = new DemoAgent();
    cfg.sessions = login;
  }
  if (o.agentUrl) cfg.agent = new RemoteAgent(o.agentUrl);
  if (agent) cfg.agent = agent;
  if (!o.token) throw new Error("a2a: need pactd's URL and a frontend token (set PACT_FRONTEND_TOKEN)");
  const fe = new Frontend(cfg);
  const server = createServer({ maxHeaderSize: 64 << 10, requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => {
    void (async () => {
      if (login && req.url?.startsWith("/demo/") && (await login.handle(req, res))) return;
      await fe.handle(req, res);
    })();
  });
  server.keepAliveTimeout = 120_000;
  const [host, port] = splitHostPort(o.listen);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const addr = (a.family === "IPv6" ? `[${a.address}]` : a.address) + ":" + a.port;
  logLine("INFO", "pact-a2a serving", { addr, pactd: o.pactd, transport: o.transport });
  return server;
}

function splitHostPort(s: string): [string | undefined, number] {
  const i = s.lastIndexOf(":");
  if (i < 0) throw new Error("-listen must be host:port");
  const host = s.slice(0, i).replace(/^\[(.*)\]$/, "$1");
  const port = Number(s.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error("-listen must be host:port");
  return [host === "" ? undefined : host, port];
}

async function main(): Promise<void> {
  let server: Server;
  try {
    server = await start(parseOptions(process.argv.slice(2), process.env));
  } catch (err) {
    process.stderr.write("pact-a2a: " + (err instanceof Error ? err.message : String(err)) + "\n");
    process.exit(1);
  }
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => {
      server.closeAllConnections();
      process.exit(0);
    }, 15_000).unref();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
