// The small web helpers of the demo sign-in, each as Go's standard library
// does it, so this sign-in answers as frontends/demo's does.
import type { IncomingMessage, ServerResponse } from "node:http";
import { posix } from "node:path";
import { createClient, type Transport } from "@connectrpc/connect";
import { BrandService } from "@pactd/a2a/gen/pact/v1/brand_pb";

/** maxFormBytes bounds the sign-in form's body, as frontends/demo's. */
export const maxFormBytes = 8 << 10;

/** esc escapes text for HTML text and attribute values, as Go's html/template does. */
export function esc(s: string | undefined): string {
  return (s ?? "").replace(/[&<>"'+\0]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;", "+": "&#43;", "\0": "\uFFFD" })[c]!);
}

/** queryEscape is Go's url.QueryEscape (space as '+'). */
export const queryEscape = (s: string): string =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase()).replace(/%20/g, "+");

/** unescapeSegment percent-decodes one path segment (or a form field); undefined for a bad escape. */
export function unescapeSegment(s: string): string | undefined {
  if (!s.includes("%")) return s;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < s.length; ) {
    if (s[i] === "%") {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 3;
      continue;
    }
    const ch = String.fromCodePoint(s.codePointAt(i)!);
    bytes.push(...enc.encode(ch));
    i += ch.length;
  }
  // ignoreBOM: a leading U+FEFF is content (as in Go's url.PathUnescape), not a byte order mark to drop.
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array(bytes));
}

/**
 * readForm reads a urlencoded POST form of at most maxFormBytes: "too
 * large" past the bound, undefined when it cannot be read or parsed. After
 * either, the answer is the connection's last (what is left of the body is
 * never read as a next request).
 */
export function readForm(req: IncomingMessage, res: ServerResponse): Promise<Map<string, string[]> | "too large" | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let n = 0;
    const done = (v: Map<string, string[]> | "too large" | undefined) => {
      req.off("data", onData).off("end", onEnd).off("error", onFail).off("close", onFail);
      if (v === undefined || v === "too large") {
        req.pause();
        res.shouldKeepAlive = false;
      }
      resolve(v);
    };
    const onData = (c: Buffer) => {
      n += c.length;
      if (n > maxFormBytes) return done("too large");
      chunks.push(c);
    };
    const onEnd = () => done(parseForm(Buffer.concat(chunks).toString("utf8"), req.headers["content-type"] ?? ""));
    const onFail = () => done(undefined);
    if (req.readableEnded) return done(undefined);
    req.on("data", onData).on("end", onEnd).on("error", onFail).on("close", onFail);
  });
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

/** redirect answers a 303 as Go's http.Redirect does: a relative target is resolved against the request path. */
export function redirect(req: IncomingMessage, res: ServerResponse, to: string): void {
  let loc = to;
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(to) && !to.startsWith("//")) {
    const target = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? "/";
    const reqPath = new URL("http://x" + target).pathname;
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
  res.writeHead(303, headers);
  res.end(body);
}

/**
 * cardNames names Brands by their display name, asking pactd
 * (GetAgentCard) over transport: DemoLogin's brandName. A Brand pactd does
 * not know, or a failed call, is "".
 */
export function cardNames(transport: Transport): (brandId: string) => Promise<string> {
  const brands = createClient(BrandService, transport);
  return async (brandId) => {
    try {
      return (await brands.getAgentCard({ brandId })).displayName;
    } catch {
      return "";
    }
  };
}
