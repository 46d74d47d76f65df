import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const source = readFileSync(fileURLToPath(new URL("../../src/main.ts", import.meta.url)), "utf8");

/** pactNames are the names the example imports from @pactd/a2a (and its sdk entry) and @pactd/demo. */
function pactNames(): string[] {
  const names: string[] = [];
  for (const m of source.matchAll(/^import \{([^}]*)\} from "@pactd\/(?:a2a|a2a\/sdk|demo)";/gm)) {
    for (const n of m[1]!.split(",")) names.push(n.trim().replace(/^type /, ""));
  }
  return names.filter((n) => n !== "");
}

test("the example's PACT wiring is at most 40 lines, each marked // PACT", () => {
  const lines = source.split("\n");
  const marked = lines.filter((l) => /\/\/ PACT$/.test(l));
  // Honest marks: every line that uses a name from @pactd/a2a is marked.
  const names = pactNames();
  assert.ok(names.includes("FrontDoor") && names.includes("sdkTurns") && names.includes("pactUser") && names.includes("stepUpTask"), "the example imports @pactd/a2a");
  for (const [i, l] of lines.entries()) {
    const code = l.replace(/\/\/.*$/, "");
    if (/^\s*(\*|\/\*)/.test(l)) continue;
    for (const n of names) {
      if (new RegExp("\\b" + n + "\\b").test(code)) assert.match(l, /\/\/ PACT$/, `line ${i + 1} uses ${n} unmarked: ${l}`);
    }
  }
  process.stdout.write(`# PACT-specific lines in src/main.ts: ${marked.length}\n`);
  assert.ok(marked.length > 0 && marked.length <= 40, `${marked.length} PACT lines`);
});
