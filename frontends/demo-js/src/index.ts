/**
 * @pactd/demo: the demo Brand of the TypeScript PACT frontends, as
 * frontends/demo is the Go ones': its agent (orders, step-up, receipts, the
 * resource-bound cancel), its cookie sign-in (the Sessions of a Brand in
 * BRAND_LOGIN_MODE_TRUSTED_FRONTEND, named by cardNames), and RemoteAgent,
 * a Brand agent in another process (the e2e suite's protocol). It is an
 * example of what a Provider writes itself, not part of @pactd/a2a.
 */
export { DemoAgent, orderNumber, orderCancelType, scopeOrdersCancel, scopeOrdersRead, scopeProfileRead } from "./agent.js";
export { DemoLogin, cookieName, cookieValue, returnPath, sessionTtlSeconds } from "./login.js";
export { RemoteAgent, parseReply } from "./remote.js";
export { cardNames } from "./web.js";
