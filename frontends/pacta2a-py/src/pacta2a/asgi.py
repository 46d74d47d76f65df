"""AsgiAgent: an ASGI A2A app (an SDK's HTTP+JSON routes, Starlette,
FastAPI) behind the front door, answering its turns.

For a turn pactd hands out, the app gets ``POST {turn.sdk_path}`` (e.g.
``/a2a/acme/message:send``) with pactd's SendMessageRequest as the body
(``{"message": the PA's message with pactd's contextId, "metadata"?}``),
the PA's request headers minus Authorization, X-A2A-User-Delegation,
Cookie, Content-Type, Content-Length, A2A-Version and the hop-by-hop ones,
plus ``Content-Type: application/json`` and ``A2A-Version: 1.0``. The
verified pacta2a.Turn (brand_id, caller, delegation, ...) is in the ASGI
scope under SCOPE_KEY ("pact").

The app's status and body (at most 1 MiB; past that the turn fails) go to
pactd as they are, which reads them: a Message (its metadata's
``pact.scopesUsed`` and ``pact.actions`` name what the receipt records:
with_receipt), a step-up Task (step_up_task) or an A2A error.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, MutableMapping
from urllib.parse import unquote

from ._pb import frontdoor_pb2
from .agent import Action, Turn, turn_from_proto

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The ASGI scope key under which the request handed to the app carries
#: its verified pacta2a.Turn.
SCOPE_KEY = "pact"

#: The bound of the app's answer.
MAX_ANSWER_BYTES = 1 << 20

#: Request headers the app never sees (lower case): the PA's credentials,
#: the User's cookies, the ones replaced, and the hop-by-hop ones.
DROPPED_HEADERS = frozenset(
    {
        b"authorization",
        b"x-a2a-user-delegation",
        b"cookie",
        b"content-type",
        b"content-length",
        b"a2a-version",
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)


class AsgiAgent:
    """Runs each turn through an ASGI A2A app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def answer(self, turn: Any, request_scope: Scope) -> Any:
        """Hands pactd's turn to the app as the request it made of the PA's
        (request_scope); is the FinishTurnRequest carrying the app's answer."""
        body = turn.sdk_request_json.encode("utf-8")
        headers = [(k, v) for k, v in request_scope.get("headers", []) if k.lower() not in DROPPED_HEADERS]
        headers += [(b"content-type", b"application/json"), (b"a2a-version", b"1.0"), (b"content-length", str(len(body)).encode())]
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": request_scope.get("http_version", "1.1"),
            "method": "POST",
            "scheme": request_scope.get("scheme", "http"),
            "path": unquote(turn.sdk_path),
            "raw_path": turn.sdk_path.encode("ascii"),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": request_scope.get("client"),
            "server": request_scope.get("server"),
            SCOPE_KEY: turn_from_proto(turn),
        }
        sent = complete = False
        done = asyncio.Event()
        status = 0
        chunks: list[bytes] = []
        size = 0

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()  # the client stays until the answer is complete
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            nonlocal status, size, complete
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body" and status:
                chunk = bytes(message.get("body", b""))
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise ValueError("the A2A app's answer is larger than 1 MiB")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    complete = True
                    done.set()

        try:
            await self.app(scope, receive, send)
        finally:
            done.set()
        if not complete or size > MAX_ANSWER_BYTES:
            raise ValueError("the A2A app returned without an answer")
        return frontdoor_pb2.FinishTurnRequest(sdk_answer=frontdoor_pb2.SdkAnswer(status=status, body=b"".join(chunks)))


def step_up_task(turn: Turn, text: str, *scopes: str) -> dict[str, Any]:
    """Is the answer an app sends for a step-up: a Task in
    TASK_STATE_AUTH_REQUIRED asking for scopes (text is the reply when the
    Brand offers no delegation)."""
    return {
        "task": {
            "id": "step-up",
            "contextId": turn.context_id,
            "status": {
                "state": "TASK_STATE_AUTH_REQUIRED",
                "message": {"messageId": "step-up", "contextId": turn.context_id, "role": "ROLE_AGENT", "parts": [{"text": text}]},
            },
            "metadata": {"pact.missingScopes": list(scopes)},
        }
    }


def with_receipt(message: dict[str, Any], scopes_used: list[str], *actions: Action) -> dict[str, Any]:
    """Is a reply message with what the receipt of a delegated turn records
    added to its metadata (pact.scopesUsed, pact.actions: each tool with its
    args, which pactd hashes)."""
    meta = dict(message.get("metadata") or {})
    meta["pact.scopesUsed"] = list(scopes_used)
    meta["pact.actions"] = [{"tool": a.tool, **({"args": a.args} if a.args is not None else {})} for a in actions]
    return {**message, "metadata": meta}
