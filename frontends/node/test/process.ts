// Starts a built frontend program as its own process, as the e2e suite
// does, with pactd unreachable: enough to see that no request stops it.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";

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

/** startProgram runs `node main` with the settings of docs/frontends.md and waits for its "pact-a2a serving" line. */
export async function startProgram(main: string): Promise<Program> {
  const port = await freePort();
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, A2A_LISTEN: "127.0.0.1:" + port, PACTD_URL: "http://127.0.0.1:9", PACT_FRONTEND_TOKEN: "t", A2A_DEMO: "true" },
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
