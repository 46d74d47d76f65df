// A raw HTTP/1.1 client on one TCP socket, for tests of what happens to a
// keep-alive connection: responses are read as bytes with a bounded wait.
import { connect, type Socket } from "node:net";

/** RawResponse is one response read off the socket. */
export interface RawResponse {
  status: number;
  /** lines are the header lines as sent, in order. */
  lines: string[];
  /** headers are the header fields by lower-case name (the last of a repeated one). */
  headers: Map<string, string>;
  body: string;
  bytes: Buffer;
}

/** RawConn is one TCP connection to the server under test. */
export class RawConn {
  private buf = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  /** closed is set once the server ended or reset the connection. */
  closed = false;

  private constructor(private readonly sock: Socket) {
    sock.on("data", (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.waiting?.();
    });
    const gone = () => {
      this.closed = true;
      this.waiting?.();
    };
    sock.on("end", gone);
    sock.on("close", gone);
    sock.on("error", gone);
  }

  static open(url: string): Promise<RawConn> {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      const s = connect(Number(u.port), u.hostname, () => resolve(new RawConn(s)));
      s.once("error", reject);
    });
  }

  /** write sends bytes; it resolves once they are handed to the kernel (or the socket is gone). */
  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.sock.destroyed) return resolve();
      this.sock.write(data, () => resolve());
    });
  }

  /**
   * response reads the next response (Content-Length framed), or undefined
   * if none is complete within ms or the connection closed first.
   */
  async response(ms: number): Promise<RawResponse | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = this.parse();
      if (r) return r;
      if (this.closed) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.waiting = undefined;
    }
  }

  /** waitClosed resolves true once the server closed the connection, false if it is still open after ms. */
  async waitClosed(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed;
  }

  destroy(): void {
    this.sock.destroy();
  }

  private parse(): RawResponse | undefined {
    const end = this.buf.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    const head = this.buf.subarray(0, end).toString("latin1").split("\r\n");
    const status = Number(head[0]!.split(" ")[1]);
    const headers = new Map<string, string>();
    for (const line of head.slice(1)) {
      const i = line.indexOf(":");
      headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
    }
    const n = Number(headers.get("content-length") ?? "0");
    if (this.buf.length < end + 4 + n) return undefined;
    const bytes = Buffer.from(this.buf.subarray(end + 4, end + 4 + n));
    this.buf = this.buf.subarray(end + 4 + n);
    return { status, lines: head.slice(1), headers, body: bytes.toString("utf8"), bytes };
  }
}

/** request is one HTTP/1.1 request's bytes; the body's length is declared unless contentLength says otherwise. */
export function request(method: string, path: string, headers: string[], body = "", contentLength?: number): string {
  const lines = [`${method} ${path} HTTP/1.1`, "Host: test", ...headers, `Content-Length: ${contentLength ?? Buffer.byteLength(body)}`];
  return lines.join("\r\n") + "\r\n\r\n" + body;
}
