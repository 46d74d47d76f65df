/**
 * hdtp-js-example: an HDTP / PACT 2 host on @modelcontextprotocol/sdk with
 * pactd behind it (@pactd/hdtp-host), configured by the same environment
 * as frontends/hdtp-go-example: HDTP_LISTEN, PACTD_URL,
 * PACT_FRONTEND_TOKEN, HDTP_IDENTITIES, HDTP_CALENDAR, HDTP_TLS_CERT and
 * HDTP_TLS_KEY, HDTP_CA_FILE, HDTP_ROUTES (development only), AGENT_LISTEN
 * and AGENT_TOKEN (the agent's side door: POST /call, POST /deliver).
 */
import { readFileSync } from "node:fs";
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttps } from "node:https";
import { fromJson } from "@bufbuild/protobuf";
import { Host, MAX_BODY_BYTES, OutboundCallSchema, readBounded, type Result } from "@pactd/hdtp-host";
import { availabilityTool, type Calendars } from "./calendar.js";

const env = process.env;

async function main(): Promise<void> {
  const token = env["PACT_FRONTEND_TOKEN"] ?? "";
  const routes: Record<string, string> = {};
  for (const kv of (env["HDTP_ROUTES"] ?? "").split(",").filter(Boolean)) {
    const [name, to] = kv.trim().split("=");
    if (name && to) routes[`${name}:443`] = to;
  }
  const host = new Host({
    pactdUrl: env["PACTD_URL"] || "http://127.0.0.1:7070", token, name: "hdtp-js-example",
    tools: [availabilityTool(JSON.parse(env["HDTP_CALENDAR"] || "{}") as Calendars)],
    ca: env["HDTP_CA_FILE"] ? readFileSync(env["HDTP_CA_FILE"], "utf8") : undefined,
    routes: Object.keys(routes).length ? routes : undefined,
    log: (msg, fields) => console.error(JSON.stringify({ msg, ...fields })),
  });
  for (const id of (env["HDTP_IDENTITIES"] ?? "").split(",").filter(Boolean)) await host.declareTools(id);

  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const p = (req.url ?? "/").startsWith("/i/") ? host.serveInvite(req, res) : host.handle(req, res);
    p.catch((err: unknown) => {
      console.error(JSON.stringify({ msg: "request failed", error: String(err) }));
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  };
  const [lhost, lport] = splitListen(env["HDTP_LISTEN"] || "127.0.0.1:8443");
  const server = env["HDTP_TLS_CERT"]
    ? createHttps({ cert: readFileSync(env["HDTP_TLS_CERT"]), key: readFileSync(env["HDTP_TLS_KEY"] ?? "") }, serve)
    : createHttp(serve);
  server.headersTimeout = 10_000;
  server.listen(lport, lhost, () => {
    const a = server.address();
    console.log(`hdtp-js-example serving on ${typeof a === "object" && a ? `${a.address}:${a.port}` : a}`);
  });

  if (env["AGENT_LISTEN"]) {
    const agentToken = env["AGENT_TOKEN"] ?? "";
    if (!agentToken) throw new Error("AGENT_LISTEN needs AGENT_TOKEN");
    const side = createHttp((req, res) => void sideDoor(host, agentToken, req, res));
    const [ah, ap] = splitListen(env["AGENT_LISTEN"]);
    side.listen(ap, ah, () => {
      const a = side.address();
      console.log(`agent side door on http://${typeof a === "object" && a ? `${a.address}:${a.port}` : a}`);
    });
  }
}

/**
 * sideDoor is the agent's way out (a bearer token, on loopback): POST /call
 * {identity_id, contact_root, tool, arguments}, POST /deliver with an
 * OutboundCall's JSON form; both answer {"result","sealed"} or {"refusal"}.
 */
async function sideDoor(host: Host, token: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const json = (status: number, v: unknown): void => {
    res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(v) + "\n");
  };
  if (req.method !== "POST" || req.headers.authorization !== "Bearer " + token) return void res.writeHead(404).end("not found\n");
  const body = await readBounded(req, MAX_BODY_BYTES);
  if (body === null) return void res.writeHead(413).end();
  try {
    let r: Result;
    if (req.url === "/call") {
      const c = JSON.parse(body.toString("utf8")) as { identity_id: string; contact_root: string; tool: string; arguments?: unknown };
      r = await host.call(c.identity_id, c.contact_root, c.tool, c.arguments);
    } else if (req.url === "/deliver") {
      r = await host.deliver(fromJson(OutboundCallSchema, JSON.parse(body.toString("utf8"))));
    } else {
      return void res.writeHead(404).end("not found\n");
    }
    if (r.refusal) {
      const f = r.refusal;
      return json(200, { refusal: { code: f.code, retry_after: f.retryAfter, data: f.data ?? null, local: f.local, reason: f.reason } });
    }
    return json(200, { result: r.json, sealed: r.sealed });
  } catch (err) {
    return json(502, { error: String(err) });
  }
}

function splitListen(s: string): [string, number] {
  const i = s.lastIndexOf(":");
  return [s.slice(0, i), Number(s.slice(i + 1))];
}

main().catch((err: unknown) => {
  console.error("hdtp-js-example:", err);
  process.exit(1);
});
