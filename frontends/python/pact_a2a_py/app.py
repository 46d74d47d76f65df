"""The frontend as one ASGI app: PactMiddleware in front of a Starlette app
that serves the demo Brand's sign-in (with -demo) and a bare 404 for
anything else outside /a2a/."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pacta2a import REGISTRATION_PATH, Agent, EchoAgent, PactdClient, PactMiddleware, RegistrationApp
from pacta2a.http import ASGIApp, Receive, Scope, Send

from .demo_agent import DemoAgent
from .demo_login import DemoLogin
from .remote import RemoteAgent
from .settings import Settings


async def _not_found(request: Request, exc: Exception) -> Response:
    return Response(status_code=404)


@dataclass
class Frontend:
    """The composed app and what must be closed after serving."""

    app: PactMiddleware
    pactd: PactdClient
    remote: RemoteAgent | None

    async def aclose(self) -> None:
        """Closes the clients."""
        await self.app.aclose()
        await self.pactd.close()
        if self.remote is not None:
            await self.remote.aclose()


def _with_registration(site: ASGIApp, register: RegistrationApp) -> ASGIApp:
    """Serves REGISTRATION_PATH (that path only, as Go's mux) with register, the rest with site."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") == REGISTRATION_PATH:
            await register(scope, receive, send)
        else:
            await site(scope, receive, send)

    return app


def build(s: Settings, logger: logging.Logger | None = None) -> Frontend:
    """Composes the frontend for the settings."""
    if s.transport == "grpc-native":
        pactd = PactdClient(s.pactd_grpc, s.token)
    else:
        pactd = PactdClient.from_url(s.pactd, s.token)
    routes: list[Any] = []
    agent: Agent = EchoAgent()
    login = None
    if s.demo:
        login = DemoLogin()
        agent = DemoAgent()
        routes.append(Route("/demo/{brand_id}/login", login, methods=["GET", "POST"]))
    remote = None
    if s.agent_url:
        agent = remote = RemoteAgent(s.agent_url)
    site: ASGIApp = Starlette(routes=routes, exception_handlers={404: _not_found})
    if s.public_url:
        # As cmd/pact-a2a -public-url: self-service PA registration, aud = the public URL + /api/platforms.
        site = _with_registration(site, RegistrationApp(pactd, s.public_url.removesuffix("/") + REGISTRATION_PATH))
    app = PactMiddleware(site, pactd=pactd, pactd_url=s.pactd, agent=agent, sessions=login, logger=logger, root_page=True)
    if login is not None:
        login.brand_name = app.brand_name  # the sign-in names the Brand by its display name
    return Frontend(app, pactd, remote)
