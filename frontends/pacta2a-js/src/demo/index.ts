/**
 * @pactd/a2a/demo: the demo Brand of the PACT frontends, as in the Go
 * frontend's package demo: its agent (orders, step-up, receipts, the
 * resource-bound cancel), its cookie sign-in (the Sessions of a Brand in
 * BRAND_LOGIN_MODE_TRUSTED_FRONTEND), and RemoteAgent, a Brand agent in
 * another process (the e2e suite's protocol).
 */
export { DemoAgent, orderNumber, orderCancelType, scopeOrdersCancel, scopeOrdersRead, scopeProfileRead } from "./agent.js";
export { DemoLogin, cookieName, cookieValue, returnPath, sessionTtlSeconds } from "./login.js";
export { RemoteAgent, parseReply } from "./remote.js";
