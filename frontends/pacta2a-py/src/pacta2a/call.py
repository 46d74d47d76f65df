"""One routed request under /a2a/{brandId}/, and the endpoints routes name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from .client import Caller, Delegation
from .http import Exchange


@dataclass(frozen=True, slots=True)
class Call:
    """One request under /a2a/{brandId}/: its Brand and, once authenticated,
    who is calling."""

    brand_id: str
    caller: Caller | None = None
    delegation: Delegation | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One method of a route; public ones are served without a PA JWT."""

    serve: Callable[[Exchange, Call], Awaitable[None]]
    public: bool = False
