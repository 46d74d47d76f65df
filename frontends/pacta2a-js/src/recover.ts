import type { IncomingMessage, ServerResponse } from "node:http";

/** Logger receives one line per fault: a message and its fields (never a header value, token or body). */
export type Logger = (msg: string, fields: Record<string, unknown>) => void;

/** RequestHandler is a node:http request handler, synchronous or not. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** safeLogger is log made safe to call: a logger's own failure never stops an answer. */
export function safeLogger(log: Logger | undefined): Logger {
  return (msg, fields) => {
    try {
      log?.(msg, fields);
    } catch {
      // dropped: the answer matters more than the log line
    }
  };
}

/** errorText is an error's message for a log line. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** stackText is an error's stack (or its text) for the one log line of an unexpected failure. */
export function stackText(err: unknown): string {
  return err instanceof Error && err.stack ? err.stack : String(err);
}

/**
 * bare answers status with no body (the framing headers aside) and
 * Cache-Control: no-store. Once the answer had begun it closes the
 * connection instead, so a client never takes half an answer for a whole
 * one.
 */
export function bare(res: ServerResponse, status: number): void {
  if (res.writableEnded) return;
  try {
    if (res.headersSent) throw new Error("the answer had begun");
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    res.writeHead(status, ["Cache-Control", "no-store", "Content-Length", "0"]);
    res.end();
  } catch {
    res.destroy();
  }
}

/** requestPath is the request's path without its query (which may hold codes: never logged). */
export function requestPath(req: IncomingMessage): string {
  const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? "";
  return url.split("?", 1)[0] ?? "";
}

/**
 * recover wraps a node:http request handler so that nothing it throws or
 * rejects escapes into the server (where it would stop the process and
 * every Brand with it): a failure is logged once with its stack and
 * answered with a bare 500, or the connection is closed if the answer had
 * begun.
 */
export function recover(h: RequestHandler, log?: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  const logger = safeLogger(log);
  return (req, res) => {
    let p: Promise<unknown>;
    try {
      p = Promise.resolve(h(req, res));
    } catch (err) {
      p = Promise.reject(err);
    }
    p.catch((err: unknown) => {
      logger("request failed", { method: req.method, path: requestPath(req), error: stackText(err) });
      bare(res, 500);
    });
  };
}

/**
 * errorHandler is recover for Express: mounted last (app.use(errorHandler(log))),
 * it logs a failure of the chain once with its stack and answers a bare
 * 500, instead of Express's default page, which shows the stack.
 */
export function errorHandler(log?: Logger): (err: unknown, req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  const logger = safeLogger(log);
  return (err, req, res, _next) => {
    logger("request failed", { method: req.method, path: requestPath(req), error: stackText(err) });
    bare(res, 500);
  };
}
