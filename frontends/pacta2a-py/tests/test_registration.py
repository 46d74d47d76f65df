"""POST /api/platforms (pacta2a.registration) in front of an in-process
gRPC AgentService: each pactd outcome's status and body, the realm on 401,
and the refusals the frontend makes itself, which never reach pactd.
Expected bytes are the Go frontend's (frontends/pacta2a/register.go:
json.Encoder, which escapes <, > and & and ends with a newline), written
out here."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import grpc.aio
from pactworld import FRONTEND_TOKEN, run

from pacta2a import MAX_REGISTRATION_BODY, PactdClient, RegistrationApp
from pacta2a._pb import agent_pb2, agent_pb2_grpc
from pacta2a.registration import parse_registration

EP = "https://frontend.example/api/platforms"
REALM = 'Bearer realm="platforms"'
R = agent_pb2.SelfRegistrationResult
BODY = b'{"name":"my-pa","jwksUri":"https://pa.example/jwks.json?a=1&b=2"}'
AGENT = agent_pb2.Agent(id="agt_1", issuer="https://pa.example", jwks_uri="https://pa.example/jwks.json?a=1&b=2", enabled=True)
PLATFORM = (
    b'{"platform":{"enabled":true,"id":"agt_1","issuer":"https://pa.example",'
    b'"jwksUri":"https://pa.example/jwks.json?a=1\\u0026b=2","name":"my-pa"}}\n'
)


def refusal(reason: str) -> bytes:
    return b'{"error":"' + reason.encode() + b'"}\n'


class FakeAgents(agent_pb2_grpc.AgentServiceServicer):
    def __init__(self) -> None:
        self.got: list[agent_pb2.SelfRegisterAgentRequest] = []
        self.auth: list[str] = []
        self.res: agent_pb2.SelfRegisterAgentResponse | None = agent_pb2.SelfRegisterAgentResponse(result=R.SELF_REGISTRATION_RESULT_CLOSED)

    async def SelfRegisterAgent(self, request: Any, context: Any) -> Any:  # noqa: N802 (gRPC's name)
        self.got.append(request)
        self.auth.append(dict(context.invocation_metadata()).get("authorization", ""))
        if self.res is None:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "down")
        return self.res


async def call(app: RegistrationApp, method: str, body: bytes, headers: list[tuple[str, str]]) -> tuple[int, dict[str, str], bytes]:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers] + [(b"content-length", str(len(body)).encode())]
    scope = {"type": "http", "method": method, "path": "/api/platforms", "raw_path": b"/api/platforms", "query_string": b"", "headers": raw}
    sent: list[dict[str, Any]] = []
    chunks = [body[i : i + 4096] for i in range(0, len(body), 4096)] or [b""]

    async def receive() -> dict[str, Any]:
        c = chunks.pop(0) if chunks else b""
        return {"type": "http.request", "body": c, "more_body": bool(chunks)}

    async def send(m: dict[str, Any]) -> None:
        sent.append(m)

    await app(scope, receive, send)
    start = sent[0]
    hs: dict[str, str] = {}
    for k, v in start["headers"]:
        hs[k.decode()] = v.decode()
    return start["status"], hs, b"".join(m.get("body", b"") for m in sent[1:])


async def with_fake(test: Any) -> Any:
    fake = FakeAgents()
    server = grpc.aio.server()
    agent_pb2_grpc.add_AgentServiceServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with PactdClient(f"127.0.0.1:{port}", FRONTEND_TOKEN) as c:
            return await test(RegistrationApp(c, EP), fake)
    finally:
        await server.stop(None)


def test_each_pactd_outcome_is_answered_as_the_go_frontend_answers_it() -> None:
    async def go(app: RegistrationApp, fake: FakeAgents) -> None:
        tok = [("Authorization", "Bearer tok")]
        # Positive control: 201 with the platform; pactd got the token, body, endpoint and the frontend credential.
        fake.res = agent_pb2.SelfRegisterAgentResponse(result=R.SELF_REGISTRATION_RESULT_CREATED, name="my-pa", agent=AGENT)
        status, h, body = await call(app, "POST", BODY, tok)
        assert (status, body) == (201, PLATFORM)
        assert (h["content-type"], h["cache-control"], "www-authenticate" in h) == ("application/json", "no-store", False)
        g = fake.got[0]
        assert (g.token, g.name, g.jwks_uri, g.endpoint_url) == ("tok", "my-pa", "https://pa.example/jwks.json?a=1&b=2", EP)
        assert fake.auth[0] == "Bearer " + FRONTEND_TOKEN

        a = agent_pb2.Agent()
        a.CopyFrom(AGENT)
        a.enabled = False
        fake.res = agent_pb2.SelfRegisterAgentResponse(result=R.SELF_REGISTRATION_RESULT_EXISTS, name="my-pa", agent=a)
        status, _, body = await call(app, "POST", BODY, tok)
        assert (status, body) == (200, PLATFORM.replace(b'"enabled":true', b'"enabled":false'))

        for result, reason, want in [
            (R.SELF_REGISTRATION_RESULT_INVALID_TOKEN, "jti_replayed", 401),
            (R.SELF_REGISTRATION_RESULT_CONFLICT, "name_taken", 409),
            (R.SELF_REGISTRATION_RESULT_INVALID_REQUEST, "jwks_uri_cross_origin", 400),
        ]:
            fake.res = agent_pb2.SelfRegisterAgentResponse(result=result, reason=reason)
            status, h, body = await call(app, "POST", BODY, tok)
            assert (status, body, h.get("www-authenticate")) == (want, refusal(reason), REALM if want == 401 else None), reason

        fake.res = agent_pb2.SelfRegisterAgentResponse(result=R.SELF_REGISTRATION_RESULT_CLOSED, reason="self_registration_off")
        status, h, body = await call(app, "POST", BODY, tok)
        assert (status, body, h["content-length"]) == (404, b"", "0")

        fake.res = None
        status, _, body = await call(app, "POST", BODY, tok)
        assert (status, body) == (502, refusal("pactd_unavailable"))

    run(with_fake(go))


def test_the_frontends_own_refusals_never_reach_pactd() -> None:
    async def go(app: RegistrationApp, fake: FakeAgents) -> None:
        fake.res = agent_pb2.SelfRegisterAgentResponse(result=R.SELF_REGISTRATION_RESULT_CREATED, name="my-pa", agent=AGENT)

        def pad(n: int) -> bytes:
            return b'{"name":"my-pa","x":"' + b"a" * (n - len(b'{"name":"my-pa","x":""}')) + b'"}'

        # Positive control for the bound: exactly MAX_REGISTRATION_BODY bytes reach pactd.
        assert len(pad(MAX_REGISTRATION_BODY)) == MAX_REGISTRATION_BODY
        status, _, _ = await call(app, "POST", pad(MAX_REGISTRATION_BODY), [("Authorization", "Bearer tok")])
        assert status == 201 and len(fake.got) == 1
        tok = [("Authorization", "Bearer tok")]
        cases = [
            ("no token", "POST", BODY, [], 401, refusal("token_missing")),
            ("not Bearer", "POST", BODY, [("Authorization", "Basic dG9rOg==")], 401, refusal("token_missing")),
            ("bearer in lower case", "POST", BODY, [("Authorization", "bearer tok")], 401, refusal("token_missing")),
            ("two headers", "POST", BODY, [("Authorization", "Bearer a"), ("Authorization", "Bearer b")], 401, refusal("token_missing")),
            ("one byte over", "POST", pad(MAX_REGISTRATION_BODY + 1), tok, 413, refusal("body_too_large")),
            ("not JSON", "POST", b"nope", tok, 400, refusal("body_invalid")),
            ("empty", "POST", b"", tok, 400, refusal("body_invalid")),
            ("an array", "POST", b"[]", tok, 400, refusal("body_invalid")),
            ("a number for name", "POST", b'{"name":5}', tok, 400, refusal("body_invalid")),
            ("a number, then a string", "POST", b'{"name":5,"name":"x"}', tok, 400, refusal("body_invalid")),
            ("NaN", "POST", b'{"name":NaN}', tok, 400, refusal("body_invalid")),
            ("GET", "GET", b"", tok, 405, b""),
        ]
        for name, method, body, headers, want, want_body in cases:
            status, h, got = await call(app, method, body, headers)
            assert (status, got) == (want, want_body), name
            assert h.get("www-authenticate") == (REALM if want == 401 else None), name
            if want == 413:
                assert h.get("connection") == "close", name
            if want == 405:
                assert h.get("allow") == "POST", name
        assert len(fake.got) == 1, "pactd was asked about a request the frontend refuses"

    run(with_fake(go))


def test_parse_registration_reads_as_go_encoding_json() -> None:
    assert parse_registration(b'{"NAME":"x","JwksUri":null,"other":[1]}') == ("x", "")
    assert parse_registration(b'{"name":"a","Name":"b"}') == ("b", "")
    assert parse_registration(b'{"jwksUri":"u","jwksUri":null}') == ("", "u")  # a later null changes nothing
    assert parse_registration(b'{"name":"a","x":{"name":5,"y":["}",{"z":"\\\\"}]},"name":"b"}') == ("b", "")
    assert parse_registration('{"jwk\u017fUri":"u"}'.encode()) == ("", "u")
    assert parse_registration(b"null") == ("", "")
    assert parse_registration(b'"x"') is None
    assert parse_registration(b"\xef\xbb\xbf{}") is None  # a BOM is not JSON to Go
    assert asyncio.iscoroutinefunction(RegistrationApp.__call__)
