import type { ServerResponse } from "node:http";
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** pageCSS is the pages' only style sheet, inline and allowed by its hash (the Go frontend's, byte for byte). */
export const pageCSS = `body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1f24;background:#f4f5f7}
header{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25em 1em;padding:.75em 1.5em;background:#1d3557;color:#fff}
main{max-width:40em;margin:2em auto;padding:1.5em 2em;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4em;line-height:1.3}h2{font-size:1.1em;margin:0}
.agent{color:#1d3557}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em}
.facts dt{font-weight:600}.facts dd{margin:0;overflow-wrap:anywhere}
fieldset{border:1px solid #c5cad3;border-radius:6px;margin:1em 0;padding:.5em 1em}
legend{font-weight:600;padding:0 .25em}
.scope{display:flex;gap:.5em;align-items:baseline;margin:.5em 0}
.scope input{width:1.15em;height:1.15em;flex:none}
code,.id{font-size:.8em;color:#5f6875}
.hint{font-size:.9em;color:#4a5260}
.details{margin:0 0 .5em 1.9em;padding-left:1em}
.usercode{font:600 1.3em ui-monospace,monospace;letter-spacing:.1em;white-space:nowrap}
.compare{padding:.75em 1em;border:2px dashed #1d3557;border-radius:6px;text-align:center}
label{display:block;font-weight:600}.scope label{display:inline;font-weight:400}
input[type=text],input:not([type]){font:1.1em ui-monospace,monospace;padding:.4em;margin:.3em 0 1em;border:1px solid #8a94a3;border-radius:4px;max-width:100%;box-sizing:border-box}
.buttons{display:flex;flex-wrap:wrap;gap:1em;margin-top:1em}
button,a.button{font:inherit;font-weight:600;padding:.5em 1.5em;border-radius:4px;border:2px solid #1d3557;background:#1d3557;color:#fff;cursor:pointer;text-decoration:none}
button.secondary,a.button.secondary{background:#fff;color:#1d3557}
button.danger{background:#b3261e;border-color:#b3261e}
button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid #e76f51;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}
.status{padding:.5em 1em;border-left:4px solid #2a9d8f;background:#e8f6f4}
.pas,.brands,.grants{list-style:none;margin:0;padding:0}
.pa,.brand{border:1px solid #dde1e6;border-radius:6px;padding:.75em 1em;margin:.75em 0}
.pa-head{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:baseline;gap:.25em 1em}
.state{font-size:.85em;font-weight:600;padding:.1em .6em;border-radius:1em;background:#e8f6f4;color:#1f6f65;white-space:nowrap}
.state.off{background:#eceef1;color:#4a5260}
.grants>li{margin:.5em 0;padding-top:.5em;border-top:1px solid #eceef1}
.grants ul{margin:.25em 0;padding-left:1.25em}
.when{font-size:.9em;color:#4a5260}.when time{white-space:nowrap}
.pa form{margin:.5em 0 0}
@media (max-width:40em){main{margin:0;padding:1em;border-radius:0;box-shadow:none}header{padding:.5em 1em}.facts{grid-template-columns:1fr}.facts dd{margin-bottom:.5em}}`;

/** View is what a page shows. */
export interface View {
  title: string;
  user?: string;
  error?: string;
  status?: string;
  /** action is the absolute URL the page's forms post (or get) to. */
  action?: string;
  agent?: string;
  origin?: string;
  brand?: string;
  code?: string;
  expires?: string;
  csrf?: string;
  /** scopes are the requested scopes; details, the words of the authorization_details entries that need each (PACT §5.7). */
  scopes?: ScopeView[];
  /**
   * session is a signed-assertion Brand's consent session (its form's only
   * state and anti-forgery token), or the connected session of its connected
   * and revoke pages (the revoke forms' only state and anti-forgery token).
   */
  session?: string;
  email?: string;
  /** agents are the connected page's PAs, each with its grants grouped. */
  agents?: AgentView[];
  /** signed: the connected page of a signed-assertion Brand shows only the decision's outcome, granted (the scopes in words). */
  signed?: boolean;
  granted?: ScopeView[];
  /** revoke is the PA the revoke confirmation names; back is the connected page (also linked from a signed-assertion Brand's outcome page). */
  revoke?: AgentView;
  back?: string;
  /** brands are the root page's Brands. */
  brands?: BrandView[];
}

/** ScopeView is one requested scope on the consent page. */
export interface ScopeView {
  id: string;
  description: string;
  details: string[];
}

/** AgentView is one PA on the connected page: its grants, live ones first. */
export interface AgentView {
  id: string;
  name: string;
  /** live is true while one of its grants is; state says it in words. */
  live: boolean;
  state: string;
  /** ended is when its last grant ended (revoked or expired), when none is live. */
  ended: string;
  grants: GrantView[];
}

/** GrantView is one grant of a PA: its scopes in the Brand's words, each with its authorization_details in words. */
export interface GrantView {
  scopes: ScopeView[];
  since: string;
  expires: string;
  state: string;
  live: boolean;
}

