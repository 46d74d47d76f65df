"""FrontDoor against a fake pactd: what it sends to Serve and FinishTurn,
and what it writes back, by the front door contract (docs/frontends.md)."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import socket
import threading
import time
from typing import Any

import grpc
import pytest
from fakepactd import FRONTEND_TOKEN, Answer, FakePactd, asgi_request, response
from pactworld import free_port, raw_exchange, serve_in_thread

from pacta2a import Action, FrontDoor, PactdClient, Reply, Turn
from pacta2a._pb import frontdoor_pb2, verification_pb2

MiB = 1 << 20


def client(fake: FakePactd) -> PactdClient:
    return PactdClient(fake.target, FRONTEND_TOKEN)


def run(app: Any, *args: Any, **kwargs: Any) -> Answer:
    """Serves one request on a fresh event loop (a fresh client channel too)."""

    async def go() -> Answer:
        try:
            return await asgi_request(app, *args, **kwargs)
        finally:
            await app.pactd.close()

    return asyncio.run(go())


class Logs(logging.Handler):
    """Keeps a logger's records."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.logger = logging.getLogger(name)
        self.logger.addHandler(self)
        self.logger.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> str:
        out = []
        for r in self.records:
            out.append(r.getMessage() + " " + json.dumps(getattr(r, "pact", {})) + " " + (logging.Formatter().formatException(r.exc_info) if r.exc_info else ""))
        return "\n".join(out)


@pytest.fixture
def logs(request: pytest.FixtureRequest) -> Logs:
    return Logs("pacta2a.test." + request.node.name)


def turn_pb(**kw: Any) -> Any:
    base = dict(
        handle="h-1",
        brand_id="acme",
        context_id="ctx-1",
        new_context=True,
        text="hello",
        caller=verification_pb2.Caller(agent_id="agent-1", issuer="https://pa.example", subject="user-1", agent_display_name="PA"),
        sdk_request_json='{"message":{"messageId":"m-1"}}',
        sdk_path="/a2a/acme/message:send",
        turn_timeout_seconds=5,
    )
    base.update(kw)
    return frontdoor_pb2.Turn(**base)


# --- what Serve is sent ----------------------------------------------------


