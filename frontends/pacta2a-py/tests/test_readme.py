"""The README's middleware example, run as it stands against a live pactd,
and its line count as the README states it."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import httpx
import pytest
from pactworld import FRONTEND_TOKEN, REPO, World, free_port, serve_in_thread

MARKER = "<!-- asgi-example: frontends/pacta2a-py/tests/test_readme.py runs the next code block -->"


def example() -> str:
    readme = (REPO / "README.md").read_text()
    after = readme.split(MARKER, 1)[1]
    m = re.match(r"\s*```python\n(.*?)```", after, re.S)
    assert m is not None, "no python block after the marker"
    return m.group(1)


def test_readme_states_the_line_count() -> None:
    readme = (REPO / "README.md").read_text()
    stated = re.search(r"complete \((\d+) lines;", readme)
    assert stated is not None and int(stated.group(1)) == len(example().splitlines())


def test_readme_example_serves(world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PACTD_URL", world.pactd.url)
    monkeypatch.setenv("PACT_FRONTEND_TOKEN", FRONTEND_TOKEN)
    (tmp_path / "readme_app.py").write_text(example())
    spec = importlib.util.spec_from_file_location("readme_app", tmp_path / "readme_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_app"] = module
    spec.loader.exec_module(module)
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
        sys.modules.pop("readme_app", None)
