"""The FrontDoor example of docs/frontend-servers.md, run as it stands
against the fake pactd and against a live one, and its line count as the
page states it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import httpx
import pytest
from fakepactd import FakePactd, asgi_request
from pactworld import FRONTEND_TOKEN, REPO, World, free_port, serve_in_thread
from test_frontdoor import turn_pb

from pacta2a._pb import frontdoor_pb2

PAGE = REPO / "docs" / "frontend-servers.md"
MARKER = "<!-- asgi-example: frontends/pacta2a-py/tests/test_docs_example.py runs the next code block -->"


def example() -> str:
    page = PAGE.read_text()
    after = page.split(MARKER, 1)[1]
    m = re.match(r"\s*```python\n(.*?)```", after, re.S)
    assert m is not None, "no python block after the marker"
    return m.group(1)


def test_page_states_the_line_count() -> None:
    stated = re.search(r"complete \((\d+) lines;", PAGE.read_text())
    assert stated is not None and int(stated.group(1)) == len(example().splitlines())


def load_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, token: str) -> Iterator[ModuleType]:
    monkeypatch.setenv("PACTD_URL", url)
    monkeypatch.setenv("PACT_FRONTEND_TOKEN", token)
    (tmp_path / "readme_app.py").write_text(example())
    spec = importlib.util.spec_from_file_location("readme_app", tmp_path / "readme_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_app"] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("readme_app", None)


def test_example_answers_a_turn(fake: FakePactd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(turn=turn_pb(text="hi"))
    for module in load_example(tmp_path, monkeypatch, fake.url, fake.token):

        async def go() -> None:
            await asgi_request(module.app, "POST", "/a2a/acme/message:send", chunks=[b"{}"])
            await module.pactd.close()

        asyncio.run(go())
    (fin,) = fake.requests("FinishTurn")
    assert fin.sdk_answer.status == 200
    assert json.loads(fin.sdk_answer.body)["message"]["parts"] == [{"text": "Hello user-1, you said: hi"}]


def test_example_serves(world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in load_example(tmp_path, monkeypatch, world.pactd.url, FRONTEND_TOKEN):
        port = free_port()
        stop = serve_in_thread(module.app, port)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as c:
                body = json.dumps({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
                r = c.post("/a2a/acme/message:send", content=body)
                assert (r.status_code, r.headers["www-authenticate"], r.content) == (401, 'Bearer realm="a2a"', b"")
                r = c.post("/a2a/acme/message:send", content=body, headers={"authorization": "Bearer " + world.token("user-readme")})
                assert r.status_code == 200 and r.headers["content-type"] == "application/a2a+json"
                assert json.loads(r.text)["message"]["parts"] == [{"text": "Hello user-readme, you said: hi"}]
        finally:
            stop()
