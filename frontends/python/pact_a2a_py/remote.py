"""RemoteAgent: the Brand's agent in another process, over HTTP (the
protocol of docs/frontends.md, as frontends/node/src/remote.ts).

Request:  POST {"brandId","contextId","newContext","text",
          "caller":{"agentId","issuer","subject","agentDisplayName"},
          "delegation":{"grantId","brandUser","scopes","authorizationDetailsJson",
            "authorizationDetails":[{"type","json","members":[{"name","values","array"}]}]} or null}
Answer:   200 {"text","needScopes"?,"scopesUsed"?,"actions"?:[{"tool","args"?}]}

Anything else fails the turn (INTERNAL; the PA may retry the messageId).
It lets a Brand's agent be written in any language, and lets the shared
end-to-end suite drive this frontend with the same instrumented agent as
the Go one.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from pacta2a import Action, Reply, Turn

#: The bound of a remote agent's answer.
MAX_REPLY_BYTES = 1 << 20


def turn_json(t: Turn) -> dict[str, Any]:
    """Is the request body for a turn."""
    d = t.delegation
    return {
        "brandId": t.brand_id,
        "contextId": t.context_id,
        "newContext": t.new_context,
        "text": t.text,
        "caller": {
            "agentId": t.caller.agent_id,
            "issuer": t.caller.issuer,
            "subject": t.caller.subject,
            "agentDisplayName": t.caller.agent_display_name,
        },
        "delegation": None
        if d is None
        else {
            "grantId": d.grant_id,
            "brandUser": d.brand_user,
            "scopes": list(d.scopes),
            "authorizationDetailsJson": d.authorization_details_json,
            "authorizationDetails": [
                {
                    "type": a.type,
                    "json": a.json,
                    "members": [{"name": m.name, "values": list(m.values), "array": m.array} for m in a.members],
                }
                for a in d.authorization_details
            ],
        },
    }


def _strings(v: Any, name: str) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise ValueError(f"remote agent: {name} must be an array of strings")
    return v


def parse_reply(v: Any) -> Reply:
    """Checks a remote agent's answer."""
    if not isinstance(v, dict):
        raise ValueError("remote agent: the answer must be an object")
    if not isinstance(v.get("text"), str):
        raise ValueError("remote agent: text must be a string")
    actions = []
    raw = v.get("actions")
    if raw is not None:
        if not isinstance(raw, list):
            raise ValueError("remote agent: actions must be an array")
        for a in raw:
            if not isinstance(a, dict) or not isinstance(a.get("tool"), str):
                raise ValueError("remote agent: each action needs a tool")
            actions.append(Action(a["tool"], a.get("args")))
    return Reply(
        text=v["text"],
        need_scopes=_strings(v.get("needScopes"), "needScopes"),
        scopes_used=_strings(v.get("scopesUsed"), "scopesUsed"),
        actions=actions,
    )


class RemoteAgent:
    """An agent in another process (a pacta2a.Agent)."""

    def __init__(self, url: str, client: httpx.AsyncClient | None = None) -> None:
        self.url = url
        self._client = client

    @property
    def client(self) -> httpx.AsyncClient:
        """Is the HTTP client (made on first use, in the loop)."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=60.0)
        return self._client

    async def aclose(self) -> None:
        """Closes the HTTP client."""
        if self._client is not None:
            await self._client.aclose()

    async def reply(self, turn: Turn) -> Reply:
        """POSTs the turn and reads the answer."""
        async with self.client.stream("POST", self.url, json=turn_json(turn)) as res:
            if res.status_code != 200:
                raise RuntimeError(f"remote agent answered {res.status_code}")
            body = b""
            async for chunk in res.aiter_bytes():
                body += chunk
                if len(body) > MAX_REPLY_BYTES:
                    raise RuntimeError("remote agent answer too large")
        return parse_reply(json.loads(body))
