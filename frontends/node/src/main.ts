/**
 * pact-a2a-node is the standalone TypeScript A2A frontend of a PACT
 * Provider: a node:http server whose every request goes through pactd's
 * front door (@pactd/a2a's FrontDoor); it runs only the Brand's agent. Its
 * settings are those of every PACT frontend program (@pactd/a2a's
 * settings.ts, as cmd/pact-a2a): -listen/A2A_LISTEN, -pactd/PACTD_URL,
 * -demo/A2A_DEMO=true, -transport/A2A_TRANSPORT, -agent-url/A2A_AGENT_URL,
 * -public-url/A2A_PUBLIC_URL (self-service PA registration at POST
 * /api/platforms), PACT_FRONTEND_TOKEN.
 */
import { createServer, type Server } from "node:http";
import { pathToFileURL } from "node:url";
import { EchoAgent, FrontDoor, fatal, listen, logLine, pactdTransport, parseOptions, recover, stopOnSignal, type Agent, type Options } from "@pactd/a2a";
import { DemoAgent, DemoLogin, RemoteAgent, cardNames } from "@pactd/demo";

export { parseOptions, type Options };

/** start serves the frontend with the options; the agent is agent, else -agent-url's, else the demo's with -demo, else EchoAgent. */
export async function start(o: Options, agent?: Agent): Promise<Server> {
  const log = (msg: string, fields: Record<string, unknown>) => logLine("ERROR", msg, fields);
  const transport = pactdTransport(o.transport, o.pactd, o.token);
  const login = o.demo ? new DemoLogin(undefined, log) : undefined;
  if (login) login.brandName = cardNames(transport); // the sign-in names the Brand by its display name
  const brand = agent ?? (o.agentUrl ? new RemoteAgent(o.agentUrl) : o.demo ? new DemoAgent() : new EchoAgent());
  const door = new FrontDoor({ transport, agent: brand, sessions: login, selfRegistration: o.publicUrl !== "", logger: log });
  const server = createServer({ maxHeaderSize: 64 << 10 }, recover(async (req, res) => {
    if (login && req.url?.startsWith("/demo/") && (await login.handle(req, res))) return;
    await door.handle(req, res);
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
