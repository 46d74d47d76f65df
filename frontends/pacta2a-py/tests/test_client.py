"""PactdClient against a live pactd on both of its ports, and against an
in-process gRPC server for what a live pactd cannot be made to do (fail on
purpose, stall, record metadata)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
import grpc.aio
import pytest
from pactworld import FRONTEND_TOKEN, World, run

from pacta2a import RETRYABLE, Caller, PactdClient, PactdError, Verification, trace
from pacta2a._pb import brand_pb2, brand_pb2_grpc, conversation_pb2, conversation_pb2_grpc, verification_pb2
from pacta2a.client import error_info_reason, verification_from_proto


def clients(world: World) -> dict[str, PactdClient]:
    """One client per port: the main port (h2c) and the native gRPC port."""
    return {
        "main": PactdClient.from_url(world.pactd.url, FRONTEND_TOKEN),
        "native": PactdClient(world.pactd.grpc_target, FRONTEND_TOKEN),
    }


@pytest.mark.parametrize("port", ["main", "native"])
def test_verify_refusals_and_positive_control(world: World, port: str) -> None:
    async def go() -> dict[str, Verification]:
        async with clients(world)[port] as c:
            return {
                "none": await c.verify_agent_request("acme", ""),
                "garbage": await c.verify_agent_request("acme", "Bearer x.y.z"),
                "wrong-aud": await c.verify_agent_request("acme", "Bearer " + world.token(aud="https://other.example/a2a")),
                "unknown-brand": await c.verify_agent_request("nobody", "Bearer " + world.token()),
                "delegation-disabled": await c.verify_agent_request("acme", "Bearer " + world.token(), "Bearer x.y.z"),
                "ok": await c.verify_agent_request("acme", "Bearer " + world.token("user-7")),
            }

    got = run(go())
    challenge = 'Bearer realm="a2a"'
    for name, status, www, reason in [
        ("none", 401, challenge, "DENY_REASON_MALFORMED"),
        ("garbage", 401, challenge, "DENY_REASON_MALFORMED"),
        ("wrong-aud", 401, challenge, "DENY_REASON_AUDIENCE"),
        ("unknown-brand", 404, "", "DENY_REASON_UNKNOWN_BRAND"),
        ("delegation-disabled", 401, challenge + ', error="invalid_token"', "DENY_REASON_DELEGATION_DISABLED"),
    ]:
        v = got[name]
        assert (v.allowed, v.http_status, v.www_authenticate, v.reason, v.caller) == (False, status, www, reason, None), name
    ok = got["ok"]
    assert ok.allowed and ok.http_status == 200 and ok.www_authenticate == "" and ok.reason == "DENY_REASON_UNSPECIFIED"
    assert ok.caller == Caller(world.agent_id, world.issuer, "user-7", "Pytest PA")
    assert ok.delegation is None


@pytest.mark.parametrize("port", ["main", "native"])
def test_errors_name_rpc_code_message_and_reason(world: World, port: str) -> None:
    async def go() -> tuple[PactdError, PactdError, brand_pb2.GetAgentCardResponse]:
        c = clients(world)[port]
        bad = PactdClient(c.target, "not-a-credential-of-pactd")
        try:
            with pytest.raises(PactdError) as unknown:
                await c.get_agent_card("nobody")
            with pytest.raises(PactdError) as unauth:
                await bad.get_agent_card("acme")
            return unknown.value, unauth.value, await c.get_agent_card("acme")
        finally:
            await c.close()
            await bad.close()

    unknown, unauth, card = run(go())
    assert (unknown.rpc, unknown.code, unknown.reason) == ("pact.v1.BrandService/GetAgentCard", grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    assert unknown.message == "brand not found"
    assert str(unknown) == "pactd pact.v1.BrandService/GetAgentCard: NOT_FOUND: brand not found (ERROR_REASON_NOT_FOUND)"
    assert (unauth.code, unauth.reason) == (grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_UNAUTHENTICATED")
    # Positive control: the same call with the credential.
    assert card.content_type == "application/a2a+json" and card.cache_control == "public, max-age=300"
    assert json.loads(card.card_json)["supportedInterfaces"][0]["url"] == world.pactd.public_url + "/a2a/acme"
    assert card.interface_url == world.pactd.public_url + "/a2a/acme"


def test_from_url() -> None:
    assert PactdClient.from_url("http://127.0.0.1:7070", "t").target == "127.0.0.1:7070"
    assert PactdClient.from_url("https://pactd.internal", "t").target == "pactd.internal:443"
    assert PactdClient.from_url("http://[::1]:7070", "t").target == "[::1]:7070"
    for bad in ["127.0.0.1:7070", "ftp://x:1", "http://"]:
        with pytest.raises(ValueError):
            PactdClient.from_url(bad, "t")
    with pytest.raises(ValueError):
        PactdClient("127.0.0.1:1", "")


# --- an in-process gRPC server -----------------------------------------------


class FlakyBrands(brand_pb2_grpc.BrandServiceServicer):
    """GetAgentCard fails UNAVAILABLE `fail` times, then answers; `stall`
    makes it sleep first. It records each call's metadata."""

    def __init__(self) -> None:
        self.fail = 0
        self.stall = 0.0
        self.calls: list[dict[str, str]] = []

    async def GetAgentCard(self, request: Any, context: grpc.aio.ServicerContext) -> Any:  # noqa: N802
        self.calls.append({k: v for k, v in context.invocation_metadata() if isinstance(v, str)})
        if self.stall:
            await asyncio.sleep(self.stall)
        if self.fail > 0:
            self.fail -= 1
            await context.abort(grpc.StatusCode.UNAVAILABLE, "try again")
        return brand_pb2.GetAgentCardResponse(card_json="{}", content_type="application/a2a+json")


