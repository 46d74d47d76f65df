"""AsgiAgent: an ASGI A2A app behind the front door gets pactd's
SendMessageRequest with the verified Turn in scope["pact"], and its answer
goes to pactd as it is (pactd reads it)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fakepactd import FRONTEND_TOKEN, FakePactd, asgi_request, response
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from test_frontdoor import turn_pb

from pacta2a import SCOPE_KEY, Action, AsgiAgent, FrontDoor, PactdClient, Turn, step_up_task, with_receipt
from pacta2a._pb import frontdoor_pb2

SDK_REQUEST = '{"message":{"messageId":"m-1","contextId":"ctx-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}'

PA_HEADERS = [
    (b"host", b"frontend.example"),
    (b"authorization", b"Bearer eyJ.pa.jwt"),
    (b"x-a2a-user-delegation", b"Bearer eyJ.delegation"),
    (b"cookie", b"s=1"),
    (b"content-type", b"text/plain"),
    (b"content-length", b"999"),
    (b"a2a-version", b"0.3"),
    (b"connection", b"keep-alive"),
    (b"transfer-encoding", b"chunked"),
    (b"accept-language", b"fr"),
    (b"x-request-id", b"r-1"),
]


def serve(fake: FakePactd, app: Any, **turn: Any) -> Any:
    """Runs one message:send through FrontDoor with the app as the agent; is
    the FinishTurnRequest pactd got."""
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(turn=turn_pb(sdk_request_json=SDK_REQUEST, **turn))
    fake.finish_turn = lambda req, ctx: frontdoor_pb2.FinishTurnResponse(response=response(200, [], b"written"))

    async def go() -> Any:
        door = FrontDoor(pactd=PactdClient(fake.target, FRONTEND_TOKEN), agent=AsgiAgent(app))
        try:
            return await asgi_request(door, "POST", "/a2a/acme/message:send", headers=PA_HEADERS, chunks=[b"the PA's body"])
        finally:
            await door.pactd.close()

    assert asyncio.run(go()).body == b"written"
    return fake.requests("FinishTurn")[-1]


def test_the_app_gets_the_turn_as_an_a2a_request(fake: FakePactd) -> None:
    seen: dict[str, Any] = {}

    async def send(request: Request) -> JSONResponse:
        seen["scope"] = request.scope
        seen["body"] = await request.body()
        turn: Turn = request.scope[SCOPE_KEY]
        message = {"messageId": "r", "contextId": turn.context_id, "role": "ROLE_AGENT", "parts": [{"text": "hi " + turn.caller.subject}]}
        return JSONResponse({"message": message})

    app = Starlette(routes=[Route("/a2a/{brand}/message:send", send, methods=["POST"])])
    fin = serve(fake, app, sdk_path="/a2a/ac%20me/message:send")
    scope = seen["scope"]
    assert (scope["method"], scope["path"], scope["raw_path"], scope["query_string"]) == ("POST", "/a2a/ac me/message:send", b"/a2a/ac%20me/message:send", b"")
    assert scope["headers"] == [
        (b"host", b"frontend.example"),
        (b"accept-language", b"fr"),
        (b"x-request-id", b"r-1"),
        (b"content-type", b"application/json"),
        (b"a2a-version", b"1.0"),
        (b"content-length", str(len(SDK_REQUEST)).encode()),
    ]
    assert seen["body"] == SDK_REQUEST.encode()
    turn = scope[SCOPE_KEY]
    assert (turn.brand_id, turn.context_id, turn.text, turn.caller.agent_id, turn.delegation) == ("acme", "ctx-1", "hello", "agent-1", None)
    assert fin.handle == "h-1" and fin.WhichOneof("result") == "sdk_answer"
    assert fin.sdk_answer.status == 200
    assert json.loads(fin.sdk_answer.body)["message"]["parts"] == [{"text": "hi user-1"}]


def test_the_apps_answer_goes_to_pactd_as_it_is(fake: FakePactd) -> None:
    """pactd reads the answer, so errors, step-ups and streamed bodies go
    through untouched."""
    error = b'{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"no","details":[]}}'
    answers = {
        "error": lambda: Response(error, status_code=400, media_type="application/json"),
        "step-up": lambda: JSONResponse(step_up_task(Turn("acme", "ctx-1", False, "", None, None), "Sign in first", "orders:read")),  # type: ignore[arg-type]
        "streamed": lambda: StreamingResponse(iter([b'{"message":', b"{}}"]), media_type="application/json"),
    }
    for name, make in answers.items():

        async def send(request: Request, make: Any = make) -> Response:
            return make()

        fin = serve(fake, Starlette(routes=[Route("/a2a/{brand}/message:send", send, methods=["POST"])]))
        assert fin.WhichOneof("result") == "sdk_answer", name
        if name == "error":
            assert (fin.sdk_answer.status, fin.sdk_answer.body) == (400, error)
        if name == "step-up":
            task = json.loads(fin.sdk_answer.body)["task"]
            assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED" and task["metadata"] == {"pact.missingScopes": ["orders:read"]}
        if name == "streamed":
            assert fin.sdk_answer.body == b'{"message":{}}'


def test_an_app_that_fails_fails_the_turn(fake: FakePactd) -> None:
    async def too_large(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x" * (1 << 20), "more_body": True})
        await send({"type": "http.response.body", "body": b"y"})

    async def exactly_1mib(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x" * (1 << 20)})

    async def unfinished(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{", "more_body": True})

    async def silent(scope: Any, receive: Any, send: Any) -> None:
        return None

    async def raises(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("executor broke")

    for app, want in [
        (too_large, "ValueError: the A2A app's answer is larger than 1 MiB"),
        (unfinished, "ValueError: the A2A app returned without an answer"),
        (silent, "ValueError: the A2A app returned without an answer"),
        (raises, "RuntimeError: executor broke"),
    ]:
        fin = serve(fake, app)
        assert (fin.WhichOneof("result"), fin.failure) == ("failure", want), app
    # The control: exactly 1 MiB is an answer.
    fin = serve(fake, exactly_1mib)
    assert fin.WhichOneof("result") == "sdk_answer" and len(fin.sdk_answer.body) == 1 << 20


def test_receipt_helpers() -> None:
    m = with_receipt({"messageId": "r", "metadata": {"mine": 1}}, ["orders:cancel"], Action("cancel_order", {"orderId": "1002", "n": 1.0}), Action("ping"))
    assert m["metadata"] == {
        "mine": 1,
        "pact.scopesUsed": ["orders:cancel"],
        "pact.actions": [{"tool": "cancel_order", "args": {"orderId": "1002", "n": 1.0}}, {"tool": "ping"}],
    }
