import type { IncomingMessage, ServerResponse } from "node:http";

/** maxFormBytes bounds a page form's body (consent decisions, sign-in). */
export const maxFormBytes = 16 << 10;

/**
 * drainBytes is how much of an oversized body is still read (and
 * discarded) so that the connection stays usable for the next request; a
 * longer rest closes the connection after the answer instead. Either way a
 * keep-alive client never waits on a connection whose unread body would be
 * taken for its next request (RFC 9112 §9.3).
 */
export const drainBytes = 256 << 10;

/** tooLarge is readBody's answer for a body over its bound. */
export const tooLarge = Symbol("body too large");

/**
 * readBody reads a request body of at most limit bytes. It resolves
 * tooLarge when the body is larger: then the rest of the body has been read
 * and discarded (up to drainBytes), or the answer the caller writes next
 * carries "Connection: close" and the connection is closed once it is sent.
 * It resolves undefined when the body cannot be read (the client went away,
 * or something else read it first). It never rejects.
 */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer | typeof tooLarge | undefined> {
  return new Promise((resolve) => {
    if (req.readableEnded) {
      // Someone read it before us (in Express: a body parser mounted before the middleware).
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let n = 0;
    let over = false;
    let done = false;
    const finish = (v: Buffer | typeof tooLarge | undefined) => {
      if (done) return;
      done = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      resolve(v);
    };
    const onData = (chunk: Buffer) => {
      n += chunk.length;
      if (!over && n <= limit) {
        chunks.push(chunk);
        return;
      }
      if (!over) {
        over = true;
        chunks.length = 0;
      }
      if (n > limit + drainBytes) {
        // Too much to read through: stop reading and close after the answer.
        closeAfterAnswer(req, res);
        finish(tooLarge);
      }
    };
    const onEnd = () => finish(over ? tooLarge : Buffer.concat(chunks));
    const onError = () => {
      closeAfterAnswer(req, res);
      finish(undefined);
    };
    const onClose = () => finish(undefined);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

/**
 * closeAfterAnswer makes the answer to req the connection's last: it says
 * "Connection: close", the server ends the connection once it is sent, and
 * the unread rest of the request is never parsed as a request.
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  req.pause();
  if (!res.headersSent) res.setHeader("Connection", "close");
  res.shouldKeepAlive = false;
  res.once("finish", () => req.socket?.destroySoon?.());
}
