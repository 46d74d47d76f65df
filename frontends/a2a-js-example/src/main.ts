/**
 * pact-a2a-js-example is an A2A server built on @a2a-js/sdk 1.3.0 and
 * Express, with PACT added in front: @pactd/a2a's front door answers every
 * request under /a2a/ through pactd, and hands the turns pactd says to run
 * to the SDK's restHandler (in an app of its own, reached only that way),
 * whose AgentExecutor is the demo Brand (orders, step-up, receipts, the
 * resource-bound cancel). Every line of PACT wiring ends in "// PACT"
 * (test/example.test.ts counts them).
 *
 * Settings as every PACT frontend program (docs/frontends.md): -listen /
 * A2A_LISTEN, -pactd / PACTD_URL, PACT_FRONTEND_TOKEN, -demo / A2A_DEMO=true
 * (the demo sign-in at /demo/{brandId}/login), -transport / A2A_TRANSPORT,
 * -agent-url / A2A_AGENT_URL (the Brand logic in another process).
 */
import { createServer, type Server } from "node:http";
import { pathToFileURL } from "node:url";
import express from "express";
import { AgentCard, Role, type Message } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import { restHandler } from "@a2a-js/sdk/server/express";
import { FrontDoor, errorHandler, fatal, listen, logLine, parseOptions, pactdTransport, recover, stopOnSignal, type Agent, type Options } from "@pactd/a2a"; // PACT
import { EphemeralTaskStore, pactUser, sdkTurns, sdkUser, stepUpTask, withReceipt } from "@pactd/a2a/sdk"; // PACT
import { DemoAgent, DemoLogin, RemoteAgent, cardNames } from "@pactd/demo"; // PACT

/** BrandExecutor answers each turn with the demo Brand's logic (brand), in the SDK's own events. */
export class BrandExecutor implements AgentExecutor {
  constructor(private readonly brand: Agent) {} // PACT

  async execute(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const user = pactUser(rc); // PACT
    if (!user) throw new Error("not a PACT call"); // PACT
    const text = rc.userMessage.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("\n");
    const r = await this.brand.reply({ brandId: user.brandId, contextId: rc.contextId, newContext: user.newContext, text, // PACT
      caller: user.caller, delegation: user.delegation }, AbortSignal.timeout(55_000)); // PACT
    const answer: Message = {
      messageId: crypto.randomUUID(), contextId: rc.contextId, taskId: "", role: Role.ROLE_AGENT, metadata: undefined,
      parts: [{ content: { $case: "text", value: r.text }, metadata: undefined, filename: "", mediaType: "" }], extensions: [], referenceTaskIds: [],
    };
    if (r.needScopes?.length) bus.publish(AgentEvent.task(stepUpTask(rc, r.needScopes, r.text))); // PACT
    else bus.publish(AgentEvent.message(withReceipt(answer, r.scopesUsed ?? [], r.actions))); // PACT
    bus.finished();
  }

  async cancelTask(): Promise<void> {}
}

/** start serves the example with the options. */
export async function start(o: Options): Promise<Server> { // PACT
  const log = (msg: string, fields: Record<string, unknown>) => logLine("ERROR", msg, fields); // PACT
  const transport = pactdTransport(o.transport, o.pactd, o.token); // PACT
  const login = o.demo ? new DemoLogin(undefined, log) : undefined; // PACT
  if (login) login.brandName = cardNames(transport); // PACT
  const brand: Agent = o.agentUrl ? new RemoteAgent(o.agentUrl) : new DemoAgent(); // PACT
  // The SDK's own card only says which protocol it speaks: PAs get each Brand's card from pactd.
  const card = AgentCard.fromJSON({
    name: "Demo Brand", description: "The demo Brand's support agent", version: "1.0.0", capabilities: {}, skills: [],
    supportedInterfaces: [{ url: "http://" + o.listen + "/a2a", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }],
    defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
  });
  const requestHandler = new DefaultRequestHandler(card, new EphemeralTaskStore(), new BrandExecutor(brand), // PACT
    undefined, undefined, undefined, undefined, undefined, { keepBusAliveStates: [] });
  // The SDK in an app of its own, reached only by the turns pactd hands out; the front door serves GET / and /a2a/.
  const sdk = express().use("/a2a", restHandler({ requestHandler, userBuilder: sdkUser })); // PACT
  const door = new FrontDoor({ transport, turns: sdkTurns(sdk), sessions: login, logger: log }); // PACT
  const app = express();
  app.disable("x-powered-by");
  if (login) app.use(login.middleware()); // PACT
  app.use(door.middleware()); // PACT
  app.use(errorHandler(log)); // PACT
  const server = createServer({ maxHeaderSize: 64 << 10 }, recover(app, log)); // PACT
  await listen(server, o); // PACT
  return server;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  Promise.resolve(process.argv.slice(2)).then((args) => start(parseOptions(args, process.env))).then(stopOnSignal, fatal); // PACT
}
