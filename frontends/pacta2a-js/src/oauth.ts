import type { IncomingMessage, ServerResponse } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { bare } from "./errors.js";
import type { Call, Endpoint, Frontend, Methods } from "./handler.js";
import { requestTarget, unescapeSegment } from "./handler.js";
import { maxFormBytes, readBody, tooLarge } from "./body.js";
import type { AgentView, GrantView, ScopeView, View } from "./pages.js";
import type { Grant } from "./gen/pact/v1/delegation_pb.js";
import { notFound } from "./root.js";
import type { DescribeConsentResponse } from "./gen/pact/v1/delegation_pb.js";
import { beginConnected, beginConsent, brandPages, connectedSigned, decideSigned, revokeSigned, type BrandPages } from "./signed.js";

/**
 * Sessions tells the consent and connected-apps pages who the User is at a
 * Brand in BRAND_LOGIN_MODE_TRUSTED_FRONTEND (the frontend vouches for the
 * Brand user it passes to pactd). src/demo/login.ts has a cookie login.
 * Brands in BRAND_LOGIN_MODE_SIGNED_ASSERTION need none (see signed.ts).
 */
export interface Sessions {
  /** brandUser returns the id at brandId of the User signed in on req, or "". */
  brandUser(req: IncomingMessage, brandId: string): string;
  /** loginURL is where a User who is not signed in goes first; the login then returns to returnTo, a path on this frontend. */
  loginURL(brandId: string, returnTo: string): string;
}

/** oauthRoutes are the endpoints under {interfaceUrl}/oauth/: pactd's OAuth endpoints by reverse proxy, and the Provider's own pages. */
export function oauthRoutes(fe: Frontend, p: string): Methods | undefined {
  const open = (f: (req: IncomingMessage, res: ServerResponse, url: URL, c: Call) => Promise<void> | void): Endpoint => ({
    public: true,
    serve: f,
  });
  const forward = open((req, res, url, c) => proxy(fe, req, res, c.brandId, p, url));
  switch (p) {
    case "device_authorization":
    case "token":
    case "revoke":
      return { POST: forward };
    case ".well-known/oauth-authorization-server":
    case "jwks.json":
      return { GET: forward };
    case "consent":
      // POST: a signed-assertion Brand's login returns the User here.
      return { GET: open((q, r, u, c) => consentPage(fe, q, r, u, c)), POST: open((q, r, u, c) => beginConsent(fe, q, r, c)) };
    case "consent/decision":
      return { POST: open((q, r, u, c) => decide(fe, q, r, c)) };
    case "connected":
      // POST: a signed-assertion Brand's login returns the User here (signed.ts).
      return { GET: open((q, r, u, c) => connectedPage(fe, q, r, u, c)), POST: open((q, r, u, c) => beginConnected(fe, q, r, c)) };
    case "connected/revoke":
      // GET: the confirmation that names what will be revoked.
      if (fe.sessions) return { GET: open((q, r, u, c) => confirmRevoke(fe, q, r, u, c)), POST: open((q, r, u, c) => revokeAny(fe, q, r, c)) };
      return { POST: open((q, r, u, c) => revokeAny(fe, q, r, c)) };
  }
  return undefined;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) and the inbound forwarding headers
// are not passed on, as Go's httputil.ReverseProxy (Rewrite) does.
const hopByHop = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function passHeaders(raw: string[], drop: Set<string>): [string, string][] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === "connection") for (const n of raw[i + 1]!.split(",")) named.add(n.trim().toLowerCase());
  }
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (hopByHop.has(k) || named.has(k) || drop.has(k)) continue;
    out.push([raw[i]!, raw[i + 1]!]);
  }
  return out;
}

const inboundDrop = new Set(["host", "cookie", "forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto"]);

/**
 * proxy sends a request to pactd's endpoint for the Brand, on the path the
 * route matched (never the raw path the client sent). pactd authenticates
 * the PA (its JWT is the OAuth client authentication) and writes every
 * answer; the User's cookies are not pactd's business.
 */