def test_serve_gets_the_request_as_received(fake: FakePactd) -> None:
    app = FrontDoor(pactd=client(fake))
    headers = [
        (b"host", b"frontend.example"),
        (b"authorization", b"Bearer eyJ.x.y"),
        (b"cookie", b"demo_session_acme=secret"),
        (b"connection", b"keep-alive"),
        (b"keep-alive", b"timeout=5"),
        (b"te", b"trailers"),
        (b"transfer-encoding", b"chunked"),
        (b"upgrade", b"h2c"),
        (b"trailer", b"x"),
        (b"proxy-connection", b"x"),
        (b"accept", b"application/a2a+json"),
        (b"x-repeated", b"one"),
        (b"x-repeated", b"two"),
        (b"x-utf8", "é".encode()),
        (b"traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        (b"tracestate", b"vendor=1"),
    ]
    a = run(
        app,
        "POST",
        "/a2a/acme/message:send",
        raw_path=b"/a2a/acme/message%3Asend",
        query=b"a=%2F&b",
        headers=headers,
        chunks=[b'{"mess', b'age":1}'],
        client=("2001:db8::1", 4242),
    )
    assert a.status == 404
    (call,) = fake.calls
    assert call.rpc == "pact.v1.FrontDoorService/Serve"
    assert call.metadata["authorization"] == "Bearer " + FRONTEND_TOKEN
    assert call.metadata["traceparent"] == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    assert call.metadata["tracestate"] == "vendor=1"
    req = call.request
    assert (req.method, req.path, req.query) == ("POST", "/a2a/acme/message%3Asend", "a=%2F&b")
    assert [(h.name, h.value) for h in req.headers] == [
        ("host", "frontend.example"),
        ("authorization", "Bearer eyJ.x.y"),
        ("accept", "application/a2a+json"),
        ("x-repeated", "one"),
        ("x-repeated", "two"),
        ("x-utf8", "é"),
        ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("tracestate", "vendor=1"),
    ]
    assert (req.body, req.body_too_large, req.brand_user) == (b'{"message":1}', False, "")
    assert (req.signs_in_users, req.client_address) == (False, "[2001:db8::1]:4242")


def test_odd_targets_stay_percent_encoded_and_valid_utf8(fake: FakePactd) -> None:
    app = FrontDoor(pactd=client(fake))
    # Bytes outside printable ASCII (a server that passes them raw) are
    # percent-encoded: the same target to a URL parser, and a valid proto string.
    run(app, "GET", "/a2a/x", raw_path=b"/a2a/%zz/\xff\x00 /%2F", query=b"q=\xc3\xa9&\x7f", client=("10.0.0.1", 1))
    # No raw_path (an older server): the decoded path is encoded again.
    run(app, "GET", "/a2a/é t%/x", raw_path=b"", client=None)
    first, second = fake.requests("Serve")
    assert (first.path, first.query, first.client_address) == ("/a2a/%zz/%FF%00%20/%2F", "q=%C3%A9&%7F", "10.0.0.1:1")
    assert (second.path, second.client_address) == ("/a2a/%C3%A9%20t%25/x", "")


def test_bad_trace_context_is_not_sent(fake: FakePactd) -> None:
    app = FrontDoor(pactd=client(fake))
    for parent in [b"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", b"00-xyz", "00-é".encode()]:
        run(app, "GET", "/", headers=[(b"traceparent", parent), (b"tracestate", b"a=1")])
    # A tracestate that is too long or not printable ASCII goes without it.
    good = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
    run(app, "GET", "/", headers=[(b"traceparent", good), (b"tracestate", b"a" * 513)])
    run(app, "GET", "/", headers=[(b"traceparent", good), (b"tracestate", "é".encode())])
    mds = [c.metadata for c in fake.calls]
    assert all("traceparent" not in md for md in mds[:3])
    assert all(md["traceparent"] == good.decode() and "tracestate" not in md for md in mds[3:])


# --- the body bound ----------------------------------------------------------


def test_body_bound_at_one_mib(fake: FakePactd) -> None:
    app = FrontDoor(pactd=client(fake))
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(400, [("Content-Type", "application/a2a+json")], b"{}"))
    exact = run(app, "POST", "/a2a/acme/message:send", chunks=[b"a" * (MiB - 1), b"b"])
    over = run(app, "POST", "/a2a/acme/message:send", chunks=[b"a" * MiB, b"b"])
    gone = run(app, "POST", "/a2a/acme/message:send", chunks=[b"a"], disconnect=True)
    r_exact, r_over, r_gone = fake.requests("Serve")
    # The control: a body of exactly 1 MiB is sent whole, and the connection stays.
    assert (len(r_exact.body), r_exact.body_too_large) == (MiB, False)
    assert (b"connection", b"close") not in exact.headers
    # One byte more: no body, body_too_large, and the connection closes after pactd's answer.
    assert (r_over.body, r_over.body_too_large) == (b"", True)
    assert over.status == 400 and over.body == b"{}" and over.headers[-1] == (b"connection", b"close")
    # A body that cannot be read counts as too large.
    assert (r_gone.body, r_gone.body_too_large) == (b"", True)
    assert gone.headers[-1] == (b"connection", b"close")


