// The consent pages of a Brand in BRAND_LOGIN_MODE_SIGNED_ASSERTION keep no
// state at the frontend and need no cookie: the Brand's login (on the
// Brand's origin) posts its signed assertion to the consent URL, pactd
// verifies it (BeginConsent) and hands back a consent session, the page
// carries that session in its decision form, and the decision passes it to
// pactd. Every form action is absolute, under the interface URL pactd names.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { BrandLoginMode } from "./gen/pact/v1/brand_pb.js";
import { bare } from "./errors.js";
import type { Call, Frontend } from "./handler.js";
import { field, forbidden, formTooLarge, groupGrants, hhmm, readForm, redirect, scopeViews, statusText, tooLarge } from "./oauth.js";
import type { Grant } from "./gen/pact/v1/delegation_pb.js";
import type { ScopeView, View } from "./pages.js";
import { notFound } from "./root.js";

/** BrandPages is what the pages need to know of a Brand, from pactd's GetAgentCard. */
export class BrandPages {
  constructor(
    readonly id: string,
    readonly interfaceUrl: string,
    readonly mode: BrandLoginMode,
    /** verification is the Brand login link without a user code. */
    readonly verification: string,
    /** scopes are the Brand card's scopes: id to the Brand's description. */
    readonly scopes: ReadonlyMap<string, string> = new Map(),
    /** name is the Brand's display name (the card's name). */
    readonly name: string = id,
  ) {}

  /** scopeViews are scope ids in the Brand's words (the id itself when the card no longer lists it), each with the words of the entries under it. */
  scopeViews(ids: string[], details: { scope: string; words: string }[]): ScopeView[] {
    return ids.map((id) => ({
      id, description: this.scopes.get(id) || id, details: details.filter((d) => d.scope === id).map((d) => d.words),
    }));
  }

  /** signed reports whether the Brand's login posts signed assertions. */
  get signed(): boolean {
    return this.mode === BrandLoginMode.SIGNED_ASSERTION;
  }
  get consentURL(): string {
    return this.interfaceUrl + "/oauth/consent";
  }
  get decisionURL(): string {
    return this.interfaceUrl + "/oauth/consent/decision";
  }
  /** connectedURL is the Brand's connected page. */
  get connectedURL(): string {
    return this.interfaceUrl + "/oauth/connected";
  }

  /** connectedLoginLink is the Brand login link that returns to the connected page. */
  connectedLoginLink(): string {
    let u: URL;
    try {
      u = new URL(this.verification);
    } catch {
      return this.verification;
    }
    u.searchParams.set("return_to", this.connectedURL);
    u.searchParams.sort();
    return u.toString();
  }

  /** loginLink is the Brand login link; with a user code it returns to the consent URL with that code. */
  loginLink(code: string): string {
    if (code === "") return this.verification;
    let u: URL;
    try {
      u = new URL(this.verification);
    } catch {
      return this.verification;
    }
    u.searchParams.set("return_to", this.consentURL + "?user_code=" + queryEscape(code));
    // Go's url.Values.Encode sorts the keys.
    u.searchParams.sort();
    return u.toString();
  }
}

/** brandPages asks pactd about the Brand of a page; an unknown Brand is a bare 404, one without delegation a 404 page. */
export async function brandPages(fe: Frontend, req: IncomingMessage, res: ServerResponse, brandId: string): Promise<BrandPages | undefined> {
  let card;
  try {
    card = await fe.brands.getAgentCard({ brandId });
  } catch (err) {
    if (ConnectError.from(err).code === Code.NotFound) {
      notFound(fe, req, res, brandId);
      return undefined;
    }
    fe.log("get agent card", { error: ConnectError.from(err).message });
    fe.pages.render(res, 500, "message", { title: "Connect your assistant", error: "Something went wrong on our side. Try again later." });
    return undefined;
  }
  if (card.loginMode === BrandLoginMode.UNSPECIFIED) {
    fe.pages.render(res, 404, "message", { title: "Connect your assistant", error: "This Brand does not let assistants act for you." });
    return undefined;
  }
  const facts = cardFacts(card.cardJson);
  return new BrandPages(brandId, card.interfaceUrl, card.loginMode, card.verificationUri, facts.scopes, facts.name || brandId);
}

