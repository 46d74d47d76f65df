"""The Brand's agent: the only part of a frontend that is Brand logic.

An agent is any object with ``async def reply(self, turn: Turn) -> Reply``.
The front door calls it for a message:send turn pactd hands out, after pactd
verified the PA JWT (and any delegation token) and the conversation rules;
pactd makes what it returns the reply, a step-up task or, with a
delegation, a reply with a signed receipt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Protocol, Sequence

from ._pb import frontdoor_pb2, token_pb2


@dataclass(frozen=True, slots=True)
class Caller:
    """The PA and the User it acts for, as pactd verified them. The User is
    the pair (agent_id, subject)."""

    agent_id: str
    issuer: str
    subject: str
    agent_display_name: str


@dataclass(frozen=True, slots=True)
class AuthorizationDetailMember:
    """One member of an RFC 9396 authorization_details entry: a string
    (array False, one value) or an array of strings."""

    name: str
    values: tuple[str, ...]
    array: bool


@dataclass(frozen=True, slots=True)
class AuthorizationDetail:
    """One approved authorization_details entry of a grant (PACT §5.7)."""

    type: str
    json: str
    members: tuple[AuthorizationDetailMember, ...]


@dataclass(frozen=True, slots=True)
class Delegation:
    """The grant of a verified delegation token: the agent acts as
    brand_user, limited to scopes and to authorization_details (which it
    must enforce against the actual resource: scope is necessary, not
    sufficient)."""

    grant_id: str
    brand_user: str
    scopes: tuple[str, ...]
    expires_at: datetime | None
    authorization_details_json: str
    authorization_details: tuple[AuthorizationDetail, ...]


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
    #: identity-only turn.
    delegation: Delegation | None


@dataclass(frozen=True, slots=True)
class Action:
    """One tool call of a delegated reply."""

    #: The tool name.
    tool: str
    #: The tool's arguments, any value json.dumps takes (None for none).
    #: They go to pactd as JSON, which writes the receipt's argsHash over
    #: their RFC 8785 canonical form, so 1.0 here hashes as 1 does in Go.
    args: Any = None


@dataclass(frozen=True, slots=True)
class Reply:
    """The agent's answer."""

    #: The reply message's single text part.
    text: str
    #: Scopes the turn needs and the caller lacks (or all it needs, on a turn
    #: without delegation): pactd answers the step-up task of PACT §5.5
    #: instead, and text only when the Brand offers no delegation.
    need_scopes: Sequence[str] = ()
    #: The scopes the reply relied on, for the receipt of a delegated reply.
    scopes_used: Sequence[str] = ()
    #: The tools the reply ran, for the receipt.
    actions: Sequence[Action] = ()
    #: Further metadata of the reply message; keys starting with "pact."
    #: are pactd's and are dropped.
    metadata: Mapping[str, Any] | None = None


class Agent(Protocol):
    """Answers User turns. An exception (or running past the turn's
    timeout) fails the turn: the PA gets INTERNAL and may send the same
    messageId again."""

    async def reply(self, turn: Turn) -> Reply:
        """Answers one User turn."""
        ...


class EchoAgent:
    """A demonstration agent: it repeats the User's text and names the Brand."""

    async def reply(self, turn: Turn) -> Reply:
        """Echoes the turn's text."""
        return Reply(text=f"This is the {turn.brand_id} support agent. You said: {turn.text}")


def turn_from_proto(t: Any) -> Turn:
    """Is the Turn of pactd's pact.v1.Turn."""
    c = t.caller
    d = None
    if t.HasField("delegation"):
        g = t.delegation
        details = tuple(
            AuthorizationDetail(a.type, a.json, tuple(AuthorizationDetailMember(m.name, tuple(m.values), m.array) for m in a.members))
            for a in g.authorization_details
        )
        expires = None
        if g.HasField("expires_at"):
            expires = datetime.fromtimestamp(g.expires_at.seconds + g.expires_at.nanos / 1e9, tz=timezone.utc)
        d = Delegation(g.grant_id, g.brand_user, tuple(g.scopes), expires, g.authorization_details_json, details)
    return Turn(t.brand_id, t.context_id, t.new_context, t.text, Caller(c.agent_id, c.issuer, c.subject, c.agent_display_name), d)


def _json(v: Any) -> str:
    # Python's own encoder; NaN and infinities are not JSON, so they fail
    # the turn here rather than at pactd.
    return json.dumps(v, allow_nan=False)


def reply_to_proto(r: Reply) -> Any:
    """Is the pact.v1.AgentReply of a Reply: each action's args as JSON
    (args_json) and no hash: pactd hashes the canonical form."""
    return frontdoor_pb2.AgentReply(
        text=r.text,
        need_scopes=list(r.need_scopes),
        scopes_used=list(r.scopes_used),
        actions=[token_pb2.ReceiptAction(tool=a.tool, args_json="" if a.args is None else _json(a.args)) for a in r.actions],
        metadata_json=_json(dict(r.metadata)) if r.metadata else "",
    )


async def run_agent(agent: Agent, turn: Any) -> Any:
    """Runs the agent on pactd's turn; is the FinishTurnRequest that carries
    its reply (the caller sets the handle)."""
    return frontdoor_pb2.FinishTurnRequest(reply=reply_to_proto(await agent.reply(turn_from_proto(turn))))
