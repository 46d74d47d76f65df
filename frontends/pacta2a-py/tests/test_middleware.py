"""PactMiddleware on a real uvicorn in front of a live pactd: every refusal
with its exact status, challenge and body, each group with a positive
control; failures and odd inputs that must not stop the server; body bounds
on one keep-alive connection."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from pactworld import Server, World, raw_exchange

from pacta2a import Action, Reply, Turn
from pacta2a.a2a import marshal

A2A = "application/a2a+json"
CHALLENGE = 'Bearer realm="a2a"'


def err(reason: str, status: str, code: int, message: str) -> str:
    """Is an A2A error body, written out as PACT §6 gives it."""
    return (
        f'{{"error":{{"code":{code},"status":"{status}","message":{json.dumps(message)},'
        f'"details":[{{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"{reason}","domain":"a2a-protocol.org"}}]}}}}'
    )


def invalid(message: str) -> str:
    return err("INVALID_PARAMS", "INVALID_ARGUMENT", 400, message)


INTERNAL = err("INTERNAL", "INTERNAL", 500, "Internal error")


def client(srv: Server) -> httpx.Client:
    return httpx.Client(base_url=srv.url, timeout=20)


def send_body(msg_id: str, text: str = "hi", context_id: str = "", **extra: Any) -> str:
    m: dict[str, Any] = {"messageId": msg_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}
    if context_id:
        m["contextId"] = context_id
    return json.dumps({"message": m})


def bare(r: httpx.Response, status: int) -> None:
    assert (r.status_code, r.content, r.headers.get("content-type")) == (status, b"", None), (r.status_code, r.text)


def a2a(r: httpx.Response, status: int, body: str) -> None:
    assert (r.status_code, r.headers["content-type"], r.text) == (status, A2A, body)


def reply_of(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code == 200 and r.headers["content-type"] == A2A, r.text
    out = json.loads(r.text)
    assert list(out) == ["message"] and list(out["message"])[:4] == ["messageId", "contextId", "role", "parts"]
    return out["message"]


# --- routing before authentication ------------------------------------------


def test_unmatched_routes_before_auth(srv: Server, world: World) -> None:
    auth = {"authorization": "Bearer " + world.token()}
    cases = [
        ("GET", "/a2a/acme/unknown", 404, None),
        ("GET", "/a2a/acme/message:send", 405, "POST"),
        ("DELETE", "/a2a/acme/message:send", 405, "POST"),
        ("POST", "/a2a/acme/tasks", 405, "GET"),
        ("GET", "/a2a/acme/tasks/x:cancel", 405, "POST"),
        ("DELETE", "/a2a/acme/tasks/x/pushNotificationConfigs", 405, "GET, POST"),
        ("POST", "/a2a/acme/tasks/x/pushNotificationConfigs/c", 405, "DELETE, GET"),
        ("GET", "/a2a/acme/oauth/pact.v1.AgentService", 404, None),
        ("GET", "/a2a/acme/oauth/token", 405, "POST"),
        ("GET", "/a2a/acme", 404, None),
        ("GET", "/a2a//tasks", 404, None),
        ("GET", "/a2a/acme/", 404, None),
        ("GET", "/a2a/acme/tasks/", 404, None),
        ("HEAD", "/a2a/acme/tasks", 405, "GET"),
    ]
    with client(srv) as c:
        for method, path, status, allow in cases:
            for headers in ({}, auth):
                r = c.request(method, path, headers=headers)
                bare(r, status)
                assert r.headers.get("allow") == allow, (method, path)
        assert srv.pactd.calls == []
        # Positive control: a matched route without a token reaches pactd
        # once and is 401.
        r = c.get("/a2a/acme/tasks")
        bare(r, 401)
        assert r.headers["www-authenticate"] == CHALLENGE and srv.pactd.calls == ["VerifyAgentRequest"]
        # Outside /a2a/ the wrapped app answers, and PACT never sees it.
        assert c.get("/elsewhere").text == "inner" and srv.inner_calls == ["/elsewhere"]


# --- authentication -----------------------------------------------------------


def test_pa_jwt_refusals(srv: Server, world: World) -> None:
    body = send_body("m-1")
    with client(srv) as c:
        for name, headers in {
            "no token": {},
            "basic": {"authorization": "Basic dXNlcjpwYXNz"},
            "garbage": {"authorization": "Bearer x.y.z"},
            "expired": {"authorization": "Bearer " + world.token(iat=1_000_000_000, exp=1_000_000_100)},
            "wrong aud": {"authorization": "Bearer " + world.token(aud=world.pactd.public_url + "/a2a/acme")},
            "unknown issuer": {"authorization": "Bearer " + world.token(iss=world.issuer + "/")},
        }.items():
            r = c.post("/a2a/acme/message:send", content=body, headers=headers)
            bare(r, 401)
            assert r.headers["www-authenticate"] == CHALLENGE, name
        # Two Authorization headers are joined, so pactd refuses them.
        tok = "Bearer " + world.token()
        r = c.post("/a2a/acme/message:send", content=body, headers=[("authorization", tok), ("authorization", tok)])
        bare(r, 401)
        # A delegation header where the Brand offers none.
        r = c.post("/a2a/acme/message:send", content=body, headers={"authorization": tok, "x-a2a-user-delegation": "Bearer x.y.z"})
        bare(r, 401)
        assert r.headers["www-authenticate"] == CHALLENGE + ', error="invalid_token"'
        # An unknown Brand: 404 even with a valid token.
        bare(c.post("/a2a/nobody/message:send", content=body, headers={"authorization": tok}), 404)
        assert srv.agent.turns == []
        # Positive control: the same request with a valid token, twice and
        # at another Brand (no jti tracking).
        for brand, mid in [("acme", "pc-1"), ("acme", "pc-2"), ("shop", "pc-3")]:
            m = reply_of(c.post(f"/a2a/{brand}/message:send", content=send_body(mid, "hello"), headers={"authorization": tok}))
            assert m["role"] == "ROLE_AGENT" and m["parts"] == [{"text": f"This is the {brand} support agent. You said: hello"}]
        assert [t.caller.subject for t in srv.agent.turns] == ["user-1"] * 3


# --- fixed routes and the card -----------------------------------------------


def test_fixed_routes_and_task_list(srv: Server, world: World) -> None:
    auth = {"authorization": "Bearer " + world.token()}
    push = err("PUSH_NOTIFICATION_NOT_SUPPORTED", "FAILED_PRECONDITION", 400, "Push notifications are not supported")
    size = invalid("pageSize must be an integer from 1 to 100")
    cases = [
        ("GET", "/a2a/acme/tasks/task-9", 404, err("TASK_NOT_FOUND", "NOT_FOUND", 404, "Task not found: task-9")),
        ("POST", "/a2a/acme/tasks/task-9:cancel", 404, err("TASK_NOT_FOUND", "NOT_FOUND", 404, "Task not found: task-9")),
        ("POST", "/a2a/acme/tasks/task-9%3Acancel", 404, err("TASK_NOT_FOUND", "NOT_FOUND", 404, "Task not found: task-9")),
        ("POST", "/a2a/acme/message:stream", 400, err("UNSUPPORTED_OPERATION", "FAILED_PRECONDITION", 400, "Streaming is not supported")),
        ("POST", "/a2a/acme/tasks/t:subscribe", 400, err("UNSUPPORTED_OPERATION", "FAILED_PRECONDITION", 400, "Subscribing to tasks is not supported")),
        ("GET", "/a2a/acme/extendedAgentCard", 400, err("UNSUPPORTED_OPERATION", "FAILED_PRECONDITION", 400, "The extended Agent Card is not supported")),
        ("GET", "/a2a/acme/tasks/t/pushNotificationConfigs", 400, push),
        ("DELETE", "/a2a/acme/tasks/t/pushNotificationConfigs/c1", 400, push),
        ("GET", "/a2a/acme/tasks?pageSize=0", 400, size),
        ("GET", "/a2a/acme/tasks?pageSize=101", 400, size),
        ("GET", "/a2a/acme/tasks?pageSize=%2B5", 400, size),
        ("GET", "/a2a/acme/tasks?pageSize=1&pageSize=2", 400, size),
        ("GET", "/a2a/acme/tasks?pageSize=%D9%A3", 400, size),  # an Arabic-Indic digit is not a digit here
        ("GET", "/a2a/acme/tasks?pageSize=" + "9" * 5000, 400, size),  # past Python's int() digit limit too
        ("GET", "/a2a/acme/tasks?pageSize=", 400, size),
        ("GET", "/a2a/acme/tasks?pageSize=000", 400, size),
        ("GET", "/a2a/acme/tasks?pageSize=" + "0" * 5000 + "42", 200, '{"tasks":[],"nextPageToken":"","pageSize":42,"totalSize":0}'),
        # Positive controls: the list, with its default and a chosen size.
        ("GET", "/a2a/acme/tasks", 200, '{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}'),
        ("GET", "/a2a/acme/tasks?pageSize=007&pageToken=x&bad=%zz", 200, '{"tasks":[],"nextPageToken":"","pageSize":7,"totalSize":0}'),
    ]
    with client(srv) as c:
        for method, path, status, body in cases:
            a2a(c.request(method, path, headers=auth), status, body)


def test_card(srv: Server, world: World) -> None:
    with client(srv) as c:
        r = c.get("/a2a/shop/.well-known/agent-card.json")
        card = json.loads(r.text)
        assert r.status_code == 200 and r.headers["content-type"] == A2A
        assert r.headers["cache-control"] == "public, max-age=300" and r.headers["access-control-allow-origin"] == "*"
        assert card["supportedInterfaces"][0]["url"] == world.pactd.public_url + "/a2a/shop"
        assert "userDelegation" in card["securitySchemes"]
        # Unknown Brands, odd ids among them: bare 404.
        for path in ["/a2a/nobody/.well-known/agent-card.json", "/a2a/caf%C3%A9/.well-known/agent-card.json"]:
            bare(c.get(path), 404)


# --- message:send ---------------------------------------------------------------


def test_send_validation(srv: Server, world: World) -> None:
    auth = {"authorization": "Bearer " + world.token("user-send")}
    part = '"parts":[{"text":"x"}]'
    cases = [
        ("{", invalid('The body must be JSON: {"message": Message}')),
        ("[]", invalid('The body must be JSON: {"message": Message}')),
        ('{"message":null}', invalid('The body must be JSON: {"message": Message}')),
        ('{"message":{"messageId":NaN}}', invalid('The body must be JSON: {"message": Message}')),
        ('{"message":{"role":"ROLE_USER",' + part + "}}", invalid("message.messageId must be a non-empty string")),
        ('{"message":{"messageId":"m","role":"USER",' + part + "}}", invalid("message.role must be ROLE_USER")),
        ('{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}', invalid("message.parts must be a non-empty array of parts")),
        ('{"message":{"messageId":"m","role":"ROLE_USER",' + part + ',"contextId":7}}', invalid("message.contextId and message.taskId must be strings")),
        ('{"message":{"messageId":"m","role":"ROLE_USER",' + part + ',"metadata":[]}}', invalid("message.metadata must be an object")),
        ('{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","kind":"text"}]}}',
         invalid("Each part must be an object with exactly one of text, raw, url or data")),
        ('{"message":{"messageId":"m","role":"ROLE_USER",' + part + ',"taskId":"t"}}', err("TASK_NOT_FOUND", "NOT_FOUND", 404, "Task not found")),
        ('{"message":{"messageId":"m","role":"ROLE_AGENT",' + part + "}}", invalid("message.role must be ROLE_USER")),
        ('{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":""},{"raw":"aGVsbG8="}]}}',
         err("CONTENT_TYPE_NOT_SUPPORTED", "INVALID_ARGUMENT", 400, "Only text parts are supported")),
        ('{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":" \\n\\u3000"}]}}', invalid("The message text is empty")),
        (send_body("m", context_id="ctx-1"), invalid("Unknown contextId")),  # pactd's own error, passed on
    ]
    with client(srv) as c:
        for body, want in cases:
            r = c.post("/a2a/acme/message:send", content=body, headers={**auth, "content-type": "text/plain", "a2a-version": "2.0"})
            a2a(r, 400 if '"code":400' in want else 404, want)
        assert srv.agent.turns == []
        # Positive control: a valid message, continued, and its retry
        # replayed byte for byte without running the agent.
        first = c.post("/a2a/acme/message:send", content=send_body("m-1", "one\u2028two <&>"), headers=auth)
        m = reply_of(first)
        assert m["parts"] == [{"text": "This is the acme support agent. You said: one\u2028two <&>"}]
        assert "\\u2028" in first.text and "<&>" in first.text  # escaped as Go does; no HTML escaping
        again = c.post("/a2a/acme/message:send", content=send_body("m-1", "one", m["contextId"]), headers=auth)
        assert again.content == first.content and len(srv.agent.turns) == 1
        nxt = reply_of(c.post("/a2a/acme/message:send", content=send_body("m-2", "two", m["contextId"]), headers=auth))
        assert nxt["contextId"] == m["contextId"] and srv.agent.turns[-1].new_context is False
        assert srv.agent.turns[0].new_context is True and srv.agent.turns[0].text == "one\u2028two <&>"


def test_step_up_and_receipts(srv: Server, world: World) -> None:
    tok = {"authorization": "Bearer " + world.token("user-deleg")}

    async def orders(t: Turn) -> Reply:
        if t.delegation is None or "orders:read" not in t.delegation.scopes:
            return Reply(text="no delegation here", need_scopes=["orders:read"])
        return Reply(
            text=f"orders of {t.delegation.brand_user}",
            scopes_used=["orders:read"],
            actions=[Action("list_orders"), Action("cancel_order", {"orderId": "1002"})],
            metadata={"x-note": "kept", "pact.forged": "dropped"},
        )

    srv.agent.behaviour = orders
    with client(srv) as c:
        # A Brand without delegation: the agent's text is the reply.
        m = reply_of(c.post("/a2a/acme/message:send", content=send_body("s-1"), headers=tok))
        assert m["parts"] == [{"text": "no delegation here"}]
        # A delegated Brand: the step-up task (not stored: the same id runs again).
        for _ in range(2):
            r = c.post("/a2a/shop/message:send", content=send_body("s-2"), headers=tok)
            assert r.status_code == 200 and r.headers["content-type"] == A2A
            task = json.loads(r.text)["task"]
            assert list(task) == ["id", "contextId", "status", "metadata"] and task["id"].startswith("t-")
            assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED" and task["status"]["message"]["role"] == "ROLE_AGENT"
            assert task["status"]["message"]["parts"][0]["text"].startswith("I need your permission first: See your orders.")
            assert task["metadata"]["pact.missingScopes"] == ["orders:read"]
            assert "/login?return_to=" in task["metadata"]["pact.verificationUriComplete"]
        # A delegation token: device grant through the proxy, approved over RPC.
        access = delegation_token(srv, world, c, "user-deleg", "alice")
        headers = {**tok, "x-a2a-user-delegation": "Bearer " + access}
        r = c.post("/a2a/shop/message:send", content=send_body("s-3"), headers=headers)
        m = reply_of(r)
        assert m["parts"] == [{"text": "orders of alice"}] and list(m["metadata"]) == ["pact.receipt", "x-note"]
        receipt = m["metadata"]["pact.receipt"]
        claims = receipt["claims"]
        assert (claims["user"], claims["pa"], claims["brand"]) == ("alice", world.issuer, world.pactd.public_url + "/a2a/shop")
        assert claims["scopesUsed"] == ["orders:read"]
        # argsHash: base64url SHA-256 of {"orderId":"1002"}, as the Go frontend's receipt test pins it.
        assert claims["actions"] == [{"tool": "list_orders"}, {"tool": "cancel_order", "argsHash": "_rjrPQ1xDeZW7jX81lABaETgD3jn0tXW-ayuxPmjKTg"}]
        assert receipt["jws"].count(".") == 2
        # Its retry in the context: the stored reply, receipt and all, byte for byte.
        runs = len(srv.agent.turns)
        assert c.post("/a2a/shop/message:send", content=send_body("s-3", context_id=m["contextId"]), headers=headers).content == r.content
        assert len(srv.agent.turns) == runs


def delegation_token(srv: Server, world: World, c: httpx.Client, sub: str, user: str) -> str:
    """Runs the device grant through the middleware's OAuth proxy (approved
    by pactd's ApproveConsent, as a trusted-frontend consent page would)."""
    import grpc
    from pactworld import FRONTEND_TOKEN

    from pacta2a._pb import delegation_pb2, delegation_pb2_grpc

    auth = {"authorization": "Bearer " + world.token(sub), "content-type": "application/x-www-form-urlencoded"}
    r = c.post("/a2a/shop/oauth/device_authorization", content=urlencode({"client_id": world.issuer, "scope": "orders:read"}), headers=auth)
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store", r.text
    d = r.json()

    with grpc.insecure_channel(world.pactd.url.removeprefix("http://")) as ch:
        delegation_pb2_grpc.DelegationServiceStub(ch).ApproveConsent(
            delegation_pb2.ApproveConsentRequest(brand_id="shop", user_code=d["user_code"], brand_user=user, scopes=["orders:read"]),
            metadata=(("authorization", "Bearer " + FRONTEND_TOKEN),),
        )
    form = {"client_id": world.issuer, "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": d["device_code"]}
    r = c.post("/a2a/shop/oauth/token", content=urlencode(form), headers={**auth, "authorization": "Bearer " + world.token(sub)})
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


