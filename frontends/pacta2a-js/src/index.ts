/**
 * @pactd/a2a: every PACT HTTP rule of a Provider's A2A frontend, on pactd's
 * generated Connect clients only (docs/frontends.md).
 *
 * - Standalone on node:http: new Frontend(config).handle(req, res), with an
 *   Agent of your own (agent.ts).
 * - In front of @a2a-js/sdk on Express: new Pact(config).middleware() before
 *   the SDK's restHandler, pact.userBuilder as its userBuilder; in the
 *   AgentExecutor, pactUser(requestContext) is the verified caller and
 *   stepUpTask(...) / withReceipt(...) build the events PACT understands.
 *
 * The demo Brand (agent, sign-in, RemoteAgent) is "@pactd/a2a/demo".
 */
export { Frontend, splitPath, unescapeSegment, parsePageSize, answerInternal, type Config, type HandleOptions, type Logger } from "./handler.js";
export { EchoAgent, type Agent, type Turn, type Reply, type Action } from "./agent.js";
export { A2AError, contentType, marshal } from "./errors.js";
export { parseSend, type UserMessage } from "./send.js";
export { parseForm, type Sessions } from "./oauth.js";
export { readBody, tooLarge, maxFormBytes } from "./body.js";
export { guard, type RequestHandler } from "./guard.js";
export { checkGrant, GrantInactiveError, NotDelegatedError, type Need } from "./actionguard.js";
export { pactdTransport, transportKinds, type TransportKind } from "./transport.js";
export { parseOptions, listen, logLine, splitHostPort, stopOnSignal, fatal, type Options } from "./settings.js";
export { registrationHandler, registrationPath, maxRegistrationBody, parseRegistration } from "./registration.js";
export { Pact, type PactConfig, type Middleware } from "./express.js";
export { PactUser, pactUser } from "./sdk/user.js";
export { stepUpTask, withReceipt, type TurnIds } from "./sdk/events.js";
export { EphemeralTaskStore } from "./sdk/store.js";
export { decodeAnswer, maxAnswerBytes, type Answer } from "./sdk/answer.js";