/** BrandView is one Brand on the root page. */
export interface BrandView {
  id: string;
  name: string;
  description: string;
  card: string;
  connected: string;
}

/** PageName names a page template. */
export type PageName = "code" | "consent" | "connected" | "revoke" | "root" | "notfound" | "message";

/** esc escapes text for HTML text and attribute values, as Go's html/template does. */
export function esc(s: string | undefined): string {
  return (s ?? "").replace(/[&<>"'+\0]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;", "+": "&#43;", "\0": "\uFFFD" })[c]!);
}

const top = (v: View) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(v.title)}</title>
<style>${pageCSS}</style>
</head>
<body>
<header><span class="provider">PACT Provider</span>${v.user ? `<span class="who">Signed in as <strong>${esc(v.user)}</strong></span>` : ""}</header>
<main>
`;

const bottom = `</main>
</body>
</html>
`;

/** scopeList is a list of scopes in the Brand's words, ids secondary, each with its entries' words. */
const scopeList = (scopes: ScopeView[]) =>
  `<ul>${scopes
    .map(
      (s) => `<li>${esc(s.description)} <span class="id">${esc(s.id)}</span>${
        s.details.length > 0 ? `<ul class="hint">${s.details.map((d) => `<li>${esc(d)}</li>`).join("")}</ul>` : ""
      }</li>\n`,
    )
    .join("")}</ul>`;

const errorLine = (v: View) => (v.error ? `<p class="error" role="alert">${esc(v.error)}</p>` : "");

const templates: Record<PageName, (v: View) => string> = {
  code: (v) => `${top(v)}
<h1>${esc(v.title)}</h1>
${errorLine(v)}
<form method="get" action="${esc(v.action)}">
<label for="user_code">Type the code your assistant shows you</label>
<input id="user_code" name="user_code" required autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX" maxlength="16">
<div class="buttons"><button type="submit">Continue</button></div>
</form>
${bottom}`,
  consent: (v) => `${top(v)}
<h1>Allow <span class="agent">${esc(v.agent)}</span> to act for you at ${esc(v.brand)}?</h1>
${errorLine(v)}
<dl class="facts">
<dt>Personal agent</dt><dd>${esc(v.agent)}</dd>
<dt>Operated from</dt><dd><code>${esc(v.origin)}</code></dd>
<dt>Account at</dt><dd>${esc(v.brand)}</dd>
${v.email ? `<dt>Your email</dt><dd>${esc(v.email)}</dd>\n` : ""}</dl>
<form method="post" action="${esc(v.action)}">
${
  v.session
    ? `<input type="hidden" name="session" value="${esc(v.session)}">\n`
    : `<input type="hidden" name="csrf" value="${esc(v.csrf)}">
<input type="hidden" name="user_code" value="${esc(v.code)}">
`
}
<fieldset>
<legend>${esc(v.agent)} asks to</legend>
${(v.scopes ?? [])
  .map(
    (s, i) => `<div class="scope">
<input type="checkbox" id="scope-${i}" name="scope" value="${esc(s.id)}" checked>
<label for="scope-${i}">${esc(s.description)} <span class="id">${esc(s.id)}</span></label>
</div>
${s.details.length > 0 ? `<ul class="details" aria-label="Only for">${s.details.map((d) => `<li>${esc(d)}</li>`).join("")}</ul>\n` : ""}`,
  )
  .join("")}<p class="hint">Uncheck what you do not want to share.</p>
</fieldset>
<div class="code" id="code-help">
<p>Allow only if your assistant shows this same code. This request expires at ${esc(v.expires)}.</p>
<p class="compare"><strong class="usercode">${esc(v.code)}</strong></p>
<p class="hint">If your assistant shows another code, or you did not ask it to connect, choose Deny.</p>
</div>
<div class="buttons">
<button type="submit" name="decision" value="allow" aria-describedby="code-help">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>
</div>
</form>
${bottom}`,
  connected: (v) => `${top(v)}
<h1>${esc(v.title)}</h1>
${v.status ? `<p class="status" role="status">${esc(v.status)}</p>` : ""}
${
  v.signed
    ? `${v.granted && v.granted.length > 0 ? `<p>You shared:</p>\n${scopeList(v.granted)}` : ""}
<p>You can close this page and go back to your assistant.</p>
${v.back ? `<p><a href="${esc(v.back)}">See all your connected assistants</a></p>` : ""}

`
    : v.agents && v.agents.length > 0
      ? `<p>Personal agents you allowed to act for you at ${esc(v.brand)}:</p>
<ul class="pas">
${v.agents
  .map(
    (a) => `<li class="pa" data-agent="${esc(a.id)}">
<div class="pa-head"><h2>${esc(a.name)}</h2><span class="state${a.live ? "" : " off"}">${esc(a.state)}</span></div>
${
  a.live
    ? `<ul class="grants">
${a.grants
  .filter((g) => g.live)
  .map((g) => `<li>May:${scopeList(g.scopes)}
<span class="when">Since <time>${esc(g.since)}</time> · expires <time>${esc(g.expires)}</time></span></li>
`)
  .join("")}</ul>
${
  v.session
    ? `<form method="post" action="${esc(v.action)}"><input type="hidden" name="session" value="${esc(v.session)}">`
    : `<form method="get" action="${esc(v.action)}">`
}<input type="hidden" name="agent_id" value="${esc(a.id)}"><button type="submit" class="secondary" aria-label="Revoke access of ${esc(a.name)}">Revoke…</button></form>
`
    : `<p class="when">${esc(a.state)} <time>${esc(a.ended)}</time></p>`
}
</li>
`,
  )
  .join("")}</ul>

`
      : `<p>At ${esc(v.brand)}, no personal agent is connected to your account.</p>
`
}${bottom}`,
  revoke: (v) => `${top(v)}
