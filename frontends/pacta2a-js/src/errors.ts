import type { ServerResponse } from "node:http";

/** contentType is the exact Content-Type of every A2A response (PACT §4). */
export const contentType = "application/a2a+json";

/**
 * A2AError is an A2A error this frontend writes itself, before or without
 * pactd. Errors about conversations come from pactd ready-made
 * (A2AError.body_json); this is the small copy any frontend needs (PACT §6).
 */
export class A2AError {
  constructor(
    readonly httpStatus: number,
    readonly status: string,
    readonly reason: string,
    readonly message: string,
  ) {}

  /** body is the AIP-193 envelope. */
  body(): string {
    return marshal({
      error: {
        code: this.httpStatus,
        status: this.status,
        message: this.message,
        details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: this.reason, domain: "a2a-protocol.org" }],
      },
    });
  }

  write(res: ServerResponse): void {
    writeA2A(res, this.httpStatus, this.body());
  }
}

export const invalidParams = (msg: string) => new A2AError(400, "INVALID_ARGUMENT", "INVALID_PARAMS", msg);
export const contentTypeNotSupported = (msg: string) =>
  new A2AError(400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", msg);
export const unsupportedOperation = (msg: string) =>
  new A2AError(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", msg);
export const pushNotSupported = () =>
  new A2AError(400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notifications are not supported");
export const taskNotFound = (msg: string) => new A2AError(404, "NOT_FOUND", "TASK_NOT_FOUND", msg);
export const internalError = () => new A2AError(500, "INTERNAL", "INTERNAL", "Internal error");

/** writeA2A sends an A2A response body. */
export function writeA2A(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

/** bare sends a status with no body: unmatched routes, an unknown Brand and refused PA JWTs are not A2A errors. */
export function bare(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "Content-Length": 0 });
  res.end();
}

/**
 * marshal is JSON.stringify, with U+2028 and U+2029 escaped as the Go
 * frontend's encoder does, so bytes that echo client input match.
 */
export function marshal(v: unknown): string {
  return JSON.stringify(v).replace(/[\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16));
}
