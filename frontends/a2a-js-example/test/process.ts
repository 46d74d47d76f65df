// Starts a built frontend program as its own process, as the e2e suite
// does, in front of a fake pactd (FrontDoorService) or none at all.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer as createHttpServer } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { FrontDoorService, type FinishTurnRequest, type ServeRequest, type ServeResponseSchema } from "@pactd/a2a/gen/pact/v1/frontdoor_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";

/** Program is a running frontend process. */
export interface Program {
  url: string;
  child: ChildProcess;
  exited: boolean;
  stop(): Promise<number | null>;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** frontendToken is the credential the programs are started with. */
export const frontendToken = "frontend-token-for-tests";

/** Pactd is a fake pactd: Serve answers with serve, FinishTurn with the SDK's answer's body, or the turn's result as JSON. */
export interface Pactd {
  url: string;
  serves: ServeRequest[];
  finishes: FinishTurnRequest[];
  serve: (req: ServeRequest) => MessageInitShape<typeof ServeResponseSchema>;
  close(): Promise<void>;
}

export async function fakePactd(): Promise<Pactd> {
  const p = { serves: [], finishes: [], serve: () => ({}) } as unknown as Pactd;
  const srv = createHttpServer(connectNodeAdapter({
    routes: (r) => r.service(FrontDoorService, {
      serve(req, hc) {
        if (hc.requestHeader.get("authorization") !== "Bearer " + frontendToken) throw new Error("no credential");
        p.serves.push(req);
        return p.serve(req);
      },
      finishTurn(req) {
        p.finishes.push(req);
        const r = req.result;
        const body = r.case === "sdkAnswer" ? r.value.body : Buffer.from(JSON.stringify(r));
        return { response: { status: 200, headers: [{ name: "Content-Type", value: "application/json" }], body } };
      },
    }),
  }));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  p.url = "http://127.0.0.1:" + (srv.address() as AddressInfo).port;
  p.close = async () => {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  };
  return p;
}

/**
 * startProgram runs `node main` with the settings of docs/frontends.md (pactd
 * at pactdUrl, unreachable by default) and waits for its "pact-a2a serving"
 * line.
 */
export async function startProgram(main: string, pactdUrl = "http://127.0.0.1:9", env: Record<string, string> = {}): Promise<Program> {
  const port = await freePort();
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, A2A_LISTEN: "127.0.0.1:" + port, PACTD_URL: pactdUrl, PACT_FRONTEND_TOKEN: frontendToken, A2A_DEMO: "true", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const p: Program = {
    url: "http://127.0.0.1:" + port, child, exited: false,
    stop: () => new Promise((resolve) => {
      if (p.exited) return resolve(child.exitCode);
      child.once("exit", (code) => resolve(code));
      child.kill("SIGTERM");
    }),
  };
  child.once("exit", () => (p.exited = true));
  let log = "";
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("no serving line within 15 s:\n" + log)), 15_000);
    child.stderr!.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes('"msg":"pact-a2a serving"')) {
        clearTimeout(t);
        resolve();
      }
    });
    child.once("exit", () => reject(new Error("exited before serving:\n" + log)));
  });
  return p;
}
