"""PactMiddleware: every PACT HTTP rule of a Provider's A2A frontend, as pure
ASGI in front of any ASGI app.

Every route under /a2a/{brandId}/ is PACT's and never reaches the wrapped
app: each request is handled in the order of PACT 1.0 §4.3: match the route
(else a bare 404 or 405, before any authentication), then
VerifyAgentRequest (the PA JWT and, when sent, the delegation token; pactd
answers 401 with its exact WWW-Authenticate, 404 for an unknown Brand, 429
with Retry-After), then the route: its fixed A2A error, the task list, or
message:send through pactd's conversation rules, run by the agent. Under
/a2a/{brandId}/oauth/ pactd's OAuth endpoints are reverse-proxied and the
consent and connected-apps pages of both Brand login modes are served.
Everything else goes to the wrapped app.

The agent is an Agent object, or the wrapped ASGI app itself through
AsgiAgent: it then gets a normalized message:send request whose ASGI scope
holds the verified turn (pacta2a.Turn) under the key SCOPE_KEY ("pact").

Limits: a request's target and headers may hold 64 KiB (else 431), a
message:send body is read up to 1 MiB (else INVALID_PARAMS), a
page form or a body for pactd's OAuth endpoints up to 16 KiB (else 413), and
a response sent before the request body was read to its end closes the
connection. Failures: any exception while serving becomes a 500 (A2A
INTERNAL under /a2a/, a bare 500 for the wrapped app), logged once on the
logger with its cause; the process keeps serving every Brand.
"""

from __future__ import annotations

import logging
import re
import secrets
from typing import Any, Callable

import grpc
import httpx

from . import a2a, trace
from .a2a import A2AError
from .agent import Agent, EchoAgent
from .asgi_agent import SCOPE_KEY  # noqa: F401  (re-exported: the key is documented here)
from .call import Call, Endpoint
from .client import PactdClient, PactdError
from ._pb import brand_pb2, common_pb2
from .http import MAX_HEADER_BYTES, ASGIApp, Exchange, Receive, Scope, Send, parse_query, path_escape, split_path
from .oauth import Sessions, oauth_routes
from .pages import BrandView, Pages, View
from .signed import card_facts
from .send import serve_send

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def random_text() -> str:
    """Is 26 random characters of base32, like Go's crypto/rand.Text: a
    reply's messageId."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(26))


def _fixed(mw: PactMiddleware, e: A2AError) -> Endpoint:
    async def serve(ex: Exchange, _: Call) -> None:
        await mw.write_a2a_error(ex, e)

    return Endpoint(serve)


_DIGITS = re.compile("[0-9]+")
_BRAND_ID = re.compile("[A-Za-z0-9_-]{1,64}")

#: How many Brands the root page lists at most.
MAX_ROOT_BRANDS = 200


def accepts_html(accept: list[str]) -> bool:
    """Reports whether Accept header values name text/html without q=0 (RFC
    9110 §12.4.2), as browsers' navigations do."""
    for value in accept:
        for part in value.split(","):
            mt, *params = part.split(";")
            if mt.strip().lower() != "text/html":
                continue
            refused = False
            for p in params:
                k, _, q = p.partition("=")
                try:
                    refused = refused or (k.strip().lower() == "q" and float(q.strip()) == 0)
                except ValueError:
                    pass
            if not refused:
                return True
    return False


