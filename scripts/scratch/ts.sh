#!/usr/bin/env bash
# scripts/scratch/ts.sh: the TypeScript library @pactd/a2a is usable outside this
# repository. `npm pack` makes its tarball (prepack builds it); a scratch project
# outside the checkout installs it with npm (from npm's cache when it has the
# packages, else from the registry), and a small TypeScript program there is
# type-checked and compiled against the installed package's declarations, then
# run: it serves two requests through FrontDoor on node:http, in front of a stand-in
# for pactd (FrontDoorService over Connect): a response, and a turn that the
# EchoAgent answers. The scratch project is removed on exit.
#
# It needs node and npm, and the workspace's packages installed (cd frontends && npm
# ci). Without them it skips (exit 0), except under CI=true, where it fails. Any
# failure exits non-zero.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)

cannot_run() {
	if [[ ${CI:-} == true ]]; then
		echo "FAIL scratch/ts.sh: $1" >&2
		exit 1
	fi
	echo "SKIP scratch/ts.sh: $1"
	exit 0
}

command -v node >/dev/null && command -v npm >/dev/null || cannot_run "node and npm are needed"
[[ -x $repo/frontends/node_modules/.bin/tsc ]] || cannot_run "the npm workspace is not installed (cd frontends && npm ci)"

scratch=$(mktemp -d -t pacta2a-js-scratch.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

# The versions the workspace's lockfile pins, for the program's own tools.
pinned() { node -p "require('$repo/frontends/package-lock.json').packages['node_modules/$1'].version"; }
ts_version=$(pinned typescript)
types_version=$(pinned @types/node)

tarball=$(cd "$repo/frontends/pacta2a-js" && npm pack --silent --pack-destination "$scratch" | tail -n 1)
[[ -f $scratch/$tarball ]] || { echo "FAIL scratch/ts.sh: npm pack made no tarball" >&2; exit 1; }

mkdir "$scratch/provider"
cd "$scratch/provider"
cat >package.json <<'JSON'
{ "name": "scratch-provider", "version": "1.0.0", "private": true, "type": "module" }
JSON
npm install --silent --no-audit --no-fund --prefer-offline "$scratch/$tarball" \
	"typescript@$ts_version" "@types/node@$types_version" >install.log 2>&1 ||
	{ cat install.log >&2; echo "FAIL scratch/ts.sh: npm install of the tarball" >&2; exit 1; }

cat >tsconfig.json <<'JSON'
{ "compilerOptions": { "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "strict": true, "types": ["node"], "outDir": "out" },
  "files": ["main.ts"] }
JSON
cat >main.ts <<'TS'
// A Provider's frontend on @pactd/a2a, installed from its tarball.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { EchoAgent, FrontDoor, pactdTransport, recover } from "@pactd/a2a";
import { FrontDoorService } from "@pactd/a2a/gen/pact/v1/frontdoor_pb";

const where = fileURLToPath(import.meta.resolve("@pactd/a2a"));
if (!where.startsWith(process.cwd() + "/node_modules/")) throw new Error("imported " + where + ", not the installed copy");

async function listen(s: Server): Promise<string> {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return "http://127.0.0.1:" + (s.address() as AddressInfo).port;
}

const token = "frontend-credential";
const pactd = createServer(connectNodeAdapter({
  routes: (r) => r.service(FrontDoorService, {
    serve(req, ctx) {
      if (ctx.requestHeader.get("authorization") !== "Bearer " + token) throw new Error("no credential");
      if (req.path === "/a2a/acme/message:send") {
        return { outcome: { case: "turn", value: { handle: "h", brandId: "acme", text: "hi", turnTimeoutSeconds: 5 } } };
      }
      return { outcome: { case: "response", value: { status: 200, headers: [{ name: "Content-Type", value: "application/json" }], body: Buffer.from("{}") } } };
    },
    finishTurn(req) {
      const text = req.result.case === "reply" ? req.result.value.text : "not a reply";
      return { response: { status: 200, body: Buffer.from(text) } };
    },
  }),
}));
const door = new FrontDoor({ transport: pactdTransport("connect", await listen(pactd), token), agent: new EchoAgent() });
const frontend = createServer(recover((req, res) => door.handle(req, res)));
const url = await listen(frontend);
try {
  const card = await fetch(url + "/a2a/acme/.well-known/agent-card.json");
  if (card.status !== 200 || card.headers.get("content-type") !== "application/json" || (await card.text()) !== "{}") {
    throw new Error("the card request got " + card.status);
  }
  const turn = await (await fetch(url + "/a2a/acme/message:send", { method: "POST", body: "{}" })).text();
  if (turn !== "This is the acme support agent. You said: hi") throw new Error("the turn got " + JSON.stringify(turn));
} finally {
  frontend.close();
  pactd.close();
  frontend.closeAllConnections();
  pactd.closeAllConnections();
}
console.log("served a response and a turn");
TS
node_modules/.bin/tsc -p . || { echo "FAIL scratch/ts.sh: the program does not type-check against the installed package" >&2; exit 1; }
got=$(node out/main.js) || { echo "FAIL scratch/ts.sh: the program failed" >&2; exit 1; }
echo "ok    @pactd/a2a ($tarball) installed from its tarball into a scratch project, type-checked, and $got there"