function proxy(fe: Frontend, req: IncomingMessage, res: ServerResponse, brandId: string, endpoint: string, url: URL): Promise<void> {
  const target = fe.pactdUrl;
  const base = target.pathname.replace(/\/+$/, "");
  const path = base + "/a2a/" + encodeURIComponent(brandId) + "/oauth/" + endpoint + url.search;
  const headers = passHeaders(req.rawHeaders, inboundDrop);
  headers.push(["Host", target.host]);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const out = send(
      { protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path, headers: headers.flat(), timeout: 30_000 },
      (up) => {
        const h = passHeaders(up.rawHeaders, new Set());
        try {
          res.writeHead(up.statusCode ?? 502, h.flat());
        } catch (err) {
          // An event callback: a throw here would stop the process.
          fe.log("oauth proxy", { path: url.pathname, error: err instanceof Error ? err.message : String(err) });
          up.resume();
          res.destroy();
          resolve();
          return;
        }
        up.pipe(res);
        up.on("end", resolve);
        up.on("error", () => {
          res.destroy();
          resolve();
        });
      },
    );
    out.on("timeout", () => out.destroy(new Error("timeout")));
    out.on("error", (err) => {
      fe.log("oauth proxy", { path: url.pathname, error: err.message });
      if (!res.headersSent) bare(res, 502);
      else res.destroy();
      resolve();
    });
    req.pipe(out);
  });
}

