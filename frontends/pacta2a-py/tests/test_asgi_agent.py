"""An ASGI A2A app (Starlette) as the agent behind PactMiddleware, with the
verified turn in scope["pact"]; and the OAuth reverse proxy against a
recording upstream."""

from __future__ import annotations

import http.server
import json
import logging
import threading
from typing import Any, Iterator

import httpx
import pytest
from pactworld import FRONTEND_TOKEN, ListHandler, World, free_port, raw_exchange, serve_in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from pacta2a import SCOPE_KEY, AsgiAgent, PactdClient, PactMiddleware, Turn, step_up_task, with_receipt

A2A = "application/a2a+json"


class Seen:
    """What the app's message:send saw."""

    def __init__(self) -> None:
        self.requests: list[tuple[Turn, dict[str, str], dict[str, Any]]] = []


def make_app(seen: Seen) -> Starlette:
    async def send(request: Request) -> Response:
        turn: Turn = request.scope[SCOPE_KEY]
        body = json.loads(await request.body())
        seen.requests.append((turn, dict(request.headers), body))
        text = turn.text
        msg = {"messageId": "app-1", "contextId": turn.context_id, "role": "ROLE_AGENT", "parts": [{"text": "hi " + turn.caller.subject}]}
        if text == "hello":
            return JSONResponse({"message": with_receipt({**msg, "metadata": {"x": 1, "pact.junk": 2}}, [])})
        if text == "two parts":
            return JSONResponse({"message": {**msg, "parts": [{"text": "a"}, {"text": "b"}]}})
        if text == "task":
            return JSONResponse(step_up_task(turn, "I would need orders:read", "orders:read"))
        if text == "refuse":
            return JSONResponse(
                {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "No such order",
                           "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_PARAMS", "domain": "a2a-protocol.org"}]}},
                status_code=400,
            )
        if text == "forbidden reason":
            return JSONResponse({"error": {"code": 404, "message": "x", "details": [{"reason": "TASK_NOT_FOUND"}]}}, status_code=404)
        if text == "working":
            return JSONResponse({"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}})
        if text == "file part":
            return JSONResponse({"message": {**msg, "parts": [{"url": "https://x"}]}})
        if text == "not json":
            return PlainTextResponse("hello")
        raise RuntimeError("the app broke")

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    return Starlette(routes=[Route("/a2a/{brand}/message:send", send, methods=["POST"]), Route("/health", health)])


@pytest.fixture(scope="module")
def asgi(world: World) -> Iterator[tuple[str, Seen, ListHandler]]:
    seen = Seen()
    app = make_app(seen)
    logs = ListHandler()
    logger = logging.getLogger("pacta2a.test.asgi")
    logger.addHandler(logs)
    logger.propagate = False
    pactd = PactdClient.from_url(world.pactd.url, FRONTEND_TOKEN)
    mw = PactMiddleware(app, pactd=pactd, pactd_url=world.pactd.url, agent=AsgiAgent(app), logger=logger)
    port = free_port()
    stop = serve_in_thread(mw, port)
    try:
        yield f"http://127.0.0.1:{port}", seen, logs
    finally:
        stop()


def body(msg_id: str, text: str, **extra: Any) -> str:
    return json.dumps({"message": {"messageId": msg_id, "role": "ROLE_USER", "parts": [{"text": text}]}, **extra})


def test_app_gets_the_verified_turn(asgi: tuple[str, Seen, ListHandler], world: World) -> None:
    url, seen, _ = asgi
    with httpx.Client(base_url=url, timeout=20) as c:
        r = c.post("/a2a/acme/message:send", content=body("a-1", "hello", metadata={"trace": "t"}),
                   headers={"authorization": "Bearer " + world.token("user-asgi"), "cookie": "s=1"})
        assert r.status_code == 200 and r.headers["content-type"] == A2A
        m = json.loads(r.text)["message"]
        # The middleware builds the reply: its own messageId, pact.* removed,
        # other metadata kept.
        assert m["parts"] == [{"text": "hi user-asgi"}] and m["metadata"] == {"x": 1} and m["messageId"] != "app-1"
        turn, headers, sent = seen.requests[-1]
        assert turn.caller.subject == "user-asgi" and turn.caller.issuer == world.issuer and turn.delegation is None
        assert turn.brand_id == "acme" and turn.new_context and turn.context_id == m["contextId"]
        assert sent == {"message": {"messageId": "a-1", "role": "ROLE_USER", "parts": [{"text": "hello"}], "contextId": m["contextId"]},
                        "metadata": {"trace": "t"}}
        assert headers["a2a-version"] == "1.0" and headers["content-type"] == "application/json"
        assert "authorization" not in headers and "cookie" not in headers
        # Text parts joined; a step-up task's text where the Brand offers no delegation.
        assert json.loads(c.post("/a2a/acme/message:send", content=body("a-2", "two parts"),
                                 headers={"authorization": "Bearer " + world.token("user-asgi")}).text)["message"]["parts"] == [{"text": "a\nb"}]
        r = c.post("/a2a/acme/message:send", content=body("a-3", "task"), headers={"authorization": "Bearer " + world.token("user-asgi")})
        assert json.loads(r.text)["message"]["parts"] == [{"text": "I would need orders:read"}]
        # A delegated Brand: PACT's step-up task, pactd's task id.
        r = c.post("/a2a/shop/message:send", content=body("a-4", "task"), headers={"authorization": "Bearer " + world.token("user-asgi")})
        task = json.loads(r.text)["task"]
        assert task["id"].startswith("t-") and task["metadata"]["pact.missingScopes"] == ["orders:read"]
        # Outside /a2a/ the same app serves as itself.
        assert c.get("/health").text == "ok"


def test_app_answers_that_fail_the_turn(asgi: tuple[str, Seen, ListHandler], world: World) -> None:
    url, _, logs = asgi
    internal = ('{"error":{"code":500,"status":"INTERNAL","message":"Internal error","details":[{"@type":'
                '"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL","domain":"a2a-protocol.org"}]}}')
    with httpx.Client(base_url=url, timeout=20) as c:
        auth = {"authorization": "Bearer " + world.token("user-fail")}
        # The app's own A2A error with an allowed reason reaches the PA as is.
        r = c.post("/a2a/acme/message:send", content=body("f-1", "refuse"), headers=auth)
        assert (r.status_code, json.loads(r.text)["error"]["message"], json.loads(r.text)["error"]["details"][0]["reason"]) == (400, "No such order", "INVALID_PARAMS")
        assert logs.records == []
        for i, text in enumerate(["forbidden reason", "working", "file part", "not json", "raise"]):
            logs.records.clear()
            r = c.post("/a2a/acme/message:send", content=body(f"f-{i + 2}", text), headers=auth)
            assert (r.status_code, r.headers["content-type"], r.text) == (500, A2A, internal), text
            assert len(logs.records) == 1, (text, [x.pact for x in logs.records])
        # Each failed turn was released: the messageId runs again.
        r = c.post("/a2a/acme/message:send", content=body("f-2", "hello"), headers=auth)
        assert r.status_code == 200


# --- the OAuth reverse proxy ---------------------------------------------------


class Upstream(http.server.ThreadingHTTPServer):
    """Records each request; answers 418 with headers a proxy must filter."""

    daemon_threads = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, list[tuple[str, str]], bytes]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle_one(self) -> None:
                n = int(self.headers.get("Content-Length", "0"))
                outer.seen.append((self.command, self.path, list(self.headers.items()), self.rfile.read(n)))
                payload = b'{"error":"teapot"}'
                self.send_response(418)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Keep-Alive", "timeout=5")
                self.send_header("Connection", "keep-alive, x-hop")
                self.send_header("X-Hop", "named by Connection")
                self.send_header("X-Upstream", "1")
                self.send_header("X-Latin", "caf\xe9")  # written as latin-1: one byte
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = handle_one  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


def test_proxy_rebuilds_the_path_and_filters_headers() -> None:
    up = Upstream()
    threading.Thread(target=up.serve_forever, daemon=True).start()
    logs = ListHandler()
    logger = logging.getLogger("pacta2a.test.proxy")
    logger.addHandler(logs)
    logger.propagate = False
    pactd = PactdClient("127.0.0.1:1", "unused")  # proxied routes are public: no RPC
    mw = PactMiddleware(None, pactd=pactd, pactd_url=f"http://127.0.0.1:{up.server_address[1]}/", logger=logger)
    port = free_port()
    stop = serve_in_thread(mw, port)
    try:
        req = (
            b"POST /a2a/shop/oauth/%74oken?x=1&y=%2F HTTP/1.1\r\nHost: frontend.example\r\nContent-Length: 9\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nAuthorization: Bearer pa.jwt.here\r\n"
            b"Cookie: demo_session_shop=secret\r\nX-Forwarded-For: 6.6.6.6\r\nForwarded: for=6.6.6.6\r\n"
            b"Connection: close, x-drop\r\nX-Drop: 1\r\nTE: trailers\r\nX-Keep: 2\r\nX-Odd: caf\xe9\r\n\r\nclient_id"
        )
        out = raw_exchange(port, req)
        assert b"\r\nx-latin: caf\xe9\r\n" in out.lower()  # the upstream's bytes, as they were
        head = out.split(b"\r\n\r\n")[0].decode("latin-1").lower()
        assert head.startswith("http/1.1 418 ") and out.endswith(b'{"error":"teapot"}')
        assert "x-upstream: 1" in head and "cache-control: no-store" in head
        assert "keep-alive:" not in head and "x-hop" not in head and head.count("date:") == 1
        method, path, headers, sent = up.seen[-1]
        names = {k.lower(): v for k, v in headers}
        assert (method, path, sent) == ("POST", "/a2a/shop/oauth/token?x=1&y=%2F", b"client_id")
        assert names["host"] == f"127.0.0.1:{up.server_address[1]}" and names["authorization"] == "Bearer pa.jwt.here"
        assert names["x-keep"] == "2" and names["content-length"] == "9"
        assert names["x-odd"] == "caf\xe9"  # http.server reads latin-1: the client's one byte
        for dropped in ["cookie", "x-forwarded-for", "forwarded", "x-drop", "te", "user-agent", "accept-encoding"]:
            assert dropped not in names, dropped
        # A Brand id that needs escaping: escaped as Go's url.PathEscape.
        raw_exchange(port, b"GET /a2a/a%20b%24/oauth/jwks.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert up.seen[-1][1] == "/a2a/a%20b$/oauth/jwks.json"
        assert logs.records == []
    finally:
        stop()
        up.shutdown()
    # pactd unreachable: a bare 502, logged once.
    mw = PactMiddleware(None, pactd=pactd, pactd_url=f"http://127.0.0.1:{free_port()}", logger=logger)
    port = free_port()
    stop = serve_in_thread(mw, port)
    try:
        out = raw_exchange(port, b"GET /a2a/shop/oauth/jwks.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 502 ") and out.endswith(b"\r\n\r\n") and len(logs.records) == 1
        assert logs.records[0].getMessage() == "oauth proxy"
    finally:
        stop()
