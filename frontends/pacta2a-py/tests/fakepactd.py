"""A fake pactd for the package's and the frontend's tests, and a direct
ASGI caller.

FakePactd is a gRPC server (grpc's synchronous server in threads of its
own, so it serves a client in any event loop) that answers
FrontDoorService's Serve and FinishTurn, DelegationService's CheckGrant and
BrandService's GetAgentCard with what the test sets, checks the frontend
credential on every call, and records each call with its metadata. pactd's
own tests cover what pactd answers; these tests cover what the package sends
and writes.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import grpc
import pytest

from pacta2a._pb import delegation_pb2, frontdoor_pb2, load

brand_pb2 = load("brand_pb2")

FRONTEND_TOKEN = "fake-frontend-token-0123456789"

Handler = Callable[[Any, grpc.ServicerContext], Any]


@dataclass
class Call:
    """One RPC the fake received."""

    rpc: str
    request: Any
    metadata: dict[str, str]


def response(status: int, headers: list[tuple[str, str]] = (), body: bytes = b"") -> Any:  # type: ignore[assignment]
    """Is an HttpResponse."""
    return frontdoor_pb2.HttpResponse(status=status, headers=[frontdoor_pb2.HttpHeader(name=k, value=v) for k, v in headers], body=body)


@dataclass
class FakePactd:
    """The fake; set serve, finish_turn, check_grant, get_agent_card."""

    token: str = FRONTEND_TOKEN
    serve: Handler = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(404))
    finish_turn: Handler = lambda req, ctx: frontdoor_pb2.FinishTurnResponse(response=response(200, [("Content-Type", "application/a2a+json")], b"{}"))
    check_grant: Handler = lambda req, ctx: delegation_pb2.CheckGrantResponse(active=True)
    get_agent_card: Handler = lambda req, ctx: ctx.abort(grpc.StatusCode.NOT_FOUND, "brand not found")
    calls: list[Call] = field(default_factory=list)
    target: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: Any = None

    def start(self) -> FakePactd:
        """Starts serving on a free loopback port (target, url)."""
        s = grpc.server(ThreadPoolExecutor(max_workers=8))
        methods = {
            "pact.v1.FrontDoorService": {
                "Serve": (frontdoor_pb2.ServeRequest, "serve"),
                "FinishTurn": (frontdoor_pb2.FinishTurnRequest, "finish_turn"),
            },
            "pact.v1.DelegationService": {"CheckGrant": (delegation_pb2.CheckGrantRequest, "check_grant")},
            "pact.v1.BrandService": {"GetAgentCard": (brand_pb2.GetAgentCardRequest, "get_agent_card")},
        }
        for service, table in methods.items():
            handlers = {
                name: grpc.unary_unary_rpc_method_handler(
                    self._handler(f"{service}/{name}", attr), request_deserializer=req.FromString, response_serializer=lambda m: m.SerializeToString()
                )
                for name, (req, attr) in table.items()
            }
            s.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
        port = s.add_insecure_port("127.0.0.1:0")
        s.start()
        self._server, self.target = s, f"127.0.0.1:{port}"
        return self

    @property
    def url(self) -> str:
        """The fake's base URL, as PACTD_URL."""
        return "http://" + self.target

    def stop(self) -> None:
        """Stops serving."""
        if self._server is not None:
            self._server.stop(None)

    def _handler(self, rpc: str, attr: str) -> Handler:
        def handle(req: Any, ctx: grpc.ServicerContext) -> Any:
            md = {k: v for k, v in ctx.invocation_metadata()}
            with self._lock:
                self.calls.append(Call(rpc, req, md))
            if md.get("authorization") != "Bearer " + self.token:
                ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "unauthenticated")
            return getattr(self, attr)(req, ctx)

        return handle

    def requests(self, method: str) -> list[Any]:
        """Are the requests of one method ("Serve", "FinishTurn", ...), in order."""
        with self._lock:
            return [c.request for c in self.calls if c.rpc.endswith("/" + method)]


@dataclass
class Answer:
    """What an ASGI app sent for one request."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    messages: list[dict[str, Any]]


async def asgi_request(
    app: Any,
    method: str = "GET",
    path: str = "/",
    *,
    raw_path: bytes | None = None,
    query: bytes = b"",
    headers: list[tuple[bytes, bytes]] | None = None,
    chunks: list[bytes] | None = None,
    client: tuple[str, int] | None = ("192.0.2.7", 50123),
    disconnect: bool = False,
) -> Answer:
    """Calls an ASGI app with one HTTP request whose body arrives in chunks
    (disconnect: the client leaves after them) and collects its answer."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": raw_path if raw_path is not None else path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": headers or [],
        "client": client,
        "server": ("127.0.0.1", 3000),
    }
    pending = list(chunks or [b""])
    messages: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pending:
            chunk = pending.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(pending) or disconnect}
        if not disconnect:
            await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    await app(scope, receive, send)
    start = next((m for m in messages if m["type"] == "http.response.start"), {"status": 0, "headers": []})
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    return Answer(start["status"], list(start.get("headers", [])), body, messages)


@pytest.fixture
def fake() -> Iterator[FakePactd]:
    """A fake pactd, serving for one test (conftest.py registers it)."""
    f = FakePactd().start()
    try:
        yield f
    finally:
        f.stop()
