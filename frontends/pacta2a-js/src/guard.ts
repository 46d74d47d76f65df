import type { IncomingMessage, ServerResponse } from "node:http";
import { answerInternal, errorText, requestPath, type Logger } from "./handler.js";

/** RequestHandler is a node:http request handler, synchronous or not. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * guard wraps a node:http request handler so that nothing it throws or
 * rejects escapes into the server (where it would stop the process and
 * every Brand with it): a failure is logged once and answered 500, as A2A
 * INTERNAL under /a2a/, or the connection is closed if the answer had begun.
 */
export function guard(h: RequestHandler, log: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let p: Promise<unknown>;
    try {
      p = Promise.resolve(h(req, res));
    } catch (err) {
      p = Promise.reject(err);
    }
    p.catch((err: unknown) => {
      const path = requestPath(req);
      try {
        log("request failed", { path, error: errorText(err) });
      } catch {
        // a logger's own failure must not stop the answer
      }
      answerInternal(res, path.startsWith("/a2a/"));
    });
  };
}
