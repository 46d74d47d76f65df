import type { ServerResponse } from "node:http";
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** pageCSS is the pages' only style sheet, inline and allowed by its hash (the Go frontend's, byte for byte). */
export const pageCSS = `body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1f24;background:#f4f5f7}
header{display:flex;justify-content:space-between;gap:1em;padding:.75em 1.5em;background:#1d3557;color:#fff}
main{max-width:38em;margin:2em auto;padding:1.5em 2em;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4em;line-height:1.3}
.agent{color:#1d3557}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em}
.facts dt{font-weight:600}.facts dd{margin:0}
fieldset{border:1px solid #c5cad3;border-radius:6px;margin:1em 0;padding:.5em 1em}
legend{font-weight:600;padding:0 .25em}
.scope{display:flex;gap:.5em;align-items:baseline;margin:.5em 0}
.scope input{width:1.15em;height:1.15em}
code{font-size:.85em;color:#4a5260}
.hint{font-size:.9em;color:#4a5260}
.details{margin:0 0 .5em 1.9em;padding-left:1em}
.usercode{font:600 1.2em ui-monospace,monospace;letter-spacing:.1em}
label{display:block;font-weight:600}.scope label{display:inline;font-weight:400}
input[type=text],input:not([type]){font:1.1em ui-monospace,monospace;padding:.4em;margin:.3em 0 1em;border:1px solid #8a94a3;border-radius:4px}
.buttons{display:flex;gap:1em;margin-top:1em}
button{font:inherit;font-weight:600;padding:.5em 1.5em;border-radius:4px;border:2px solid #1d3557;background:#1d3557;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1d3557}
button:focus-visible,input:focus-visible{outline:3px solid #e76f51;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}
.status{padding:.5em 1em;border-left:4px solid #2a9d8f;background:#e8f6f4}
table{width:100%;border-collapse:collapse}caption{text-align:left;padding:.5em 0}
th,td{text-align:left;padding:.4em;border-bottom:1px solid #dde1e6}
.hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}`;

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
  /** session is a signed-assertion Brand's consent session (its form's only state and anti-forgery token). */
  session?: string;
  email?: string;
  grants?: GrantView[];
  /** signed: the connected page of a signed-assertion Brand shows only the decision's outcome. */
  signed?: boolean;
  granted?: string;
}

/** ScopeView is one requested scope on the consent page. */
export interface ScopeView {
  id: string;
  description: string;
  details: string[];
}

/** GrantView is one row of the connected-apps page. */
export interface GrantView {
  id: string;
  agent: string;
  scopes: string;
  since: string;
  state: string;
  live: boolean;
  /** details are the grant's authorization_details in words. */
  details: string[];
}

/** PageName names a page template. */
export type PageName = "code" | "consent" | "connected" | "message";

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
<label for="scope-${i}">${esc(s.description)} <code>${esc(s.id)}</code></label>
</div>
${s.details.length > 0 ? `<ul class="details" aria-label="Only for">${s.details.map((d) => `<li>${esc(d)}</li>`).join("")}</ul>\n` : ""}`,
  )
  .join("")}<p class="hint">Uncheck what you do not want to share.</p>
</fieldset>
<div class="code">
<p id="code-help">Only allow this if your assistant shows the code <strong class="usercode">${esc(v.code)}</strong>. This request expires at ${esc(v.expires)}.</p>
${
  v.session
    ? ""
    : `<label for="confirm_code">Type the code your assistant shows</label>
<input id="confirm_code" name="confirm_code" required autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX" maxlength="16" aria-describedby="code-help">
`
}</div>
<div class="buttons">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>
</div>
</form>
${bottom}`,
  connected: (v) => `${top(v)}
<h1>${esc(v.title)}</h1>
${v.status ? `<p class="status" role="status">${esc(v.status)}</p>` : ""}
${
  v.signed
    ? `${v.granted ? `<p>Shared: <code>${esc(v.granted)}</code></p>` : ""}
<p>You can close this page and go back to your assistant.</p>
`
    : v.grants && v.grants.length > 0
      ? `<table>
<caption>Personal agents you allowed to act for you</caption>
<thead><tr><th scope="col">Agent</th><th scope="col">May</th><th scope="col">Since</th><th scope="col">Status</th><th scope="col"><span class="hidden">Action</span></th></tr></thead>
<tbody>
${v.grants
  .map(
    (g) => `<tr>
<td>${esc(g.agent)}</td><td><code>${esc(g.scopes)}</code>${g.details.map((d) => `<br><span class="hint">${esc(d)}</span>`).join("")}</td><td>${esc(g.since)}</td><td>${esc(g.state)}</td>
<td>${g.live ? `<form method="post" action="${esc(v.action)}"><input type="hidden" name="csrf" value="${esc(v.csrf)}"><input type="hidden" name="grant_id" value="${esc(g.id)}"><button type="submit" class="secondary" aria-label="Revoke access of ${esc(g.agent)}">Revoke</button></form>` : ""}</td>
</tr>
`,
  )
  .join("")}</tbody>
</table>
`
      : `<p>No personal agent is connected to your account.</p>
`
}${bottom}`,
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
