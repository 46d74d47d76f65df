// Reading back what @a2a-js/sdk writes to the response of a turn the
// middleware handed it. The SDK writes to the same ServerResponse the PA is
// waiting on (Express passes one res down its chain), so its writes are
// intercepted on that object: while the SDK runs, and afterwards for every
// call made from the SDK's own async context (AsyncLocalStorage), they go
// to a private copy, never to the PA. The middleware then writes PACT's
// answer with the response's real methods.
import { AsyncLocalStorage } from "node:async_hooks";
import type { OutgoingHttpHeader, ServerResponse } from "node:http";

/** Captured is the SDK's answer: its status, its body (as UTF-8), and whether the body passed the bound (and was cut). */
export interface Captured {
  status: number;
  body: string;
  overflow: boolean;
}

const scope = new AsyncLocalStorage<Capture>();

type Method = (...args: unknown[]) => unknown;

/**
 * Capture intercepts one response's writes for the SDK. Create it before
 * handing the request on, run the SDK with run(), read answered, and call
 * stop() once the SDK is done or has given up on.
 */
export class Capture {
  /** answered resolves with the SDK's answer when it ends the response. */
  readonly answered: Promise<Captured>;
  private resolve!: (c: Captured) => void;
  private capturing = true;
  private ended = false;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private overflow = false;
  private status: number | undefined;
  private readonly headers = new Map<string, OutgoingHttpHeader>();
  private readonly savedStatus: number;

  constructor(
    private readonly res: ServerResponse,
    private readonly limit: number,
  ) {
    this.answered = new Promise((r) => (this.resolve = r));
    this.savedStatus = res.statusCode;
    this.install();
  }

  /** run calls f (the rest of the Express chain: the SDK) in this capture's scope. */
  run(f: () => void): void {
    scope.run(this, f);
  }

  /** stop ends the SDK's turn: from now on only calls from the SDK's own context are intercepted (and dropped). */
  stop(): void {
    this.capturing = false;
    this.res.statusCode = this.savedStatus;
  }

  /** mine reports whether a call on the response is the SDK's. */
  private mine(): boolean {
    return this.capturing || scope.getStore() === this;
  }

  private take(chunk: unknown, encoding: unknown): void {
    if (chunk === undefined || chunk === null || typeof chunk === "function" || this.ended) return;
    let b: Buffer;
    if (typeof chunk === "string") b = Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
    else if (chunk instanceof Uint8Array) b = Buffer.from(chunk);
    else return;
    if (this.overflow) return;
    this.size += b.length;
    if (this.size > this.limit) {
      this.overflow = true;
      this.chunks.length = 0;
      return;
    }
    this.chunks.push(b);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.capturing = false;
    this.resolve({ status: this.status ?? this.res.statusCode, body: Buffer.concat(this.chunks).toString("utf8"), overflow: this.overflow });
  }

  private install(): void {
    const res = this.res as unknown as Record<string, Method>;
    const hook = (name: string, impl: Method) => {
      const orig = res[name];
      if (typeof orig !== "function") return;
      const cap = this;
      res[name] = function (this: unknown, ...args: unknown[]) {
        return cap.mine() ? impl(...args) : orig.apply(this, args);
      };
    };
    const self = this.res;
    const cb = (args: unknown[]) => {
      const f = args.findLast((a) => typeof a === "function") as (() => void) | undefined;
      if (f) queueMicrotask(f);
    };
    hook("setHeader", (name, value) => {
      this.headers.set(String(name).toLowerCase(), value as OutgoingHttpHeader);
      return self;
    });
    hook("appendHeader", (name, value) => {
      const k = String(name).toLowerCase();
      const prev = this.headers.get(k);
      const add = Array.isArray(value) ? value.map(String) : [String(value)];
      this.headers.set(k, prev === undefined ? add : [...(Array.isArray(prev) ? prev : [String(prev)]), ...add]);
      return self;
    });
    hook("getHeader", (name) => this.headers.get(String(name).toLowerCase()));
    hook("getHeaders", () => Object.fromEntries(this.headers));
    hook("getHeaderNames", () => [...this.headers.keys()]);
    hook("hasHeader", (name) => this.headers.has(String(name).toLowerCase()));
    hook("removeHeader", (name) => {
      this.headers.delete(String(name).toLowerCase());
    });
    hook("writeHead", (status) => {
      if (typeof status === "number") this.status = status;
      return self;
    });
    hook("flushHeaders", () => undefined);
    hook("writeContinue", () => undefined);
    hook("addTrailers", () => undefined);
    hook("write", (...args) => {
      this.take(args[0], args[1]);
      cb(args);
      return true;
    });
    hook("end", (...args) => {
      this.take(args[0], args[1]);
      cb(args);
      this.finish();
      return self;
    });
  }
}
