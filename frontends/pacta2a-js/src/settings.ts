/**
 * The process settings every PACT frontend program reads (docs/frontends.md,
 * "Process settings"), flags winning over the environment, as cmd/pact-a2a:
 *
 *   -listen     A2A_LISTEN           host:port to serve on (default 127.0.0.1:3000)
 *   -pactd      PACTD_URL            pactd's base URL (default http://127.0.0.1:7070)
 *   -demo       A2A_DEMO=true        serve the demo Brand: its agent and its sign-in
 *                                    page at /demo/{brandId}/login (@pactd/demo)
 *   -transport  A2A_TRANSPORT        how pactd is called: connect (HTTP/1.1, default),
 *                                    connect-h2 (HTTP/2), grpc or grpc-web
 *   -agent-url  A2A_AGENT_URL        run each turn by an agent in another process over
 *                                    HTTP (RemoteAgent); wins over -demo's agent
 *   -public-url A2A_PUBLIC_URL       this frontend's public base URL; when set, the frontend
 *                                    offers self-service PA registration (POST /api/platforms,
 *                                    answered by pactd)
 *               PACT_FRONTEND_TOKEN  the frontend credential pactd knows (required)
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { transportKinds, type TransportKind } from "./client.js";

/** Options are the parsed settings. */
export interface Options {
  listen: string;
  pactd: string;
  demo: boolean;
  transport: TransportKind;
  token: string;
  agentUrl: string;
  /** publicUrl is the frontend's public base URL; empty: no self-service registration. */
  publicUrl: string;
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
    publicUrl: env["A2A_PUBLIC_URL"] ?? "",
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
    else if (name === "public-url") o.publicUrl = value;
    else throw new Error("flag provided but not defined: -" + name);
  }
  if (!transportKinds.includes(o.transport)) throw new Error("-transport must be one of " + transportKinds.join(", "));
  return o;
}

/** logLine writes one JSON log line to stderr, like the Go frontend's slog. */
export function logLine(level: string, msg: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + "\n");
}

/**
 * listen binds server to o.listen and logs the line the e2e suite and
 * pact-demo wait for ("msg":"pact-a2a serving"); it resolves the address.
 */
export async function listen(server: Server, o: Options, fields: Record<string, unknown> = {}): Promise<string> {
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const [host, port] = splitHostPort(o.listen);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const addr = (a.family === "IPv6" ? `[${a.address}]` : a.address) + ":" + a.port;
  logLine("INFO", "pact-a2a serving", { addr, pactd: o.pactd, transport: o.transport, ...fields });
  return addr;
}

/** splitHostPort takes "host:port" (or "[v6]:port", or ":port" for every address) apart. */
export function splitHostPort(s: string): [string | undefined, number] {
  const i = s.lastIndexOf(":");
  if (i < 0) throw new Error("-listen must be host:port");
  const host = s.slice(0, i).replace(/^\[(.*)\]$/, "$1");
  const p = s.slice(i + 1);
  const port = /^[0-9]{1,5}$/.test(p) ? Number(p) : NaN;
  if (!Number.isInteger(port) || port > 65535) throw new Error("-listen must be host:port");
  return [host === "" ? undefined : host, port];
}

/**
 * stopOnSignal closes server on SIGINT or SIGTERM: idle connections at once,
 * busy ones after their answers, every one after 15 s; then the process exits.
 */
export function stopOnSignal(server: Server): void {
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

/** fatal ends the process after a failed start, with the reason on stderr. */
export function fatal(err: unknown): never {
  process.stderr.write("pact-a2a: " + (err instanceof Error ? err.message : String(err)) + "\n");
  process.exit(1);
}