# --- failures: none stops the server ------------------------------------------


def test_raising_agent_is_internal_logged_once(srv: Server, world: World) -> None:
    auth = {"authorization": "Bearer " + world.token("user-raise")}

    async def boom(t: Turn) -> Reply:
        raise RuntimeError("the agent broke")

    async def wrong(t: Turn) -> Reply:
        return Reply(text=42)  # type: ignore[arg-type]

    with client(srv) as c:
        for behaviour, cause in [(boom, "the agent broke"), (wrong, "text must be a string")]:
            srv.reset()
            srv.agent.behaviour = behaviour
            a2a(c.post("/a2a/acme/message:send", content=send_body("r-1"), headers=auth), 500, INTERNAL)
            errors = [r for r in srv.logs.records if r.levelname == "ERROR"]
            assert len(errors) == 1 and cause in errors[0].pact["error"] and errors[0].pact["path"] == "/a2a/acme/message:send"
        # The failed turn was released: the same messageId runs again.
        srv.reset()
        m = reply_of(c.post("/a2a/acme/message:send", content=send_body("r-1", "again"), headers=auth))
        assert m["parts"][0]["text"].endswith("You said: again") and srv.logs.records == []
        # The wrapped app's failure: a bare 500, logged once; then it serves on.
        r = c.get("/boom")
        assert (r.status_code, r.content) == (500, b"")
        assert len(srv.logs.records) == 1 and "the wrapped app failed" in srv.logs.records[0].pact["error"]
        assert c.get("/fine").text == "inner"


