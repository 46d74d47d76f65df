/**
 * @pactd/a2a: a PACT Provider's A2A frontend in TypeScript, as a thin
 * adapter over pactd's FrontDoorService (docs/frontends.md). pactd answers
 * every request (pages, A2A errors, message:send, receipts, OAuth,
 * registration); the frontend runs the Brand's agent for the turns pactd
 * hands out.
 *
 * - node:http: createServer(recover((req, res) => frontDoor.handle(req, res))),
 *   with an Agent of your own (agent.ts).
 * - Express in front of @a2a-js/sdk: app.use(frontDoor.middleware()), with
 *   the SDK glue of "@pactd/a2a/sdk" (sdk.ts; apart, so that this entry
 *   needs no @a2a-js/sdk): the SDK's restHandler in an app of its own given
 *   as turns: sdkTurns(sdkApp), with sdkUser as its userBuilder; in the
 *   AgentExecutor pactUser(requestContext) is the verified caller and
 *   stepUpTask / withReceipt build the events pactd reads.
 *
 * The generated pactd clients are "@pactd/a2a/gen/pact/v1/NAME_pb"; the demo
 * Brand is the package @pactd/demo.
 */
export { pactdTransport, transportKinds, defaultTimeoutMs, type TransportKind } from "./client.js";
export { FrontDoor, maxBodyBytes, registrationPath, type FrontDoorConfig, type Middleware } from "./frontdoor.js";
export { EchoAgent, runAgent, type Agent, type Turn, type Reply, type Action, type TurnRunner, type TurnResult } from "./agent.js";
export type { Sessions } from "./sessions.js";
export { checkGrant, GrantInactiveError, NotDelegatedError, type Need } from "./guard.js";
export { recover, errorHandler, type Logger, type RequestHandler } from "./recover.js";
export { parseOptions, listen, logLine, splitHostPort, stopOnSignal, fatal, type Options } from "./settings.js";
