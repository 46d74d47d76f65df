"""Panic recovery for ASGI: an exception while serving a request is logged
once with its stack and answered with a bare 500, and the process goes on
serving every Brand."""

from __future__ import annotations

import logging

from .asgi import ASGIApp, Message, Receive, Scope, Send


class Recover:
    """Wraps an ASGI app. When the app raises before its response started,
    the client gets ``500`` with no body and ``Connection: close`` (the
    request body may be unread); after, the response stays unfinished and
    the server closes the connection."""

    def __init__(self, app: ASGIApp, logger: logging.Logger | None = None) -> None:
        self.app = app
        self.logger = logger or logging.getLogger("pacta2a")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception:
            self.logger.exception("serving %s %s failed", scope.get("method", ""), scope.get("path", ""))
            if scope["type"] == "http" and not started:
                await send({"type": "http.response.start", "status": 500, "headers": [(b"content-length", b"0"), (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": b""})