/** redirect answers a 303 (or code) as Go's http.Redirect does: a relative target is resolved against the request path. */
export function redirect(req: IncomingMessage, res: ServerResponse, to: string, code = 303): void {
  let loc = to;
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(to) && !to.startsWith("//")) {
    const reqPath = new URL("http://x" + requestTarget(req)).pathname;
    if (!loc.startsWith("/")) loc = posix.dirname(reqPath.endsWith("/") ? reqPath + "x" : reqPath) + "/" + loc;
    const q = loc.indexOf("?");
    const [p, query] = q < 0 ? [loc, ""] : [loc.slice(0, q), loc.slice(q)];
    let clean = posix.normalize(p);
    if (p.endsWith("/") && !clean.endsWith("/")) clean += "/";
    if (clean.length > 1 && !p.endsWith("/") && clean.endsWith("/")) clean = clean.slice(0, -1);
    loc = clean + query;
  }
  // A header carries bytes, not text: non-ASCII goes percent-encoded (as Go's http.Redirect does).
  loc = loc.replace(/[^\x21-\x7e]/gu, (ch) => [...Buffer.from(ch, "utf8")].map((b) => "%" + b.toString(16).toUpperCase().padStart(2, "0")).join(""));
  const headers: Record<string, string> = { Location: loc };
  let body = "";
  if (req.method === "GET" || req.method === "HEAD") headers["Content-Type"] = "text/html; charset=utf-8";
  if (req.method === "GET") body = '<a href="' + loc.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`) + '">See Other</a>.\n\n';
  headers["Content-Length"] = String(Buffer.byteLength(body));
  res.writeHead(code, headers);
  res.end(body);
}

export { tooLarge };

/**
 * readForm reads a urlencoded POST form of at most limit bytes (16 KiB):
 * undefined when it cannot be read or parsed, tooLarge past the bound (the
 * connection is then drained or closed, see body.ts).
 */
export async function readForm(req: IncomingMessage, res: ServerResponse, limit = maxFormBytes): Promise<Map<string, string[]> | typeof tooLarge | undefined> {
  const body = await readBody(req, res, limit);
  if (body === undefined || body === tooLarge) return body;
  return parseForm(body.toString("utf8"), req.headers["content-type"] ?? "");
}

/**
 * parseForm parses a form body strictly, as Go's ParseForm: pairs split on
 * "&", "+" is a space, a bad escape or a ";" fails it. A body that is not
 * application/x-www-form-urlencoded is an empty form.
 */
export function parseForm(body: string, contentType: string): Map<string, string[]> | undefined {
  const form = new Map<string, string[]>();
  const ct = contentType.split(";", 1)[0]!.trim().toLowerCase();
  if (ct !== "application/x-www-form-urlencoded") return form;
  for (const pair of body.split("&")) {
    if (pair === "") continue;
    if (pair.includes(";")) return undefined;
    const eq = pair.indexOf("=");
    const k = unescapeSegment((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, " "));
    const v = unescapeSegment((eq < 0 ? "" : pair.slice(eq + 1)).replace(/\+/g, " "));
    if (k === undefined || v === undefined) return undefined;
    form.set(k, [...(form.get(k) ?? []), v]);
  }
  return form;
}

/** formTooLarge answers a page form over its bound. */
export function formTooLarge(fe: Frontend, res: ServerResponse, user: string): void {
  fe.pages.render(res, 413, "message", { title: "Bad request", user, error: "The form is too large." });
}

/** field is a form's first value of a key, or "". */
export const field = (f: Map<string, string[]>, k: string): string => f.get(k)?.[0] ?? "";

/** hhmm formats a timestamp as Go's "15:04 MST" in UTC. */
export const hhmm = (t: Timestamp | undefined): string =>
  t ? timestampDate(t).toISOString().slice(11, 16) + " UTC" : "00:00 UTC";

/** guessSource names the signed-in Brand user to pactd's user-code guessing limits (hashed: printable, out of pactd's logs). */
export function guessSource(user: string): string {
  return "user:" + createHash("sha256").update(user).digest().subarray(0, 12).toString("hex");
}

/**
 * consentPage serves GET consent?user_code=…. A signed-assertion Brand's
 * User goes to the Brand's login (which posts back here); otherwise the User
 * must be signed in at the Brand, and without a code the page asks for one.
 */
async function consentPage(fe: Frontend, req: IncomingMessage, res: ServerResponse, url: URL, c: Call): Promise<void> {
  const b = await brandPages(fe, req, res, c.brandId);
  if (!b) return;
  const code = url.searchParams.get("user_code") ?? "";
  if (b.signed) return redirect(req, res, b.loginLink(code));
  if (!fe.sessions) return notFound(fe, req, res);
  const user = signedIn(fe, req, res, c.brandId);
  if (!user) return;
  if (code === "") return fe.pages.render(res, 200, "code", { title: "Connect your assistant", user, action: b.consentURL });
  await showConsent(fe, req, res, b, user, code, 200, "", true);
}

/**
 * showConsent describes the pending authorization and renders the page, or
 * the page that says why it cannot be decided. maySkip: when the Brand skips
 * consent and a grant of this User to this PA covers the request already
 * (covered_by_grant), it is approved with every requested scope at once,
 * without the page.
 */
async function showConsent(fe: Frontend, req: IncomingMessage, res: ServerResponse, b: BrandPages, user: string, code: string,
  status: number, problem: string, maySkip: boolean) {
  let d;
  try {
    d = await fe.deleg.describeConsent({ brandId: b.id, userCode: code, source: guessSource(user), brandUser: maySkip ? user : "" });
  } catch (err) {
    return consentError(fe, res, b, user, err);
  }
  if (d.coveredByGrant) {
    let r;
    try {
      // pactd checks the cover again, grants what was requested and never past the covering grant's expiry.
      r = await fe.deleg.approveConsent({ brandId: b.id, userCode: code, brandUser: user, skipConsent: true, source: guessSource(user) });
    } catch (err) {
      return consentError(fe, res, b, user, err);
    }
    return redirect(req, res, b.interfaceUrl + "/oauth/connected?status=" + (r.grantId !== "" ? "approved" : "denied"));
  }
  const v: View = {
    title: "Allow " + d.agentDisplayName + "?",
    user,
    error: problem,
    action: b.decisionURL,
    agent: d.agentDisplayName,
    origin: d.agentOrigin,
    brand: d.brandDisplayName,
    code: d.userCode,
    expires: hhmm(d.expiresAt),
    csrf: fe.pages.csrf(b.id, user, "consent " + d.userCode),
    scopes: scopeViews(d),
  };
  fe.pages.render(res, status, "consent", v);
}

/** scopeViews are the consent page's scopes, each with the words of the authorization_details entries that need it (PACT §5.7). */
export function scopeViews(d: DescribeConsentResponse | undefined): ScopeView[] {
  return (d?.scopes ?? []).map((s) => ({
    id: s.id, description: s.description,
    details: d!.authorizationDetails.filter((ad) => ad.scope === s.id).map((ad) => ad.words),
  }));
}

/** consentError renders why a code cannot be decided. */
function consentError(fe: Frontend, res: ServerResponse, b: BrandPages, user: string, err: unknown): void {
  const v: View = { title: "Connect your assistant", user, action: b.consentURL };
  let status = 400;
  switch (ConnectError.from(err).code) {
    case Code.NotFound:
    case Code.InvalidArgument:
      v.error = "This code is unknown. Check the code your assistant shows and type it again.";
      status = 404;
      break;
    case Code.FailedPrecondition:
      v.error = "This request was already decided or has expired. Ask your assistant to start again.";
      break;
    case Code.ResourceExhausted:
      v.error = "Too many unknown codes were tried. Wait a few minutes, then try again.";
      status = 429;
      break;
    default:
      fe.log("consent", { error: ConnectError.from(err).message });
      v.error = "Something went wrong on our side. Try again later.";
      status = 500;
  }
  fe.pages.render(res, status, "code", v);
}

/**
 * decide serves POST consent/decision: Allow grants the checked scopes; Deny
 * refuses. The page showed the code to compare with the assistant's (RFC
 * 8628 §5.4), so Allow is the User's confirmation that they match; no code
 * is typed again. A signed-assertion Brand's form carries a consent session
 * (decideSigned).
 */
async function decide(fe: Frontend, req: IncomingMessage, res: ServerResponse, c: Call): Promise<void> {
  if (req.headers["sec-fetch-site"] === "cross-site") return forbidden(fe, res, "");
  const b = await brandPages(fe, req, res, c.brandId);
  if (!b) return;
  if (b.signed) return decideSigned(fe, req, res, b);
  if (!fe.sessions) return bare(res, 404);
  const got = await form(fe, req, res, c.brandId);
  if (!got) return;
  const [user, f] = got;
  const code = field(f, "user_code");
  if (!fe.pages.checkCSRF(field(f, "csrf"), c.brandId, user, "consent " + code)) return forbidden(fe, res, user);
  let outcome = "denied";
  try {
    switch (field(f, "decision")) {
      case "deny":
        await fe.deleg.denyConsent({ brandId: c.brandId, userCode: code, source: guessSource(user) });
        break;
      case "allow": {
        const r = await fe.deleg.approveConsent({
          brandId: c.brandId, userCode: code, brandUser: user, scopes: f.get("scope") ?? [], source: guessSource(user),
        });
        if (r.grantId !== "") outcome = "approved";
        break;
      }
      default:
        return fe.pages.render(res, 400, "message", { title: "Choose Allow or Deny", user });
    }
  } catch (err) {
    return consentError(fe, res, b, user, err);
  }
  redirect(req, res, "../connected?status=" + outcome);
}

/**
 * statusText is what the connected page says after a decision; each is true
 * whatever else the page lists (a denial shares nothing new, and the User's
 * other grants stay as they were).
 */
export const statusText: Record<string, string> = {
  approved: "Done: your assistant is connected.",
  denied: "You denied the request: nothing new was shared.",
};

/** connectedPage serves GET connected: the User's grants at the Brand, one entry per PA with its grants grouped, each live PA with a Revoke button. */
async function connectedPage(fe: Frontend, req: IncomingMessage, res: ServerResponse, url: URL, c: Call): Promise<void> {
  const b = await brandPages(fe, req, res, c.brandId);
  if (!b) return;
  if (b.signed) {
    // Nobody is signed in here: the Brand's login signs the User in and
    // posts its assertion back (beginConnected).
    if ((url.searchParams.get("status") ?? "") === "") return redirect(req, res, b.connectedLoginLink());
    return connectedSigned(fe, res, url, b);
  }
  if (!fe.sessions) return notFound(fe, req, res);
  const user = signedIn(fe, req, res, c.brandId);
  if (!user) return;
  const agents = await userAgents(fe, res, b, user);
  if (!agents) return;
  const q = url.searchParams;
  let status = statusText[q.get("status") ?? ""] ?? "";
  if (q.get("status") === "revoked") {
    // Name what was revoked, from pactd's list: never words from the link.
    status = "Access was revoked.";
    for (const a of agents) if (a.id === q.get("agent_id") && !a.live) status = "Revoked: " + a.name + " can no longer act for you here.";
  }
  fe.pages.render(res, 200, "connected", {
    title: "Connected assistants at " + b.name, brand: b.name, user, action: b.interfaceUrl + "/oauth/connected/revoke", agents, status,
  });
}

/** maxGrantPages bounds how many pages of grants the connected page reads. */
const maxGrantPages = 10;

/** listGrants reads the User's grants at the Brand, newest first, at most maxGrantPages pages of 500. */
async function listGrants(fe: Frontend, brandId: string, user: string): Promise<Grant[]> {
  const grants: Grant[] = [];
  let pageToken = "";
  for (let i = 0; i < maxGrantPages; i++) {
    const r = await fe.deleg.listGrants({ brandId, brandUser: user, page: { pageSize: 500, pageToken } });
    grants.push(...r.grants);
    if (r.nextPageToken === "") break;
    pageToken = r.nextPageToken;
  }
  return grants;
}

/** userAgents lists the User's grants grouped by PA; on a failure it renders the error page and returns undefined. */
async function userAgents(fe: Frontend, res: ServerResponse, b: BrandPages, user: string): Promise<AgentView[] | undefined> {
  try {
    return groupGrants(b, await listGrants(fe, b.id, user), Date.now());
  } catch (err) {
    fe.log("list grants", { error: ConnectError.from(err).message });
    fe.pages.render(res, 500, "message", {
      title: "Connected assistants", user, error: "Your connected assistants cannot be shown right now. Try again later.",
    });
    return undefined;
  }
}

/** day is how the pages write a date, as Go's "2 Jan 2006" in UTC. */
export function day(t: Timestamp | undefined): string {
  const d = t ? timestampDate(t) : new Date(0);
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  return `${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** groupGrants makes one AgentView per PA, in the order of its newest grant, with its live grants first. */
export function groupGrants(b: BrandPages, grants: Grant[], now: number): AgentView[] {
  const out: AgentView[] = [];
  const index = new Map<string, AgentView>();
  const ended = new Map<string, number>();
  for (const g of grants) {
    let a = index.get(g.agentId);
    if (!a) {
      a = { id: g.agentId, name: g.agentDisplayName, live: false, state: "", ended: "", grants: [] };
      index.set(g.agentId, a);
      out.push(a);
    }
    const gv: GrantView = {
      scopes: b.scopeViews(g.scopes, g.authorizationDetails), since: day(g.createTime), expires: day(g.expireTime), state: "Active", live: false,
    };
    let end = g.expireTime ? timestampDate(g.expireTime).getTime() : 0;
    if (g.revokeTime) {
      gv.state = "Revoked";
      end = timestampDate(g.revokeTime).getTime();
    } else if (now >= end) gv.state = "Expired";
    else {
      gv.live = true;
      a.live = true;
    }
    if (!gv.live && end > (ended.get(g.agentId) ?? -Infinity)) {
      ended.set(g.agentId, end);
      a.state = gv.state;
    }
    a.grants.push(gv);
  }
  for (const a of out) {
    a.grants = [...a.grants.filter((g) => g.live), ...a.grants.filter((g) => !g.live)];
    if (a.live) {
      const n = a.grants.filter((g) => g.live).length;
      a.state = n > 1 ? `Active · ${n} grants` : "Active";
    } else {
      const t = ended.get(a.id) ?? 0;
      a.ended = day({ seconds: BigInt(Math.floor(t / 1000)), nanos: 0 } as Timestamp);
    }
  }
  return out;
}

/** confirmRevoke serves GET connected/revoke?agent_id=…: the confirmation naming the PA and what it will lose. */
async function confirmRevoke(fe: Frontend, req: IncomingMessage, res: ServerResponse, url: URL, c: Call): Promise<void> {
  const b = await brandPages(fe, req, res, c.brandId);
  if (!b) return;
  // The signed-assertion confirmation is a POST carrying the session.
  if (b.signed) return redirect(req, res, b.connectedURL);
  const user = signedIn(fe, req, res, c.brandId);
  if (!user) return;
  const agents = await userAgents(fe, res, b, user);
  if (!agents) return;
  const id = url.searchParams.get("agent_id") ?? "";
  const a = agents.find((x) => x.id === id && x.live);
  if (!a) {
    return fe.pages.render(res, 404, "message", {
      title: "Connected assistants", user, error: "This assistant has no access to revoke. Go back to your connected assistants.",
    });
  }
  fe.pages.render(res, 200, "revoke", {
    title: "Revoke " + a.name + "?", brand: b.name, user, revoke: a, action: b.interfaceUrl + "/oauth/connected/revoke",
    back: b.interfaceUrl + "/oauth/connected", csrf: fe.pages.csrf(c.brandId, user, "revoke " + id),
  });
}

/** revokeAny serves POST connected/revoke for either login mode. */
async function revokeAny(fe: Frontend, req: IncomingMessage, res: ServerResponse, c: Call): Promise<void> {
  const b = await brandPages(fe, req, res, c.brandId);
  if (!b) return;
  if (b.signed) return revokeSigned(fe, req, res, b);
  if (!fe.sessions) return notFound(fe, req, res);
  return revoke(fe, req, res, c);
}

/** revoke serves POST connected/revoke: it revokes every live grant of one PA to the User, then the connected page names what was revoked. */
async function revoke(fe: Frontend, req: IncomingMessage, res: ServerResponse, c: Call): Promise<void> {
  const got = await form(fe, req, res, c.brandId);
  if (!got) return;
  const [user, f] = got;
  const id = field(f, "agent_id");
  if (!fe.pages.checkCSRF(field(f, "csrf"), c.brandId, user, "revoke " + id)) return forbidden(fe, res, user);
  try {
    const now = Date.now();
    for (const g of await listGrants(fe, c.brandId, user)) {
      if (g.agentId !== id || g.revokeTime || !g.expireTime || now >= timestampDate(g.expireTime).getTime()) continue;
      try {
        await fe.deleg.revokeGrant({ brandId: c.brandId, grantId: g.grantId, brandUser: user });
      } catch (err) {
        if (ConnectError.from(err).code !== Code.NotFound) throw err; // NotFound: revoked meanwhile, or not this User's
      }
    }
  } catch (err) {
    fe.log("revoke grant", { error: ConnectError.from(err).message });
    return fe.pages.render(res, 500, "message", {
      title: "Connected assistants", user, error: "Access could not be revoked right now. Try again later.",
    });
  }
  redirect(req, res, "../connected?status=revoked&agent_id=" + encodeURIComponent(id));
}

/** signedIn returns the Brand user, or sends the User to the Brand's login (which returns here) and returns "". */
function signedIn(fe: Frontend, req: IncomingMessage, res: ServerResponse, brandId: string): string {
  const u = fe.sessions!.brandUser(req, brandId);
  if (u) return u;
  redirect(req, res, fe.sessions!.loginURL(brandId, requestTarget(req)));
  return "";
}

/** form reads a page's POST form from a signed-in User. A request another site started is refused before anything is read. */
async function form(fe: Frontend, req: IncomingMessage, res: ServerResponse, brandId: string): Promise<[string, Map<string, string[]>] | undefined> {
  const user = fe.sessions!.brandUser(req, brandId);
  if (!user || req.headers["sec-fetch-site"] === "cross-site") {
    forbidden(fe, res, user);
    return undefined;
  }
  const f = await readForm(req, res);
  if (f === tooLarge) {
    formTooLarge(fe, res, user);
    return undefined;
  }
  if (!f) {
    fe.pages.render(res, 400, "message", { title: "Bad request", user, error: "The form could not be read." });
    return undefined;
  }
  return [user, f];
}

export function forbidden(fe: Frontend, res: ServerResponse, user: string): void {
  fe.pages.render(res, 403, "message", {
    title: "Please try again", user,
    error: "This form has expired or was not sent from this site. Go back, reload the page and try again.",
  });
}
