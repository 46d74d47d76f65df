"""AsgiAgent: an ASGI A2A app (Starlette, FastAPI, an SDK's routes) as the
middleware's agent, by the contract of docs/frontends.md ("SDK middleware").

For a turn pactd says to run, the app gets a normalized request:
``POST {interface path}/message:send`` with ``Content-Type:
application/json``, ``A2A-Version: 1.0`` and the body ``{"message": <the
PA's message, contextId set to pactd's>, "metadata"?}``; none of the PA's
headers (its Authorization, X-A2A-User-Delegation and Cookie stay out). The
verified pacta2a.Turn is in the ASGI scope under SCOPE_KEY ("pact").

It answers in A2A JSON:

- ``{"message": Message}`` (ROLE_AGENT, text parts only): the reply, its
  text parts joined with newlines. Its metadata's ``pact.scopesUsed`` (array
  of scope ids) and ``pact.actions`` (array of {"tool", "args"?}) feed the
  receipt of a delegated turn; other ``pact.`` keys are dropped, the rest
  passed on.
- ``{"task": Task}`` in TASK_STATE_AUTH_REQUIRED whose metadata has a
  non-empty ``pact.missingScopes``: a step-up (its status message's text is
  the reply when the Brand offers no delegation).
- an A2A error whose reason is INVALID_PARAMS, CONTENT_TYPE_NOT_SUPPORTED
  or UNSUPPORTED_OPERATION: sent to the PA with the app's message.

Anything else fails the turn (INTERNAL, logged once; the messageId is
released so the PA may retry). The app's answer is read up to 1 MiB.
"""

from __future__ import annotations

from typing import Any

from . import a2a
from .agent import Action, Reply, Turn
from .http import MAX_SEND_BYTES, ASGIApp, Message, path_escape
from .send import AgentRefusal

#: The ASGI scope key under which a message:send request handed to the app
#: carries its verified pacta2a.Turn.
SCOPE_KEY = "pact"


class AsgiAgent:
    """Runs each turn through an ASGI A2A app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def reply(self, turn: Turn) -> Reply:
        """Hands the turn to the app and reads its answer."""
        request: dict[str, Any] = {"message": dict(turn.message)}
        if turn.metadata is not None:
            request["metadata"] = dict(turn.metadata)
        body = a2a.marshal(request)
        path = "/a2a/" + turn.brand_id + "/message:send"
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": ("/a2a/" + path_escape(turn.brand_id) + "/message:send").encode("ascii"),
            "query_string": b"",
            "root_path": "",
            "headers": [
                (b"content-type", b"application/json"),
                (b"a2a-version", b"1.0"),
                (b"content-length", str(len(body)).encode()),
            ],
            "client": None,
            "server": None,
            SCOPE_KEY: turn,
        }
        sent = False
        status = 0
        chunks: list[bytes] = []
        size = 0
        done = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            nonlocal status, size, done
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                chunk = bytes(message.get("body", b""))
                size += len(chunk)
                if size > MAX_SEND_BYTES:
                    raise ValueError("the agent's answer is larger than 1 MiB")
                chunks.append(chunk)
                done = not message.get("more_body", False)

        await self.app(scope, receive, send)
        if not done:
            raise ValueError("the agent app did not finish its answer")
        return parse_answer(status, b"".join(chunks))


def _strings(v: Any, name: str) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise ValueError(f"agent answer: {name} must be an array of strings")
    return v


def _text(message: Any) -> str:
    if not isinstance(message, dict) or message.get("role") != "ROLE_AGENT":
        raise ValueError("agent answer: not an agent message")
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        raise ValueError("agent answer: the message has no parts")
    texts = []
    for p in parts:
        if not isinstance(p, dict) or not isinstance(p.get("text"), str) or any(k in p for k in ("raw", "url", "data")):
            raise ValueError("agent answer: only text parts are supported")
        texts.append(p["text"])
    return "\n".join(texts)


def parse_answer(status: int, body: bytes) -> Reply:
    """Reads an ASGI agent's answer (see the module's doc comment)."""
    try:
        v = a2a.loads(body)
    except ValueError as exc:
        raise ValueError(f"agent answer: {status}, not JSON") from exc
    if not isinstance(v, dict):
        raise ValueError("agent answer: not a JSON object")
    if status != 200:
        err = v.get("error")
        details = err.get("details") if isinstance(err, dict) else None
        reason = details[0].get("reason") if isinstance(details, list) and details and isinstance(details[0], dict) else None
        message = err.get("message") if isinstance(err, dict) else None
        make = a2a.AGENT_REASONS.get(reason) if isinstance(reason, str) else None
        if make is not None and isinstance(message, str):
            raise AgentRefusal(make(message))
        raise ValueError(f"agent answer: status {status}")
    if "message" in v:
        m = v["message"]
        text = _text(m)
        meta = m.get("metadata") or {}
        if not isinstance(meta, dict):
            raise ValueError("agent answer: metadata must be an object")
        actions = []
        raw_actions = meta.get("pact.actions")
        if raw_actions is not None:
            if not isinstance(raw_actions, list):
                raise ValueError("agent answer: pact.actions must be an array")
            for a in raw_actions:
                if not isinstance(a, dict) or not isinstance(a.get("tool"), str):
                    raise ValueError("agent answer: each of pact.actions needs a tool")
                actions.append(Action(a["tool"], a.get("args")))
        rest = {k: x for k, x in meta.items() if not k.startswith("pact.")}
        return Reply(
            text=text,
            scopes_used=_strings(meta.get("pact.scopesUsed"), "pact.scopesUsed"),
            actions=actions,
            metadata=rest or None,
        )
    if "task" in v:
        t = v["task"]
        st = t.get("status") if isinstance(t, dict) else None
        meta = t.get("metadata") if isinstance(t, dict) else None
        need = _strings(meta.get("pact.missingScopes"), "pact.missingScopes") if isinstance(meta, dict) else []
        if not isinstance(st, dict) or st.get("state") != "TASK_STATE_AUTH_REQUIRED" or not need:
            raise ValueError("agent answer: a task other than a step-up (TASK_STATE_AUTH_REQUIRED with pact.missingScopes)")
        return Reply(text=_text(st.get("message")), need_scopes=need)
    raise ValueError("agent answer: neither a message nor a task")


def step_up_task(turn: Turn, text: str, *scopes: str) -> dict[str, Any]:
    """Is the answer an ASGI agent sends for a step-up: a Task in
    TASK_STATE_AUTH_REQUIRED asking for scopes."""
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
    """Is a reply message with the receipt metadata of a delegated turn
    (pact.scopesUsed, pact.actions) added."""
    meta = dict(message.get("metadata") or {})
    meta["pact.scopesUsed"] = list(scopes_used)
    meta["pact.actions"] = [{"tool": a.tool, **({"args": a.args} if a.args is not None else {})} for a in actions]
    return {**message, "metadata": meta}
