import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage } from "node:http";
import type { Interceptor } from "@connectrpc/connect";

// The caller's W3C trace context (traceparent, tracestate) goes on to every
// call to pactd made while serving its request, so pactd's spans belong to
// the PA's (or the load balancer's) trace, as in cmd/pact-a2a. The frontend
// makes no spans of its own.

interface TraceContext {
  traceparent: string;
  tracestate: string;
}

const current = new AsyncLocalStorage<TraceContext | undefined>();

/** traceContext reads a request's valid traceparent (version normalised to 00, only the sampled flag kept) and tracestate. */
export function traceContext(req: IncomingMessage): TraceContext | undefined {
  const tp = req.headers["traceparent"];
  const m = typeof tp === "string" ? /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(tp.trim()) : null;
  if (!m || m[1] === "ff" || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return undefined;
  const sampled = (parseInt(m[4]!, 16) & 1) === 1 ? "01" : "00";
  const ts = req.headers["tracestate"];
  return { traceparent: `00-${m[2]}-${m[3]}-${sampled}`, tracestate: typeof ts === "string" && ts.length <= 512 ? ts : "" };
}

/** withTrace runs f with the request's trace context as the one calls to pactd carry. */
export function withTrace<T>(req: IncomingMessage, f: () => T): T {
  return current.run(traceContext(req), f);
}

/** traceInterceptor writes the current trace context into each call to pactd. */
export const traceInterceptor: Interceptor = (next) => async (req) => {
  const t = current.getStore();
  if (t) {
    req.header.set("traceparent", t.traceparent);
    if (t.tracestate) req.header.set("tracestate", t.tracestate);
  }
  return next(req);
};