def test_oversized_body_closes_a_keep_alive_connection(fake: FakePactd) -> None:
    """On a real server: the rest of an oversized body never becomes the next
    request; a small body leaves the connection serving (the control)."""
    seen: list[int] = []

    def serve(req: Any, ctx: Any) -> Any:
        seen.append(len(req.body))
        return frontdoor_pb2.ServeResponse(response=response(413 if req.body_too_large else 200, [], b"ok"))

    fake.serve = serve
    port = free_port()
    stop = serve_in_thread(FrontDoor(pactd=client(fake)), port)
    try:
        smuggled = b"GET /a2a/acme/tasks HTTP/1.1\r\nHost: x\r\n\r\n"
        body = (smuggled * (2 * MiB // len(smuggled) + 1))[: 2 * MiB]
        big = b"POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body + smuggled
        out = exchange_while_sending(port, big)
        assert out.count(b"HTTP/1.1 ") == 1 and out.startswith(b"HTTP/1.1 413 ") and b"connection: close" in out.lower()
        assert seen == [0]
        small = b"POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n{" + smuggled.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")
        out = raw_exchange(port, small)
        assert out.count(b"HTTP/1.1 200 ") == 2
        assert seen == [0, 1, 0]
    finally:
        stop()


def exchange_while_sending(port: int, data: bytes) -> bytes:
    """Sends data from a thread of its own (the server may close before it
    is all sent) and reads every byte the server sends until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:

        def write() -> None:
            try:
                s.sendall(data)
            except OSError:
                pass  # closed by the server: as it should

        t = threading.Thread(target=write, daemon=True)
        t.start()
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except ConnectionResetError:
            pass  # the unread rest of the body makes the close a reset
        t.join(10)
        return out


# --- writing pactd's answer ----------------------------------------------


def test_response_written_as_given(fake: FakePactd) -> None:
    hdrs = [("Content-Type", "text/html; charset=utf-8"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Content-Length", "5"), ("X-Odd", "é")]
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(200, hdrs, b"hello"))
    a = run(FrontDoor(pactd=client(fake)), "GET", "/")
    assert a.status == 200 and a.body == b"hello"
    assert a.headers == [(k.lower().encode(), v.encode()) for k, v in hdrs]  # nothing added, nothing dropped
    # Without a Content-Length the front door adds only that (else the server would chunk the body);
    # 204 and 304 get none.
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(401, [("WWW-Authenticate", 'Bearer realm="a2a"')]))
    a = run(FrontDoor(pactd=client(fake)), "GET", "/a2a/acme/tasks")
    assert (a.status, a.headers, a.body) == (401, [(b"www-authenticate", b'Bearer realm="a2a"'), (b"content-length", b"0")], b"")
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(304, [("ETag", '"x"')]))
    assert run(FrontDoor(pactd=client(fake)), "GET", "/").headers == [(b"etag", b'"x"')]
    # pactd's own Connection: close is written once.
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(400, [("Connection", "close")]))
    a = run(FrontDoor(pactd=client(fake)), "POST", "/a2a/acme/message:send", chunks=[b"x" * (MiB + 1)])
    assert a.headers == [(b"connection", b"close"), (b"content-length", b"0")]


# --- user_needed ---------------------------------------------------------------


class Sessions:
    def __init__(self, user: str) -> None:
        self.user = user
        self.asked: list[str] = []

    async def brand_user(self, scope: Any, brand_id: str) -> str:
        self.asked.append(brand_id)
        return self.user

    def login_url(self, brand_id: str, return_to: str) -> str:
        return f"/login/{brand_id}?return_to={return_to}"


def needs_user(req: Any, ctx: Any) -> Any:
    if req.sign_in_url:
        return frontdoor_pb2.ServeResponse(response=response(303, [("Location", req.sign_in_url)]))
    if not req.brand_user:
        return frontdoor_pb2.ServeResponse(user_needed=frontdoor_pb2.UserNeeded(brand_id="shop", return_to="/a2a/shop/oauth/connected?x=1"))
    return frontdoor_pb2.ServeResponse(response=response(200, [("Content-Type", "text/html")], b"page of " + req.brand_user.encode()))


def test_user_needed_signed_in_serves_again_with_the_user(fake: FakePactd) -> None:
    fake.serve = needs_user
    s = Sessions("alice")
    a = run(FrontDoor(pactd=client(fake), sessions=s), "GET", "/a2a/shop/oauth/connected", query=b"x=1", headers=[(b"cookie", b"s=1")])
    assert (a.status, a.body) == (200, b"page of alice") and s.asked == ["shop"]
    first, second = fake.requests("Serve")
    assert first.signs_in_users and first.brand_user == "" and first.sign_in_url == ""
    # The same request again, with the User pactd asked for.
    expected = frontdoor_pb2.ServeRequest()
    expected.CopyFrom(first)
    expected.brand_user = "alice"
    assert second == expected


def test_user_needed_nobody_signed_in_serves_again_with_the_sign_in(fake: FakePactd) -> None:
    fake.serve = needs_user
    a = run(FrontDoor(pactd=client(fake), sessions=Sessions("")), "POST", "/a2a/shop/oauth/connected", chunks=[b"form"])
    # pactd's answer, written as given.
    assert (a.status, a.headers, a.body) == (303, [(b"location", b"/login/shop?return_to=/a2a/shop/oauth/connected?x=1"), (b"content-length", b"0")], b"")
    first, second = fake.requests("Serve")
    expected = frontdoor_pb2.ServeRequest()
    expected.CopyFrom(first)
    expected.sign_in_url = "/login/shop?return_to=/a2a/shop/oauth/connected?x=1"
    assert second == expected and second.body == b"form" and second.brand_user == ""


def test_user_needed_refusals_are_bad_gateways(fake: FakePactd, logs: Logs) -> None:
    # Without Sessions pactd must not ask; asking twice is not allowed either.
    fake.serve = needs_user
    a = run(FrontDoor(pactd=client(fake), logger=logs.logger), "GET", "/a2a/shop/oauth/connected")
    assert (a.status, a.headers, a.body) == (502, [(b"cache-control", b"no-store"), (b"content-length", b"0")], b"")
    assert not fake.requests("Serve")[0].signs_in_users
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(user_needed=frontdoor_pb2.UserNeeded(brand_id="shop"))
    a = run(FrontDoor(pactd=client(fake), sessions=Sessions("alice"), logger=logs.logger), "GET", "/a2a/shop/oauth/connected")
    assert a.status == 502 and len(fake.requests("Serve")) == 3
    assert "user_needed" in logs.text()


# --- turns -------------------------------------------------------------------


class Agent:
    def __init__(self, reply: Any = None, delay: float = 0.0) -> None:
        self.reply_value = reply or Reply(text="hi")
        self.delay = delay
        self.turns: list[Turn] = []

    async def reply(self, turn: Turn) -> Reply:
        self.turns.append(turn)
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(self.reply_value, Exception):
            raise self.reply_value
        return self.reply_value


def hand_turn(t: Any) -> Any:
    return lambda req, ctx: frontdoor_pb2.ServeResponse(turn=t)


def test_turn_runs_the_agent_and_writes_finish_turn(fake: FakePactd) -> None:
    delegation = verification_pb2.DelegationInfo(grant_id="g-1", brand_user="alice", scopes=["orders:read"])
    fake.serve = hand_turn(turn_pb(delegation=delegation))
    fake.finish_turn = lambda req, ctx: frontdoor_pb2.FinishTurnResponse(response=response(200, [("Content-Type", "application/a2a+json")], b'{"message":{}}'))
    agent = Agent(Reply(text="done", scopes_used=["orders:read"], actions=[Action("list_orders")], metadata={"k": "v"}))
    a = run(FrontDoor(pactd=client(fake), agent=agent), "POST", "/a2a/acme/message:send", headers=[(b"traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")])
    assert (a.status, a.headers, a.body) == (200, [(b"content-type", b"application/a2a+json"), (b"content-length", b"14")], b'{"message":{}}')
    (t,) = agent.turns
    assert (t.brand_id, t.context_id, t.new_context, t.text) == ("acme", "ctx-1", True, "hello")
    assert (t.caller.agent_id, t.caller.subject, t.delegation and t.delegation.brand_user) == ("agent-1", "user-1", "alice")
    (fin,) = fake.requests("FinishTurn")
    assert fin.handle == "h-1" and fin.WhichOneof("result") == "reply"
    assert (fin.reply.text, list(fin.reply.scopes_used), fin.reply.metadata_json) == ("done", ["orders:read"], '{"k": "v"}')
    assert [(x.tool, x.args_json, x.args_hash) for x in fin.reply.actions] == [("list_orders", "", "")]
    assert fake.calls[-1].metadata["traceparent"].startswith("00-0af7")


def test_receipt_args_go_as_json_and_never_as_a_hash(fake: FakePactd) -> None:
    """pactd hashes the RFC 8785 canonical form of args_json, so Python's 1.0
    and Go's 1 get one argsHash: the package sends the JSON, no hash."""
    fake.serve = hand_turn(turn_pb())
    args = {"orderId": "1002", "amount": 1.0, "items": [1, 2.5, "é"], "nested": {"b": None, "a": True}}
    agent = Agent(Reply(text="ok", actions=[Action("cancel_order", args), Action("refund", 1.0)]))
    run(FrontDoor(pactd=client(fake), agent=agent), "POST", "/a2a/acme/message:send")
    (fin,) = fake.requests("FinishTurn")
    first, second = fin.reply.actions
    assert first.args_json == json.dumps(args) and json.loads(first.args_json) == args and "1.0" in first.args_json
    assert (second.tool, second.args_json) == ("refund", "1.0")
    assert first.args_hash == "" and second.args_hash == ""
    # No hash anywhere in what is sent: the only fields set are these.
    assert [f.name for f, _ in first.ListFields()] == ["tool", "args_json"]


def test_turn_failures_are_sent_as_failure(fake: FakePactd, logs: Logs) -> None:
    fake.serve = hand_turn(turn_pb(turn_timeout_seconds=1))
    for agent, want in [
        (Agent(RuntimeError("database down\nsecond line")), "RuntimeError: database down second line"),
        (Agent(delay=3), "the agent did not answer within 1 s"),
        (Agent(Reply(text="x", actions=[Action("t", {"n": math.nan})])), "ValueError: Out of range float values are not JSON compliant"),
        (Agent(Reply(text="x", actions=[Action("t", object())])), "TypeError: Object of type object is not JSON serializable"),
    ]:
        a = run(FrontDoor(pactd=client(fake), agent=agent, logger=logs.logger), "POST", "/a2a/acme/message:send")
        fin = fake.requests("FinishTurn")[-1]
        assert (fin.handle, fin.WhichOneof("result"), fin.failure) == ("h-1", "failure", want)
        assert a.status == 200  # FinishTurn's response, written as given
    # The positive control: the same turn with an agent that answers.
    run(FrontDoor(pactd=client(fake), agent=Agent()), "POST", "/a2a/acme/message:send")
    assert fake.requests("FinishTurn")[-1].reply.text == "hi"


def test_turn_runs_to_the_end_when_the_request_is_cancelled(fake: FakePactd) -> None:
    fake.serve = hand_turn(turn_pb())
    agent = Agent(Reply(text="late"), delay=0.5)

    async def go() -> None:
        app = FrontDoor(pactd=client(fake), agent=agent)
        task = asyncio.ensure_future(asgi_request(app, "POST", "/a2a/acme/message:send"))
        while not agent.turns:
            await asyncio.sleep(0.01)
        task.cancel()  # as a server that cancels the app when the client leaves
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(200):
            if fake.requests("FinishTurn"):
                break
            await asyncio.sleep(0.01)
        await app.pactd.close()

    asyncio.run(go())
    (fin,) = fake.requests("FinishTurn")
    assert fin.reply.text == "late"


def test_turn_finishes_when_the_client_hangs_up(fake: FakePactd) -> None:
    """On a real server: the client closes the connection mid-turn; the turn
    still ends with FinishTurn, so a retry of the messageId finds the reply."""
    fake.serve = hand_turn(turn_pb())
    agent = Agent(Reply(text="stored"), delay=0.5)
    port = free_port()
    stop = serve_in_thread(FrontDoor(pactd=client(fake), agent=agent), port)
    try:
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            deadline = time.time() + 10
            while not agent.turns and time.time() < deadline:
                time.sleep(0.01)
        deadline = time.time() + 10
        while not fake.requests("FinishTurn") and time.time() < deadline:
            time.sleep(0.02)
        (fin,) = fake.requests("FinishTurn")
        assert fin.reply.text == "stored"
    finally:
        stop()


# --- failures -------------------------------------------------------------------


def test_pactd_failures_are_bare_bad_gateways_logged_once(fake: FakePactd, logs: Logs) -> None:
    secret = "Bearer eyJ-secret-pa-token"
    cases = {
        "serve": lambda req, ctx: ctx.abort(grpc.StatusCode.UNAVAILABLE, "pactd is restarting"),
        "finish": None,
        "empty": lambda req, ctx: frontdoor_pb2.ServeResponse(),
    }
    for name, serve in cases.items():
        logs.records.clear()
        if name == "finish":
            fake.serve = hand_turn(turn_pb())
            fake.finish_turn = lambda req, ctx: ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, "the turn expired")
        else:
            fake.serve = serve
        a = run(FrontDoor(pactd=client(fake), agent=Agent(), logger=logs.logger), "POST", "/a2a/acme/message:send", headers=[(b"authorization", secret.encode())], chunks=[b"body-secret"])
        assert (a.status, a.headers, a.body) == (502, [(b"cache-control", b"no-store"), (b"content-length", b"0")], b""), name
        assert len(logs.records) == 1, name
        text = logs.text()
        assert "secret" not in text, name
        rpc = "pact.v1.FrontDoorService/FinishTurn" if name == "finish" else "pact.v1.FrontDoorService/Serve"
        assert logs.records[0].pact["rpc"] == rpc, name  # type: ignore[attr-defined]
    # pactd not there at all; and pactd refusing the credential.
    logs.records.clear()
    unreachable = PactdClient(f"127.0.0.1:{free_port()}", FRONTEND_TOKEN, timeout=2)
    assert run(FrontDoor(pactd=unreachable, logger=logs.logger), "GET", "/").status == 502
    assert "UNAVAILABLE" in logs.text()
    assert run(FrontDoor(pactd=PactdClient(fake.target, "another-token"), logger=logs.logger), "GET", "/").status == 502
    assert "UNAUTHENTICATED" in logs.text()


def test_exceptions_are_bare_500s_and_serving_goes_on(fake: FakePactd, logs: Logs) -> None:
    class Broken(Sessions):
        def brand_user(self, scope: Any, brand_id: str) -> str:  # type: ignore[override]
            raise KeyError("session store")

    fake.serve = needs_user
    app = FrontDoor(pactd=client(fake), sessions=Broken(""), logger=logs.logger)
    a = run(app, "GET", "/a2a/shop/oauth/connected")
    assert (a.status, a.headers, a.body) == (500, [(b"content-length", b"0"), (b"connection", b"close")], b"")
    assert len(logs.records) == 1 and logs.records[0].exc_info is not None and "session store" in logs.text()
    # The next request is served.
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(200, [], b"card"))
    assert run(app, "GET", "/a2a/acme/.well-known/agent-card.json").body == b"card"


