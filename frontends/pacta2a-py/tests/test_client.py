"""PactdClient against the fake pactd: the credential and deadline on every
call, errors naming the RPC and code, and the URL and token it accepts."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import pytest
from fakepactd import FRONTEND_TOKEN, FakePactd, response

from pacta2a import PactdClient, PactdError
from pacta2a._pb import frontdoor_pb2


def test_calls_carry_the_credential_and_a_deadline(fake: FakePactd) -> None:
    deadlines: list[float | None] = []

    def serve(req: Any, ctx: Any) -> Any:
        deadlines.append(ctx.time_remaining())
        return frontdoor_pb2.ServeResponse(response=response(204))

    fake.serve = serve

    async def go() -> Any:
        async with PactdClient.from_url(fake.url, FRONTEND_TOKEN, timeout=3) as c:
            return await c.serve(frontdoor_pb2.ServeRequest(method="GET", path="/"), (("traceparent", "00-x"),))

    res = asyncio.run(go())
    assert res.response.status == 204
    (call,) = fake.calls
    assert call.metadata["authorization"] == "Bearer " + FRONTEND_TOKEN and call.metadata["traceparent"] == "00-x"
    assert deadlines[0] is not None and 1 < deadlines[0] < 3.5  # the 3 s deadline (clocks differ by a little)


def test_errors_name_the_rpc_and_code(fake: FakePactd) -> None:
    fake.serve = lambda req, ctx: ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "path: too long")

    def slow(req: Any, ctx: Any) -> Any:
        time.sleep(1.5)
        return frontdoor_pb2.FinishTurnResponse()

    fake.finish_turn = slow

    async def go() -> list[PactdError]:
        errs = []
        async with PactdClient(fake.target, FRONTEND_TOKEN, timeout=0.5) as c:
            for call in (c.serve(frontdoor_pb2.ServeRequest()), c.finish_turn(frontdoor_pb2.FinishTurnRequest(handle="h"))):
                with pytest.raises(PactdError) as e:
                    await call
                errs.append(e.value)
        async with PactdClient(fake.target, "not-the-credential") as c:
            with pytest.raises(PactdError) as e:
                await c.serve(frontdoor_pb2.ServeRequest())
            errs.append(e.value)
        return errs

    invalid, deadline, unauth = asyncio.run(go())
    assert (invalid.rpc, invalid.code, invalid.message) == ("pact.v1.FrontDoorService/Serve", grpc.StatusCode.INVALID_ARGUMENT, "path: too long")
    assert str(invalid) == "pactd pact.v1.FrontDoorService/Serve: INVALID_ARGUMENT: path: too long"
    assert (deadline.rpc, deadline.code) == ("pact.v1.FrontDoorService/FinishTurn", grpc.StatusCode.DEADLINE_EXCEEDED)
    assert unauth.code == grpc.StatusCode.UNAUTHENTICATED


def test_a_client_reopens_its_channel_in_another_loop(fake: FakePactd) -> None:
    c = PactdClient(fake.target, FRONTEND_TOKEN)

    async def once() -> int:
        try:
            return (await c.serve(frontdoor_pb2.ServeRequest())).response.status
        finally:
            await c.close()

    assert [asyncio.run(once()), asyncio.run(once())] == [404, 404]


@pytest.mark.parametrize(
    "url, target, secure",
    [
        ("http://127.0.0.1:7070", "127.0.0.1:7070", False),
        ("http://pactd.internal", "pactd.internal:80", False),
        ("https://pactd.example/", "pactd.example:443", True),
        ("http://[::1]:7070", "[::1]:7070", False),
    ],
)
def test_from_url(url: str, target: str, secure: bool) -> None:
    c = PactdClient.from_url(url, "tok")
    assert (c.target, c._secure) == (target, secure)


@pytest.mark.parametrize("url", ["127.0.0.1:7070", "grpc://pactd:1", "http://", "http://pactd/api", "http://pactd?x=1"])
def test_from_url_refuses(url: str) -> None:
    with pytest.raises(ValueError, match="pactd's URL must be"):
        PactdClient.from_url(url, "tok")


@pytest.mark.parametrize("token", ["", "two words", "tab\there", "é", "line\n"])
def test_refuses_tokens_it_cannot_send(token: str) -> None:
    with pytest.raises(ValueError, match="frontend token"):
        PactdClient("127.0.0.1:1", token)
