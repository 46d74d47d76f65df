// POST /api/platforms (registration.ts) in front of a fake pactd's
// AgentService: each pactd outcome's status and body, the realm on 401, and
// the refusals the frontend makes itself, which never reach pactd. Expected
// bytes are the Go frontend's (frontends/pacta2a/register.go: json.Encoder,
// which escapes <, > and & and ends with a newline), written out here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { AgentService, SelfRegistrationResult, type SelfRegisterAgentRequest, type SelfRegisterAgentResponse } from "../src/gen/pact/v1/agent_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { SelfRegisterAgentResponseSchema } from "../src/gen/pact/v1/agent_pb.js";
import { registrationHandler, maxRegistrationBody, parseRegistration } from "../src/registration.js";
import { pactdTransport } from "../src/transport.js";
import { frontendToken, send } from "./helpers.js";

const ep = "https://frontend.example/api/platforms";
const realm = 'Bearer realm="platforms"';

interface Fake {
  url: string;
  got: SelfRegisterAgentRequest[];
  frontendAuth: (string | null)[];
  res: MessageInitShape<typeof SelfRegisterAgentResponseSchema> | "down";
  close(): Promise<void>;
}

async function listen(s: Server): Promise<string> {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return "http://127.0.0.1:" + (s.address() as AddressInfo).port;
}

async function newFake(): Promise<Fake> {
  const f = { got: [], frontendAuth: [], res: { result: SelfRegistrationResult.CLOSED } } as unknown as Fake;
  const routes = (r: ConnectRouter) =>
    r.service(AgentService, {
      selfRegisterAgent(req, hc): MessageInitShape<typeof SelfRegisterAgentResponseSchema> {
        f.got.push(req);
        f.frontendAuth.push(hc.requestHeader.get("Authorization"));
        if (f.res === "down") throw new ConnectError("down", Code.Unavailable);
        return f.res;
      },
    });
  const pactd = createServer(connectNodeAdapter({ routes }));
  const pactdUrl = await listen(pactd);
  const h = registrationHandler(pactdTransport("connect", pactdUrl, frontendToken), ep);
  const fe = createServer((req, res) => void h(req, res));
  f.url = (await listen(fe)) + "/api/platforms";
  f.close = async () => {
    fe.closeAllConnections();
    pactd.closeAllConnections();
    await Promise.all([new Promise((r) => fe.close(r)), new Promise((r) => pactd.close(r))]);
  };
  return f;
}

const body = '{"name":"my-pa","jwksUri":"https://pa.example/jwks.json?a=1&b=2"}';
const agent = { id: "agt_1", issuer: "https://pa.example", jwksUri: "https://pa.example/jwks.json?a=1&b=2", enabled: true, displayName: "my-pa" };
const platform = '{"platform":{"enabled":true,"id":"agt_1","issuer":"https://pa.example","jwksUri":"https://pa.example/jwks.json?a=1\\u0026b=2","name":"my-pa"}}\n';
const refusal = (reason: string) => `{"error":"${reason}"}\n`;

test("registration: each pactd outcome is answered as the Go frontend answers it", async () => {
  const f = await newFake();
  try {
    // Positive control: 201 with the platform; pactd got the token, body, endpoint and the frontend credential.
    f.res = { result: SelfRegistrationResult.CREATED, name: "my-pa", agent };
    let r = await send(f.url, "POST", body, "Authorization: Bearer tok", "Content-Type: application/json");
    assert.equal(r.status, 201);
    assert.equal(r.body, platform);
    assert.equal(r.headers["content-type"], "application/json");
    assert.equal(r.headers["cache-control"], "no-store");
    assert.equal(r.headers["www-authenticate"], undefined);
    assert.equal(f.got.length, 1);
    const g = f.got[0]!;
    assert.deepEqual([g.token, g.name, g.jwksUri, g.endpointUrl], ["tok", "my-pa", "https://pa.example/jwks.json?a=1&b=2", ep]);
    assert.equal(f.frontendAuth[0], "Bearer " + frontendToken);

    f.res = { result: SelfRegistrationResult.EXISTS, name: "my-pa", agent: { ...agent, enabled: false } };
    r = await send(f.url, "POST", body, "Authorization: Bearer tok");
    assert.equal(r.status, 200);
    assert.equal(r.body, platform.replace('"enabled":true', '"enabled":false'));

    // A refused token: 401 with the realm and pactd's reason.
    f.res = { result: SelfRegistrationResult.INVALID_TOKEN, reason: "jti_replayed" };
    r = await send(f.url, "POST", body, "Authorization: Bearer tok");
    assert.deepEqual([r.status, r.headers["www-authenticate"], r.body], [401, realm, refusal("jti_replayed")]);

    f.res = { result: SelfRegistrationResult.CONFLICT, reason: "name_taken" };
    r = await send(f.url, "POST", body, "Authorization: Bearer tok");
    assert.deepEqual([r.status, r.headers["www-authenticate"], r.body], [409, undefined, refusal("name_taken")]);

    f.res = { result: SelfRegistrationResult.INVALID_REQUEST, reason: "jwks_uri_cross_origin" };
    r = await send(f.url, "POST", body, "Authorization: Bearer tok");
    assert.deepEqual([r.status, r.headers["www-authenticate"], r.body], [400, undefined, refusal("jwks_uri_cross_origin")]);

    // Off: a bare 404, as if there were no such endpoint.
    f.res = { result: SelfRegistrationResult.CLOSED, reason: "self_registration_off" };
    r = await send(f.url, "POST", body, "Authorization: Bearer tok");
    assert.deepEqual([r.status, r.body, r.headers["content-length"]], [404, "", "0"]);

    // pactd cannot be asked: 502.
    f.res = "down";
    r = await send(f.url, "POST", body, "Authorization: Bearer tok");
    assert.deepEqual([r.status, r.body], [502, refusal("pactd_unavailable")]);

    // Keys are matched as Go's encoding/json matches them (case folded); null leaves a field empty.
    f.res = { result: SelfRegistrationResult.CREATED, name: "my-pa", agent };
    const before = f.got.length;
    r = await send(f.url, "POST", '{"NAME":"x","JwksUri":null,"other":[1]}', "Authorization: Bearer tok");
    assert.equal(r.status, 201);
    assert.deepEqual([f.got[before]!.name, f.got[before]!.jwksUri], ["x", ""]);
  } finally {
    await f.close();
  }
});

