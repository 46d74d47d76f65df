import type { IncomingMessage, ServerResponse } from "node:http";
import { createClient, type Transport } from "@connectrpc/connect";
import { AgentService, SelfRegistrationResult } from "./gen/pact/v1/agent_pb.js";
import { closeAfterAnswer, readBody, tooLarge } from "./body.js";
import { bare } from "./errors.js";
import { withTrace } from "./trace.js";

/** maxRegistrationBody bounds a POST /api/platforms body (as the Go frontend's MaxRegistrationBody). */
export const maxRegistrationBody = 8 << 10;

/** registrationPath is where a host mounts registrationHandler. */
export const registrationPath = "/api/platforms";

/**
 * registrationHandler serves the reference's self-service PA registration,
 * POST {public URL}/api/platforms (reference section 4.3), by asking pactd's
 * AgentService.SelfRegisterAgent, which does every check; its answers are
 * byte for byte the Go frontend's (frontends/pacta2a/register.go).
 * endpointUrl is the URL the PA must put in aud: the frontend's public base
 * URL + registrationPath. It is served without a PA JWT: the registration
 * JWT is the credential. The answer is 201, 200, 409, 400 or 401 (with
 * WWW-Authenticate: Bearer realm="platforms"), 413 for a body over
 * maxRegistrationBody, 502 when pactd cannot be asked, and 404 while
 * pactd's PACT_SELF_REGISTRATION is off.
 */
export function registrationHandler(transport: Transport, endpointUrl: string): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const agents = createClient(AgentService, transport);
  return (req, res) =>
    withTrace(req, async () => {
      if (req.method !== "POST") {
        bare(res, 405, { Allow: "POST" });
        return;
      }
      const auth = authorizations(req);
      if (auth.length !== 1 || !auth[0]!.startsWith("Bearer ")) {
        registrationError(res, 401, "token_missing");
        return;
      }
      const token = auth[0]!.slice("Bearer ".length);
      const body = await readBody(req, res, maxRegistrationBody);
      if (body === tooLarge) {
        closeAfterAnswer(req, res); // as Go's MaxBytesReader: the answer says Connection: close
        registrationError(res, 413, "body_too_large");
        return;
      }
      if (body === undefined) {
        registrationError(res, 413, "body_too_large"); // the body could not be read (Go's MaxBytesReader error answers so too)
        return;
      }
      const input = parseRegistration(body);
      if (!input) {
        registrationError(res, 400, "body_invalid");
        return;
      }
      let out;
      try {
        out = await agents.selfRegisterAgent({ token, name: input.name, jwksUri: input.jwksUri, endpointUrl });
      } catch {
        registrationError(res, 502, "pactd_unavailable");
        return;
      }
      let status: number;
      switch (out.result) {
        case SelfRegistrationResult.CREATED:
          status = 201;
          break;
        case SelfRegistrationResult.EXISTS:
          status = 200;
          break;
        case SelfRegistrationResult.CONFLICT:
          registrationError(res, 409, out.reason);
          return;
        case SelfRegistrationResult.INVALID_REQUEST:
          registrationError(res, 400, out.reason);
          return;
        case SelfRegistrationResult.INVALID_TOKEN:
          registrationError(res, 401, out.reason);
          return;
        default:
          bare(res, 404);
          return;
      }
      const a = out.agent;
      // Keys in the Go encoder's order (a map's keys sorted).
      writeJSON(res, status, {
        platform: { enabled: a?.enabled ?? false, id: a?.id ?? "", issuer: a?.issuer ?? "", jwksUri: a?.jwksUri ?? "", name: out.name },
      });
    });
}

/** authorizations are the request's Authorization header values, repeats kept (Node keeps only the first in req.headers). */
function authorizations(req: IncomingMessage): string[] {
  const v: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === "authorization") v.push(req.rawHeaders[i + 1]!);
  }
  return v;
}

/**
 * parseRegistration reads {"name", "jwksUri"} as Go's encoding/json reads it
 * into a struct: an object (or null), keys matched without regard to case
 * (Go's folding, which also takes U+017F for s and U+212A for k), members
 * in order with the last of a key winning, a null value leaving the field
 * empty, any non-string value (even one a later member replaces) refusing
 * the body, other keys ignored. It is undefined for a body that is refused.
 */
export function parseRegistration(body: Buffer): { name: string; jwksUri: string } | undefined {
  const text = body.toString("utf8");
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const out = { name: "", jwksUri: "" };
  if (v === null) return out;
  if (typeof v !== "object" || Array.isArray(v)) return undefined;
  // Every member in order, repeats kept (JSON.parse keeps only a key's last value, where Go
  // also refuses an earlier one of the wrong type).
  for (const [k, val] of members(text)) {
    const f = k.replace(/\u017f/g, "s").replace(/\u212a/g, "k").toLowerCase();
    const field = f === "name" ? "name" : f === "jwksuri" ? "jwksUri" : undefined;
    if (!field || val === null) continue;
    if (typeof val !== "string") return undefined;
    out[field] = val;
  }
  return out;
}

/**
 * members are a JSON object's members in order, repeated keys kept; text
 * must be one valid JSON object (JSON.parse accepted it), so the scan only
 * finds where each key and value ends.
 */
function members(text: string): [string, unknown][] {
  const out: [string, unknown][] = [];
  const ws = (i: number) => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
    return i;
  };
  const endOfString = (i: number) => {
    // i is at the opening quote; the result is just past the closing one.
    for (i++; text[i] !== '"'; i++) if (text[i] === "\\") i++;
    return i + 1;
  };
  let i = ws(0) + 1; // past "{"
  for (;;) {
    i = ws(i);
    if (text[i] === "}") return out;
    const k = endOfString(i);
    const key = JSON.parse(text.slice(i, k)) as string;
    const start = ws(ws(k) + 1); // past ":"
    let j = start;
    if (text[j] === '"') j = endOfString(j);
    else if (text[j] === "{" || text[j] === "[") {
      let depth = 0;
      do {
        if (text[j] === '"') {
          j = endOfString(j);
          continue;
        }
        if (text[j] === "{" || text[j] === "[") depth++;
        else if (text[j] === "}" || text[j] === "]") depth--;
        j++;
      } while (depth > 0);
    } else while (j < text.length && !",} \t\n\r".includes(text[j]!)) j++;
    out.push([key, JSON.parse(text.slice(start, j))]);
    i = ws(j);
    if (text[i] === ",") i++;
  }
}

/** registrationError answers a refusal with its reason; a 401 names the realm. */
function registrationError(res: ServerResponse, status: number, reason: string): void {
  writeJSON(res, status, { error: reason }, status === 401 ? { "WWW-Authenticate": 'Bearer realm="platforms"' } : {});
}

/**
 * writeJSON writes v as Go's json.Encoder does (HTML characters and U+2028,
 * U+2029 escaped, a final newline), so the bytes match the Go frontend's.
 */
function writeJSON(res: ServerResponse, status: number, v: unknown, headers: Record<string, string> = {}): void {
  const body =
    JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")) + "\n";
  res.writeHead(status, {
    ...headers,
    "Cache-Control": "no-store",
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}