class PactMiddleware:
    """The PACT middleware; an ASGI app.

    app: the wrapped ASGI app (paths outside /a2a/), or None for bare 404s.
    pactd: the client of pactd's RPCs. pactd_url: pactd's main-port base
    URL, the OAuth reverse proxy's target. agent: answers message:send
    turns (EchoAgent when None). sessions: who is signed in at a Brand in
    BRAND_LOGIN_MODE_TRUSTED_FRONTEND; without it those Brands' pages answer
    404. http_client: the proxy's client (one with a 30 s timeout when None).
    root_page: serve GET / as the page listing the Brands pactd has and
    linking their Agent Cards (the standalone frontend does); by default
    the app owns every path outside /a2a/.
    """

    def __init__(
        self,
        app: ASGIApp | None = None,
        *,
        pactd: PactdClient,
        pactd_url: str,
        agent: Agent | None = None,
        sessions: Sessions | None = None,
        logger: logging.Logger | None = None,
        turn_timeout: float = 60.0,
        new_message_id: Callable[[], str] = random_text,
        http_client: httpx.AsyncClient | None = None,
        root_page: bool = False,
    ) -> None:
        if not pactd_url.startswith(("http://", "https://")):
            raise ValueError("PactMiddleware needs pactd's base URL (http://host:port)")
        self.app = app
        self.pactd = pactd
        self.pactd_url = pactd_url
        self.agent: Agent = agent or EchoAgent()
        self.sessions = sessions
        self.logger = logger or logging.getLogger("pacta2a")
        self.turn_timeout = turn_timeout
        self.new_message_id = new_message_id
        self.pages = Pages()
        self._http = http_client
        self.root_page = root_page

    @property
    def http(self) -> httpx.AsyncClient:
        """Is the OAuth proxy's HTTP client (made on first use, in the loop)."""
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=30.0, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        """Closes the proxy's HTTP client (the pactd client is the caller's)."""
        if self._http is not None:
            await self._http.aclose()

    def log_error(self, op: str, path: str, error: BaseException | str) -> None:
        """Logs one failure: what failed, on which path, and why."""
        self.logger.error(op, extra={"pact": {"path": path, "error": str(error)}})

    # --- ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and Exchange(scope, receive, send).header_bytes() > MAX_HEADER_BYTES:
            # As Go's server answers past MaxHeaderBytes; the body is not read.
            await Exchange(scope, receive, send).bare(431)
        elif scope["type"] == "http" and (scope.get("raw_path") or scope.get("path", "").encode()).startswith(b"/a2a/"):
            await self._serve_pact(Exchange(scope, receive, send))
        elif self.root_page and scope["type"] == "http" and scope.get("method") == "GET" and scope.get("path") == "/":
            await self._serve_root(Exchange(scope, receive, send))
        elif scope["type"] == "lifespan" and self.app is None:
            await _lifespan(receive, send)
        elif self.app is not None and scope["type"] == "http":
            await self._serve_app(scope, receive, send)
        elif self.app is not None:
            await self.app(scope, receive, send)  # lifespan, websocket: the app's own
        elif scope["type"] == "http":
            await Exchange(scope, receive, send).bare(404)

    async def _serve_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Runs the wrapped app; its failure is a bare 500, logged once."""
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            assert self.app is not None
            await self.app(scope, receive, tracked)
        except Exception as err:
            self.log_error("app", scope.get("path", ""), repr(err))
            if not started:
                await send({"type": "http.response.start", "status": 500, "headers": [(b"content-length", b"0"), (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": b""})

    async def _serve_pact(self, ex: Exchange) -> None:
        """Serves one request under /a2a/; its calls to pactd carry its trace context."""
        token = trace.current.set(trace.trace_metadata(ex.header("traceparent"), ex.header("tracestate")))
        try:
            await self._route(ex)
        except Exception as err:
            # One line per failure, with its cause; the PA sees INTERNAL.
            self.log_error("serve", ex.path, err if isinstance(err, PactdError) else repr(err))
            if not ex.started:
                await self.write_a2a_error(ex, a2a.internal_error())
            # A response already under way cannot become a 500: returning
            # unfinished makes the server close the connection.
        finally:
            trace.current.reset(token)

    async def _route(self, ex: Exchange) -> None:
        split = split_path(ex.raw_path)
        if split is None:
            await self.not_found(ex)
            return
        brand_id, rest = split
        methods = self.routes(rest)
        ep = methods.get(ex.method) if methods else None
        if ep is None:
            if not methods:
                await self.not_found(ex)
            else:
                await ex.bare(405, [("allow", ", ".join(sorted(methods)))])
            return
        call = Call(brand_id)
        if not ep.public:
            authenticated = await self._authenticate(ex, call)
            if authenticated is None:
                return
            call = authenticated
        await ep.serve(ex, call)

    def routes(self, p: list[str]) -> dict[str, Endpoint] | None:
        """Are the endpoints of a path under the interface URL by method; None
        when the path matches no route (PACT §4.3)."""
        if len(p) == 2 and p[0] == ".well-known" and p[1] == "agent-card.json":
            return {"GET": Endpoint(self._card, public=True)}
        if len(p) == 1 and p[0] == "message:send":
            return {"POST": Endpoint(lambda ex, c: serve_send(self, ex, c))}
        if len(p) == 1 and p[0] == "message:stream":
            return {"POST": _fixed(self, a2a.unsupported_operation("Streaming is not supported"))}
        if len(p) == 1 and p[0] == "extendedAgentCard":
            return {"GET": _fixed(self, a2a.unsupported_operation("The extended Agent Card is not supported"))}
        if len(p) == 1 and p[0] == "tasks":
            return {"GET": Endpoint(self._list_tasks)}
        if p[0] == "oauth":
            return oauth_routes(self, "/".join(p[1:]))
        if len(p) < 2 or p[0] != "tasks" or p[1] == "":
            return None
        task = p[1]
        if len(p) == 2 and task.endswith(":cancel") and task != ":cancel":
            return {"POST": _fixed(self, a2a.task_not_found("Task not found: " + task[: -len(":cancel")]))}
        if len(p) == 2 and task.endswith(":subscribe") and task != ":subscribe":
            return {"POST": _fixed(self, a2a.unsupported_operation("Subscribing to tasks is not supported"))}
        if len(p) == 2:
            return {"GET": _fixed(self, a2a.task_not_found("Task not found: " + task))}
        push = _fixed(self, a2a.push_not_supported())
        if len(p) == 3 and p[2] == "pushNotificationConfigs":
            return {"GET": push, "POST": push}
        if len(p) == 4 and p[2] == "pushNotificationConfigs" and p[3] != "":
            return {"GET": push, "DELETE": push}
        return None

    async def _authenticate(self, ex: Exchange, call: Call) -> Call | None:
        """Asks pactd about the request's PA JWT (and delegation token) and the
        Brand. On a refusal it sends pactd's status and headers with no body
        and returns None."""
        v = await self.pactd.verify_agent_request(
            call.brand_id,
            # Repeated headers are joined, so pactd sees (and refuses) them.
            ", ".join(ex.header_values("authorization")),
            ", ".join(ex.header_values("x-a2a-user-delegation")),
        )
        if not v.allowed:
            headers = []
            if v.www_authenticate:
                headers.append(("www-authenticate", v.www_authenticate))
            if v.retry_after_seconds > 0:
                headers.append(("retry-after", str(v.retry_after_seconds)))
            status = v.http_status if 400 <= v.http_status <= 599 else 401  # a refusal is never a success
            await ex.bare(status, headers)
            return None
        if v.caller is None:
            raise RuntimeError("verify agent request: allowed without a caller")
        return Call(call.brand_id, v.caller, v.delegation)

    async def _serve_root(self, ex: Exchange) -> None:
        """Serves GET /: the Brands pactd has, by display name, each with its
        Agent Card's link (and the connected page's, when it offers
        delegation), as the Go frontend's."""
        v = View(title="PACT Provider")
        token = ""
        try:
            while len(v.brands) < MAX_ROOT_BRANDS:
                res = await self.pactd.list_brands(brand_pb2.ListBrandsRequest(page=common_pb2.PageRequest(page_size=100, page_token=token)))
                for b in res.brands:
                    base = "/a2a/" + path_escape(b.brand_id)
                    v.brands.append(
                        BrandView(
                            b.brand_id,
                            b.display_name,
                            b.description,
                            base + "/.well-known/agent-card.json",
                            # Only a trusted-frontend Brand's Users can list their grants here.
                            base + "/oauth/connected"
                            if b.delegation.enabled and b.delegation.login_mode == brand_pb2.BRAND_LOGIN_MODE_TRUSTED_FRONTEND
                            else "",
                        )
                    )
                if not res.next_page_token:
                    break
                token = res.next_page_token
        except PactdError as err:
            self.log_error("list brands", ex.path, err)
            await self.pages.render(ex, 500, "root", View(title="PACT Provider", error="The Brands cannot be listed right now. Try again later."))
            return
        await self.pages.render(ex, 200, "root", v)

    async def brand_name(self, brand_id: str) -> str:
        """Is the Brand's display name (its Agent Card's name), or "" when
        pactd does not know the Brand or cannot answer: for pages outside the
        middleware, such as a Brand's sign-in."""
        try:
            res = await self.pactd.get_agent_card(brand_id)
        except PactdError:
            return ""
        return card_facts(res.card_json)[0]

    async def not_found(self, ex: Exchange, brand_id: str = "") -> None:
        """Answers 404. A browser (a GET that accepts text/html) gets a page
        saying what is missing and linking the root page; every other client
        gets the bare 404 PACT 1.0 §1.2 and §1.3 require, byte for byte."""
        if ex.method != "GET" or not accepts_html(ex.header_values("accept")):
            await ex.bare(404)
            return
        v = View(title="Page not found", error="There is no page at this address.")
        if brand_id:
            v.title = "Brand not found"
            # Echo only what a Brand id can be.
            v.error = (
                f"This Provider serves no Brand named “{brand_id}”." if _BRAND_ID.fullmatch(brand_id) else "This Provider serves no such Brand."
            )
        await self.pages.render(ex, 404, "notfound", v)

    async def _card(self, ex: Exchange, call: Call) -> None:
        """Serves the Brand's Agent Card, built by pactd (PACT §2.1)."""
        try:
            res = await self.pactd.get_agent_card(call.brand_id)
        except PactdError as err:
            if err.code == grpc.StatusCode.NOT_FOUND:
                await self.not_found(ex, call.brand_id)  # never application/a2a+json (PACT 1.0 §1.2)
                return
            raise
        await ex.respond(
            200,
            [
                ("content-type", res.content_type),
                ("cache-control", res.cache_control),
                ("access-control-allow-origin", "*"),
            ],
            res.card_json.encode("utf-8"),
        )

    async def _list_tasks(self, ex: Exchange, _: Call) -> None:
        """Answers GET tasks: ordinary turns create no tasks, so the list is
        always empty; only pageSize is read (1 to 100, default 50)."""
        size = 50
        q = parse_query(ex.query) or {}
        if "pageSize" in q:
            vals = q["pageSize"]
            # Digits only (no sign, no other script's digits); leading zeros
            # are fine, as for Go's strconv.Atoi, and never reach int().
            digits = vals[0].lstrip("0") if len(vals) == 1 and _DIGITS.fullmatch(vals[0]) else "x"
            if not (len(digits) <= 3 and digits.isdigit() and 1 <= int(digits) <= 100):
                await self.write_a2a_error(ex, a2a.invalid_params("pageSize must be an integer from 1 to 100"))
                return
            size = int(digits)
        await self.write_a2a(ex, 200, b'{"tasks":[],"nextPageToken":"","pageSize":%d,"totalSize":0}' % size)

    async def write_a2a(self, ex: Exchange, status: int, body: bytes) -> None:
        """Sends an A2A response body."""
        await ex.respond(status, [("content-type", a2a.CONTENT_TYPE)], body)

    async def write_a2a_error(self, ex: Exchange, e: A2AError) -> None:
        """Sends an A2A error."""
        await self.write_a2a(ex, e.http_status, e.body())


async def _lifespan(receive: Receive, send: Send) -> None:
    """Answers the lifespan protocol when there is no wrapped app."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