@pytest.mark.parametrize(
    "target,status",
    [
        (b"/a2a/%zz/tasks", 404),  # a bad escape
        (b"/a2a/acme/tasks%", 404),
        (b"/a2a/%FF%FE/tasks", 404),  # not UTF-8
        (b"/a2a/caf%C3%A9/tasks", 401),  # a Brand id no Brand has: pactd decides (no token: 401)
        (b"/a2a/a%2Fb/tasks", 401),  # %2F stays inside its segment
        (b"/a2a/acme/tasks/%00", 401),
        (b"/a2a/" + b"x" * 8000 + b"/tasks", 401),
        (b"/a2a/acme/oauth/consent%2Fdecision", 405),  # one segment, matched as consent/decision (POST only), as in Go
    ],
)
def test_odd_paths_on_a_real_server(srv: Server, target: bytes, status: int) -> None:
    out = raw_exchange(srv.port, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 %d " % status), out[:200]
    assert srv.logs.records == []
    # Positive control: the server serves on.
    assert raw_exchange(srv.port, b"GET /a2a/acme/tasks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").startswith(b"HTTP/1.1 401 ")


def test_odd_headers_and_bodies(srv: Server, world: World) -> None:
    tok = "Bearer " + world.token("user-odd")
    with client(srv) as c:
        # Non-ASCII and control-free odd bytes in header values reach pactd
        # as text and are refused there.
        r = c.post("/a2a/acme/message:send", content=send_body("o-1"), headers={"authorization": "Bearer \xe9t\xe9".encode("latin-1")})
        bare(r, 401)
        # Deep nesting, invalid UTF-8 and a lone surrogate escape: answers, not crashes.
        a2a(c.post("/a2a/acme/message:send", content="[" * 100000, headers={"authorization": tok}), 400,
            invalid('The body must be JSON: {"message": Message}'))
        m = reply_of(c.post("/a2a/acme/message:send", content=b'{"message":{"messageId":"o-2","role":"ROLE_USER","parts":[{"text":"a\xff\\ud800"}]}}',
                            headers={"authorization": tok}))
        assert m["parts"][0]["text"].endswith("You said: a\ufffd\ufffd")
        m = reply_of(c.post("/a2a/acme/message:send", content=send_body("\ud800x"[1:] + "\u00e9"), headers={"authorization": tok}))
        assert srv.logs.records == []


# --- body bounds, on one keep-alive connection ---------------------------------


def request(path: str, body: bytes, headers: dict[str, str]) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + b"\r\n" + body


# The request sent after a refused one on the same connection; it asks the
# server to close after it, so a connection kept open ends there.
NEXT = b"GET /a2a/acme/tasks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def responses(raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Splits a byte stream of Content-Length-framed responses."""
    out = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        n = int(headers.get("content-length", "0"))
        out.append((status, headers, rest[:n]))
        raw = rest[n:]
    return out


def test_send_body_bound_on_keep_alive(srv: Server, world: World) -> None:
    auth = {"Authorization": "Bearer " + world.token("user-bound")}
    limit = 1 << 20
    valid = send_body("b-1", "at the bound").encode()
    at_bound = valid + b" " * (limit - len(valid))
    over = valid + b" " * (limit + 1 - len(valid))
    # Past the bound: INVALID_PARAMS, and the connection closes: the request
    # after it is never read from what may be the rest of the body.
    got = responses(raw_exchange(srv.port, request("/a2a/acme/message:send", over, auth) + NEXT))
    assert len(got) == 1
    status, headers, body = got[0]
    assert (status, headers["connection"], body.decode()) == (400, "close", invalid("The request body is unreadable or too large"))
    # A refusal before the body is read (no token) closes it too.
    got = responses(raw_exchange(srv.port, request("/a2a/acme/message:send", valid, {}) + NEXT))
    assert [(s, h.get("connection")) for s, h, _ in got] == [(401, "close")]
    # Positive control: a body at the bound is read and answered, and the
    # connection stays open for the next request.
    got = responses(raw_exchange(srv.port, request("/a2a/acme/message:send", at_bound, auth) + NEXT))
    assert [s for s, _, _ in got] == [200, 401] and "connection" not in got[0][1]
    assert json.loads(got[0][2])["message"]["parts"][0]["text"].endswith("You said: at the bound")


def test_form_and_proxy_bounds_on_keep_alive(srv: Server, world: World) -> None:
    limit = 16 << 10
    form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": "user=alice"}
    over = b"csrf=x&pad=" + b"a" * limit
    # A page form past 16 KiB: 413, connection closed.
    got = responses(raw_exchange(srv.port, request("/a2a/shop/oauth/consent/decision", over, form) + NEXT))
    assert [(s, h["connection"]) for s, h, _ in got] == [(413, "close")] and b"larger than this page accepts" in got[0][2]
    # A body for pactd's OAuth endpoints past 16 KiB: pactd's own 413 answer.
    got = responses(raw_exchange(srv.port, request("/a2a/shop/oauth/token", over, form) + NEXT))
    assert [(s, h["connection"], h["cache-control"]) for s, h, _ in got] == [(413, "close", "no-store")]
    assert json.loads(got[0][2]) == {"error": "invalid_request", "error_description": "the request body is too large"}
    # Positive controls at the bound: the form is read (its CSRF token is
    # wrong: 403) and the token request reaches pactd (no PA JWT: bare 401),
    # each on a connection that stays open.
    at = b"csrf=x&pad=" + b"a" * (limit - 11)
    got = responses(raw_exchange(srv.port, request("/a2a/shop/oauth/consent/decision", at, form) + NEXT))
    assert [s for s, _, _ in got] == [403, 401] and b"This form has expired" in got[0][2]
    got = responses(raw_exchange(srv.port, request("/a2a/shop/oauth/token", at, form) + NEXT))
    assert [(s, h.get("www-authenticate")) for s, h, _ in got] == [(401, CHALLENGE), (401, CHALLENGE)]


# --- the consent pages (trusted frontend) ---------------------------------------


def test_trusted_consent_pages(srv: Server, world: World) -> None:
    with client(srv) as c:
        auth = {"authorization": "Bearer " + world.token("user-pages"), "content-type": "application/x-www-form-urlencoded"}
        d = c.post("/a2a/shop/oauth/device_authorization", content=urlencode({"client_id": world.issuer, "scope": "orders:read orders:cancel"}),
                   headers=auth).json()
        page = f"/a2a/shop/oauth/consent?user_code={d['user_code']}"
        alice = {"cookie": "user=alice"}
        # Not signed in: to the login, which returns here.
        r = c.get(page)
        assert (r.status_code, r.headers["location"]) == (303, "/login?return_to=" + page.replace("/", "%2F").replace("?", "%3F").replace("=", "%3D"))
        # An identity-only Brand has no pages; an unknown Brand is bare 404.
        r = c.get("/a2a/acme/oauth/consent", headers=alice)
        assert r.status_code == 404 and "does not let assistants act for you" in r.text
        bare(c.get("/a2a/nobody/oauth/consent"), 404)
        r = c.get(page, headers=alice)
        assert r.status_code == 200 and r.headers["x-frame-options"] == "DENY" and r.headers["cache-control"] == "no-store"
        assert r.headers["referrer-policy"] == "no-referrer" and r.headers["content-type"] == "text/html; charset=utf-8"
        assert r.headers["content-security-policy"].startswith("default-src 'none'; style-src 'sha256-")
        assert f"form-action 'self' {world.pactd.public_url};" in r.headers["content-security-policy"]
        csrf = re.search(r'name="csrf" value="([^"]*)"', r.text).group(1)  # type: ignore[union-attr]
        decide = f"{world.pactd.public_url}/a2a/shop/oauth/consent/decision"
        base = {"csrf": csrf, "user_code": d["user_code"], "decision": "allow", "scope": "orders:read"}
        # The code to compare, and nothing to type it into (RFC 8628 §5.4).
        assert f'<p class="compare"><strong class="usercode">{d["user_code"]}</strong></p>' in r.text and "confirm_code" not in r.text
        # Forged, cross-site and bad forms change nothing.
        for name, form, headers, status in [
            ("wrong csrf", {**base, "csrf": "x"}, {}, 403),
            ("cross-site", base, {"sec-fetch-site": "cross-site"}, 403),
            ("other user", base, {"cookie": "user=bob"}, 403),
            ("no decision", {**base, "decision": "maybe"}, {}, 400),
        ]:
            hdrs = {"content-type": "application/x-www-form-urlencoded", "cookie": "user=alice", **headers}
            r = c.post(decide, content=urlencode(form), headers=hdrs)
            assert r.status_code == status, name
        r = c.post(decide, content="csrf=%zz", headers={"content-type": "application/x-www-form-urlencoded", "cookie": "user=alice"})
        assert r.status_code == 400 and "The form could not be read." in r.text
        # Positive control: Allow with the right token.
        form = {"content-type": "application/x-www-form-urlencoded", "cookie": "user=alice"}
        r = c.post(decide, content=urlencode(base), headers=form)
        assert (r.status_code, r.headers["location"]) == (303, "/a2a/shop/oauth/connected?status=approved")
        # The same PA again, for another scope: one entry, both grants.
        d2 = c.post("/a2a/shop/oauth/device_authorization", content=urlencode({"client_id": world.issuer, "scope": "orders:cancel"}),
                    headers=auth).json()
        r = c.get(f"/a2a/shop/oauth/consent?user_code={d2['user_code']}", headers=alice)
        csrf2 = re.search(r'name="csrf" value="([^"]*)"', r.text).group(1)  # type: ignore[union-attr]
        r = c.post(decide, content=urlencode({"csrf": csrf2, "user_code": d2["user_code"], "decision": "allow", "scope": "orders:cancel"}), headers=form)
        assert r.status_code == 303
        r = c.get("/a2a/shop/oauth/connected?status=denied", headers=alice)
        assert r.status_code == 200 and "<title>Connected assistants at Shop Inc.</title>" in r.text
        assert "You denied the request: nothing new was shared." in r.text and r.text.count('<li class="pa"') == 1
        # (alice may hold grants of this PA from other tests too.)
        assert re.search(r'<h2>Pytest PA</h2><span class="state">Active · \d+ grants</span>', r.text)
        assert '<li>See your orders <span class="id">orders:read</span></li>' in r.text
        assert '<li>Cancel your orders <span class="id">orders:cancel</span></li>' in r.text
        assert re.search(r"Since <time>\d{1,2} [A-Z][a-z]{2} \d{4}</time> · expires <time>\d{1,2} [A-Z][a-z]{2} \d{4}</time>", r.text)
        # Revoke: a confirmation naming the PA and what it loses, then both grants.
        r = c.get(f"/a2a/shop/oauth/connected/revoke?agent_id={world.agent_id}", headers=alice)
        assert r.status_code == 200 and "<h1>Revoke Pytest PA?</h1>" in r.text and ">Revoke Pytest PA</button>" in r.text
        assert "<p>At Shop Inc., <strong>Pytest PA</strong> will no longer be able to act for you. It loses:</p>" in r.text
        token = re.search(r'name="csrf" value="([^"]*)"', r.text).group(1)  # type: ignore[union-attr]
        assert c.get("/a2a/shop/oauth/connected/revoke?agent_id=agt_other", headers=alice).status_code == 404
        revoke = f"{world.pactd.public_url}/a2a/shop/oauth/connected/revoke"
        for body in ({"csrf": token, "agent_id": "agt_other"}, {"csrf": csrf, "agent_id": world.agent_id}):
            assert c.post(revoke, content=urlencode(body), headers=form).status_code == 403
        assert "Revoke…" in c.get("/a2a/shop/oauth/connected", headers=alice).text, "a refused revoke revoked"
        r = c.post(revoke, content=urlencode({"csrf": token, "agent_id": world.agent_id}), headers=form)
        assert (r.status_code, r.headers["location"]) == (303, f"/a2a/shop/oauth/connected?status=revoked&agent_id={world.agent_id}")
        r = c.get(r.headers["location"], headers=alice)
        assert "Revoked: Pytest PA can no longer act for you here." in r.text and '<span class="state off">Revoked</span>' in r.text
        assert "Revoke…" not in r.text


def test_root_and_not_found_pages(srv: Server) -> None:
    """With root_page, GET / lists the Brands by display name with their
    cards; a browser's GET of an unknown Brand's page or an unmatched path
    under /a2a/ gets a 404 page, any other request the bare 404."""
    srv.app.root_page = True
    try:
        with client(srv) as c:
            r = c.get("/")
            assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8" and r.headers["x-frame-options"] == "DENY"
            assert '<h2>ACME Inc. <span class="id">acme</span></h2>\n<p class="hint">Support</p>\n<a href="/a2a/acme/.well-known/agent-card.json">Agent Card</a></li>' in r.text
            assert ('<h2>Shop Inc. <span class="id">shop</span></h2>\n<p class="hint">Shop support</p>\n'
                    '<a href="/a2a/shop/.well-known/agent-card.json">Agent Card</a> · <a href="/a2a/shop/oauth/connected">Connected assistants</a></li>') in r.text
            browser = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
            for path, words, post in [
                ("/a2a/nope/.well-known/agent-card.json", "This Provider serves no Brand named “nope”.", 405),
                # connected takes POST too (a signed-assertion Brand's login
                # posts there), so an unknown Brand's POST is 404, as consent's.
                ("/a2a/nope/oauth/connected", "This Provider serves no Brand named “nope”.", 404),
                ("/a2a/nope%3Cb%3E/oauth/consent", "This Provider serves no such Brand.", 404),
                ("/a2a/acme/unknown", "There is no page at this address.", 404),
            ]:
                r = c.get(path, headers=browser)
                assert r.status_code == 404 and r.headers["content-type"] == "text/html; charset=utf-8", path
                assert words in r.text and '<a href="/">' in r.text, path
                for h in ({}, {"accept": "application/json"}, {"accept": "text/html;q=0, application/json"}):
                    bare(c.get(path, headers=h), 404)
                assert c.post(path, headers=browser).status_code == post, path
    finally:
        srv.app.root_page = False
    # Without root_page the wrapped app owns /.
    with client(srv) as c:
        assert c.get("/").text == "inner"


def test_marshal_matches_go() -> None:
    assert marshal({"a": "<&>\u2028\u2029é", "b": [1, None, True]}) == '{"a":"<&>\\u2028\\u2029é","b":[1,null,true]}'.encode()


def test_request_head_bound() -> None:
    """A request head past 64 KiB is 431 before anything else (checked on the
    ASGI scope: the tests' uvicorn would refuse a slow one itself)."""
    import asyncio

    from pacta2a import PactdClient, PactMiddleware

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    mw = PactMiddleware(inner, pactd=PactdClient("127.0.0.1:1", "unused"), pactd_url="http://127.0.0.1:1")

    def status(path: str, pad: int) -> tuple[int, list[Any]]:
        sent: list[Any] = []

        async def receive() -> Any:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(m: Any) -> None:
            sent.append(m)

        scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
                 "headers": [(b"host", b"x"), (b"x-pad", b"a" * pad)]}
        asyncio.run(mw(scope, receive, send))
        return sent[0]["status"], sent[0]["headers"]

    limit = 64 << 10
    # Target + each header's name, value and ": \r\n".
    room = limit - len("/x") - (4 + 1 + 4) - (5 + 4)
    assert status("/x", room + 1)[0] == 431
    assert status("/a2a/acme/tasks", room + 1)[0] == 431
    # Positive control: at the bound the wrapped app answers.
    assert status("/x", room)[0] == 204
