"""The tests' live world, whose fixtures conftest.py registers: a pactd
built from this repository's Go code (on SQLite in a temporary folder), a
personal agent with an ES256 key and its JWKS on loopback, and two Brands.
A frontend under test serves on the Provider's public URL.

Without Go (to build pactd) the tests that need it skip, except under
CI=true, where they fail.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import pytest

REPO = Path(__file__).resolve().parents[3]

import grpc  # noqa: E402
import uvicorn  # noqa: E402

from es256 import Key  # noqa: E402
from pacta2a._pb import load  # noqa: E402

agent_pb2, agent_pb2_grpc, brand_pb2, brand_pb2_grpc = (load(m) for m in ("agent_pb2", "agent_pb2_grpc", "brand_pb2", "brand_pb2_grpc"))

ADMIN_TOKEN = "pytest-admin-token-0123456789"
FRONTEND_TOKEN = "pytest-frontend-token-0123456789"


def need(reason: str) -> None:
    """Skips the test for a missing prerequisite; under CI=true it fails."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def free_port() -> int:
    """Is a free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Pactd:
    """A running pactd."""

    url: str  # the main port's base URL
    grpc_target: str  # the native gRPC port
    public_url: str  # PACT_PUBLIC_URL: where the middleware server listens
    audience: str
    log: list[str]


@pytest.fixture(scope="session")
def pactd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pactd]:
    go = shutil.which("go")
    if go is None:
        need("go is not on PATH: the client tests build pactd from ./cmd/pactd")
    work = tmp_path_factory.mktemp("pactd")
    binary = work / "pactd"
    build = subprocess.run([go, "build", "-o", str(binary), "./cmd/pactd"], cwd=REPO, capture_output=True, text=True, timeout=900)
    if build.returncode != 0:
        pytest.fail("go build ./cmd/pactd: " + build.stderr)
    public = f"http://127.0.0.1:{free_port()}"
    # pactd refuses unknown PACT_* variables: none of the caller's go along.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PACT_")}
    env.update(
        PACT_DATA_DIR=str(work / "data"),
        PACT_LISTEN="127.0.0.1:0",
        PACT_GRPC_LISTEN="127.0.0.1:0",
        PACT_ADMIN_TOKEN=ADMIN_TOKEN,
        PACT_FRONTEND_TOKEN=FRONTEND_TOKEN,
        PACT_PUBLIC_URL=public,
        PACT_DEV="true",
    )
    proc = subprocess.Popen([str(binary)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log: list[str] = []
    ready: dict[str, Any] = {}
    done = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            log.append(line)
            if '"msg":"pactd serving"' in line:
                ready.update(json.loads(line))
                done.set()
        done.set()

    threading.Thread(target=read, daemon=True).start()
    if not done.wait(60) or not ready:
        proc.kill()
        pytest.fail("pactd did not serve:\n" + "".join(log))
    try:
        yield Pactd(f"http://{ready['addr']}", ready["grpc_addr"], public, public + "/a2a", log)
    finally:
        proc.terminate()
        proc.wait(10)


class JWKS(http.server.ThreadingHTTPServer):
    """Serves one PA's JWKS on loopback."""

    daemon_threads = True

    def __init__(self, key: Key, kid: str) -> None:
        body = json.dumps({"keys": [key.jwk(kid)]}).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


@dataclass
class World:
    """pactd, a registered PA and its Brands."""

    pactd: Pactd
    key: Key
    kid: str
    issuer: str
    agent_id: str

    def claims(self, sub: str, **override: Any) -> dict[str, Any]:
        """Are valid PA JWT claims for sub (120 s), with overrides."""
        now = int(time.time())
        c: dict[str, Any] = {"iss": self.issuer, "sub": sub, "aud": self.pactd.audience, "iat": now, "exp": now + 120}
        c.update(override)
        return c

    def token(self, sub: str = "user-1", **override: Any) -> str:
        """Is a PA JWT for sub."""
        return self.key.jwt(self.kid, self.claims(sub, **override))


SHOP_SCOPES = [("orders:read", "See your orders"), ("orders:cancel", "Cancel your orders")]


@pytest.fixture(scope="session")
def world(pactd: Pactd) -> Iterator[World]:
    key, kid = Key(), "pa-key-1"
    jwks = JWKS(key, kid)
    threading.Thread(target=jwks.serve_forever, daemon=True).start()
    issuer = f"http://127.0.0.1:{jwks.server_address[1]}"
    md = (("authorization", "Bearer " + ADMIN_TOKEN),)
    with grpc.insecure_channel(pactd.url.removeprefix("http://")) as ch:
        agents = agent_pb2_grpc.AgentServiceStub(ch)
        res = agents.RegisterAgent(
            agent_pb2.RegisterAgentRequest(issuer=issuer, jwks_uri=issuer + "/jwks.json", display_name="Pytest PA"), metadata=md
        )
        brands = brand_pb2_grpc.BrandServiceStub(ch)
        brands.CreateBrand(brand_pb2.CreateBrandRequest(brand_id="acme", display_name="ACME Inc.", description="Support"), metadata=md)
        brands.CreateBrand(
            brand_pb2.CreateBrandRequest(
                brand_id="shop",
                display_name="Shop Inc.",
                description="Shop support",
                delegation=brand_pb2.DelegationSettings(
                    enabled=True,
                    scopes=[brand_pb2.Scope(id=i, description=d) for i, d in SHOP_SCOPES],
                    login_url=pactd.public_url + "/demo/shop",
                    login_mode=brand_pb2.BRAND_LOGIN_MODE_TRUSTED_FRONTEND,
                ),
            ),
            metadata=md,
        )
    try:
        yield World(pactd, key, kid, issuer, res.agent.id)
    finally:
        jwks.shutdown()


def serve_in_thread(app: Any, port: int) -> Callable[[], None]:
    """Runs app on uvicorn at 127.0.0.1:port in a thread; returns its stop."""
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    deadline = time.time() + 20
    while not server.started:
        if time.time() > deadline or not t.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)

    def stop() -> None:
        server.should_exit = True
        t.join(10)

    return stop


def run(coro: Awaitable[Any]) -> Any:
    """Runs a coroutine on a fresh event loop."""
    return asyncio.run(coro)  # type: ignore[arg-type]


def raw_exchange(port: int, data: bytes, timeout: float = 10.0) -> bytes:
    """Writes data on one connection and reads until the server closes it
    (or timeout passes): every byte the server sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        end = time.time() + timeout
        while time.time() < end:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out
