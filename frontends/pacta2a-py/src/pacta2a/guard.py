"""The action guard: ask pactd, right before a tool runs (and again after a
slow policy decision), whether the turn's grant is still active for what the
tool needs. pactd answers from its grant cache, within the same revocation
bound as the PA JWT checks::

    await guard(pactd, turn, ["orders:cancel"], json.dumps(entry))

It returns only when pactd says yes; it raises NotDelegated for an
identity-only turn, GrantInactive when pactd says no, and PactdError when
pactd could not be asked (fail closed).
"""

from __future__ import annotations

from typing import Sequence

from ._pb import delegation_pb2
from .agent import Turn
from .client import PactdClient

#: DelegationService.CheckGrant, the guard's RPC.
CHECK_GRANT = "pact.v1.DelegationService/CheckGrant"


class NotDelegated(Exception):
    """The turn carries no delegation grant."""


class GrantInactive(Exception):
    """pactd says the grant is not active for the need: reason is the
    GrantCheckReason name (e.g. "GRANT_CHECK_REASON_REVOKED"),
    missing_scopes the scopes lacking or restricted without a covering
    authorization_details entry."""

    def __init__(self, reason: str, missing_scopes: tuple[str, ...] = ()) -> None:
        short = reason.removeprefix("GRANT_CHECK_REASON_").lower()
        super().__init__(f"grant not active: {short}" + (f" ({' '.join(missing_scopes)})" if missing_scopes else ""))
        self.reason = reason
        self.missing_scopes = missing_scopes


async def guard(pactd: PactdClient, turn: Turn, scopes: Sequence[str] = (), detail: str = "") -> None:
    """Checks the turn's grant for scopes and detail (one
    authorization_details entry as a JSON object, or "")."""
    d = turn.delegation
    if d is None or not d.grant_id:
        raise NotDelegated("the turn carries no delegation grant")
    req = delegation_pb2.CheckGrantRequest(
        brand_id=turn.brand_id,
        grant_id=d.grant_id,
        brand_user=d.brand_user,
        agent_id=turn.caller.agent_id,
        scopes=list(scopes),
        authorization_details_json=detail,
    )
    r = await pactd.call(CHECK_GRANT, req, delegation_pb2.CheckGrantResponse)
    if not r.active:
        raise GrantInactive(delegation_pb2.GrantCheckReason.Name(r.reason), tuple(r.missing_scopes))
