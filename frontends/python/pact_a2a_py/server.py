"""The HTTP/1.1 server's limits, on uvicorn's h11 protocol: h11 buffers an
unfinished request head up to 64 KiB plus the request line's slack (uvicorn
0.17 leaves it at 16 KiB and offers no setting), HeadBound holds every
request head to exactly 64 KiB (431 past it, as Go's frontend's
MaxHeaderBytes; a head that arrives whole in one read passes h11's bound),
and a request's head must arrive within 10 s (uvicorn has no such timeout;
Go's frontend has ReadHeaderTimeout), so a slow client cannot hold a
connection by never finishing its headers.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: How much of an unfinished request head h11 buffers.
MAX_HEADER_BYTES = (64 << 10) + 4096
#: The bound of a request's target and headers together, as Go's
#: MaxHeaderBytes of the Go frontend counts them.
MAX_HEAD_BYTES = 64 << 10
#: How long a request's headers may take to arrive.
HEADER_TIMEOUT = 10.0


class PactH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the limits above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER_BYTES)
        self._header_timer: asyncio.TimerHandle | None = None

    def _waiting_for_request(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def data_received(self, data: bytes) -> None:
        if self._waiting_for_request() and self._header_timer is None:
            self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._headers_too_slow)
        before = self.cycle
        super().data_received(data)
        if self.cycle is not before and self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self._waiting_for_request() and not self.transport.is_closing():
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)


class HeadBound:
    """An ASGI app's guard: a request whose target and headers pass
    MAX_HEAD_BYTES gets a bare 431 (its body unread, so the connection
    closes) and never reaches the app."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            size = len(scope.get("raw_path") or b"") + len(scope.get("query_string", b"")) + sum(len(k) + len(v) + 4 for k, v in scope["headers"])
            if size > MAX_HEAD_BYTES:
                await send({"type": "http.response.start", "status": 431, "headers": [(b"content-length", b"0"), (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": b""})
                return
        await self.app(scope, receive, send)