class FlakyConversations(conversation_pb2_grpc.ConversationServiceServicer):
    """BeginTurn and AbandonTurn always fail UNAVAILABLE, counting calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def BeginTurn(self, request: Any, context: grpc.aio.ServicerContext) -> Any:  # noqa: N802
        self.calls += 1
        await context.abort(grpc.StatusCode.UNAVAILABLE, "down")

    async def AbandonTurn(self, request: Any, context: grpc.aio.ServicerContext) -> Any:  # noqa: N802
        self.calls += 1
        await context.abort(grpc.StatusCode.UNAVAILABLE, "down")


async def with_fake(test: Any) -> Any:
    brands, convs = FlakyBrands(), FlakyConversations()
    server = grpc.aio.server()
    brand_pb2_grpc.add_BrandServiceServicer_to_server(brands, server)
    conversation_pb2_grpc.add_ConversationServiceServicer_to_server(convs, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        return await test(f"127.0.0.1:{port}", brands, convs)
    finally:
        await server.stop(None)


def test_retries_only_safe_rpcs() -> None:
    async def test(target: str, brands: FlakyBrands, convs: FlakyConversations) -> None:
        async with PactdClient(target, "tok") as c:
            # GetAgentCard is safe to repeat: two failures, then the answer.
            brands.fail = 2
            res = await c.get_agent_card("acme")
            assert res.content_type == "application/a2a+json" and len(brands.calls) == 3
            # Three failures exceed the 3 attempts: the error comes back.
            brands.fail, brands.calls = 3, []
            with pytest.raises(PactdError) as err:
                await c.get_agent_card("acme")
            assert err.value.code == grpc.StatusCode.UNAVAILABLE and len(brands.calls) == 3
            # BeginTurn and AbandonTurn claim or release a turn: one attempt each.
            owner = conversation_pb2.Owner(brand_id="acme", agent_id="a", subject="s")
            with pytest.raises(PactdError) as err:
                await c.begin_turn(conversation_pb2.BeginTurnRequest(owner=owner, message_id="m"))
            assert (err.value.rpc, err.value.code) == ("pact.v1.ConversationService/BeginTurn", grpc.StatusCode.UNAVAILABLE)
            with pytest.raises(PactdError):
                await c.abandon_turn(conversation_pb2.AbandonTurnRequest(owner=owner, message_id="m"))
            assert convs.calls == 2

    run(with_fake(test))
    assert "pact.v1.BrandService/GetAgentCard" in RETRYABLE
    for unsafe in ["BeginTurn", "AbandonTurn"]:
        assert f"pact.v1.ConversationService/{unsafe}" not in RETRYABLE
    for unsafe in ["BeginConsent", "ApproveConsent", "DenyConsent", "StartDeviceAuthorization", "IssueDelegation", "BeginConnected", "RevokeConnected"]:
        assert f"pact.v1.DelegationService/{unsafe}" not in RETRYABLE


def test_deadline_and_credential_metadata() -> None:
    async def test(target: str, brands: FlakyBrands, _: FlakyConversations) -> None:
        async with PactdClient(target, "tok-1", timeout=0.2) as c:
            brands.stall = 2.0
            with pytest.raises(PactdError) as err:
                await c.get_agent_card("acme")
            assert err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
            brands.stall, brands.calls = 0.0, []
            # The credential on every call, and the served request's trace context.
            tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            reset = trace.current.set(trace.trace_metadata(tp, "vendor=x"))
            try:
                await c.get_agent_card("acme")
            finally:
                trace.current.reset(reset)
            await c.get_agent_card("acme")
            first, second = brands.calls
            assert first["authorization"] == "Bearer tok-1" and first["traceparent"] == tp and first["tracestate"] == "vendor=x"
            assert second["authorization"] == "Bearer tok-1" and "traceparent" not in second

    run(with_fake(test))


def test_trace_metadata() -> None:
    ok = "0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331"
    assert trace.trace_metadata(f"01-{ok}-03", "") == (("traceparent", f"00-{ok}-01"),)
    assert trace.trace_metadata(f"00-{ok}-02", "a=b") == (("traceparent", f"00-{ok}-00"), ("tracestate", "a=b"))
    for bad in ["", "garbage", f"ff-{ok}-01", "00-" + "0" * 32 + "-b7ad6b7169203331-01", f"00-{ok.upper()}-01"]:
        assert trace.trace_metadata(bad, "a=b") == (), bad
    assert trace.trace_metadata(f"00-{ok}-01", "x" * 513) == (("traceparent", f"00-{ok}-01"),)


def test_error_info_reason() -> None:
    # A google.rpc.Status as pactd sends it (grpc-status-details-bin).
    status = (
        b"\x08\x05\x12\x0fbrand not found\x1aK\n(type.googleapis.com/google.rpc.ErrorInfo"
        b"\x12\x1f\n\x16ERROR_REASON_NOT_FOUND\x12\x05pactd"
    )
    assert error_info_reason(status) == "ERROR_REASON_NOT_FOUND"
    # Another detail type, a truncated message, garbage: no reason.
    other = status.replace(b"ErrorInfo", b"BadRequs")
    for bad in [b"", other, status[:-10], b"\xff\xff\xff", b"\x1a\x05abc"]:
        assert error_info_reason(bad) == ""


def test_verification_from_proto() -> None:
    r = verification_pb2.VerifyAgentRequestResponse(allowed=True, http_status=200)
    r.caller.agent_id, r.caller.issuer, r.caller.subject = "ag", "https://pa", "sub"
    d = r.delegation
    d.grant_id, d.brand_user = "a2agrant_1", "alice"
    d.scopes.extend(["orders:read"])
    d.expires_at.seconds = 1_800_000_000
    ad = d.authorization_details.add(type="t", json="{}")
    ad.members.add(name="order_id", values=["1002"], array=False)
    v = verification_from_proto(r)
    assert v.caller == Caller("ag", "https://pa", "sub", "")
    assert v.delegation is not None and v.delegation.scopes == ("orders:read",)
    assert v.delegation.expires_at is not None and v.delegation.expires_at.timestamp() == 1_800_000_000
    m = v.delegation.authorization_details[0].members[0]
    assert (m.name, m.values, m.array) == ("order_id", ("1002",), False)
    # Refusals carry no caller.
    assert verification_from_proto(verification_pb2.VerifyAgentRequestResponse(http_status=401)).caller is None


def test_guard_active_then_revoked(world: World) -> None:
    """The action guard against a live pactd: a grant made over RPC is
    active for its scope; a scope it lacks is GRANT_CHECK_REASON_SCOPE_NOT_GRANTED
    naming it; after RevokeGrant it is GRANT_CHECK_REASON_REVOKED; an
    identity-only turn is NotDelegated; a malformed call is INVALID_ARGUMENT."""
    from pacta2a import Delegation, GrantInactive, NotDelegated
    from pacta2a._pb import delegation_pb2, delegation_pb2_grpc

    async def go() -> None:
        async with PactdClient.from_url(world.pactd.url, FRONTEND_TOKEN) as c:
            start = await c._call(
                "DelegationService",
                "StartDeviceAuthorization",
                delegation_pb2_grpc.DelegationServiceStub,
                delegation_pb2.StartDeviceAuthorizationRequest(
                    brand_id="shop", authorization="Bearer " + world.token("guard-sub"), client_id=world.issuer, scope="orders:read"
                ),
            )
            assert not start.HasField("error"), start
            ap = await c.approve_consent(
                delegation_pb2.ApproveConsentRequest(brand_id="shop", user_code=start.user_code, brand_user="gina", scopes=["orders:read"])
            )
            caller = Caller(world.agent_id, world.issuer, "guard-sub", "Pytest PA")
            d = Delegation(ap.grant_id, "gina", ("orders:read",), None, "", ())
            await c.guard("shop", caller, d, ["orders:read"])  # positive control
            with pytest.raises(GrantInactive) as missing:
                await c.guard("shop", caller, d, ["orders:write"])
            assert (missing.value.reason, missing.value.missing_scopes) == ("GRANT_CHECK_REASON_SCOPE_NOT_GRANTED", ("orders:write",))
            with pytest.raises(GrantInactive) as other:
                await c.guard("acme", caller, d, ["orders:read"])
            assert other.value.reason == "GRANT_CHECK_REASON_UNKNOWN"
            await c.revoke_grant(delegation_pb2.RevokeGrantRequest(brand_id="shop", grant_id=ap.grant_id))
            with pytest.raises(GrantInactive) as revoked:
                await c.guard("shop", caller, d, ["orders:read"])
            assert revoked.value.reason == "GRANT_CHECK_REASON_REVOKED" and str(revoked.value) == "grant not active: revoked"
            with pytest.raises(NotDelegated):
                await c.guard("shop", caller, None, ["orders:read"])
            with pytest.raises(PactdError) as bad:
                await c.check_grant(delegation_pb2.CheckGrantRequest(brand_id="shop"))
            assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT

    run(go())