/**
 * beginConsent serves POST consent from a signed-assertion Brand's login:
 * one form field, assertion. pactd verifies it and uses it up; the page it
 * renders carries the consent session. The post comes from the Brand's
 * origin, so it is cross-site by design: the assertion is its credential.
 */
export async function beginConsent(fe: Frontend, req: IncomingMessage, res: ServerResponse, c: Call): Promise<void> {
  const b = await brandPages(fe, req, res, c.brandId);
  if (!b) return;
  if (!b.signed) {
    return fe.pages.render(res, 400, "message", {
      title: "Connect your assistant", error: "This Brand's sign-in does not post here. Start again from your assistant.",
    });
  }
  const f = await readForm(req, res);
  if (f === tooLarge) return formTooLarge(fe, res, "");
  if (!f || field(f, "assertion") === "") {
    return fe.pages.render(res, 400, "message", {
      title: "Connect your assistant", error: "The sign-in could not be read. Start again from your assistant.",
    });
  }
  let r;
  try {
    r = await fe.deleg.beginConsent({ brandId: c.brandId, brandAssertion: field(f, "assertion"), source: clientSource(req) });
  } catch (err) {
    return signedError(fe, res, err);
  }
  if (r.skippedGrantId !== "") {
    // Consent skipped: a grant of this User to this PA covers the request,
    // and pactd approved it; answer as after an allow.
    return redirect(req, res, b.interfaceUrl + "/oauth/connected?client=" + queryEscape(r.clientId) +
      "&status=approved&scope=" + queryEscape(r.grantedScopes.join(" ")));
  }
  const d = r.consent;
  const v: View = {
    title: "Allow " + (d?.agentDisplayName ?? "") + "?", user: r.brandUser, email: r.email,
    agent: d?.agentDisplayName ?? "", origin: d?.agentOrigin ?? "", brand: d?.brandDisplayName ?? "", code: d?.userCode ?? "",
    expires: hhmm(d?.expiresAt), session: r.consentSession, action: r.decisionUrl,
    scopes: scopeViews(d),
  };
  fe.pages.render(res, 200, "consent", v);
}

/**
 * decideSigned serves a signed-assertion Brand's decision: the form's
 * session (its only state and its anti-forgery token), decision and scopes.
 * It answers 303 to the connected page with the outcome.
 */
export async function decideSigned(fe: Frontend, req: IncomingMessage, res: ServerResponse, b: BrandPages): Promise<void> {
  const f = await readForm(req, res);
  if (f === tooLarge) return formTooLarge(fe, res, "");
  if (!f || field(f, "session") === "") return forbidden(fe, res, "");
  let client = "";
  let granted = "";
  let outcome = "denied";
  try {
    switch (field(f, "decision")) {
      case "allow": {
        const r = await fe.deleg.approveConsent({
          brandId: b.id, consentSession: field(f, "session"), scopes: f.get("scope") ?? [], source: clientSource(req),
        });
        client = r.clientId;
        if (r.grantId !== "") {
          outcome = "approved";
          granted = r.scopes.join(" ");
        }
        break;
      }
      case "deny": {
        const r = await fe.deleg.denyConsent({ brandId: b.id, consentSession: field(f, "session"), source: clientSource(req) });
        client = r.clientId;
        break;
      }
      default:
        return fe.pages.render(res, 400, "message", { title: "Choose Allow or Deny" });
    }
  } catch (err) {
    return signedError(fe, res, err);
  }
  let next = b.interfaceUrl + "/oauth/connected?client=" + queryEscape(client) + "&status=" + outcome;
  if (outcome === "approved") next += "&scope=" + queryEscape(granted);
  redirect(req, res, next);
}

/** queryEscape is Go's url.QueryEscape (space as '+'). */
export const queryEscape = (s: string): string =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase()).replace(/%20/g, "+");

/**
 * connectedSigned answers the connected page of a signed-assertion Brand
 * after a decision: the outcome the decision redirected with, and a link to
 * the User's list (which needs the Brand's login: see beginConnected).
 */