<h1>${esc(v.title)}</h1>
${
  v.revoke
    ? `<p>At ${esc(v.brand)}, <strong>${esc(v.revoke.name)}</strong> will no longer be able to act for you. It loses:</p>
${v.revoke.grants.filter((g) => g.live).map((g) => scopeList(g.scopes)).join("")}
<p class="hint">Your assistant has to ask again, and you to allow it, before it can act for you here.</p>
<form method="post" action="${esc(v.action)}">
${
  v.session
    ? `<input type="hidden" name="session" value="${esc(v.session)}">
<input type="hidden" name="confirm" value="1">`
    : `<input type="hidden" name="csrf" value="${esc(v.csrf)}">`
}
<input type="hidden" name="agent_id" value="${esc(v.revoke.id)}">
<div class="buttons"><button type="submit" class="danger">Revoke ${esc(v.revoke.name)}</button>
${
  v.session
    ? `<button type="submit" class="secondary" formaction="${esc(v.back)}">Keep it</button>`
    : `<a class="button secondary" href="${esc(v.back)}">Keep it</a>`
}</div>
</form>`
    : ""
}
${bottom}`,
  root: (v) => `${top(v)}
<h1>${esc(v.title)}</h1>
<p>A PACT Provider's A2A frontend. Personal agents find each Brand by its Agent Card.</p>
${errorLine(v)}
${
  v.brands && v.brands.length > 0
    ? `<ul class="brands">
${v.brands
  .map(
    (b) => `<li class="brand" data-brand="${esc(b.id)}"><h2>${esc(b.name)} <span class="id">${esc(b.id)}</span></h2>
${b.description ? `<p class="hint">${esc(b.description)}</p>` : ""}
<a href="${esc(b.card)}">Agent Card</a>${b.connected ? ` · <a href="${esc(b.connected)}">Connected assistants</a>` : ""}</li>
`,
  )
  .join("")}</ul>
`
    : v.error
      ? ""
      : `<p>No Brand is set up yet.</p>`
}
${bottom}`,
  notfound: (v) => `${top(v)}
<h1>${esc(v.title)}</h1>
<p class="error" role="alert">${esc(v.error)}</p>
<p><a href="/">See the Brands this Provider serves</a></p>
${bottom}`,
  message: (v) => `${top(v)}
<h1>${esc(v.title)}</h1>
${errorLine(v)}
${bottom}`,
};

/** Pages renders the Provider's HTML pages. */
export class Pages {
  /** styleSrc is the CSP's style-src: the style sheet's hash. */
  readonly styleSrc = "'sha256-" + createHash("sha256").update(pageCSS).digest("base64") + "'";
  /** key keys the forms' anti-forgery tokens; random per process. */
  private readonly key = randomBytes(32);

  /**
   * csp is a page's Content-Security-Policy: nothing runs but its style
   * sheet, no frame may hold it, and its forms may post only to this origin
   * and to the origin of its (absolute) form action.
   */
  csp(action: string | undefined): string {
    let formAction = "'self'";
    try {
      const u = new URL(action ?? "");
      if ((u.protocol === "https:" || u.protocol === "http:") && u.host) formAction += " " + u.protocol + "//" + u.host;
    } catch {
      // a relative or empty action: 'self' only
    }
    return `default-src 'none'; style-src ${this.styleSrc}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
  }

  /**
   * render sends a page with headers that keep it out of frames, caches and
   * Referer headers, and let nothing but its own style sheet run.
   */
  render(res: ServerResponse, status: number, name: PageName, v: View): void {
    const body = templates[name](v);
    res.writeHead(status, {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": this.csp(v.action),
      "X-Frame-Options": "DENY",
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
      "X-Content-Type-Options": "nosniff",
      "Content-Length": Buffer.byteLength(body),
    });
    res.end(body);
  }

  /** csrf is the anti-forgery token of one form: an HMAC of the Brand, the signed-in User and what the form decides. */
  csrf(brandId: string, user: string, purpose: string): string {
    const m = createHmac("sha256", this.key);
    for (const s of [brandId, user, purpose]) m.update(s).update(Buffer.from([0]));
    return m.digest("base64url");
  }

  checkCSRF(token: string | null | undefined, brandId: string, user: string, purpose: string): boolean {
    if (!token) return false;
    const a = Buffer.from(token);
    const b = Buffer.from(this.csrf(brandId, user, purpose));
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
