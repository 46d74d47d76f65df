// The library's shape, as the contract fixes it (docs/frontends.md): its
// modules, no import cycle between them, and at most 1,200 lines of
// non-generated code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const src = fileURLToPath(new URL("../../src", import.meta.url));

/** sources are the library's non-generated modules: path relative to src → text. */
function sources(dir = src, rel = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== "gen") for (const [k, v] of sources(p, rel + name + "/")) out.set(k, v);
    } else if (name.endsWith(".ts")) out.set(rel + name, readFileSync(p, "utf8"));
  }
  return out;
}

/** imports are a module's relative imports (import, import type, export … from), as module paths. */
export function imports(file: string, text: string): string[] {
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/") + 1) : "";
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"|^\s*import\s+"(\.{1,2}\/[^"]+)"/gms)) {
    const spec = (m[1] ?? m[2])!;
    const parts = (dir + spec).split("/");
    const norm: string[] = [];
    for (const p of parts) {
      if (p === "." || p === "") continue;
      if (p === "..") norm.pop();
      else norm.push(p);
    }
    out.push(norm.join("/").replace(/\.js$/, ".ts"));
  }
  return out;
}

/** cycle is one import cycle of graph (module → modules it imports), or undefined. */
export function cycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === "done") return undefined;
    if (state.get(n) === "open") return [...path.slice(path.indexOf(n)), n];
    state.set(n, "open");
    path.push(n);
    for (const m of graph.get(n) ?? []) {
      if (!graph.has(m)) continue; // outside the graph (generated code)
      const c = visit(m);
      if (c) return c;
    }
    path.pop();
    state.set(n, "done");
    return undefined;
  };
  for (const n of graph.keys()) {
    const c = visit(n);
    if (c) return c;
  }
  return undefined;
}

test("the cycle check finds a planted cycle, and passes a graph without one", () => {
  const planted = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts", "gen/x.ts"]], ["c.ts", ["a.ts"]], ["d.ts", ["a.ts"]]]);
  assert.deepEqual(cycle(planted), ["a.ts", "b.ts", "c.ts", "a.ts"]);
  assert.deepEqual(cycle(new Map([["self.ts", ["self.ts"]]])), ["self.ts", "self.ts"]);
  assert.equal(cycle(new Map([["a.ts", ["b.ts", "c.ts"]], ["b.ts", ["c.ts"]], ["c.ts", []]])), undefined);
  assert.deepEqual(imports("x/a.ts", 'import type { T } from "../b.js";\nexport {\n  y,\n} from "./c.js";\nimport "./d.js";\nimport { z } from "node:fs";'),
    ["b.ts", "x/c.ts", "x/d.ts"]);
});

test("the library's modules are the contract's, import no cycle, and stay within 1,200 lines", () => {
  const files = sources();
  assert.deepEqual([...files.keys()], [
    "agent.ts", "client.ts", "frontdoor.ts", "guard.ts", "index.ts", "recover.ts", "sdk.ts", "sessions.ts", "settings.ts", "taskstore.ts",
  ]);
  const graph = new Map([...files].map(([f, text]) => [f, imports(f, text)]));
  assert.ok(graph.get("index.ts")!.length >= 7, "the walk reads index.ts's exports");
  assert.equal(cycle(graph), undefined, "an import cycle: " + cycle(graph)?.join(" → "));
  // The root entry works without the optional @a2a-js/sdk (its declarations too): only "@pactd/a2a/sdk" needs it.
  const reached = new Set<string>();
  const walk = (f: string) => {
    if (reached.has(f) || !files.has(f)) return;
    reached.add(f);
    for (const m of graph.get(f)!) walk(m);
  };
  walk("index.ts");
  const sdkUsers = [...files].filter(([, text]) => /from\s+"@a2a-js\/sdk/.test(text)).map(([f]) => f);
  assert.deepEqual(sdkUsers, ["sdk.ts", "taskstore.ts"], "the control: the walk sees who imports the SDK");
  assert.deepEqual(sdkUsers.filter((f) => reached.has(f)), [], "the root entry reaches @a2a-js/sdk");
  let lines = 0;
  for (const text of files.values()) lines += text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  process.stdout.write(`# non-generated lines in src/: ${lines}\n`);
  assert.ok(lines <= 1200, `${lines} lines of non-generated code in src/`);
});