export function connectedSigned(fe: Frontend, res: ServerResponse, url: URL, b: BrandPages): void {
  const q = url.searchParams;
  const v: View = {
    title: "Connected assistants at " + b.name, brand: b.name, signed: true, status: statusText[q.get("status") ?? ""] ?? "",
    back: b.connectedURL,
  };
  const sc = q.get("scope") ?? "";
  // Only when it lists the Brand's scopes: no free text on our page.
  if (q.get("status") === "approved" && Buffer.byteLength(sc) <= 2048 && scopeList(sc, b.scopes)) v.granted = b.scopeViews(sc.split(" "), []);
  fe.pages.render(res, 200, "connected", v);
}

// The connected page of a signed-assertion Brand works as its consent page
// does, with no cookie: GET connected sends the User to the Brand's login
// with return_to the connected URL; the login posts its signed assertion
// (aud the connected URL, no user_code) to the connected URL; pactd
// verifies and uses it up (BeginConnected) and answers the User's grants and
// a connected session, which the page's revoke forms carry in a hidden field
// (their only state and their anti-forgery token). Revoking confirms first
// (pactd relists the grants for the session), then calls RevokeConnected.

/**
 * beginConnected serves POST connected: from the Brand's login, one form
 * field, assertion (cross-site by design: the assertion is its credential);
 * or, from the revoke confirmation's "Keep it", the session.
 */
export async function beginConnected(fe: Frontend, req: IncomingMessage, res: ServerResponse, c: Call): Promise<void> {
  const b = await brandPages(fe, req, res, c.brandId);
  if (!b) return;
  if (!b.signed) {
    return fe.pages.render(res, 400, "message", {
      title: "Connected assistants", error: "This Brand's sign-in does not post here. Open your connected assistants again.",
    });
  }
  const f = await readForm(req, res);
  const assertion = f && f !== tooLarge ? field(f, "assertion") : "";
  const session = f && f !== tooLarge ? field(f, "session") : "";
  if (!f || f === tooLarge || (assertion === "") === (session === "")) {
    return fe.pages.render(res, f === tooLarge ? 413 : 400, "message", {
      title: "Connected assistants", error: "The sign-in could not be read. Open your connected assistants again.",
    });
  }
  let r;
  try {
    r = await fe.deleg.beginConnected(assertion !== ""
      ? { brandId: c.brandId, brandAssertion: assertion, source: clientSource(req) }
      : { brandId: c.brandId, connectedSession: session, source: clientSource(req) });
  } catch (err) {
    return signedError(fe, res, err);
  }
  renderSignedConnected(fe, res, b, r.brandUser, r.connectedSession, r.grants, "");
}

/** renderSignedConnected renders the connected page of a signed-assertion Brand's User: the shared template, the revoke forms carrying session. */
function renderSignedConnected(fe: Frontend, res: ServerResponse, b: BrandPages, user: string, session: string, grants: Grant[], status: string): void {
  fe.pages.render(res, 200, "connected", {
    title: "Connected assistants at " + b.name, brand: b.name, user, action: b.connectedURL + "/revoke",
    agents: groupGrants(b, grants, Date.now()), session, status,
  });
}

/**
 * revokeSigned serves a signed-assertion Brand's revoke form: without
 * confirm, the confirmation naming what the PA loses (pactd lists the grants
 * for the session); with confirm, RevokeConnected and the page after it,
 * naming what was revoked.
 */
export async function revokeSigned(fe: Frontend, req: IncomingMessage, res: ServerResponse, b: BrandPages): Promise<void> {
  const f = await readForm(req, res);
  if (f === tooLarge) return formTooLarge(fe, res, "");
  if (!f || field(f, "session") === "" || field(f, "agent_id") === "") return forbidden(fe, res, "");
  const session = field(f, "session");
  const id = field(f, "agent_id");
  if (field(f, "confirm") === "") {
    let r;
    try {
      r = await fe.deleg.beginConnected({ brandId: b.id, connectedSession: session, source: clientSource(req) });
    } catch (err) {
      return signedError(fe, res, err);
    }
    const a = groupGrants(b, r.grants, Date.now()).find((x) => x.id === id && x.live);
    if (!a) {
      return fe.pages.render(res, 404, "message", {
        title: "Connected assistants", user: r.brandUser, error: "This assistant has no access to revoke. Go back to your connected assistants.",
      });
    }
    return fe.pages.render(res, 200, "revoke", {
      title: "Revoke " + a.name + "?", brand: b.name, user: r.brandUser, revoke: a, action: b.connectedURL + "/revoke",
      back: b.connectedURL, session,
    });
  }
  let r;
  try {
    r = await fe.deleg.revokeConnected({ brandId: b.id, connectedSession: session, agentId: id, source: clientSource(req) });
  } catch (err) {
    return signedError(fe, res, err);
  }
  let msg = "Access was revoked.";
  for (const a of groupGrants(b, r.grants, Date.now())) if (a.id === id && !a.live) msg = "Revoked: " + a.name + " can no longer act for you here.";
  renderSignedConnected(fe, res, b, r.brandUser, session, r.grants, msg);
}

