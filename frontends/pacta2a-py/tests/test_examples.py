"""examples/agent_app.py, run as it stands against the fake pactd: a turn
without the scope steps up, one with it answers with its receipt's action."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest
from fakepactd import FakePactd, asgi_request
from test_frontdoor import turn_pb

from pacta2a._pb import frontdoor_pb2, verification_pb2

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_app.py"


def test_agent_example(fake: FakePactd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PACTD_URL", fake.url)
    monkeypatch.setenv("PACT_FRONTEND_TOKEN", fake.token)
    spec = importlib.util.spec_from_file_location("agent_app", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    delegated = verification_pb2.DelegationInfo(grant_id="g", brand_user="alice", scopes=["orders:read"])
    turns = iter([turn_pb(), turn_pb(delegation=delegated)])
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(turn=next(turns))

    async def go() -> None:
        for _ in range(2):
            await asgi_request(module.app, "POST", "/a2a/acme/message:send", chunks=[b"{}"])
        await module.pactd.close()

    asyncio.run(go())
    step_up, answer = (f.reply for f in fake.requests("FinishTurn"))
    assert list(step_up.need_scopes) == ["orders:read"] and not step_up.actions
    assert answer.text == "You have 1 order(s)." and list(answer.scopes_used) == ["orders:read"]
    assert [(a.tool, json.loads(a.args_json)) for a in answer.actions] == [("list_orders", {"limit": 10})]
