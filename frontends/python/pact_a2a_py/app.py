"""The frontend as one ASGI app: pacta2a's FrontDoor takes every request
but the demo Brand's sign-in (/demo/…, with -demo) and, without
-public-url, self-registration (POST /api/platforms); pactd answers them
all, from the root page to the HTML 404. What the front door does not take
goes to a Starlette app: the sign-in, and a bare 404 for anything else."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pacta2a import REGISTRATION_PATH, Agent, EchoAgent, FrontDoor, PactdClient, PactdError, Recover
from pacta2a._pb import load

from .demo_agent import DemoAgent
from .demo_login import DemoLogin
from .remote import RemoteAgent
from .settings import Settings

_brand_pb2 = load("brand_pb2")


async def _not_found(request: Request, exc: Exception) -> Response:
    return Response(status_code=404)


@dataclass
class Frontend:
    """The composed app and what must be closed after serving."""

    app: Any
    pactd: PactdClient
    remote: RemoteAgent | None

    async def aclose(self) -> None:
        """Closes the clients."""
        await self.pactd.close()
        if self.remote is not None:
            await self.remote.aclose()


def brand_name(pactd: PactdClient) -> Callable[[str], Any]:
    """Is a lookup of a Brand's display name, "" when pactd does not know
    the Brand or cannot answer: for the sign-in."""

    async def lookup(brand_id: str) -> str:
        try:
            res = await pactd.call(
                "pact.v1.BrandService/GetAgentCard", _brand_pb2.GetAgentCardRequest(brand_id=brand_id), _brand_pb2.GetAgentCardResponse
            )
        except PactdError:
            return ""
        return res.display_name

    return lookup


def routes(s: Settings) -> Callable[[Any], bool]:
    """Is which requests the front door takes: all but the demo sign-in's
    and, without a public URL, self-registration's."""

    def takes(scope: Any) -> bool:
        path = scope.get("path", "")
        if s.demo and path.startswith("/demo/"):
            return False
        return bool(s.public_url) or path != REGISTRATION_PATH

    return takes


def build(s: Settings, logger: logging.Logger | None = None) -> Frontend:
    """Composes the frontend for the settings."""
    if s.transport == "grpc-native":
        pactd = PactdClient(s.pactd_grpc, s.token)
    else:
        pactd = PactdClient.from_url(s.pactd, s.token)
    site_routes: list[Any] = []
    agent: Agent = EchoAgent()
    login = None
    if s.demo:
        login = DemoLogin()
        login.brand_name = brand_name(pactd)  # the sign-in names the Brand by its display name
        agent = DemoAgent()
        site_routes.append(Route("/demo/{brand_id}/login", login, methods=["GET", "POST"]))
    remote = None
    if s.agent_url:
        agent = remote = RemoteAgent(s.agent_url)
    site = Recover(Starlette(routes=site_routes, exception_handlers={404: _not_found}), logger)
    app = FrontDoor(site, pactd=pactd, agent=agent, sessions=login, logger=logger, routes=routes(s))
    return Frontend(app, pactd, remote)
