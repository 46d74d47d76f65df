/**
 * pact-a2a-node is the standalone TypeScript A2A frontend of a PACT
 * Provider: it serves /a2a/{brandId}/… to personal agents with @pactd/a2a's
 * Frontend and asks pactd about everything else. Its settings are those of
 * every PACT frontend program (@pactd/a2a's settings.ts, as cmd/pact-a2a):
 * -listen/A2A_LISTEN, -pactd/PACTD_URL, -demo/A2A_DEMO=true,
 * -transport/A2A_TRANSPORT, -agent-url/A2A_AGENT_URL, -public-url/A2A_PUBLIC_URL
 * (self-service PA registration at POST /api/platforms), PACT_FRONTEND_TOKEN.
 */
import { createServer, type Server } from "node:http";
import { pathToFileURL } from "node:url";
import { Frontend, guard, registrationHandler, registrationPath, listen, logLine, parseOptions, pactdTransport, stopOnSignal, fatal, type Agent, type Config, type Options } from "@pactd/a2a";
import { DemoAgent, DemoLogin, RemoteAgent } from "@pactd/a2a/demo";

export { parseOptions, type Options };

/** start serves the frontend with the options; the agent is the demo's, or EchoAgent without -demo, unless given. */
export async function start(o: Options, agent?: Agent): Promise<Server> {
  const log = (msg: string, fields: Record<string, unknown>) => logLine("ERROR", msg, fields);
  const cfg: Config = { pactdUrl: o.pactd, token: o.token, transport: pactdTransport(o.transport, o.pactd, o.token), logger: log };
  let login: DemoLogin | undefined;
  if (o.demo) {
    login = new DemoLogin(undefined, log);
    cfg.agent = new DemoAgent();
    cfg.sessions = login;
  }
  if (o.agentUrl) cfg.agent = new RemoteAgent(o.agentUrl);
  if (agent) cfg.agent = agent;
  const fe = new Frontend(cfg);
  if (login) login.brandName = (id) => fe.brandName(id); // the sign-in names the Brand by its display name
  // As cmd/pact-a2a: the registration endpoint only with a public URL, whose aud it checks.
  const register = o.publicUrl ? registrationHandler(cfg.transport, o.publicUrl.replace(/\/$/, "") + registrationPath) : undefined;
  const server = createServer({ maxHeaderSize: 64 << 10 }, guard(async (req, res) => {
    if (register && (req.url ?? "").split("?")[0] === registrationPath) return register(req, res);
    if (login && req.url?.startsWith("/demo/") && (await login.handle(req, res))) return;
    await fe.handle(req, res);
  }, log));
  await listen(server, o);
  return server;
}

async function main(): Promise<void> {
  let server: Server;
  try {
    server = await start(parseOptions(process.argv.slice(2), process.env));
  } catch (err) {
    fatal(err);
  }
  stopOnSignal(server);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
