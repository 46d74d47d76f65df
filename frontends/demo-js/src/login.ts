/**
 * The demo Brand's sign-in, as in the Go frontend's package demo: it serves
 * the verification URI pactd builds from the Brand's login_url
 *
 *   GET  /demo/{brandId}/login?return_to=…   the form
 *   POST /demo/{brandId}/login               sign in, then back to return_to
 *
 * and, as @pactd/a2a's Sessions, tells pactd's consent and connected-apps
 * pages who is signed in: a cookie per Brand holding the user name, its expiry and an HMAC under
 * a key of this process. return_to may only name this Brand's consent or
 * connected-apps page, and only its path and query are kept. Nothing here
 * checks a password: it is a demo.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Logger, Sessions } from "@pactd/a2a";
import { esc, queryEscape, readForm, redirect, unescapeSegment } from "./web.js";

/** sessionTtlSeconds is how long a demo sign-in lasts. */
export const sessionTtlSeconds = 3600;

const loginCSS = `body{margin:0;font:16px/1.5 Georgia,serif;color:#2b1d0e;background:#fbf6ef}
header{padding:.75em 1.5em;background:#6f4e37;color:#fff;font-weight:700;letter-spacing:.05em}
main{max-width:26em;margin:2em auto;padding:1.5em 2em;background:#fff;border:1px solid #e2d6c6;border-radius:8px}
label{display:block;font-weight:700}
input{font:1.1em system-ui,sans-serif;padding:.4em;margin:.3em 0 1em;width:95%;border:1px solid #8c7a66;border-radius:4px}
button{font:inherit;font-weight:700;padding:.5em 1.5em;border:0;border-radius:4px;background:#6f4e37;color:#fff}
button:focus-visible,input:focus-visible{outline:3px solid #d4a017;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}.note{color:#6b5a48;font-size:.9em}`;

