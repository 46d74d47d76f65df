import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { traceInterceptor } from "./trace.js";

/** TransportKind selects how the frontend reaches pactd. */
export type TransportKind = "connect" | "connect-h2" | "grpc";

/** transportKinds are the values A2A_TRANSPORT / -transport accept. */
export const transportKinds: readonly TransportKind[] = ["connect", "connect-h2", "grpc"];

/**
 * pactdTransport is the transport to pactd: the Connect protocol over
 * HTTP/1.1 ("connect") or HTTP/2 ("connect-h2", h2c for http://), or gRPC
 * (always HTTP/2). Every call carries the frontend credential, a 10 s
 * deadline and the trace context of the request it serves (trace.ts).
 */
export function pactdTransport(kind: TransportKind, baseUrl: string, token: string, timeoutMs = 10_000): Transport {
  const auth: Interceptor = (next) => async (req) => {
    req.header.set("Authorization", "Bearer " + token);
    return next(req);
  };
  const common = { baseUrl, interceptors: [auth, traceInterceptor], defaultTimeoutMs: timeoutMs };
  switch (kind) {
    case "connect":
      return createConnectTransport({ ...common, httpVersion: "1.1" });
    case "connect-h2":
      return createConnectTransport({ ...common, httpVersion: "2" });
    case "grpc":
      return createGrpcTransport(common);
  }
}