# --- what the front door takes -------------------------------------------------


def test_routes_and_the_wrapped_app(fake: FakePactd) -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"inner"})

    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(200, [], b"pactd"))
    app = FrontDoor(inner, pactd=client(fake))
    cases = [
        ("GET", "/", b"pactd"),
        ("HEAD", "/", b"inner"),
        ("POST", "/", b"inner"),
        ("GET", "/a2a/acme/.well-known/agent-card.json", b"pactd"),
        ("DELETE", "/a2a/", b"pactd"),
        ("POST", "/api/platforms", b"pactd"),
        ("GET", "/api/platforms", b"inner"),
        ("GET", "/a2a", b"inner"),
        ("GET", "/brand/page", b"inner"),
    ]
    for method, path, want in cases:
        assert run(app, method, path).body == want, (method, path)
    # Without an app: a bare 404 for what the front door does not take.
    bare = run(FrontDoor(pactd=client(fake)), "GET", "/brand/page")
    assert (bare.status, bare.headers, bare.body) == (404, [(b"content-length", b"0")], b"")
    # Its own routes.
    mine = FrontDoor(pactd=client(fake), routes=lambda scope: scope["path"] != "/mine")
    assert run(mine, "GET", "/anything").body == b"pactd" and run(mine, "GET", "/mine").status == 404


def test_lifespan_without_an_app(fake: FakePactd) -> None:
    async def go() -> list[str]:
        incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
        sent: list[str] = []

        async def receive() -> dict[str, str]:
            return incoming.pop(0)

        async def send(m: dict[str, str]) -> None:
            sent.append(m["type"])

        await FrontDoor(pactd=client(fake))({"type": "lifespan"}, receive, send)
        return sent

    assert asyncio.run(go()) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
