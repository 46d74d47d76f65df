"""The Brand's agent: the only part of a frontend that is Brand logic.

An agent is any object with ``async def reply(self, turn: Turn) -> Reply``.
The middleware calls it for a message:send turn that pactd says to run,
after the PA JWT (and any delegation token) was verified; what it returns
becomes the reply, a step-up task or, with a delegation, a signed receipt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from .client import Caller, Delegation


@dataclass(frozen=True, slots=True)
class Turn:
    """What the agent knows about one User message."""

    #: The Brand the PA is talking to.
    brand_id: str
    #: The conversation (contextId).
    context_id: str
    #: True on the conversation's first turn.
    new_context: bool
    #: The User's message: its text parts joined by newlines.
    text: str
    #: The PA and its User, as pactd verified them.
    caller: Caller
    #: The grant of a verified delegation token, or None for an
    #: identity-only turn. When set, the agent acts as delegation.brand_user,
    #: limited to delegation.scopes (and its authorization_details).
    delegation: Delegation | None
    #: The PA's message as sent, with contextId set to pactd's (for agents
    #: that want more than the text, such as an ASGI A2A app).
    message: Mapping[str, Any] = field(default_factory=dict)
    #: The request's own metadata (SendMessageRequest.metadata), if the PA sent one.
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Action:
    """One tool call of a delegated reply."""

    #: The tool name.
    tool: str
    #: The tool's arguments; the receipt carries the base64url SHA-256 of
    #: their JSON (keys sorted). None for none.
    args: Any = None


@dataclass(frozen=True, slots=True)
class Reply:
    """The agent's answer."""

    #: The reply message's single text part.
    text: str
    #: Scopes the turn needs and the caller lacks (or all it needs, on a turn
    #: without delegation): the turn is answered with the step-up task of
    #: PACT §5.5 instead, and text is sent only when the Brand offers no
    #: delegation.
    need_scopes: Sequence[str] = ()
    #: The scopes the reply relied on, for the receipt of a delegated reply.
    scopes_used: Sequence[str] = ()
    #: The tools the reply ran, for the receipt.
    actions: Sequence[Action] = ()
    #: Further metadata of the reply message (keys not starting with
    #: "pact."), sent as is; the middleware adds "pact.receipt".
    metadata: Mapping[str, Any] | None = None


class Agent(Protocol):
    """Answers User turns. An exception abandons the turn (the PA may send
    the same messageId again) and is answered INTERNAL."""

    async def reply(self, turn: Turn) -> Reply:
        """Answers one User turn."""
        ...


class EchoAgent:
    """A demonstration agent: it repeats the User's text and names the Brand."""

    async def reply(self, turn: Turn) -> Reply:
        """Echoes the turn's text."""
        return Reply(text=f"This is the {turn.brand_id} support agent. You said: {turn.text}")
