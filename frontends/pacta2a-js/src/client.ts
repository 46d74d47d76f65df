import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";

/** TransportKind selects how the frontend reaches pactd. */
export type TransportKind = "connect" | "connect-h2" | "grpc" | "grpc-web";

/** transportKinds are the values A2A_TRANSPORT / -transport accept. */
export const transportKinds: readonly TransportKind[] = ["connect", "connect-h2", "grpc", "grpc-web"];

/** defaultTimeoutMs is the deadline of one call to pactd unless the caller sets another. */
export const defaultTimeoutMs = 10_000;

/**
 * pactdTransport is the transport to pactd (one port serves all four
 * protocols): the Connect protocol over HTTP/1.1 ("connect") or HTTP/2
 * ("connect-h2", h2c for http://), gRPC (always HTTP/2), or gRPC-Web over
 * HTTP/1.1. Every call carries the frontend credential as a bearer token and
 * a deadline of timeoutMs.
 */
export function pactdTransport(kind: TransportKind, baseUrl: string, token: string, timeoutMs = defaultTimeoutMs): Transport {
  if (!token) throw new Error("pactd transport: the frontend credential is empty");
  const auth: Interceptor = (next) => (req) => {
    req.header.set("Authorization", "Bearer " + token);
    return next(req);
  };
  const common = { baseUrl, interceptors: [auth], defaultTimeoutMs: timeoutMs };
  switch (kind) {
    case "connect":
      return createConnectTransport({ ...common, httpVersion: "1.1" });
    case "connect-h2":
      return createConnectTransport({ ...common, httpVersion: "2" });
    case "grpc":
      return createGrpcTransport(common);
    case "grpc-web":
      return createGrpcWebTransport({ ...common, httpVersion: "1.1" });
    default:
      throw new Error("pactd transport: unknown kind " + JSON.stringify(kind));
  }
}
