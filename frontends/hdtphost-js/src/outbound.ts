import { lookup } from "node:dns/promises";
import { request } from "node:https";
import type { Client } from "@connectrpc/connect";
import type { HostService, OutboundCall, OpenOutboundResultResponse } from "./gen/hdtp/v1/host_pb.js";
import type { TrustService } from "./gen/hdtp/v1/trust_pb.js";
import type { Contact } from "./gen/hdtp/v1/host_pb.js";
import { Refusal } from "./tools.js";

export type { OutboundCall };

const MAX_BODY_BYTES = 11 << 20;

/** Result is what an outbound call came to. */
export interface Result {
  /** json is the tool's result object when the call succeeded. */
  json?: Record<string, unknown>;
  /** refusal is the refusal, when refused. */
  refusal?: Refusal;
  /** sealed says whether the answer came sealed and verified. */
  sealed: boolean;
  /** contact is the contact as it stands after the answer. */
  contact?: Contact;
}

interface Peers {
  host: Client<typeof HostService>;
  trust: Client<typeof TrustService>;
  ca: string | undefined;
  routes: Record<string, string> | undefined;
}

/**
 * deliver POSTs the call's request body, byte for byte, to its endpoint
 * and gives the answer to OpenOutboundResult; a resend pactd asks for is
 * delivered in turn (pactd follows each kind at most once).
 */
export async function deliver(p: Peers, first: OutboundCall): Promise<Result> {
  let call = first;
  for (let i = 0; i < 3; i++) {
    const answer = await post(p, call);
    const opened: OpenOutboundResultResponse = await p.host.openOutboundResult({ callHandle: call.callHandle, httpStatus: answer.status, body: answer.body });
    const contact = opened.contact;
    switch (opened.outcome.case) {
      case "result":
        return { json: JSON.parse(opened.outcome.value.resultJson) as Record<string, unknown>, sealed: opened.outcome.value.sealed, contact };
      case "refusal": {
        const f = opened.outcome.value;
        return { refusal: new Refusal(f.code, f.retryAfterSeconds, f.dataJson ? JSON.parse(f.dataJson) : undefined, f.local, f.reason), sealed: false, contact };
      }
      case "resend":
        call = opened.outcome.value;
        continue;
      default:
        throw new Error("open the answer: pactd's answer has no outcome");
    }
  }
  throw new Error("deliver: pactd asked for more than two resends");
}

/**
 * post vets the endpoint's addresses with pactd's address guard, dials
 * only those (or the operator's route), and returns the answer's status
 * and JSON-RPC body (taken out of an event stream when the peer answers
 * with one).
 */
async function post(p: Peers, call: OutboundCall): Promise<{ status: number; body: Uint8Array }> {
  const url = new URL(call.endpoint);
  if (url.protocol !== "https:") throw new Error("not an https endpoint");
  const route = p.routes?.[`${url.hostname}:${url.port || "443"}`];
  const addrs = route ? [] : (await lookup(url.hostname, { all: true })).map((a) => a.address);
  const verdict = await p.trust.checkAddress({ endpoint: call.endpoint, resolvedAddresses: addrs });
  if (!verdict.valid) throw new Error(`not dialed: the address guard refuses it (${verdict.reason})`);
  const [host, port] = route ? splitHostPort(route) : [addrs[0] ?? "", Number(url.port || 443)];
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host, port, path: url.pathname, method: "POST", servername: url.hostname, ca: p.ca, timeout: 70_000,
        headers: { Host: url.host, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Content-Length": call.requestBody.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let n = 0;
        res.on("data", (c: Buffer) => {
          n += c.length;
          if (n > MAX_BODY_BYTES) return req.destroy(new Error("the answer is larger than 11 MiB"));
          chunks.push(c);
        });
        res.on("end", () => {
          let body: Uint8Array = Buffer.concat(chunks);
          if ((res.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() === "text/event-stream") {
            body = firstEventData(Buffer.from(body).toString("utf8")) ?? new Uint8Array();
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("the peer did not answer in time")));
    req.on("error", reject);
    req.end(call.requestBody);
  });
}

/**
 * firstEventData is the data of the first event of an event stream that
 * holds a JSON-RPC response (a JSON object with an id); undefined when
 * there is none.
 */
export function firstEventData(stream: string): Uint8Array | undefined {
  for (const event of stream.split(/\r\n\r\n|\n\n|\r\r/)) {
    const data = event
      .split(/\r\n|\n|\r/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    try {
      const msg = JSON.parse(data) as { id?: unknown } | null;
      if (msg !== null && typeof msg === "object" && msg.id !== undefined && msg.id !== null) return Buffer.from(data, "utf8");
    } catch {
      // not a JSON-RPC message: the next event
    }
  }
  return undefined;
}

function splitHostPort(s: string): [string, number] {
  const i = s.lastIndexOf(":");
  return [s.slice(0, i).replace(/^\[|\]$/g, ""), Number(s.slice(i + 1))];
}