test("registration: the frontend's own refusals never reach pactd", async () => {
  const f = await newFake();
  try {
    f.res = { result: SelfRegistrationResult.CREATED, name: "my-pa", agent };
    // Positive control for the body bound: exactly maxRegistrationBody bytes reach pactd.
    const pad = (n: number) => '{"name":"my-pa","x":"' + "a".repeat(n - '{"name":"my-pa","x":""}'.length) + '"}';
    assert.equal(Buffer.byteLength(pad(maxRegistrationBody)), maxRegistrationBody);
    let r = await send(f.url, "POST", pad(maxRegistrationBody), "Authorization: Bearer tok");
    assert.equal(r.status, 201);
    assert.equal(f.got.length, 1);

    const cases: [string, string, string, string[], number, string, string | undefined][] = [
      ["no token", "POST", body, [], 401, refusal("token_missing"), realm],
      ["not Bearer", "POST", body, ["Authorization: Basic dG9rOg=="], 401, refusal("token_missing"), realm],
      ["bearer in lower case", "POST", body, ["Authorization: bearer tok"], 401, refusal("token_missing"), realm],
      ["two Authorization headers", "POST", body, ["Authorization: Bearer a", "Authorization: Bearer b"], 401, refusal("token_missing"), realm],
      ["one byte over the bound", "POST", pad(maxRegistrationBody + 1), ["Authorization: Bearer tok"], 413, refusal("body_too_large"), undefined],
      ["not JSON", "POST", "nope", ["Authorization: Bearer tok"], 400, refusal("body_invalid"), undefined],
      ["empty body", "POST", "", ["Authorization: Bearer tok"], 400, refusal("body_invalid"), undefined],
      ["an array", "POST", "[]", ["Authorization: Bearer tok"], 400, refusal("body_invalid"), undefined],
      ["a number for name", "POST", '{"name":5}', ["Authorization: Bearer tok"], 400, refusal("body_invalid"), undefined],
      ["an object for jwksUri", "POST", '{"jwksUri":{}}', ["Authorization: Bearer tok"], 400, refusal("body_invalid"), undefined],
      ["a number, then a string for name", "POST", '{"name":5,"name":"my-pa"}', ["Authorization: Bearer tok"], 400, refusal("body_invalid"), undefined],
      ["GET", "GET", "", ["Authorization: Bearer tok"], 405, "", undefined],
    ];
    for (const [name, method, b, headers, status, want, auth] of cases) {
      r = await send(f.url, method, b, ...headers);
      assert.equal(r.status, status, name);
      assert.equal(r.body, want, name);
      assert.equal(r.headers["www-authenticate"], auth, name);
      if (status === 413) assert.equal(r.headers["connection"], "close", name);
      if (status === 405) assert.equal(r.headers["allow"], "POST", name);
    }
    assert.equal(f.got.length, 1, "pactd was asked about a request the frontend refuses");
  } finally {
    await f.close();
  }
});

test("parseRegistration reads a body as Go's encoding/json reads it into the struct", () => {
  const p = (s: string) => parseRegistration(Buffer.from(s));
  assert.deepEqual(p('{"name":"a","Name":"b","NAME":"c"}'), { name: "c", jwksUri: "" }); // in order, the last wins
  assert.deepEqual(p('{"name":"a","x":{"name":5,"y":["}",{"z":"\\\\"}]},"name":"b"}'), { name: "b", jwksUri: "" }); // nested members are not fields
  assert.deepEqual(p(' { "jwk\u017fUri" : "u" , "name" : null } '), { name: "", jwksUri: "u" }); // U+017F folds to s, as in Go
  assert.deepEqual(p('{"jwksUri":"u","jwksUri":null}'), { name: "", jwksUri: "u" }); // a later null changes nothing (found by the fuzzer)
  assert.deepEqual(p("null"), { name: "", jwksUri: "" });
  assert.equal(p('{"name":"a","name":[]}'), undefined);
  assert.equal(p('{"name":true,"name":"a"}'), undefined);
  assert.equal(p('"a"'), undefined);
  assert.equal(p("\ufeff{}"), undefined); // a byte order mark is not JSON to Go
});