const page = (brand: string, user: string, returnTo: string, error: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to ${esc(brand)}</title>
<style>${loginCSS}</style>
</head>
<body>
<header>${esc(brand)}</header>
<main>
<h1>Sign in to ${esc(brand)}</h1>
<p class="note">This is the Brand's own sign-in page, in a demo: any user name works and there is no password.${user ? ` You are signed in as <strong>${esc(user)}</strong>.` : ""}</p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ""}
<form method="post">
<input type="hidden" name="return_to" value="${esc(returnTo)}">
<label for="username">User name</label>
<input id="username" name="username" required autocomplete="username" maxlength="64" pattern="[a-z0-9._\\-]+" aria-describedby="username-help">
<p id="username-help" class="note">Lower-case letters, digits, dot, dash or underscore, for example alice.</p>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>`;

/** DemoLogin is the demo Brand's cookie sign-in and the frontend's Sessions. */
export class DemoLogin implements Sessions {
  private readonly key = randomBytes(32);
  private readonly csp =
    "default-src 'none'; style-src 'sha256-" + createHash("sha256").update(loginCSS).digest("base64") + "'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

  /**
   * now is the clock (tests move it); log receives failures (silent when
   * unset).
   */
  constructor(
    private readonly now: () => number = () => Date.now(),
    private readonly log: Logger = () => {},
  ) {}

  /**
   * handle serves /demo/{brandId}/login; it returns false for any other
   * path, which it leaves alone. url is the request target (req.url when
   * unset). It never rejects: a failure is answered 500 and logged once.
   */
  async handle(req: IncomingMessage, res: ServerResponse, url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? "/"): Promise<boolean> {
    const m = /^\/demo\/([^/?#]+)\/login(?:\?|$)/.exec(url);
    const brandId = m ? unescapeSegment(m[1]!) : undefined;
    if (!brandId || (req.method !== "GET" && req.method !== "POST")) return false;
    try {
      await this.serve(req, res, brandId, url);
    } catch (err) {
      this.log("demo login", { path: url.split("?", 1)[0], error: err instanceof Error ? err.stack ?? err.message : String(err) });
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(500, ["Cache-Control", "no-store"]);
        res.end();
      }
    }
    return true;
  }

  /**
   * middleware is handle as Express middleware (app.use(login.middleware())):
   * it serves the sign-in and passes every other request on.
   */
  middleware(): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
    return (req, res, next) => {
      void this.handle(req, res).then((served) => {
        if (!served) next();
      });
    };
  }

  private async serve(req: IncomingMessage, res: ServerResponse, brandId: string, url: string): Promise<void> {
    if (req.method === "GET") {
      const q = new URLSearchParams(url.includes("?") ? url.slice(url.indexOf("?") + 1) : "");
      return this.render(req, res, brandId, 200, q.get("return_to") ?? "", "");
    }
    const f = await readForm(req, res);
    if (f === "too large") return this.render(req, res, brandId, 413, "", "The form is too large.");
    if (!f) return this.render(req, res, brandId, 400, "", "The form could not be read.");
    const returnTo = f.get("return_to")?.[0] ?? "";
    const next = returnPath(returnTo, brandId);
    if (next === undefined) {
      return this.render(req, res, brandId, 400, "", "This sign-in link does not lead back to " + brandId + ". Start again from your assistant.");
    }
    const user = f.get("username")?.[0] ?? "";
    if (!validUser(user)) {
      return this.render(req, res, brandId, 400, returnTo, "Use 1 to 64 lower-case letters, digits, dots, dashes or underscores.");
    }
    const exp = String(Math.floor(this.now() / 1000) + sessionTtlSeconds);
    const secure = "encrypted" in req.socket && req.socket.encrypted ? "; Secure" : "";
    res.setHeader("Set-Cookie", `${cookieName(brandId)}=${user}|${exp}|${this.sign(brandId, user, exp)}; Path=/; Max-Age=${sessionTtlSeconds}; HttpOnly${secure}; SameSite=Lax`);
    redirect(req, res, next);
  }

  /** loginUrl is the sign-in page of the Brand, returning to returnTo. */
  loginUrl(brandId: string, returnTo: string): string {
    return "/demo/" + encodeURIComponent(brandId) + "/login?return_to=" + queryEscape(returnTo);
  }

  /** brandUser is the user name of a valid, unexpired cookie for the Brand, or "". */
  brandUser(req: IncomingMessage, brandId: string): string {
    const v = cookieValue(req.headers.cookie ?? "", cookieName(brandId));
    if (!v) return "";
    const [user = "", exp = "", sig = ""] = v.split("|");
    const n = /^[0-9]+$/.test(exp) ? Number(exp) : NaN;
    if (!(Math.floor(this.now() / 1000) < n)) return "";
    const a = Buffer.from(sig);
    const b = Buffer.from(this.sign(brandId, user, exp));
    return a.length === b.length && timingSafeEqual(a, b) ? user : "";
  }

  /** brandName names a Brand on the sign-in page (its display name: cardNames in names.ts); the Brand id when unset or "". */
  brandName?: (brandId: string) => Promise<string>;

  private async render(req: IncomingMessage, res: ServerResponse, brandId: string, status: number, returnTo: string, error: string): Promise<void> {
    // Only what has a Brand id's form is looked up.
    const name = (this.brandName && /^[A-Za-z0-9_-]{1,64}$/.test(brandId) ? await this.brandName(brandId).catch(() => "") : "") || brandId;
    const body = page(name, this.brandUser(req, brandId), returnTo, error);
    res.writeHead(status, {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": this.csp,
      "X-Frame-Options": "DENY",
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
      "Content-Length": Buffer.byteLength(body),
    });
    res.end(body);
  }

  private sign(brandId: string, user: string, exp: string): string {
    return createHmac("sha256", this.key).update(brandId + "\0" + user + "\0" + exp).digest("base64url");
  }
}

/** cookieValue is the value of the first cookie of that name in a Cookie header, or "". */
export function cookieValue(header: string, name: string): string {
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return "";
}

/** returnPath is the path and query of return_to when it names this Brand's consent or connected-apps page; empty means the connected-apps page. */
export function returnPath(raw: string, brandId: string): string | undefined {
  const base = "/a2a/" + brandId + "/oauth/";
  if (raw === "") return "/a2a/" + encodeURIComponent(brandId) + "/oauth/connected";
  let u: URL;
  try {
    u = new URL(raw, "http://relative.invalid");
  } catch {
    return undefined;
  }
  const path = unescapeSegment(u.pathname);
  if (path !== base + "consent" && path !== base + "connected") return undefined;
  return u.pathname + u.search;
}

function validUser(u: string): boolean {
  return /^[a-z0-9._-]{1,64}$/.test(u);
}

/**
 * cookieName is the name of a Brand's sign-in cookie. A Brand id may hold
 * any character, a cookie name only an HTTP token's, so the name carries a
 * hash of the id (a non-ASCII id in a login path once made Set-Cookie throw).
 */
export function cookieName(brandId: string): string {
  return "demo_session_" + createHash("sha256").update(brandId).digest("base64url").slice(0, 22);
}
