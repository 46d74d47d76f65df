"""FrontDoor: the PACT front door of an A2A frontend, as pure ASGI.

pactd owns the front door (pact.v1.FrontDoorService): routing under /a2a/,
Agent Cards, PA JWT and delegation checks, A2A errors, message:send and its
conversation rules, step-up tasks, receipts, the OAuth endpoints, every page,
self-registration. FrontDoor forwards each request it takes to Serve and
writes pactd's answer as given. What it does itself:

- reads the body, at most MAX_BODY_BYTES; past that (or when it cannot be
  read) it sends body_too_large with no body, and closes the connection
  after answering, so the rest of the body never becomes a next request;
- for a turn, runs the agent (an Agent, or an ASGI A2A app through
  AsgiAgent) to the end even when the client hangs up, within the turn's
  timeout, and writes FinishTurn's answer;
- for a page that needs the User signed in at a trusted-frontend Brand,
  asks the Sessions hook and calls Serve again with the User, or with the
  hook's sign-in URL when nobody is signed in;
- answers a bare 502 when pactd cannot be called (one log line naming the
  RPC) and a bare 500 for an exception of its own (logged with its stack).

By default it takes GET /, everything under /a2a/ and POST /api/platforms
(pact_routes); other requests go to the wrapped app (a bare 404 without one).
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, Callable, Iterable
from urllib.parse import quote

import grpc

from ._pb import frontdoor_pb2
from .agent import Agent, EchoAgent, run_agent
from .asgi import ASGIApp, AsgiAgent, Receive, Scope, Send
from .client import PactdClient, PactdError
from .recover import Recover
from .sessions import Sessions, signed_in

#: How much of a request body is read.
MAX_BODY_BYTES = 1 << 20
#: How long a request body may take to arrive; a slower one is unreadable.
BODY_TIMEOUT = 30.0
#: A turn's bound when pactd names none.
DEFAULT_TURN_TIMEOUT = 60
#: Where PAs register themselves (pactd answers it).
REGISTRATION_PATH = "/api/platforms"

# Request headers not sent to pactd: the User's cookies (pactd needs none)
# and the hop-by-hop fields (RFC 9110 §7.6.1).
_NOT_SENT = frozenset({b"cookie", b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"transfer-encoding", b"upgrade"})
_NOT_PRINTABLE = re.compile(rb"[^\x21-\x7e]")
_TRACEPARENT = re.compile(r"(?!ff)[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")


def pact_routes(scope: Scope) -> bool:
    """Reports whether a request is the front door's: GET /, anything under
    /a2a/, POST /api/platforms."""
    path, method = scope.get("path", ""), scope.get("method", "")
    return path.startswith("/a2a/") or (path == "/" and method == "GET") or (path == REGISTRATION_PATH and method == "POST")


def _target(raw: bytes) -> str:
    """Is a raw path or query as text, each byte outside printable ASCII
    percent-encoded: the same target to a URL parser, and valid UTF-8."""
    return _NOT_PRINTABLE.sub(lambda m: b"%%%02X" % m.group()[0], raw).decode("ascii")


def serve_request(scope: Scope, body: bytes, too_large: bool, signs_in_users: bool) -> Any:
    """Is the ServeRequest of one ASGI request."""
    raw_path = scope.get("raw_path") or quote(scope.get("path", "/").encode("utf-8"), safe="/:@!$&'()*+,;=~").encode("ascii")
    client = scope.get("client")
    address = ""
    if client and len(client) == 2:
        host, port = client
        address = f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    return frontdoor_pb2.ServeRequest(
        method=scope["method"],
        path=_target(raw_path),
        query=_target(scope.get("query_string", b"")),
        headers=[
            frontdoor_pb2.HttpHeader(name=k.decode("latin-1"), value=v.decode("utf-8", "replace"))
            for k, v in scope.get("headers", [])
            if k.lower() not in _NOT_SENT
        ],
        body=body,
        body_too_large=too_large,
        signs_in_users=signs_in_users,
        client_address=address,
    )


def trace_metadata(scope: Scope) -> tuple[tuple[str, str], ...]:
    """Is the request's W3C trace context (traceparent, tracestate) for the
    calls to pactd, so pactd's spans join the caller's trace; () without a
    well-formed traceparent."""
    values: dict[bytes, str] = {}
    for k, v in scope.get("headers", []):
        values.setdefault(k.lower(), v.decode("latin-1"))
    parent, state = values.get(b"traceparent", ""), values.get(b"tracestate", "")
    if not _TRACEPARENT.fullmatch(parent):
        return ()
    if state and len(state) <= 512 and state.isascii() and state.isprintable():
        return (("traceparent", parent), ("tracestate", state))
    return (("traceparent", parent),)


async def read_body(receive: Receive) -> tuple[bytes, bool]:
    """Is the request body and False, or b"" and True when it is larger than
    MAX_BODY_BYTES (the rest is left unread) or cannot be read."""

    async def read() -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"", True
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return b"", True
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False

    try:
        return await asyncio.wait_for(read(), BODY_TIMEOUT)
    except asyncio.TimeoutError:
        return b"", True


async def write(send: Send, status: int, headers: Iterable[tuple[str, str]], body: bytes, close: bool) -> None:
    """Sends a response: the headers in order, then Content-Length when they
    have none (else the server would frame the body as chunks) and, with
    close, Connection: close."""
    raw = [(k.lower().encode("latin-1"), v.encode("utf-8")) for k, v in headers]
    if status >= 200 and status not in (204, 304) and not any(k == b"content-length" for k, _ in raw):
        raw.append((b"content-length", str(len(body)).encode()))
    if close and (b"connection", b"close") not in [(k, v.lower()) for k, v in raw]:
        raw.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _one_line(err: BaseException) -> str:
    return " ".join(f"{type(err).__name__}: {err}".split())[:1000]


class FrontDoor:
    """The front door; an ASGI app.

    app: the wrapped ASGI app, for the requests routes does not take (a bare
    404 without one). pactd: the client of pactd. agent: answers turns, an
    Agent or an AsgiAgent (EchoAgent when None). sessions: the sign-in hook
    for trusted-frontend Brands (without one their pages answer 404).
    routes: which requests go to pactd (pact_routes when None).
    """

    def __init__(
        self,
        app: ASGIApp | None = None,
        *,
        pactd: PactdClient,
        agent: Agent | AsgiAgent | None = None,
        sessions: Sessions | None = None,
        logger: logging.Logger | None = None,
        routes: Callable[[Scope], bool] | None = None,
    ) -> None:
        self.app = app
        self.pactd = pactd
        self.agent = agent or EchoAgent()
        self.sessions = sessions
        self.logger = logger or logging.getLogger("pacta2a")
        self.routes = routes or pact_routes
        self._recovered = Recover(self._serve, self.logger)
        # The running turns, held here so that one whose request was
        # cancelled (the client left) is not garbage collected: it runs on
        # to FinishTurn, so a retry of the messageId finds the stored reply.
        self._turns: set[asyncio.Task[Any]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.routes(scope):
            await self._recovered(scope, receive, send)
        elif self.app is not None:
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await write(send, 404, (), b"", close=False)
        elif scope["type"] == "lifespan":
            # Nothing to start or stop: each startup is acknowledged until shutdown.
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, too_large = await read_body(receive)
        req = serve_request(scope, body, too_large, self.sessions is not None)
        md = trace_metadata(scope)
        try:
            res = await self.pactd.serve(req, md)
            if res.WhichOneof("outcome") == "user_needed" and self.sessions is not None:
                # Serve again with the User, or with where to sign in when
                # nobody is (pactd answers the redirect or the refusal).
                need = res.user_needed
                req.brand_user = await signed_in(self.sessions, scope, need.brand_id)
                if not req.brand_user:
                    req.sign_in_url = self.sessions.login_url(need.brand_id, need.return_to)
                res = await self.pactd.serve(req, md)
            outcome = res.WhichOneof("outcome")
            if outcome == "turn":
                response = await self._turn(res.turn, scope, md)
            elif outcome == "response":
                response = res.response
            else:
                raise PactdError("pact.v1.FrontDoorService/Serve", grpc.StatusCode.UNKNOWN, f"an answer the front door cannot take: {outcome}")
        except PactdError as err:
            self.logger.error("pactd call failed", extra={"pact": {"rpc": err.rpc, "error": str(err)}})
            await write(send, 502, [("cache-control", "no-store")], b"", too_large)
            return
        await write(send, response.status, [(h.name, h.value) for h in response.headers], response.body, too_large)

    async def _turn(self, turn: Any, scope: Scope, md: tuple[tuple[str, str], ...]) -> Any:
        """Runs the turn in a task of its own, which finishes even when this
        request is cancelled; is FinishTurn's response."""
        task = asyncio.ensure_future(self._finish(turn, scope, md))
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(self._orphan_done)
            raise

    def _orphan_done(self, task: asyncio.Task[Any]) -> None:
        """Logs how a turn whose request was cancelled failed, once."""
        if not task.cancelled() and task.exception() is not None:
            err = task.exception()
            self.logger.error("turn failed after its request ended", exc_info=(type(err), err, err.__traceback__))

    async def _finish(self, turn: Any, scope: Scope, md: tuple[tuple[str, str], ...]) -> Any:
        timeout = turn.turn_timeout_seconds if turn.turn_timeout_seconds > 0 else DEFAULT_TURN_TIMEOUT
        try:
            if isinstance(self.agent, AsgiAgent):
                run = self.agent.answer(turn, scope)
            else:
                run = run_agent(self.agent, turn)
            result = await asyncio.wait_for(run, timeout)
        except asyncio.TimeoutError:
            result = frontdoor_pb2.FinishTurnRequest(failure=f"the agent did not answer within {timeout} s")
        except Exception as err:
            self.logger.warning("the agent failed a turn", exc_info=True)
            result = frontdoor_pb2.FinishTurnRequest(failure=_one_line(err))
        result.handle = turn.handle
        return (await self.pactd.finish_turn(result, md)).response
