"""The asyncio client of pactd's RPCs a frontend calls, over gRPC.

pactd answers gRPC on its native gRPC port (default 127.0.0.1:7071) and on
its main port (127.0.0.1:7070, h2c); both take the same credential::

    pactd = PactdClient.from_url("http://127.0.0.1:7070", token)   # main port
    pactd = PactdClient("127.0.0.1:7071", token)                   # native port

Every call carries ``authorization: Bearer <frontend token>`` and a deadline
(``timeout``, 10 s unless given). A failed call raises PactdError naming the
RPC and the gRPC code. Nothing is retried beyond gRPC's own transparent
retry of a call that never left this process: Serve hands out turns, which
claim a messageId once.

The channel is opened on the first call, in the event loop that makes it
(grpc.aio binds a channel to its loop), so a client may be built before the
server's loop runs.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import grpc
import grpc.aio

from ._pb import frontdoor_pb2

#: pactd's front door RPCs.
SERVE = "pact.v1.FrontDoorService/Serve"
FINISH_TURN = "pact.v1.FrontDoorService/FinishTurn"


class PactdError(Exception):
    """A call to pactd failed: which RPC, the gRPC code and the message."""

    def __init__(self, rpc: str, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"pactd {rpc}: {code.name}: {message}")
        self.rpc = rpc
        self.code = code
        self.message = message


class PactdClient:
    """pactd's RPCs for a frontend: target is host:port; token the frontend
    credential (pactd credential create -role frontend); secure uses TLS
    (root_certificates: PEM, or the system's when None)."""

    def __init__(
        self,
        target: str,
        token: str,
        *,
        secure: bool = False,
        root_certificates: bytes | None = None,
        timeout: float = 10.0,
    ) -> None:
        if not token or not token.isascii() or not token.isprintable() or " " in token:
            raise ValueError("PactdClient needs the frontend token: printable ASCII without spaces")
        self.target = target
        self.timeout = timeout
        self._auth = ("authorization", "Bearer " + token)
        self._secure = secure
        self._roots = root_certificates
        self._channel: grpc.aio.Channel | None = None
        self._methods: dict[str, Any] = {}

    @classmethod
    def from_url(cls, url: str, token: str, **kwargs: Any) -> PactdClient:
        """Is a client of pactd's main port at url (http:// for h2c,
        https:// for TLS), e.g. PACTD_URL."""
        u = urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname or u.path not in ("", "/") or u.query:
            raise ValueError(f"pactd's URL must be http(s)://host[:port], not {url!r}")
        port = u.port or (443 if u.scheme == "https" else 80)
        host = f"[{u.hostname}]" if ":" in u.hostname else u.hostname
        return cls(f"{host}:{port}", token, secure=u.scheme == "https", **kwargs)

    async def call(self, rpc: str, request: Any, response_type: Any, metadata: tuple[tuple[str, str], ...] = ()) -> Any:
        """Calls one unary RPC by its full name ("pact.v1.Service/Method")
        and returns its response_type answer; PactdError when it fails."""
        if self._channel is None:
            self._channel, self._methods = self._open(), {}
        method = self._methods.get(rpc)
        if method is None:
            method = self._methods[rpc] = self._channel.unary_unary(
                "/" + rpc, request_serializer=type(request).SerializeToString, response_deserializer=response_type.FromString
            )
        try:
            return await method(request, timeout=self.timeout, metadata=(self._auth, *metadata))
        except grpc.aio.AioRpcError as err:
            raise PactdError(rpc, err.code(), err.details() or "") from None

    def _open(self) -> grpc.aio.Channel:
        if self._secure:
            creds = grpc.ssl_channel_credentials(root_certificates=self._roots)
            return grpc.aio.secure_channel(self.target, creds)
        return grpc.aio.insecure_channel(self.target)

    async def serve(self, req: Any, metadata: tuple[tuple[str, str], ...] = ()) -> Any:
        """FrontDoorService.Serve: pactd's answer to one HTTP request."""
        return await self.call(SERVE, req, frontdoor_pb2.ServeResponse, metadata)

    async def finish_turn(self, req: Any, metadata: tuple[tuple[str, str], ...] = ()) -> Any:
        """FrontDoorService.FinishTurn: the finished answer to a turn."""
        return await self.call(FINISH_TURN, req, frontdoor_pb2.FinishTurnResponse, metadata)

    async def close(self) -> None:
        """Closes the channel; the next call opens a new one."""
        if self._channel is not None:
            channel, self._channel = self._channel, None
            await channel.close()

    async def __aenter__(self) -> PactdClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
