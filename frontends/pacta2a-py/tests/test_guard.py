"""guard: CheckGrant before a tool runs, fail closed."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from fakepactd import FRONTEND_TOKEN, FakePactd

from pacta2a import Caller, Delegation, GrantInactive, NotDelegated, PactdClient, PactdError, Turn, guard
from pacta2a._pb import delegation_pb2

CALLER = Caller("agent-1", "https://pa.example", "user-1", "PA")
DELEGATED = Turn("shop", "ctx", False, "cancel 1002", CALLER, Delegation("g-1", "alice", ("orders:cancel",), None, "", ()))


def check(fake: FakePactd, turn: Turn, *args: Any) -> None:
    async def go() -> None:
        async with PactdClient(fake.target, FRONTEND_TOKEN) as c:
            await guard(c, turn, *args)

    asyncio.run(go())


def test_active_grant_passes_with_the_request_pactd_needs(fake: FakePactd) -> None:
    check(fake, DELEGATED, ["orders:cancel"], '{"type":"t","order_id":"1002"}')
    (req,) = fake.requests("CheckGrant")
    assert req == delegation_pb2.CheckGrantRequest(
        brand_id="shop", grant_id="g-1", brand_user="alice", agent_id="agent-1", scopes=["orders:cancel"], authorization_details_json='{"type":"t","order_id":"1002"}'
    )


def test_refusals(fake: FakePactd) -> None:
    with pytest.raises(NotDelegated):
        check(fake, Turn("shop", "ctx", False, "x", CALLER, None))
    assert fake.requests("CheckGrant") == []  # nothing to ask
    fake.check_grant = lambda req, ctx: delegation_pb2.CheckGrantResponse(
        active=False, reason=delegation_pb2.GRANT_CHECK_REASON_SCOPE_NOT_GRANTED, missing_scopes=["orders:cancel"]
    )
    with pytest.raises(GrantInactive) as e:
        check(fake, DELEGATED, ["orders:cancel"])
    assert (e.value.reason, e.value.missing_scopes) == ("GRANT_CHECK_REASON_SCOPE_NOT_GRANTED", ("orders:cancel",))
    assert str(e.value) == "grant not active: scope_not_granted (orders:cancel)"
    fake.check_grant = lambda req, ctx: ctx.abort(grpc.StatusCode.UNAVAILABLE, "down")
    with pytest.raises(PactdError) as err:
        check(fake, DELEGATED)
    assert err.value.rpc == "pact.v1.DelegationService/CheckGrant"
