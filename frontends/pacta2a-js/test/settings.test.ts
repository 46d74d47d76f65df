import { test } from "node:test";
import assert from "node:assert/strict";
import { parseOptions, splitHostPort } from "../src/settings.js";

test("settings: flags win over the environment, as cmd/pact-a2a's", () => {
  const env = { A2A_LISTEN: "127.0.0.1:1", PACTD_URL: "http://p:1", A2A_DEMO: "true", A2A_TRANSPORT: "grpc", PACT_FRONTEND_TOKEN: "t", A2A_PUBLIC_URL: "https://f" };
  assert.deepEqual(parseOptions([], env), { listen: "127.0.0.1:1", pactd: "http://p:1", demo: true, transport: "grpc", token: "t", agentUrl: "", publicUrl: "https://f" });
  assert.deepEqual(parseOptions(["-listen", "0.0.0.0:2", "--pactd=http://q:2", "-demo=false", "-transport", "grpc-web", "-agent-url", "http://a", "-public-url="], env),
    { listen: "0.0.0.0:2", pactd: "http://q:2", demo: false, transport: "grpc-web", token: "t", agentUrl: "http://a", publicUrl: "" });
  assert.deepEqual(parseOptions([], {}), { listen: "127.0.0.1:3000", pactd: "http://127.0.0.1:7070", demo: false, transport: "connect", token: "", agentUrl: "", publicUrl: "" });
  for (const kind of ["connect", "connect-h2", "grpc", "grpc-web"]) assert.equal(parseOptions(["-transport", kind], {}).transport, kind);
  assert.throws(() => parseOptions(["-nope", "x"], {}), /flag provided but not defined: -nope/);
  assert.throws(() => parseOptions(["-transport", "h3"], {}), /-transport must be one of connect, connect-h2, grpc, grpc-web/);
  assert.throws(() => parseOptions(["-listen"], {}), /flag needs a value: -listen/);
  assert.throws(() => parseOptions(["stray"], {}), /unexpected argument "stray"/);
});

test("listen addresses: host:port, [v6]:port, :port; anything else is refused", () => {
  assert.deepEqual(splitHostPort("127.0.0.1:3000"), ["127.0.0.1", 3000]);
  assert.deepEqual(splitHostPort("[::1]:80"), ["::1", 80]);
  assert.deepEqual(splitHostPort(":0"), [undefined, 0]);
  for (const bad of ["3000", "h:", "h:65536", "h:-1", "h:1e3"]) assert.throws(() => splitHostPort(bad), /-listen must be host:port/, bad);
});
