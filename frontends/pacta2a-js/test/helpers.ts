// Test helpers: a fake pactd that implements FrontDoorService with the
// generated descriptors (answers chosen by each test), a frontend of
// @pactd/a2a in front of it, and a plain HTTP client.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createH2cServer, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  FrontDoorService,
  type FinishTurnRequest,
  type FinishTurnResponseSchema,
  type ServeRequest,
  type ServeResponseSchema,
  HttpResponseSchema,
} from "../src/gen/pact/v1/frontdoor_pb.js";
import { FrontDoor, type FrontDoorConfig } from "../src/frontdoor.js";
import { pactdTransport, type TransportKind } from "../src/client.js";
import { recover } from "../src/recover.js";

export const frontendToken = "frontend-secret-token";

export type ServeAnswer = MessageInitShape<typeof ServeResponseSchema>;
export type FinishAnswer = MessageInitShape<typeof FinishTurnResponseSchema>;

/** Pactd is the fake pactd: what it was asked, and how it answers (set by the test). */
export interface Pactd {
  url: string;
  serves: ServeRequest[];
  finishes: FinishTurnRequest[];
  /** headers are the request headers of each call (traceparent, Authorization). */
  headers: Headers[];
  serve: (req: ServeRequest) => ServeAnswer | Promise<ServeAnswer>;
  finishTurn: (req: FinishTurnRequest) => FinishAnswer | Promise<FinishAnswer>;
  close(): Promise<void>;
}

/** response is a ServeResponse with a finished HTTP response. */
export function response(status: number, headers: [string, string][] = [], body: string | Uint8Array = ""): ServeAnswer {
  return { outcome: { case: "response", value: httpResponse(status, headers, body) } };
}

export function httpResponse(status: number, headers: [string, string][] = [], body: string | Uint8Array = "") {
  return create(HttpResponseSchema, {
    status,
    headers: headers.map(([name, value]) => ({ name, value })),
    body: typeof body === "string" ? Buffer.from(body) : body,
  });
}

function listen(s: Server): Promise<string> {
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve("http://127.0.0.1:" + (s.address() as AddressInfo).port)));
}

/**
 * fakePactd serves FrontDoorService, on HTTP/1.1 for "connect" and
 * "grpc-web", on h2c (prior knowledge, as pactd) for "connect-h2" and
 * "grpc". It refuses a call without the frontend credential
 * (Unauthenticated). By default Serve answers 200 "ok" and FinishTurn 200
 * with the reply's text.
 */
export async function fakePactd(kind: TransportKind = "connect"): Promise<Pactd> {
  const p = {
    serves: [], finishes: [], headers: [],
    serve: () => response(200, [["Content-Type", "text/plain"]], "ok"),
    finishTurn: (req: FinishTurnRequest) =>
      ({ response: httpResponse(200, [], req.result.case === "reply" ? req.result.value.text : JSON.stringify(req.result)) }),
  } as unknown as Pactd;
  const auth = (hc: HandlerContext) => {
    p.headers.push(hc.requestHeader);
    if (hc.requestHeader.get("Authorization") !== "Bearer " + frontendToken) throw new ConnectError("no frontend credential", Code.Unauthenticated);
  };
  const routes = (r: ConnectRouter) => {
    r.service(FrontDoorService, {
      async serve(req, hc) {
        auth(hc);
        p.serves.push(req);
        return p.serve(req);
      },
      async finishTurn(req, hc) {
        auth(hc);
        p.finishes.push(req);
        return p.finishTurn(req);
      },
    });
  };
  const adapter = connectNodeAdapter({ routes });
  const handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) =>
    adapter(req as IncomingMessage, res as ServerResponse);
  const h2 = kind === "connect-h2" || kind === "grpc";
  const srv = (h2 ? createH2cServer(handler) : createServer(handler)) as unknown as Server;
  const sessions = new Set<{ destroy(): void }>();
  srv.on("session", (s: { destroy(): void }) => sessions.add(s));
  p.url = await listen(srv);
  p.close = async () => {
    if ("closeAllConnections" in srv) srv.closeAllConnections();
    for (const s of sessions) s.destroy();
    await new Promise((r) => srv.close(r));
  };
  return p;
}

/** Env is a frontend (a node:http server running FrontDoor.handle under recover) in front of a fake pactd. */
export interface Env {
  url: string;
  pactd: Pactd;
  door: FrontDoor;
  logs: { msg: string; fields: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** newEnv starts a fake pactd and the frontend; cfg is the FrontDoor's config less its transport and logger. */
export async function newEnv(cfg: Omit<FrontDoorConfig, "transport" | "logger"> = {}, kind: TransportKind = "connect"): Promise<Env> {
  const pactd = await fakePactd(kind);
  const logs: Env["logs"] = [];
  const logger = (msg: string, fields: Record<string, unknown>) => logs.push({ msg, fields });
  const door = new FrontDoor({ ...cfg, transport: pactdTransport(kind, pactd.url, frontendToken, 5000), logger });
  const srv = createServer(recover((req, res) => door.handle(req, res), logger));
  const url = await listen(srv);
  return {
    url, pactd, door, logs,
    close: async () => {
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
      await pactd.close();
    },
  };
}

export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** send makes one HTTP/1.1 request with headers given as "Name: value" strings (repeats kept). */
export function send(url: string, method: string, body = "", ...headers: string[]): Promise<Res> {
  const u = new URL(url);
  const raw: string[] = ["Host", u.host, "Content-Length", String(Buffer.byteLength(body))];
  for (const h of headers) {
    const i = h.indexOf(": ");
    raw.push(h.slice(0, i), h.slice(i + 2));
  }
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: raw, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
      res.on("close", () => res.complete || reject(new Error("the connection closed before the answer was complete")));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** until resolves once cond holds, polling every 10 ms; it rejects after ms. */
export async function until(cond: () => boolean, ms = 5000, what = "the condition"): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(what + " did not hold within " + ms + " ms");
    await new Promise((r) => setTimeout(r, 10));
  }
}
