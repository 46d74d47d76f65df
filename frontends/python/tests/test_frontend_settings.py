"""The frontend's settings and its RemoteAgent."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
from typing import Any

import pytest
from pact_a2a_py.remote import RemoteAgent, parse_reply, turn_json
from pact_a2a_py.settings import SettingsError, parse

from pacta2a import AuthorizationDetail, AuthorizationDetailMember, Caller, Delegation, Turn

ENV = {"PACT_FRONTEND_TOKEN": "tok"}


def test_defaults_env_and_flags() -> None:
    s = parse([], ENV)
    assert (s.listen, s.pactd, s.transport, s.pactd_grpc, s.demo, s.agent_url) == (
        "127.0.0.1:3000", "http://127.0.0.1:7070", "grpc", "127.0.0.1:7071", False, "")
    env = {**ENV, "A2A_LISTEN": "0.0.0.0:1", "PACTD_URL": "http://p:2", "A2A_DEMO": "true", "A2A_TRANSPORT": "grpc-native",
           "A2A_PACTD_GRPC": "p:3", "A2A_AGENT_URL": "http://a"}
    s = parse([], env)
    assert (s.listen, s.pactd, s.transport, s.pactd_grpc, s.demo, s.agent_url) == ("0.0.0.0:1", "http://p:2", "grpc-native", "p:3", True, "http://a")
    # Flags win over the environment.
    s = parse(["-listen", "[::1]:4", "--pactd=http://q:5", "-demo=false", "-transport", "grpc"], env)
    assert (s.listen, s.pactd, s.demo, s.transport) == ("[::1]:4", "http://q:5", False, "grpc")
    assert parse(["-demo"], ENV).demo


@pytest.mark.parametrize("args,env,msg", [
    ([], {}, "PACT_FRONTEND_TOKEN"),
    (["-transport", "connect"], ENV, "-transport must be one of grpc, grpc-native"),
    (["-listen", "nope"], ENV, "host:port"),
    (["-listen", "h:99999"], ENV, "host:port"),
    (["-nope", "x"], ENV, "not defined: -nope"),
    (["-listen"], ENV, "needs a value"),
    (["stray"], ENV, "unexpected argument"),
])
def test_refusals(args: list[str], env: dict[str, str], msg: str) -> None:
    with pytest.raises(SettingsError, match=msg.replace("[", r"\[")):
        parse(args, env)


TURN = Turn("shop", "ctx", True, "hi", Caller("ag", "https://pa", "sub", "PA"),
            Delegation("g", "alice", ("orders:read",), None, "[]", (AuthorizationDetail("t", "{}", (AuthorizationDetailMember("n", ("v",), True),)),)))


def test_turn_json_is_the_protocol() -> None:
    assert turn_json(TURN) == {
        "brandId": "shop", "contextId": "ctx", "newContext": True, "text": "hi",
        "caller": {"agentId": "ag", "issuer": "https://pa", "subject": "sub", "agentDisplayName": "PA"},
        "delegation": {"grantId": "g", "brandUser": "alice", "scopes": ["orders:read"], "authorizationDetailsJson": "[]",
                       "authorizationDetails": [{"type": "t", "json": "{}", "members": [{"name": "n", "values": ["v"], "array": True}]}]},
    }
    assert turn_json(Turn("acme", "c", False, "x", TURN.caller, None))["delegation"] is None


def test_parse_reply() -> None:
    r = parse_reply({"text": "t", "needScopes": None, "scopesUsed": ["a"], "actions": [{"tool": "x", "args": {"k": 1}}, {"tool": "y"}]})
    assert (r.text, list(r.need_scopes), list(r.scopes_used), [(a.tool, a.args) for a in r.actions]) == ("t", [], ["a"], [("x", {"k": 1}), ("y", None)])
    for bad in [[], {"text": 1}, {"text": "t", "needScopes": "a"}, {"text": "t", "actions": [{}]}, {"text": "t", "actions": {}}]:
        with pytest.raises(ValueError):
            parse_reply(bad)


def test_remote_agent_over_http() -> None:
    got: list[Any] = []
    answers = [(200, b'{"text":"ok","scopesUsed":["orders:read"]}'), (500, b"x"), (200, b"{" + b" " * (1 << 20) + b"}")]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            status, body = answers.pop(0)
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    async def go() -> None:
        agent = RemoteAgent(f"http://127.0.0.1:{srv.server_address[1]}/turn")
        try:
            r = await agent.reply(TURN)
            assert r.text == "ok" and list(r.scopes_used) == ["orders:read"] and got[0] == turn_json(TURN)
            with pytest.raises(RuntimeError, match="answered 500"):
                await agent.reply(TURN)
            with pytest.raises(RuntimeError, match="too large"):
                await agent.reply(TURN)
        finally:
            await agent.aclose()

    try:
        asyncio.run(go())
    finally:
        srv.shutdown()
