"""The tests' world, whose fixtures conftest.py registers: a live pactd
(built from this repository's Go code, on SQLite in a temporary folder), a
personal agent with an ES256 key and its JWKS on loopback, two Brands, and
PactMiddleware served by a real uvicorn on the Provider's public URL.

Without Go (to build pactd) the tests that need it skip, except under
CI=true, where they fail.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import logging
import os
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import pytest

REPO = Path(__file__).resolve().parents[3]

import grpc  # noqa: E402
import uvicorn  # noqa: E402

from es256 import Key  # noqa: E402
from pacta2a import EchoAgent, PactdClient, PactMiddleware, Reply, Turn  # noqa: E402
from pacta2a._pb import agent_pb2, agent_pb2_grpc, brand_pb2, brand_pb2_grpc  # noqa: E402

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


class CountingClient(PactdClient):
    """A PactdClient that counts the RPCs it makes."""

    calls: list[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls = []

    async def _call(self, service: str, method: str, factory: Any, request: Any) -> Any:
        self.calls.append(method)
        return await super()._call(service, method, factory, request)


class SwitchAgent:
    """The agent of the served middleware: EchoAgent unless a test sets behaviour."""

    def __init__(self) -> None:
        self.behaviour: Callable[[Turn], Awaitable[Reply]] | None = None
        self.turns: list[Turn] = []

    async def reply(self, turn: Turn) -> Reply:
        self.turns.append(turn)
        if self.behaviour is not None:
            return await self.behaviour(turn)
        return await EchoAgent().reply(turn)


class CookieSessions:
    """Sessions for the tests: the cookie "user" names the signed-in Brand user."""

    def brand_user(self, scope: Any, brand_id: str) -> str:
        from pacta2a.http import cookie

        headers = [v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"cookie"]
        return cookie(headers, "user") or ""

    def login_url(self, brand_id: str, return_to: str) -> str:
        from pacta2a.http import query_escape

        return "/login?return_to=" + query_escape(return_to)


class ListHandler(logging.Handler):
    """Keeps log records."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Server:
    """PactMiddleware on a real uvicorn at the Provider's public URL."""

    url: str
    port: int
    pactd: CountingClient
    agent: SwitchAgent
    logs: ListHandler
    app: PactMiddleware
    inner_calls: list[str] = field(default_factory=list)

    def reset(self) -> None:
        """Forgets calls, turns and logs; back to EchoAgent."""
        self.pactd.calls.clear()
        self.agent.behaviour = None
        self.agent.turns.clear()
        self.logs.records.clear()
        self.inner_calls.clear()


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


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[Server]:
    # Module scope: grpc.aio does not like event loops in two threads at
    # once, so while this server's loop runs the tests call pactd with
    # grpc's synchronous API only.
    port = int(world.pactd.public_url.rsplit(":", 1)[1])
    client = CountingClient.from_url(world.pactd.url, FRONTEND_TOKEN)
    agent = SwitchAgent()
    handler = ListHandler()
    logger = logging.getLogger("pacta2a.test")
    logger.addHandler(handler)
    logger.propagate = False
    inner_calls: list[str] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        """The wrapped app: answers 200 "inner", or raises at /boom."""
        inner_calls.append(scope["path"])
        if scope["path"] == "/boom":
            raise RuntimeError("the wrapped app failed")
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
        await send({"type": "http.response.body", "body": b"inner"})

    app = PactMiddleware(inner, pactd=client, pactd_url=world.pactd.url, agent=agent, sessions=CookieSessions(), logger=logger)
    stop = serve_in_thread(app, port)
    try:
        yield Server(world.pactd.public_url, port, client, agent, handler, app, inner_calls)
    finally:
        stop()


@pytest.fixture
def srv(server: Server) -> Server:
    """The served middleware, reset for one test."""
    server.reset()
    return server


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