/** signedError renders why pactd refused an assertion or a consent session (the ErrorInfo reason names it) and changes nothing. */
function signedError(fe: Frontend, res: ServerResponse, err: unknown): void {
  const ce = ConnectError.from(err);
  const reason = errorReason(ce);
  const v: View = { title: "Connect your assistant" };
  let status = 400;
  if (reason.endsWith("_REPLAYED")) v.error = "This sign-in was used already. Start again from your assistant.";
  else if (reason.endsWith("_NOT_PENDING")) v.error = "This request was already decided or has expired. Ask your assistant to start again.";
  else if (reason.endsWith("_EXPIRED") || reason.endsWith("_TOO_OLD")) v.error = "This page has expired. Start again from your assistant.";
  else if (ce.code === Code.FailedPrecondition || ce.code === Code.InvalidArgument) {
    v.error = "This sign-in or form could not be verified. Start again from your assistant.";
    status = 403;
  } else if (ce.code === Code.NotFound) {
    v.error = "This code is unknown. Start again from your assistant.";
    status = 404;
  } else if (ce.code === Code.ResourceExhausted) {
    v.error = "Too many unknown codes were tried. Wait a few minutes, then try again.";
    status = 429;
  } else if (ce.code === Code.Unavailable) {
    v.error = "The sign-in cannot be checked right now. Try again in a minute.";
    status = 503;
  } else {
    fe.log("consent", { error: ce.message });
    v.error = "Something went wrong on our side. Try again later.";
    status = 500;
  }
  fe.pages.render(res, status, "message", v);
}

/** errorReason is the google.rpc.ErrorInfo reason of a pactd error, or "" (decoded from the wire: field 1). */
export function errorReason(ce: ConnectError): string {
  for (const d of ce.details) {
    if (!("type" in d) || d.type !== "google.rpc.ErrorInfo") continue;
    try {
      const r = new BinaryReader(d.value);
      while (r.pos < r.len) {
        const [no, wt] = r.tag();
        if (no === 1 && wt === 2) return r.string();
        r.skip(wt);
      }
    } catch {
      return "";
    }
  }
  return "";
}

/** clientSource names the browser's address to pactd's user-code guessing limits (hashed). */
export function clientSource(req: IncomingMessage): string {
  const host = req.socket.remoteAddress ?? "";
  return "ip:" + createHash("sha256").update(host).digest().subarray(0, 12).toString("hex");
}

/** scopeList reports whether s is 1 to 50 of the Brand's scope ids separated by single spaces. */
export function scopeList(s: string, scopes: { has(id: string): boolean }): boolean {
  const ids = s.split(" ");
  return ids.length <= 50 && ids.every((id) => scopes.has(id));
}

/** cardScopes are the scopes of an Agent Card's userDelegation scheme: id to description. */
export function cardScopes(cardJson: string): Map<string, string> {
  return cardFacts(cardJson).scopes;
}

/** cardFacts are an Agent Card's name (the Brand's display name) and the scopes of its userDelegation scheme. */
export function cardFacts(cardJson: string): { name: string; scopes: Map<string, string> } {
  try {
    const c = JSON.parse(cardJson) as {
      name?: unknown;
      securitySchemes?: { userDelegation?: { oauth2SecurityScheme?: { flows?: { deviceCode?: { scopes?: Record<string, unknown> } } } } };
    };
    const scopes = new Map<string, string>();
    for (const [id, d] of Object.entries(c.securitySchemes?.userDelegation?.oauth2SecurityScheme?.flows?.deviceCode?.scopes ?? {})) {
      scopes.set(id, typeof d === "string" ? d : "");
    }
    return { name: typeof c.name === "string" ? c.name : "", scopes };
  } catch {
    return { name: "", scopes: new Map() };
  }
}
